"""`preference`: TRL `{prompt, chosen, rejected}` conversations from the pair-wise stage."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.preference import pair_id, preference_record
from hopforge.export.schemas import preference_schema

if TYPE_CHECKING:
    from hopforge.export.selection import Selection


class Preference(Layout):
    """One row per usable preference pair, both trajectories as conversations."""

    name = "preference"
    format = "preference"
    card = """\
- `preference`: TRL `{prompt, chosen, rejected}` conversations from the pair-wise stage.
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        for p in selection.pairs:
            row = preference_record(
                p.pair,
                question=p.question,
                chosen=p.chosen,
                rejected=p.rejected,
                split=p.split,
                chain=p.chain,
                tools=ctx.tools,
                chosen_score=p.chosen_score,
                rejected_score=p.rejected_score,
            )
            yield p.split, pair_id(p.pair), row

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return preference_schema()
