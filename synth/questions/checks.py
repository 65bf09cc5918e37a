"""The checks a question must pass; each reads the spec and returns what failed (or "").

- no single search: the whole text, each sentence, each clause and each quoted phrase searched
  alone (top `k`) returns neither the answer document nor an evidence document whose text names
  the answer (comparison: never both compared documents; count and list: never every matching
  item);
- leakage: the answer or a hidden document's name in the text, also inside a longer word or
  inflected ("hackers", "mung's");
- answer type, uniqueness on the corpus, placeholders, grounding (every step's phrase present);
- answerable: every title the solver must read and search is found by searching it;
- near-duplicates of accepted questions (word-shingle Jaccard, MinHash LSH).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from hopforge.corpus.records import Hit
from hopforge.synth.answers import list_items, normalize_answer
from hopforge.synth.diversity import jaccard, shingles
from hopforge.synth.questions.families import family_of
from hopforge.synth.questions.graph import CorpusGraph, names, years
from hopforge.synth.questions.wording import quoted
from hopforge.synth.records import NONE, NOT_FOUND, Question, Spec

if TYPE_CHECKING:
    from datasketch import MinHash

_LETTER = re.compile(r"(?<![\w.'’-])[A-Z](?![\w'’-])")
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"")
_SENTENCE = re.compile(r"(?<=[.?!;:])\s+")
_CLAUSE = re.compile(r",\s+|\s+then\s+|;\s+")


class SearchBackend(Protocol):
    """What the checks need from `hopforge.corpus.search.Searcher`."""

    @property
    def default_mode(self) -> str: ...

    def search_batch(
        self, queries: list[str], k: int = 10, mode: str = "hybrid"
    ) -> list[list[Hit]]: ...


def probe_queries(text: str) -> list[str]:
    """The whole text, each sentence, each clause and each quoted phrase, without repeats."""
    out = [text]
    for sentence in _SENTENCE.split(text):
        out.append(sentence)
        out.extend(_CLAUSE.split(sentence))
    out.extend(quoted(text))
    cleaned = (" ".join(s.strip(" .,;:?!").split()) for s in out)
    return list(dict.fromkeys(s for s in cleaned if len(s) >= 3))


def naming_docs(q: Question, graph: CorpusGraph) -> set[str]:
    """The answer document and the evidence documents whose text names the answer."""
    if q.spec is None or q.spec.answer_type in ("not_found", "count", "list"):
        return {q.answer_doc} - {""}
    found = {q.answer_doc} - {""}
    forms = [q.answer] if q.spec.answer_type == "year" else list(names(graph.docs[q.answer_doc]))
    for doc_id in q.evidence:
        text = graph.docs[doc_id].text
        if any(re.search(rf"(?<!\w){re.escape(f)}(?!\w)", text, re.IGNORECASE) for f in forms):
            found.add(doc_id)
    return found


def shortcut(q: Question, graph: CorpusGraph, results: Sequence[tuple[str, list[Hit]]]
             ) -> tuple[str, int | None]:
    """(the query that finds the answer in one search, the rank), or ("", None)."""
    spec = q.spec
    assert spec is not None
    family = family_of(spec)
    forbidden = naming_docs(q, graph) if family.shortcut_by_name else set()
    together = family.together(spec)
    for query, hits in results:
        ids = [h.doc_id for h in hits]
        for rank, doc_id in enumerate(ids, start=1):
            if doc_id in forbidden:
                return query, rank
        if together and together <= set(ids):
            return query, max(ids.index(d) + 1 for d in together)
    return "", None


def _hidden(q: Question) -> list[str]:
    """The documents the text may not name (the spec's family says which)."""
    if q.spec is None:
        return list(q.evidence) + [q.answer_doc] * bool(q.answer_doc)
    return family_of(q.spec).hidden(q)


def leak(q: Question, graph: CorpusGraph) -> str:
    """The answer or hidden name that the question text gives away, or ""."""
    text = q.question
    forms: list[str] = []
    if q.answer not in (NOT_FOUND, NONE) and (q.spec is None or q.spec.answer_type != "list"):
        forms += [q.answer, *q.answer_aliases]
    for doc_id in _hidden(q):
        forms += names(graph.docs[doc_id])
    named = {graph.title(s.doc).lower() for s in (q.spec.steps if q.spec else ())
             if s.relation == "start"}
    for form in dict.fromkeys(f for f in forms if f.strip()):
        if form.lower() in named:
            continue
        if len(form) >= 4 and not form.isdigit():
            if form.lower() in text.lower():
                return form
        elif re.search(rf"(?<![\w-]){re.escape(form)}(?:'s|’s|s|es)?(?![\w-])", text):
            return form
    return ""


def answer_type_problem(q: Question, graph: CorpusGraph) -> str:
    """"" when the answer is of the spec's type and stated where the spec says, else why not."""
    spec = q.spec
    if spec is None:
        return "no_spec"
    kind = spec.answer_type
    if kind == "not_found":
        return "" if q.answer in (NOT_FOUND, NONE) and spec.unanswerable else (
            "not_found_without_reason")
    if kind == "title":
        ok = normalize_answer(q.answer) in {normalize_answer(n)
                                            for n in names(graph.docs[spec.target])}
        return "" if ok else "not_a_title"
    if kind == "year":
        return "" if q.answer in years(graph.docs[spec.target].text) else "year_not_stated"
    if kind == "count":
        return "" if q.answer == str(len(spec.matching)) else "wrong_count"
    want = {normalize_answer(graph.title(m)) for m in spec.matching}
    return "" if list_items(q.answer) == want else "wrong_list"


def unique(spec: Spec, graph: CorpusGraph) -> bool:
    """Whether the corpus gives exactly the spec's answer (re-derived by its family)."""
    return family_of(spec).unique(spec, graph)


def placeholder(text: str, graph: CorpusGraph) -> str:
    """A stand-in letter ("X") in the text, or "": letters are never used as stand-ins
    (letters inside quoted titles and phrases are the corpus's own words)."""
    for letter in _LETTER.findall(_QUOTED.sub(" ", text)):
        if letter not in ("A", "I"):
            taken = any(graph.title(d) == letter for d in graph.order)
            return f"{letter}_is_a_name" if taken else letter
    return ""


def ungrounded(q: Question, graph: CorpusGraph) -> str:
    """The first part of the spec the text does not carry, or "": a named start, a phrase
    clue's words and the name an entity clue quotes, which no wording can replace. (How a composer
    words a date or a number is the read-back check's to compare.)"""
    spec = q.spec
    assert spec is not None
    low = q.question.lower()
    needed = [s.phrase for s in spec.steps if s.phrase]
    needed += [graph.title(s.doc) for s in spec.steps if s.relation == "start"]
    needed += [spec.pattern] if spec.pattern else []
    clues = [s.fact for s in spec.steps if s.fact] + ([spec.condition] if spec.condition else [])
    needed += [c.key for c in clues if c.kind == "entity" and c.target]
    for part in needed:
        if part.lower() not in low:
            return part
    return ""


def form_problem(text: str, *, min_words: int, max_words: int) -> str:
    """Length bounds, no control characters, ends as a question or a request."""
    words = len(text.split())
    if not text.strip():
        return "empty_question"
    if words < min_words:
        return f"too_short({words} words < {min_words})"
    if words > max_words:
        return f"too_long({words} words > {max_words})"
    if any(unicodedata.category(c) == "Cc" for c in text):
        return "control_characters"
    if not text.rstrip().endswith(("?", ".")):
        return "no_question_mark"
    return ""


def reachable(graph: CorpusGraph, spec: Spec) -> list[tuple[str, str]]:
    """(query, doc_id): the searches a solver makes to reach documents by what it has read."""
    out: list[tuple[str, str]] = []
    for step in spec.steps:
        if step.relation == "start":
            out.append((graph.title(step.doc), step.doc))
        elif step.doc and step.via:
            surface = next((m.surface for m in graph.mentions[step.via] if m.doc == step.doc),
                           graph.title(step.doc))
            out.append((surface, step.doc))
    return out


class NearDuplicates:
    """Accepted questions, indexed for near-duplicate lookups (MinHash LSH, exact check after)."""

    def __init__(self, threshold: float = 0.7, *, num_perm: int = 64) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold, self.num_perm = threshold, num_perm
        from datasketch import MinHashLSH  # loads scipy: only when questions are made

        self._lsh = MinHashLSH(threshold=min(threshold, 0.9), num_perm=num_perm)
        self._shingles: dict[str, set[str]] = {}
        self._order: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._order)

    def _minhash(self, grams: set[str]) -> MinHash:
        from datasketch import MinHash

        m = MinHash(num_perm=self.num_perm, seed=1)
        m.update_batch([g.encode("utf-8") for g in sorted(grams)])
        return m

    def find(self, text: str) -> str:
        """The qid of the earliest accepted question this one nearly repeats, or ""."""
        grams = shingles(normalize_answer(text).split())
        if not grams or not self._order:
            return ""
        matches = [key for key in self._lsh.query(self._minhash(grams))
                   if jaccard(grams, self._shingles[key]) >= self.threshold]
        return min(matches, key=self._order.__getitem__) if matches else ""

    def add(self, qid: str, text: str) -> None:
        grams = shingles(normalize_answer(text).split())
        if qid in self._order or not grams:
            return
        self._order[qid] = len(self._order)
        self._shingles[qid] = grams
        self._lsh.insert(qid, self._minhash(grams))

    def add_all(self, questions: Iterable[Question]) -> None:
        for q in questions:
            self.add(q.qid, q.question)
