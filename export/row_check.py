"""The export's check of every written SFT row: does each trained turn follow from its row?

Each row of a turn layout is read back as chat messages by its layout (`Layout.chat`: weights
where it has them; a prompt-completion or ShareGPT row trains its last message) and checked with
`hopforge.export.justify`. The export counts what fails (`unjustified_trained` in the report and manifest); windows and one-turn rows
already leave such turns as context, so the count must be 0. The check reads the rows as a
trainer would get them, so a layout that loses what a turn needs shows up here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hopforge.export.justify import unjustified_turns
from hopforge.export.layouts.registry import layout_named


def row_problems(kind: str, row: dict[str, Any]) -> list[str]:
    """Why trained turns of one row of layout `kind` are not justified by it ([] when all are,
    or when the layout's rows are not a trajectory's turns)."""
    chat = layout_named(kind).chat(row)
    return [] if chat is None else unjustified_turns(*chat)


@dataclass(slots=True)
class RowCheck:
    """Counts over the rows written: how many were checked, how many trained turns failed."""

    rows: int = 0
    unjustified: int = 0
    examples: list[str] = field(default_factory=list)  # the first few problems, with row ids

    def watch(self, kind: str, made: Iterable[tuple[str, str, dict[str, Any]]]
              ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Pass the (split, id, row) triples of `kind` on, checking each row of a turn layout."""
        layout = layout_named(kind)
        for split, rid, row in made:
            chat = layout.chat(row)
            if chat is not None:
                self.rows += 1
                problems = unjustified_turns(*chat)
                self.unjustified += len(problems)
                self.examples += [f"{rid}: {p}" for p in problems][: max(0, 5 - len(self.examples))]
            yield split, rid, row
