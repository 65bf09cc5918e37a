"""Search habits and action sequences of trajectories: the non-phrase half of a fingerprint.

- A query *copies the question* when it covers at least `threshold` of the question's content
  words (words that are not stopwords).
- Consecutive queries of a trajectory are classified as a reformulation: repeat (same words),
  narrow (adds words), broaden (drops words), edit (Jaccard >= 0.3) or new.
- Action sequences are tool names per turn ("invalid" when the call did not parse); their n-gram
  entropy (bits) measures how templated the teacher's plans are.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from hopforge.corpus.tools import search_query
from hopforge.filters.logodds import words
from hopforge.synth.records import Trajectory

_STOP = """a an the of in on at to for from by with and or is was were are be been what which who
whom whose where when how that this these those did does do it its as into than then there their
his her he she they them not no"""
STOPWORDS = frozenset(_STOP.split())
REFORMULATIONS = ("repeat", "narrow", "broaden", "edit", "new")


def content_words(text: str) -> set[str]:
    """Lowercased words of `text` that are not stopwords."""
    return {w for w in words(text) if w not in STOPWORDS}


def search_queries(traj: Trajectory) -> list[str]:
    """The query of every parsed search call, in order."""
    out = []
    for t in traj.turns:
        if t.call is not None:
            q = search_query(t.call.name, t.call.arguments)
            if isinstance(q, str):
                out.append(q)
    return out


def copies_question(query: str, question: str, *, threshold: float = 0.7) -> bool:
    """True when the query holds at least `threshold` of the question's content words."""
    qw = content_words(question)
    if not qw:
        return False
    return len(content_words(query) & qw) / len(qw) >= threshold


def reformulation(previous: str, current: str) -> str:
    """How `current` changes `previous`: repeat, narrow, broaden, edit or new."""
    a, b = set(words(previous)), set(words(current))
    if a == b:
        return "repeat"
    if a < b:
        return "narrow"
    if b < a:
        return "broaden"
    union = a | b
    return "edit" if union and len(a & b) / len(union) >= 0.3 else "new"


def reformulations(queries: Sequence[str]) -> list[str]:
    """The reformulation class of each consecutive pair of queries."""
    return [reformulation(p, c) for p, c in itertools.pairwise(queries)]


def actions(traj: Trajectory) -> list[str]:
    """Tool name per turn, "invalid" for calls that did not parse or name no known tool."""
    return [t.call.name if t.call is not None and t.schema_valid else "invalid"
            for t in traj.turns]


def action_signature(seq: Sequence[str]) -> str:
    """The action sequence with runs collapsed: search search open -> "search* open"."""
    out: list[str] = []
    for a in seq:
        if out and out[-1].rstrip("*") == a:
            out[-1] = a + "*"
        else:
            out.append(a)
    return " ".join(out)


def action_ngram_counts(seqs: Iterable[Sequence[str]], n: int = 3) -> Counter[tuple[str, ...]]:
    """Counts of action n-grams, each sequence padded with <s> and </s>."""
    c: Counter[tuple[str, ...]] = Counter()
    for seq in seqs:
        padded = ["<s>", *seq, "</s>"]
        c.update(tuple(padded[i : i + n]) for i in range(max(1, len(padded) - n + 1)))
    return c


def entropy_bits(counts: Counter[tuple[str, ...]] | Counter[str]) -> float:
    """Shannon entropy (bits) of a count distribution."""
    total = sum(counts.values())
    if total == 0:
        return 0.0
    return -sum(c / total * math.log2(c / total) for c in counts.values() if c)
