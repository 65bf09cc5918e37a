"""The checks that make a question worth training on; each returns a verdict the stage stores.

- leakage: the answer, an alias, or the name of a hidden evidence document is in the question;
- shortcut: one search with the question text ranks the answer document within the top r
  (a comparison: both compared documents);
- closed-book (model teacher only): the teacher answers correctly without tools;
- uniqueness (intersection): no other document is linked from every clue's document;
- well-formed: length bounds, exactly one question, ending with a question mark; and readable:
  each clue a full clause, no dictionary boilerplate, no "the" + adjective as a noun phrase;
- near-duplicate: word-shingle Jaccard against questions already accepted (MinHash LSH).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from datasketch import MinHash, MinHashLSH
from hopforge.corpus.records import Document, Hit
from hopforge.synth.chains import LinkGraph, mention_names
from hopforge.synth.readability import readability_problem
from hopforge.synth.records import Question

_NON_WORD = re.compile(r"[^\w]+")
_LETTER = re.compile(r"(?<![\w.'-])[XYZWVUTS](?!\.\w)(?![\w-])")  # a letter standing for an entity


class SearchBackend(Protocol):
    """What the shortcut check needs from `hopforge.corpus.search.Searcher`."""

    @property
    def default_mode(self) -> str: ...

    def search_batch(
        self, queries: list[str], k: int = 10, mode: str = "hybrid"
    ) -> list[list[Hit]]: ...


def normalize(text: str) -> str:
    """Lower-case, accents and punctuation removed, single spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def contains_name(text: str, name: str) -> bool:
    """Whether `name` occurs in `text` as whole words, ignoring case and punctuation; short names
    (1-2 letters) must match exactly, and a capitalized one-word name is not matched by a
    lower-case word."""
    name = name.strip()
    if len(name) <= 2:
        return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None
    if " " not in name and any(c.isupper() for c in name):  # "Heart" is not in "heart attack"
        found = re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)
        if any(not m.group(0).islower() for m in found):
            return True
        text = " ".join(w for w in text.split() if not w.islower())
    norm = normalize(name)
    return bool(norm) and f" {norm} " in f" {normalize(text)} "


def hidden_docs(q: Question) -> list[str]:
    """Evidence documents the question must not name: all but the start of a chain."""
    return list(q.evidence[1:] if q.kind == "chain" else q.evidence)


def leak_names(q: Question, docs: Mapping[str, Document]) -> list[str]:
    """The answer, its aliases, the bridges and the names of the hidden evidence documents."""
    names = [q.answer, *q.answer_aliases, *(h.bridge for h in q.hops)]
    start = q.evidence[0] if q.kind == "chain" and q.evidence else None
    names = [n for n in names if not (start and n in mention_names(docs[start]))]
    for doc_id in hidden_docs(q):
        if doc_id in docs:
            names.extend(mention_names(docs[doc_id]))
    return list(dict.fromkeys(n for n in names if n.strip()))


def find_leak(question: str, names: Iterable[str]) -> str:
    """The first of `names` that appears in `question`, or ""."""
    for name in names:
        if contains_name(question, name):
            return name
    return ""


def answer_rank(hits: Sequence[Hit], answer_doc: str) -> int | None:
    """1-based rank of `answer_doc` among `hits`, None when absent."""
    for hit in hits:
        if hit.doc_id == answer_doc:
            return hit.rank
    return None


def shortcut_ranks(
    searcher: SearchBackend, questions: Sequence[Question], *, k: int, mode: str = ""
) -> list[int | None]:
    """For each question, the rank of its answer document for a search with its text.

    A comparison is answered only by reading both compared documents, so its rank is the worse
    of the two: the depth at which one search surfaces everything needed.
    """
    if not questions:
        return []
    texts = [q.question for q in questions]
    results = searcher.search_batch(texts, k=k, mode=mode or searcher.default_mode)
    return [_needed_rank(q, hits) for q, hits in zip(questions, results, strict=True)]


def _needed_rank(q: Question, hits: Sequence[Hit]) -> int | None:
    if q.kind != "comparison":
        return answer_rank(hits, q.answer_doc)
    ranks = [answer_rank(hits, d) for d in q.evidence]
    return None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)


def well_formed_problem(question: str, *, min_words: int, max_words: int) -> str:
    """"" when the text is one well-formed question, else what is wrong with it."""
    words = len(question.split())
    if words < min_words:
        return f"too_short({words} words < {min_words})"
    if words > max_words:
        return f"too_long({words} words > {max_words})"
    if any(unicodedata.category(c) == "Cc" for c in question):
        return "control_characters"
    if not question.rstrip().endswith("?"):
        return "no_question_mark"
    if question.count("?") > 1:
        return "several_questions"
    *before, last = re.split(r"(?<=[.!])\s+", question.strip())
    ask, colon, listed = last.partition(": ")
    if colon and ask.split(" ", 1)[0] in _ASKING:  # "What is X, given these clues: ...?"
        before, last = [*before, listed], ask
    else:
        *more, last = re.split(r"(?<=[:;])\s+", last)
        before = [*before, *more]
    if set(_LETTER.findall(last)) - set(_LETTER.findall(" ".join(before))):
        return "dangling_reference"  # "... What is X?" with X never introduced
    return ""


_ASKING = frozenset(["What", "Which", "Who", "Whose", "When", "Where", "Name", "Identify"])


__all__ = ["readability_problem"]  # with the other checks, importable from here


def intersection_candidates(q: Question, graph: LinkGraph) -> set[str]:
    """Documents linked from every clue's document (the answer should be the only one)."""
    sources = [h.from_doc for h in q.hops]
    if not sources:
        return set()
    found = set(graph.out.get(sources[0], ()))
    for src in sources[1:]:
        found &= set(graph.out.get(src, ()))
    return found


def is_unique(q: Question, graph: LinkGraph) -> bool | None:
    """Intersection questions: whether the answer is the only document satisfying every clue."""
    if q.kind != "intersection":
        return None
    return intersection_candidates(q, graph) == {q.answer_doc}


def answers_match(response: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Whether a free-text response states the answer (or an alias) as whole words."""
    said = f" {normalize(response)} "
    for name in (answer, *aliases):
        norm = normalize(name)
        if norm and f" {norm} " in said:
            return True
    return False


def shingles(text: str, n: int = 3) -> set[str]:
    words = tokens(text)
    if len(words) < n:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicates:
    """Accepted questions, indexed for near-duplicate lookups (MinHash LSH, exact check after)."""

    def __init__(self, threshold: float = 0.7, *, num_perm: int = 64) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.num_perm = num_perm
        # LSH finds candidates (its banding needs a threshold below 1); Jaccard decides.
        self._lsh = MinHashLSH(threshold=min(threshold, 0.9), num_perm=num_perm)
        self._shingles: dict[str, set[str]] = {}
        self._order: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._order)

    def _minhash(self, grams: set[str]) -> MinHash:
        m = MinHash(num_perm=self.num_perm, seed=1)
        m.update_batch([g.encode("utf-8") for g in sorted(grams)])
        return m

    def find(self, text: str) -> str:
        """The qid of the earliest accepted question this one nearly repeats, or ""."""
        grams = shingles(text)
        if not grams or not self._order:
            return ""
        matches = [
            key
            for key in self._lsh.query(self._minhash(grams))
            if jaccard(grams, self._shingles[key]) >= self.threshold
        ]
        return min(matches, key=self._order.__getitem__) if matches else ""

    def add(self, qid: str, text: str) -> None:
        grams = shingles(text)
        if qid in self._order or not grams:
            return
        self._order[qid] = len(self._order)
        self._shingles[qid] = grams
        self._lsh.insert(qid, self._minhash(grams))
