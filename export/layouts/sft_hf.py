"""`sft/hf`: the SFT windows in the Hugging Face chat layout (see hopforge.export.sft)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.schemas import sft_schema
from hopforge.export.sft import Flavour, sft_records

if TYPE_CHECKING:
    from hopforge.export.selection import Selection


class SftHf(Layout):
    """One row per window of a kept trajectory; `arguments` are objects, weights kept."""

    name = "sft/hf"
    format = "sft"
    flavour: ClassVar[Flavour] = "hf"
    arguments: ClassVar[str] = "object"  # how tool-call arguments are written (the schema's)
    trained_note = "assistant messages with weight 1 are trained"
    card = """\
- `sft_hf`: the same windows in the Hugging Face layout (`arguments` as an object); `weight` is
  kept for trainers that mask per message (TRL's SFTTrainer does not read it).
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        for ex in selection.examples:
            for rid, row in sft_records(ex, ctx.tools, self.flavour):
                yield ex.split, rid, row

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return sft_schema(self.arguments)

    def chat(self, row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return row["messages"], []
