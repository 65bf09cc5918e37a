"""`sharegpt`: LLaMA-Factory ShareGPT rows, one per trained turn, and dataset_info.json."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.export.layouts.base import Context, Layout, Row, Shown
from hopforge.export.schemas import sharegpt_schema
from hopforge.export.sharegpt import dataset_info, sharegpt_messages, sharegpt_records
from hopforge.export.splits import SPLITS

if TYPE_CHECKING:
    from hopforge.export.records import ShardInfo
    from hopforge.export.selection import Selection

MODEL_SIDES = ("gpt", "function_call")


class ShareGpt(Layout):
    """The conversation up to each trained turn; trained with `mask_history: true`."""

    name = "sharegpt"
    format = "sharegpt"
    trained_note = "trained with mask_history: true, so only the last model turn is trained"
    card = """\
- `sharegpt`: LLaMA-Factory ShareGPT (`conversations`, `system`, `tools`) with `dataset_info.json`:
  one row per trained turn, ending on it; train with `mask_history: true`.
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        for ex in selection.examples:
            for rid, row in sharegpt_records(ex, ctx.tools):
                yield ex.split, rid, row

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return sharegpt_schema()

    def files(self, ctx: Context, shards: Sequence[ShardInfo]) -> dict[str, Any]:
        present = sorted({s.split for s in shards if s.kind == self.name}, key=SPLITS.index)
        return {f"{self.name}/dataset_info.json": dataset_info(ctx.config.dataset_name, present)}

    def shown(self, row: dict[str, Any]) -> list[Shown]:
        """The ShareGPT sides as they are; the last model side is the one trained."""
        turns = row.get("conversations") or []
        last = max((i for i, m in enumerate(turns) if m.get("from") in MODEL_SIDES), default=-1)
        head: list[Shown] = [("system", row["system"], None, None)] if row.get("system") else []
        return head + [(m.get("from", ""), m.get("value", ""),
                        (i == last) if m.get("from") in MODEL_SIDES else None, None)
                       for i, m in enumerate(turns)]

    def chat(self, row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        messages = sharegpt_messages(row)
        return messages[:-1], messages[-1:]
