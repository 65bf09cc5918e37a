"""Rankings: three documents, each reached from a named start through a clue, that state one
year for the same kind of event; the answer is the one that did it first (last). A comparison
with a third side: more to read, and no pair settles it."""

from __future__ import annotations

import random

from hopforge.synth.questions.families.comparison import Comparison
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.wording import clue_text, q
from hopforge.synth.records import Spec


class Ranking(Comparison):
    name = "ranking"
    sides = 3
    default = False  # made when a build lists it in `kinds`
    needs = ("three documents that each state the year of the same kind of event (born, "
             "founded, released ...), each named by another document")

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        starts, sides = spec.steps[::2], spec.steps[1::2]
        reached = [f"the one {q(graph.title(a.doc))} mentions {clue_text(x)}"
                   for a, x in zip(starts, sides, strict=True)]
        verb = spec.condition.shown if spec.condition else "is dated"
        which = "first" if spec.operation == "earlier" else "last"
        listed = f"{', '.join(reached[:-1])}, and {reached[-1]}"
        return rng.choice((
            f"Of three {graph.nouns}: {listed}. Whose subject {verb} {which}?",
            f"Take {listed}. Of these three {graph.nouns}, whose subject {verb} {which}?",
        ))


RANKING = Ranking()
