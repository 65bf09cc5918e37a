"""The export's check of every written SFT row: does each trained turn follow from its row?

Each layout is read back as chat messages (weights where it has them; a prompt-completion or
ShareGPT row trains its last message) and checked with `hopforge.export.justify`. The export
counts what fails (`unjustified_trained` in the report and manifest); windows and one-turn rows
already leave such turns as context, so the count must be 0. The check reads the rows as a
trainer would get them, so a layout that loses what a turn needs shows up here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hopforge.export.justify import unjustified_turns
from hopforge.export.sharegpt import parse_function_call

CHECKED_KINDS: tuple[str, ...] = ("sft/openai", "sft/hf", "sft/trl", "sharegpt")
_SHAREGPT_ROLES = {"human": "user", "observation": "tool", "gpt": "assistant"}


def sharegpt_messages(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A ShareGPT row as chat messages (its `<think>` text stays out of the visible content)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": row.get("system") or ""}]
    for turn in row["conversations"]:
        if turn["from"] == "function_call":
            name, arguments, _ = parse_function_call(turn["value"])
            call = {"type": "function", "function": {"name": name, "arguments": arguments}}
            out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        else:
            out.append({"role": _SHAREGPT_ROLES[turn["from"]], "content": turn["value"]})
    return out


def row_problems(row: dict[str, Any]) -> list[str]:
    """Why trained turns of one SFT or ShareGPT row are not justified by it ([] when all are)."""
    if "completion" in row:
        return unjustified_turns(row["prompt"], row["completion"])
    if "conversations" in row:
        messages = sharegpt_messages(row)
        return unjustified_turns(messages[:-1], messages[-1:])
    return unjustified_turns(row["messages"], ())


@dataclass(slots=True)
class RowCheck:
    """Counts over the rows written: how many were checked, how many trained turns failed."""

    rows: int = 0
    unjustified: int = 0
    examples: list[str] = field(default_factory=list)  # the first few problems, with row ids

    def watch(self, kind: str, made: Iterable[tuple[str, str, dict[str, Any]]]
              ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Pass the (split, id, row) triples of `kind` on, checking each SFT or ShareGPT row."""
        for split, rid, row in made:
            if kind in CHECKED_KINDS:
                self.rows += 1
                problems = row_problems(row)
                self.unjustified += len(problems)
                self.examples += [f"{rid}: {p}" for p in problems][: max(0, 5 - len(self.examples))]
            yield split, rid, row
