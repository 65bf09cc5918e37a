"""The parts of `min_calls` every family counts: pages read to a mention or a clue, the
documents a page names before the one a clue picks (each searched and checked: two calls)."""

from __future__ import annotations

from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import Spec, Step


def clue_pages(g: CorpusGraph, step: Step) -> int:
    """Pages of `step.doc` to read until its clue's evidence has been shown."""
    if step.fact and step.fact.evidence:
        return g.pages_to(step.doc, step.fact.evidence[:60])
    return g.pages_to(step.doc, step.phrase)


def longest_gap(g: CorpusGraph, spec: Spec) -> int:
    """The most calls the min_calls plan spends between two gold documents: the documents a
    page names before the one a clue picks are each searched and checked."""
    gaps = [calls_before(g, s.via, s.doc) + 2 for s in spec.steps
            if s.relation in ("link", "compare") and s.doc and s.via]
    gaps += [2 * len(g.rivals[s.via]) for s in spec.steps
             if s.relation == "link" and not s.doc]
    if spec.family == "aggregation":  # every page of the start (and of the first ring) is read,
        # and only a document's first page is new
        read = [spec.start, *(g.facts.mentioned(spec.start) if spec.scope == "links2" else ())]
        gaps += [g.pages(d) + 1 for d in read]
    return max(gaps, default=0)


def pages_to_mention(g: CorpusGraph, src: str, dst: str) -> int:
    for m in g.mentions[src]:
        if m.doc == dst:
            return g.page_of(src, m.pos) + 1
    return g.pages(src)


def _first_named(g: CorpusGraph, src: str) -> dict[str, int]:
    """doc_id -> where `src`'s text first names it, in text order (read once per document)."""
    memo = g.memo.setdefault("first_named", {})
    if src not in memo:
        memo[src] = {h.doc: h.start for h in g.names.entries(g.docs[src].text, exclude=src)}
    return memo[src]


def names_before(g: CorpusGraph, src: str, dst: str) -> int:
    """How many documents `src`'s text names before it first names `dst`: each is searched
    and checked (two calls) before the clue reaches `dst`."""
    names = list(_first_named(g, src))
    return names.index(dst) if dst in names else len(names)


def calls_before(g: CorpusGraph, src: str, dst: str) -> int:
    """The calls spent on the names `src` shows before it first names `dst`: two per document
    (searched and checked)."""
    return 2 * names_before(g, src, dst)
