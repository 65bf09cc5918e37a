"""Decontamination against user-supplied evaluation sets.

A question is contaminated when
- "question": it shares a word n-gram (default n=8) with an evaluation question (a question
  shorter than n, but at least 3 words, counts as one n-gram of its whole length), or
- "answer": its answer equals an evaluation answer (after normalization) and its question shares
  a shorter n-gram (default 3) with that evaluation item's question.
Evaluation files are JSONL, JSON (a list, or an object with a list under "data"), Parquet, or
plain text with one question per line.
"""

from __future__ import annotations

import json
import string
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.export.records import Contamination, EvalItem
from hopforge.synth.records import Question

QUESTION_KEYS = ("question", "query", "problem", "prompt", "input")
ANSWER_KEYS = (
    "answer",
    "answers",
    "answer_aliases",
    "golden_answers",
    "target",
    "targets",
    "label",
)
_PUNCT = str.maketrans({c: " " for c in string.punctuation})


def normalize_tokens(text: str) -> list[str]:
    """Lowercase words without punctuation or articles (as in SQuAD's answer normalization)."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCT)
    return [w for w in text.split() if w not in ("a", "an", "the")]


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """Word n-grams; a sequence shorter than n is one gram of its own length."""
    if not tokens:
        return set()
    if len(tokens) < n:
        return {tuple(tokens)}
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def eval_item(row: Any, source: str) -> EvalItem | None:
    """One evaluation item from a row (a dict with a question field, or a bare string)."""
    if isinstance(row, str):
        return EvalItem(question=row, source=source) if row.strip() else None
    if not isinstance(row, dict):
        return None
    question = next((row[k] for k in QUESTION_KEYS if isinstance(row.get(k), str)), None)
    if question is None:
        return None
    answers = tuple(dict.fromkeys(s for k in ANSWER_KEYS for s in _strings(row.get(k))))
    return EvalItem(question=question, answers=answers, source=source)


def load_eval_sets(paths: Sequence[str | Path]) -> list[EvalItem]:
    """Read evaluation items from files; a file with no readable item is an error."""
    items: list[EvalItem] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise HopforgeError(f"evaluation set {path} does not exist: pass an existing file")
        rows = _read_rows(path)
        found = [it for it in (eval_item(r, path.name) for r in rows) if it is not None]
        if not found:
            raise HopforgeError(
                f"no evaluation items in {path}: expected rows with one of the fields "
                f"{', '.join(QUESTION_KEYS)} (JSONL, JSON, Parquet) or one question per line"
            )
        items.extend(found)
    return items


def _read_rows(path: Path) -> list[Any]:
    name = path.name.lower()
    if name.endswith(".parquet"):
        import polars as pl

        return pl.read_parquet(path).to_dicts()
    text = path.read_text(encoding="utf-8")
    if name.endswith((".jsonl", ".ndjson")):
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise HopforgeError(
                f"{path} is not valid JSONL ({exc}); fix the line or convert it"
            ) from exc
    if name.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HopforgeError(f"{path} is not valid JSON ({exc})") from exc
        if isinstance(data, dict):
            data = next((v for v in data.values() if isinstance(v, list)), [data])
        return data if isinstance(data, list) else [data]
    return [line for line in text.splitlines() if line.strip()]


class Decontaminator:
    """An index of evaluation items that flags questions overlapping them."""

    MIN_TOKENS = 3  # a question shorter than this is never matched as a whole

    def __init__(self, items: Iterable[EvalItem], *, n: int = 8, answer_context_n: int = 3) -> None:
        self.n, self.context_n = n, answer_context_n
        self._grams: dict[tuple[str, ...], EvalItem] = {}  # n-grams and whole short questions
        self._short_lengths: set[int] = set()
        self._texts: list[tuple[str, EvalItem]] = []
        self._answers: dict[tuple[str, ...], list[tuple[set[tuple[str, ...]], EvalItem]]] = {}
        for item in items:
            tokens = normalize_tokens(item.question)
            if len(tokens) >= self.MIN_TOKENS:
                for gram in ngrams(tokens, n):
                    self._grams.setdefault(gram, item)
                if len(tokens) < n:
                    self._short_lengths.add(len(tokens))
                self._texts.append((f" {' '.join(tokens)} ", item))
            context = ngrams(tokens, answer_context_n)
            for answer in item.answers:
                key = tuple(normalize_tokens(answer))
                if key:
                    self._answers.setdefault(key, []).append((context, item))

    def _question_hit(self, tokens: list[str]) -> EvalItem | None:
        if len(tokens) < self.MIN_TOKENS:
            return None
        lengths = sorted(L for L in self._short_lengths if L <= len(tokens))
        for size in ([self.n] if len(tokens) >= self.n else []) + lengths:
            for i in range(len(tokens) - size + 1):
                item = self._grams.get(tuple(tokens[i : i + size]))
                if item is not None:
                    return item
        if len(tokens) < self.n:  # a short question inside a longer evaluation question
            needle = f" {' '.join(tokens)} "
            return next((item for text, item in self._texts if needle in text), None)
        return None

    def check(self, question: Question) -> Contamination | None:
        """The first overlap of `question` with an evaluation item, or None."""
        tokens = normalize_tokens(question.question)
        item = self._question_hit(tokens)
        if item is not None:
            return Contamination(
                qid=question.qid, reason="question", source=item.source, eval_question=item.question
            )
        context = ngrams(tokens, self.context_n)
        for answer in (question.answer, *question.answer_aliases):
            for grams, item in self._answers.get(tuple(normalize_tokens(answer)), ()):
                if grams & context:
                    return Contamination(
                        qid=question.qid,
                        reason="answer",
                        source=item.source,
                        eval_question=item.question,
                    )
        return None


def find_contaminated(
    questions: Iterable[Question],
    items: Sequence[EvalItem],
    *,
    n: int = 8,
    answer_context_n: int = 3,
) -> list[Contamination]:
    """Every question that overlaps an evaluation item, in input order."""
    if not items:
        return []
    index = Decontaminator(items, n=n, answer_context_n=answer_context_n)
    return [hit for q in questions if (hit := index.check(q)) is not None]
