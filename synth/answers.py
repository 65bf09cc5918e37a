"""Answer normalisation (the SQuAD rules, in hopforge.synth.reward), shared by the question checks
and the scoring, free-text matching of a stated answer, and the grade of a final answer against
a question (the answer reward, shared by the scoring, the exporters and the eval)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hopforge.synth.records import NONE, NOT_FOUND, Question
from hopforge.synth.reward import grade, list_items, normalize_answer, says_not_found

__all__ = ["answer_type", "answers_match", "gold_answers", "grade_answer", "list_items",
           "normalize_answer", "says_not_found", "unanswerable"]


def answers_match(response: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Whether a free-text response states the answer (or an alias) as whole words."""
    said = f" {normalize_answer(response)} "
    return any(f" {n} " in said for n in (normalize_answer(a) for a in (answer, *aliases)) if n)


def unanswerable(question: Question) -> bool:
    """True when the right answer is a justified "not found"."""
    spec = question.spec
    return (question.kind == "unanswerable" or bool(spec and spec.unanswerable)
            or normalize_answer(question.answer) in (NOT_FOUND, NONE))


def answer_type(question: Question) -> str:
    """How the reward compares answers: "not_found", the spec's type, or "" (unknown)."""
    if unanswerable(question):
        return "not_found"
    return question.spec.answer_type if question.spec is not None else ""


def gold_answers(answer: str, aliases: Iterable[str] = ()) -> tuple[str, ...]:
    """The answer followed by its aliases, without empty or repeated (normalized) entries."""
    seen: set[str] = set()
    out: list[str] = []
    for a in (answer, *aliases):
        n = normalize_answer(a)
        if n and n not in seen:
            seen.add(n)
            out.append(a)
    return tuple(out)


def grade_answer(prediction: str, question: Question) -> float:
    """The answer reward of `prediction` for `question` (1.0 or 0.0), as the RL rows grade it."""
    golds = gold_answers(question.answer, question.answer_aliases)
    return grade(prediction, golds, answer_type(question))
