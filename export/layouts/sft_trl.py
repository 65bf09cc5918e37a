"""`sft/trl`: TRL's conversational prompt-completion rows, one per trained turn."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.schemas import trl_schema
from hopforge.export.sft import sft_records

if TYPE_CHECKING:
    from hopforge.export.selection import Selection


class SftTrl(Layout):
    """`prompt`: the context the teacher had for a trained turn; `completion`: that turn."""

    name = "sft/trl"
    format = "sft"
    trained_note = "the completion is trained; the prompt is context"
    card = """\
- `sft_trl`: TRL prompt-completion rows: one per trained assistant message, the window before it
  as `prompt` (untrained turns are context only).
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        for ex in selection.examples:
            for rid, row in sft_records(ex, ctx.tools, "trl"):
                yield ex.split, rid, row

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return trl_schema()

    def chat(self, row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return row["prompt"], row["completion"]
