"""Answer normalisation (the SQuAD rules, in hopforge.synth.reward), shared by the question checks
and the scoring, and free-text matching of a stated answer."""

from __future__ import annotations

from collections.abc import Sequence

from hopforge.synth.reward import list_items, normalize_answer, says_not_found

__all__ = ["answers_match", "list_items", "normalize_answer", "says_not_found"]


def answers_match(response: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Whether a free-text response states the answer (or an alias) as whole words."""
    said = f" {normalize_answer(response)} "
    return any(f" {n} " in said for n in (normalize_answer(a) for a in (answer, *aliases)) if n)
