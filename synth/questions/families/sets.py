"""The sets an aggregation enumerates, and its fallback condition: words some items contain."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from hopforge.corpus.tokenize import ENGLISH_STOPWORDS
from hopforge.synth.questions.families.base import fits_op
from hopforge.synth.questions.graph import CorpusGraph


def item_set(g: CorpusGraph, start: str, scope: str) -> tuple[dict[str, str], list[str]]:
    """The documents an aggregation enumerates from `start`, each with the document that
    names it: `links`, every document `start`'s text names; `links2`, every document those
    name (not `start` itself nor its own names)."""
    ring = list(g.facts.in_order(start))
    if scope == "links":
        return {d: start for d in ring}, ring
    parents: dict[str, str] = {}
    skip = {start, *ring}
    for r in ring:
        for d in g.facts.in_order(r):
            if d not in skip:
                parents.setdefault(d, r)
    return parents, list(parents)


def loose_items(g: CorpusGraph, start: str, scope: str, items: Sequence[str]) -> list[str]:
    """The documents a reader may count in the set or leave out of it, against `items`: names
    the pages show that `open` does not list (an everyday word such as "foo", a one-word
    lower-case name the page does not link, a name two documents share). For `links2`, such a
    name on the start's page may be taken for one of the first ring, whose names then count
    and which itself leaves the set. A condition one of them meets would give that reader
    another answer, so none may meet it."""
    ring = list(g.facts.in_order(start))
    if scope == "links":
        pages, unsure = [start], set()
    else:
        unsure = {d for d in g.rivals.get(start, ()) if d != start and d not in ring}
        pages = ring + sorted(unsure)
    certain = set(items) - unsure
    return sorted(({d for p in pages for d in g.rivals.get(p, ())} | unsure)
                  - {start, *ring} - certain)


def reads_the_same(meets: Callable[[str, bool], bool], items: Sequence[str],
                   matching: Sequence[str], loose: Sequence[str]) -> bool:
    """Whether a condition (`meets(doc_id, loose)`) gives the set's answer however a reader
    takes the names the pages write: no name of `loose` (see loose_items) meets it, and each
    item meets it read loosely exactly when it does read strictly."""
    return not any(meets(d, True) for d in loose) and all(
        meets(i, True) == (i in matching) for i in items)


def word_condition(g: CorpusGraph, items: list[str], rng: random.Random, *, op: str, empty: bool,
             forbidden: Sequence[str]) -> tuple[str | None, list[str]]:
    """A word that some of `items` contain as a word (none when `empty`), and those that do."""
    counts: dict[str, int] = {}
    for i in items:
        for w in set(g.words(i)):
            w = w.lower()
            if len(w) >= 5 and w.isalpha() and w not in ENGLISH_STOPWORDS:
                counts[w] = counts.get(w, 0) + 1
    n = len(items)
    pool = sorted(w for w, c in counts.items() if 0.1 * n <= c <= 0.6 * n or (op == "list"
                  and 2 <= c <= 4))
    if empty:
        pool = sorted(w.lower() for w in g.words(rng.choice(g.order)) if len(w) >= 6
                      and w.isalpha() and counts.get(w.lower(), 0) == 0
                      and g.word_df.get(w.lower(), 0) >= 3)
    pool = [w for w in pool if not any(w in f.lower() or f.lower() in w for f in forbidden)]
    rng.shuffle(pool)
    for w in pool[:20]:
        matching = [i for i in items if g.contains(i, w)]
        if fits_op(op, len(matching), n, empty):
            return w, matching
    return None, []
