"""The scripted composer's small words: quotes around titles, lists joined with "and", and how a
clue reads in a question (each clue brings its own words, synth/questions/clues.py)."""

from __future__ import annotations

import re

from hopforge.synth.records import Step

_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"")


def q(text: str) -> str:
    """A phrase or title in quotes, as the questions show them."""
    return f"“{text}”"


def quoted(text: str) -> list[str]:
    """The phrases `text` puts in quotes (“...” as `q` writes them, or "..."), in order."""
    return [a or b for a, b in _QUOTED.findall(text)]


def and_(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clue_text(step: Step) -> str:
    """How the question states the fact that picks `step.doc`."""
    if step.fact is not None:
        return step.fact.shown
    return f"whose text contains the words {q(step.phrase)}"
