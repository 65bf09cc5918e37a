"""Hop chains sampled on the link graph of a corpus.

A chain is a random walk d0 -> d1 -> ... -> dk over document links. Every step needs a clue: a
sentence of the earlier document that names the later one. Walks never revisit a document,
damp hubs (a document linked from everywhere is a poor bridge), avoid dead ends by
backtracking, and start from documents spread over the corpus.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.records import Document
from hopforge.synth.clauses import (
    clause_problem,
    definition_phrase,
    opens_sense,
    predicate_phrase,
    strip_boilerplate,
)
from hopforge.synth.records import Hop

MAX_HOPS = 8
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "jr", "sr", "no", "fig", "cf", "al", "approx", "ca", "n", "v", "adj", "adv", "pl", "esp", "lit"]
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_SEE_ALSO = re.compile(r"^\W*(?:see|see also|compare|cf\.?|also|synonym|antonym)\b", re.IGNORECASE)
_SENTENCE_STARTERS = frozenset(
    ["Compare", "See", "Syn.", "Cf.", "Also", "This", "The", "It", "In", "These",
     "There", "For", "Often", "Used", "Abbrev.", "Prob."]
)
_PAREN_SUFFIX = re.compile(r"\s*\([^)]*\)\s*$")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (whitespace collapsed), keeping common abbreviations whole."""
    flat = " ".join(text.split())
    if not flat:
        return []
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(flat):
        piece = flat[start : m.start()].rstrip()
        last = piece.rsplit(" ", 1)[-1].rstrip(".").lower()
        initial = len(last) == 1 and last.isalpha()
        if initial and flat[m.end() :].split(" ", 1)[0] in _SENTENCE_STARTERS:
            initial = False  # "... in C. Compare ...": a sentence ends with a one-letter name
        if last in _ABBREVIATIONS or initial or (last.isdigit() and len(last) <= 2):
            continue  # "e.g. Foo", "J. Smith", "n. A person ...", "1. A person ..."
        out.append(flat[start : m.end()].strip())
        start = m.end()
    out.append(flat[start:].strip())
    return [s for s in out if s]


def mention_names(doc: Document) -> tuple[str, ...]:
    """Surface forms a text may use for `doc`: its title, shortened forms, and its aliases."""
    names: list[str] = []
    for name in (doc.title, *doc.aliases):
        name = " ".join(name.split())
        for form in (name, _PAREN_SUFFIX.sub("", name), name.split(",", 1)[0]):
            form = form.strip(" ,")
            if len(form) >= 2 and form not in names:
                names.append(form)
    return tuple(names)


def name_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any of `names` as whole words (names of one or two letters: exact case)."""
    parts: list[str] = []
    for name in sorted(set(names), key=len, reverse=True):
        body = re.escape(name)
        parts.append(body if len(name) > 2 else f"(?-i:{body})")
    if not parts:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(parts) + r")(?![\w-])", re.IGNORECASE)


_NAME_WORD = re.compile(r"[A-Z][\w'-]*")


def names_entity(text: str, m: re.Match[str], *, capitalized: bool) -> bool:
    """Whether a match names the document rather than a common word or part of a longer name;
    `capitalized`: the document's names are written with capitals.

    "heart" does not name the film "Heart", and "Empire" in "the Byzantine Empire" or "The
    Empire Strikes Back" is part of another name.
    """
    found = m.group(0)
    if capitalized and found.islower():
        return False
    before = text[: m.start()].rstrip().rsplit(" ", 1)[-1] if m.start() else ""
    after = text[m.end() :].lstrip().split(" ", 1)[0] if m.end() < len(text) else ""
    at_start = not text[: m.start()].strip() or text[: m.start()].rstrip().endswith((".", ":"))
    joined_before = bool(before) and not at_start and _NAME_WORD.fullmatch(before) is not None
    joined_after = _NAME_WORD.fullmatch(after.rstrip(".,;:)\"'”’")) is not None
    if " " in found:  # a multi-word name is specific enough
        return True
    return not (joined_before and before not in ("The", "A", "An")) and not joined_after


def usable_clue(
    sentence: str,
    *,
    min_words: int = 4,
    max_words: int = 40,
    opening: bool = True,
    predicates: bool = True,
) -> bool:
    """A sentence that can carry a hop: not a bare cross-reference list, not too short or long,
    and still a full clause once dictionary boilerplate is dropped (or a definition, where it is
    `opening` a document or a sense; or with `predicates`, a dictionary sense that opens with
    its predicate, "Used of ...")."""
    words = sentence.split()
    if not min_words <= len(words) <= max_words:
        return False
    if _SEE_ALSO.match(sentence):
        return False
    if sentence.count(",") > max(4, len(words) // 5):
        return False
    return readable_clue(strip_boilerplate(sentence), opening=opening, predicates=predicates)


def readable_clue(text: str, *, opening: bool, predicates: bool = True) -> bool:
    """Whether a cleaned clue reads as a full clause, or as a definition ("A person who ...")
    where it opens a document or sense, or as a predicate of its subject ("Used of ...")."""
    problem = clause_problem(text)
    if not problem:
        return True
    if (opening or problem == "infinitive") and definition_phrase(text) is not None:
        return True
    return predicates and problem == "no_subject" and predicate_phrase(text) is not None


_GRAMMAR_TAG = re.compile(
    r"^\s*(?:(?:n|adj|adv|vt|vi|v|interj|pl|prep|conj)\.|/[^/]{1,40}/|<[^>]+>|\d\.\s|\[)"
)


def dictionary_like(docs: Sequence[Document], *, sample: int = 400) -> bool:
    """Whether a corpus reads like a dictionary: many entries open with a grammar tag, a
    pronunciation, a sense number, or a definition instead of a sentence about a name."""
    if not docs:
        return False
    step = max(1, len(docs) // sample)
    picked = docs[::step]
    hits = 0
    for doc in picked:
        if _GRAMMAR_TAG.match(doc.text):
            hits += 1
            continue
        sentences = split_sentences(doc.text)
        if sentences and definition_phrase(strip_boilerplate(sentences[0])) is not None:
            hits += 1
    return hits >= 0.3 * len(picked)


@dataclass(frozen=True, slots=True, kw_only=True)
class Chain:
    """A sampled walk: `docs` in reading order, one `Hop` per step."""

    docs: tuple[str, ...]
    hops: tuple[Hop, ...]


class LinkGraph:
    """Documents, their out-links restricted to the corpus, in-degrees and cached clues."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs: dict[str, Document] = {d.doc_id: d for d in docs}
        self.order: tuple[str, ...] = tuple(self.docs)
        self.out: dict[str, tuple[str, ...]] = {}
        indeg: dict[str, int] = dict.fromkeys(self.order, 0)
        for doc_id, doc in self.docs.items():
            seen: dict[str, None] = {}
            for dst in doc.links:
                if dst in self.docs and dst != doc_id:
                    seen[dst] = None
            self.out[doc_id] = tuple(seen)
            for dst in seen:
                indeg[dst] += 1
        self.indegree = indeg
        self.inbound: dict[str, list[str]] = {d: [] for d in self.order}
        for src in self.order:
            for dst in self.out[src]:
                self.inbound[dst].append(src)
        self.memo: dict[str, Any] = {}  # tables derived from the corpus, shared by all users
        self._clues: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._sentences: dict[str, list[str]] = {}
        self._patterns: dict[str, re.Pattern[str] | None] = {}
        self._dictionary: bool | None = None

    @property
    def dictionary(self) -> bool:
        """Whether the corpus reads like a dictionary (see `dictionary_like`), computed once."""
        if self._dictionary is None:
            self._dictionary = dictionary_like(list(self.docs.values()))
        return self._dictionary

    def weight(self, doc_id: str) -> float:
        """Hub damping: a document linked from many others is a less likely next step."""
        return 1.0 / math.log(2.0 + self.indegree[doc_id])

    def sentences(self, doc_id: str) -> list[str]:
        if doc_id not in self._sentences:
            self._sentences[doc_id] = split_sentences(self.docs[doc_id].text)
        return self._sentences[doc_id]

    def pattern(self, doc_id: str) -> re.Pattern[str] | None:
        """The regex matching the names of `doc_id` (cached)."""
        if doc_id not in self._patterns:
            self._patterns[doc_id] = name_pattern(mention_names(self.docs[doc_id]))
        return self._patterns[doc_id]

    def clue(self, src: str, dst: str) -> tuple[str, str] | None:
        """(the shortest usable sentence of `src` naming `dst`, the name as written) or None."""
        key = (src, dst)
        if key not in self._clues:
            self._clues[key] = self._find_clue(src, dst)
        return self._clues[key]

    def _find_clue(self, src: str, dst: str) -> tuple[str, str] | None:
        pattern = self.pattern(dst)
        if pattern is None:
            return None
        best: tuple[str, str] | None = None
        upper = any(c.isupper() for c in self.docs[dst].title)
        for i, sentence in enumerate(self.sentences(src)):
            text = strip_boilerplate(sentence)  # a name only in "Compare X." is no clue
            m = next((m for m in pattern.finditer(text) if names_entity(text, m, capitalized=upper)),
                     None)
            opening = opens_sense(sentence, first=i == 0)
            if (m and usable_clue(sentence, opening=opening, predicates=self.dictionary)
                    and (best is None or len(sentence) < len(best[0]))):
                best = sentence, m.group(0)
        return best

    def opens_sense(self, doc_id: str, sentence: str) -> bool:
        """Whether `sentence` opens `doc_id`'s text or one of its dictionary senses."""
        sentences = self.sentences(doc_id)
        return opens_sense(sentence, first=bool(sentences) and sentences[0] == sentence)

    def hop(self, src: str, dst: str) -> Hop | None:
        found = self.clue(src, dst)
        if found is None:
            return None
        return Hop(from_doc=src, to_doc=dst, clue=found[0], bridge=found[1])


def weighted_order(items: Sequence[str], weights: Sequence[float], rng: random.Random) -> list[str]:
    """A random order where heavier items tend to come first (Efraimidis-Spirakis keys)."""
    keyed = [(rng.random() ** (1.0 / w), i) for i, w in enumerate(weights)]
    keyed.sort(reverse=True)
    return [items[i] for _, i in keyed]


def walk(
    graph: LinkGraph,
    start: str,
    hops: int,
    rng: random.Random,
    *,
    budget: int = 200,
    branch: int = 6,
) -> Chain | None:
    """A chain of exactly `hops` steps from `start`, or None when none is found within `budget`.

    No document is visited twice, no document of the chain links directly to one more than a
    step ahead (that would let a solver skip a hop), and steps into dead ends are avoided.
    """
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be in 1..{MAX_HOPS}, got {hops}")
    expansions = 0

    def extend(path: list[str], found: list[Hop]) -> list[Hop] | None:
        nonlocal expansions
        if len(found) == hops:
            return found
        expansions += 1
        if expansions > budget:
            return None
        here = path[-1]
        need_more = len(found) + 1 < hops
        cands = [
            d
            for d in graph.out[here]
            if d not in path
            and not any(d in graph.out[p] for p in path[:-1])
            and (not need_more or graph.out[d])
        ]
        if not cands:
            return None
        order = weighted_order(cands, [graph.weight(d) for d in cands], rng)
        tried = 0
        for nxt in order:
            step = graph.hop(here, nxt)
            if step is None:
                continue
            done = extend([*path, nxt], [*found, step])
            if done is not None:
                return done
            tried += 1
            if tried >= branch or expansions > budget:
                break
        return None

    found = extend([start], [])
    if found is None:
        return None
    return Chain(docs=(start, *(h.to_doc for h in found)), hops=tuple(found))


def spread_starts(graph: LinkGraph, rng: random.Random) -> Iterator[str]:
    """Start documents with out-links, each used once per shuffled round over the corpus."""
    pool = [d for d in graph.order if graph.out[d]]
    while pool:
        rng.shuffle(pool)
        yield from list(pool)


def sample_chains(
    graph: LinkGraph,
    rng: random.Random,
    n: int,
    *,
    min_hops: int = 2,
    max_hops: int = 4,
    max_tries: int | None = None,
) -> list[Chain]:
    """Up to `n` distinct chains with 2..K hops (lengths drawn uniformly), deterministic for `rng`."""
    if not 1 <= min_hops <= max_hops <= MAX_HOPS:
        raise ValueError(
            f"need 1 <= min_hops <= max_hops <= {MAX_HOPS}, got {min_hops}..{max_hops}"
        )
    chains: list[Chain] = []
    seen: set[tuple[str, ...]] = set()
    tries = max_tries if max_tries is not None else 20 * n + 50
    starts = spread_starts(graph, rng)
    for _ in range(tries):
        if len(chains) >= n:
            break
        start = next(starts, None)
        if start is None:
            break
        chain = walk(graph, start, rng.randint(min_hops, max_hops), rng)
        if chain is not None and chain.docs not in seen:
            seen.add(chain.docs)
            chains.append(chain)
    return chains


def titles(graph: LinkGraph, doc_ids: Sequence[str]) -> list[str]:
    """Titles of `doc_ids`, for logs and tests."""
    return [graph.docs[d].title for d in doc_ids]


def docs_by_title(docs: Mapping[str, Document]) -> dict[str, str]:
    """Lower-cased title -> doc_id (first wins)."""
    out: dict[str, str] = {}
    for doc_id, doc in docs.items():
        out.setdefault(doc.title.lower(), doc_id)
    return out
