"""The tasks of an eval: a ladder of questions per turn budget, from a build or a JSONL file.

For budget B the ladder holds up to N questions whose `min_calls` lies in [ceil(B/2), B]. When
fewer fit, it is filled with the questions whose `min_calls` is nearest below B/2, and the
ladder's `note` says so. A question without `min_calls` (made before task specs) gets an
estimate of two calls per evidence document plus the answer, and the note says that too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts
from hopforge.corpus.textio import json_lines
from hopforge.synth.evaluation.config import EvalInputError
from hopforge.synth.records import Question


@dataclass(frozen=True, slots=True, kw_only=True)
class Ladder:
    """The tasks run at one budget, with a note when they do not all fit its window."""

    budget: int
    tasks: tuple[Question, ...]
    low: int  # the window [low, budget] of min_calls
    note: str = ""

    @property
    def min_calls(self) -> list[int]:
        return [task_min_calls(q) for q in self.tasks]


def task_min_calls(question: Question) -> int:
    """`min_calls` of a question, or the estimate 2 x evidence documents + 1 when it has none."""
    if question.min_calls > 0:
        return question.min_calls
    return 2 * max(1, len(question.evidence)) + 1


def _order(seed: int, qid: str) -> str:
    return hashlib.sha256(f"{seed}\x00{qid}".encode()).hexdigest()


def select_ladders(questions: Sequence[Question], budgets: Sequence[int], n: int, *,
                   seed: int = 0) -> list[Ladder]:
    """One ladder of up to `n` tasks per budget (see the module docstring)."""
    if not questions:
        raise EvalInputError("there are no questions to evaluate on")
    estimated = sum(1 for q in questions if q.min_calls <= 0)
    ladders = []
    for budget in budgets:
        low = math.ceil(budget / 2)
        ranked = sorted(questions, key=lambda q: _order(seed, q.qid))
        fit = [q for q in ranked if low <= task_min_calls(q) <= budget]
        picked = fit[:n]
        notes = []
        if len(picked) < n:
            below = sorted((q for q in ranked if task_min_calls(q) < low),
                           key=lambda q: -task_min_calls(q))
            extra = below[: n - len(picked)]
            picked += extra
            if extra:
                lo, hi = min(map(task_min_calls, extra)), max(map(task_min_calls, extra))
                span = f"{lo}" if lo == hi else f"{lo}-{hi}"
                notes.append(f"{len(fit)} of {n} tasks have min_calls in [{low}, {budget}]; "
                             f"{len(extra)} more with min_calls {span}, the nearest below")
            elif len(fit) < n:
                notes.append(f"{len(fit)} of {n} tasks have min_calls in [{low}, {budget}] and "
                             "none needs fewer")
        if estimated and picked:
            notes.append(f"min_calls estimated (2 per evidence document + 1) for {estimated} "
                         "questions made before task specs")
        ladders.append(Ladder(budget=budget, tasks=tuple(picked), low=low,
                              note="; ".join(notes)))
    return ladders


def load_tasks(path: Path) -> list[Question]:
    """Questions from a JSONL file of `Question` rows (qid, question and answer at least)."""
    if not path.is_file():
        raise EvalInputError(f"--tasks {path}: no such file; give a JSONL file of questions")
    out: list[Question] = []
    for number, row in json_lines(path, "write one question object per line"):
        missing = [k for k in ("qid", "question", "answer") if not isinstance(row, dict)
                   or not row.get(k)]
        if missing:
            raise EvalInputError(f"{path}:{number}: the question has no {', '.join(missing)}; "
                                 "each row needs qid, question and answer")
        try:
            question = Question.from_row(row)
        except TypeError as exc:
            raise EvalInputError(f"{path}:{number}: not a question row ({exc})") from None
        if not question.rejected:
            out.append(question)
    return out


def build_questions(build: BuildDir) -> list[Question]:
    """The accepted questions of BUILD/questions (empty `rejected`), in order."""
    if not build.questions.is_dir():
        raise EvalInputError(f"no questions in {build.questions}: run "
                             f"`hopforge questions {build.root}` first")
    return [q for q in map(Question.from_row, read_parts(build.questions)) if not q.rejected]


def tracked_docs(question: Question) -> tuple[str, ...]:
    """The documents whose reading an eval follows: an aggregation's items, else the evidence."""
    spec = question.spec
    if spec is not None and spec.items:
        return spec.items
    docs = [*question.evidence, *([question.answer_doc] if question.answer_doc else [])]
    return tuple(dict.fromkeys(docs))


def check_phrase(question: Question, doc_id: str) -> str:
    """What a solver looks for in `doc_id`: the aggregation condition's word, or the word of
    its step's clue (a phrase, a date's relation, a number's unit, a category, a name)."""
    spec = question.spec
    if spec is None:
        return ""
    if spec.items and (spec.pattern or spec.condition):
        return spec.pattern or (spec.condition.key if spec.condition else "")
    for s in spec.steps:
        if s.doc == doc_id and (s.phrase or s.fact):
            return s.phrase or (s.fact.key if s.fact else "")
    return ""
