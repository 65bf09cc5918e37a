"""`rl/plain`: one `{prompt, answer, aliases, answer_type}` row per accepted question."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.rl import plain_record
from hopforge.export.schemas import plain_rl_schema

if TYPE_CHECKING:
    from hopforge.export.selection import Selection


class RlPlain(Layout):
    """Prompt messages and the answers a reward grades against, for TRL's GRPO and the like."""

    name = "rl/plain"
    format = "rl"
    card = """\
- `rl_plain`: `{prompt, answer, aliases, answer_type}`, with the prompt and `metadata` of
  `rl_verl`.
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        for task in selection.tasks:
            yield task.split, task.question.qid, plain_record(task)

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return plain_rl_schema()
