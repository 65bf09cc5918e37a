"""Unanswerable questions: a chain whose last clue (a real fact of another document) no
document the page names meets, or an aggregation list no item meets; the answer is `not found`,
and `spec.unanswerable` says why."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hopforge.synth.questions.families.aggregation import AGGREGATION
from hopforge.synth.questions.families.base import Draft, Families, Family, general
from hopforge.synth.questions.families.chain import CHAIN, chain_calls
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import NOT_FOUND, Clue, Spec, Step


class Unanswerable(Family):
    name = "unanswerable"
    needs = "a set question (as aggregation) whose condition no item meets"

    def sample(self, s: Families, seed: int) -> Draft | None:
        if s.rng.random() < 0.5:
            return AGGREGATION.sample(s, seed, empty=True)
        depth = s.rng.randint(s.min_hops, s.max_hops)
        path = s.walk(depth)
        if path is None:
            return None
        made = s.link_steps(path[:-1])
        if made is None:
            return None
        steps, alternatives = made
        last = path[-2].doc
        rivals = s.g.rivals[last]
        premise = self.absent(s, path[-1].doc, rivals)
        if premise is None:
            return None
        spec = Spec(family="chain", start=path[0].doc,
                    steps=(*steps, Step(doc="", relation="link", via=last, fact=premise,
                                        phrase=premise.value if premise.kind == "phrase" else "")),
                    answer_type="not_found",
                    unanswerable=f"none of the documents {s.g.title(last)!r} names is "
                                 f"{premise.shown}")
        calls = chain_calls(s.g, spec)
        if not s.fits(calls):
            return None
        s.take(spec.steps)
        return s.draft("unanswerable", spec, NOT_FOUND, (), "", calls, seed,
                           [*alternatives, ()])

    def absent(self, s: Families, source: str, rivals: Sequence[str]) -> Clue | None:
        """A clue of `source` (a real document's fact) that none of `rivals` passes."""
        options = [c for c in s.book.clues(source) if c.kind != "entity"]
        s.rng.shuffle(options)
        for c in sorted(options, key=lambda c: c.kind == "phrase"):
            if rivals and not any(s.book.holds(c, r) for r in rivals):
                return general(c)
        return None

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        """Worded as the family it varies."""
        return (AGGREGATION if spec.family == "aggregation" else CHAIN).render(spec, graph, rng)


UNANSWERABLE = Unanswerable()
