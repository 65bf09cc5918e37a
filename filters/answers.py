"""Answer matching as in the SQuAD evaluation script: normalization, exact match and token F1.

`normalize_answer` (hopforge.synth.answers, shared with the question checks so that both judge an
answer alike) lowercases, removes punctuation, drops the articles a / an / the and collapses
whitespace. A prediction is scored against the gold answer and every alias; the best match counts.
`grade_answer` (hopforge.synth.answers, shared with the eval) is the reward of a final answer
(hopforge.synth.reward.grade: lists as sets, "not found" only on unanswerable questions), the
same function verl and TRL's GRPO call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hopforge.synth.answers import (
    answer_type,
    gold_answers,
    grade_answer,
    list_items,
    normalize_answer,
    unanswerable,
)
from hopforge.synth.records import Question

__all__ = ["answer_is_right", "answer_type", "exact_match", "gold_answers", "grade_answer",
           "list_items", "mentions_answer", "normalize_answer", "token_f1", "unanswerable"]


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 when the normalized prediction equals any normalized gold answer, else 0.0."""
    pred = normalize_answer(prediction)
    if not pred:
        return 0.0
    return 1.0 if any(pred == normalize_answer(g) for g in golds) else 0.0


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """The best token-level F1 of the normalized prediction against any gold answer."""
    pred = normalize_answer(prediction).split()
    if not pred:
        return 0.0
    return max((_f1(pred, normalize_answer(g).split()) for g in golds if normalize_answer(g)),
               default=0.0)


def mentions_answer(text: str, golds: Sequence[str]) -> bool:
    """True when any normalized gold answer occurs as a whole-token span of the normalized text."""
    hay = f" {normalize_answer(text)} "
    return any(f" {g} " in hay for g in (normalize_answer(x) for x in golds) if g)


def answer_is_right(prediction: str, question: Question) -> bool:
    """Whether a final answer is the question's, as the answer reward grades it: "not found"
    only for an unanswerable question, a list as the same set of titles in any order, anything
    else by exact match (aliases too)."""
    return grade_answer(prediction, question) == 1.0
