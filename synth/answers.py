"""Answer normalisation (the SQuAD rules), shared by the question checks and the scoring."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from hopforge.synth.records import NOT_FOUND

_PUNCT = frozenset(string.punctuation) | frozenset("‘’“”–—…«»")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LIST_SPLIT = re.compile(r"\s*(?:;|,|\n|\band\b)\s*")
_NOT_FOUND = re.compile(r"\b(not found|no (?:such|matching) \w+|none (?:of them|found)?|"
                        r"does not exist|no answer)\b", re.IGNORECASE)


def normalize_answer(text: str) -> str:
    """Lowercase, strip punctuation and articles, and collapse whitespace (SQuAD rules)."""
    text = text.lower()
    text = "".join(" " if ch in _PUNCT else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answers_match(response: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Whether a free-text response states the answer (or an alias) as whole words."""
    said = f" {normalize_answer(response)} "
    return any(f" {n} " in said for n in (normalize_answer(a) for a in (answer, *aliases)) if n)


def list_items(text: str) -> set[str]:
    """The normalised items of a list answer ("a; b and c")."""
    return {n for part in _LIST_SPLIT.split(text) if (n := normalize_answer(part))}


def says_not_found(text: str) -> bool:
    """Whether an answer is a stop for lack of evidence ("not found", "none of them", ...)."""
    return bool(_NOT_FOUND.search(text)) or normalize_answer(text) == NOT_FOUND
