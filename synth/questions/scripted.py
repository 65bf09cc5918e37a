"""The scripted composer: plain, deterministic wording of a spec. It is the no-model default and
the test fixture; its questions read plainly and carry every fact of the spec.

Each clue brings its own words (clues.py: "whose subject was born in the 1950s", "whose text
mentions “Unix”"); the frames here only join them, so a question names its starts and nothing
else but the titles an entity clue quotes.
"""

from __future__ import annotations

import random

from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import Spec, Step

NAME = "scripted"


def q(text: str) -> str:
    """A phrase or title in quotes, as the questions show them."""
    return f"“{text}”"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clue_text(step: Step) -> str:
    """How the question states the fact that picks `step.doc`."""
    if step.fact is not None:
        return step.fact.shown
    return f"whose text contains the words {q(step.phrase)}"


def render(spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
    """The question text for `spec`."""
    noun = graph.noun
    if spec.family == "chain":
        return _chain(spec, graph, noun, rng)
    if spec.family == "comparison":
        a, x, b, y = spec.steps
        verb = spec.condition.shown if spec.condition else "is dated"
        which = "earlier" if spec.operation == "earlier" else "later"
        frame = rng.choice((
            "Take the {n} that {A} mentions {p}, and the one that {B} mentions {r}. "
            "Whose subject {v} {w}?",
            "Of the {n} mentioned by {A} {p} and the {n} mentioned by {B} {r}, "
            "whose subject {v} {w}?",
        ))
        return frame.format(A=q(graph.title(a.doc)), B=q(graph.title(b.doc)), n=noun,
                            p=clue_text(x), r=clue_text(y), v=verb, w=which)
    if spec.family == "intersection":
        sides = [f"the {noun} that {q(graph.title(a.doc))} mentions {clue_text(e)}"
                 for a, e in zip(spec.steps[::2], spec.steps[1::2], strict=False)
                 if a.relation == "start"]
        every = "both" if len(sides) == 2 else "each of"
        frame = rng.choice(("Which {n} is mentioned by {E} {S}?",
                            "One {n} is mentioned by {E} {S}. Which is it?"))
        return frame.format(n=noun, E=every, S=_and(sides))
    return _aggregation(spec, graph, noun, rng)


def _chain(spec: Spec, graph: CorpusGraph, noun: str, rng: random.Random) -> str:
    start = q(graph.title(spec.start))
    clues = [clue_text(s) for s in spec.steps[1:]]
    if spec.answer_type == "year" and spec.condition:
        ask = f"What year does that {noun} give for when its subject {spec.condition.shown}?"
    else:
        ask = rng.choice((f"Which {noun} is it?", f"What is the title of that last {noun}?"))
    if len(clues) <= 2 and rng.random() < 0.5:
        body = f"Start at the {noun} {start}. It mentions an {noun} {clues[0]}"
        if len(clues) == 2:
            body += f"; that {noun} mentions one {clues[1]}"
        return f"{body}. {ask}"
    rest = "".join(f", which mentions one {c}" for c in clues[1:])
    return f"The {noun} {start} mentions an {noun} {clues[0]}{rest}. {ask}"


def _aggregation(spec: Spec, graph: CorpusGraph, noun: str, rng: random.Random) -> str:
    start = q(graph.title(spec.start))
    if spec.scope == "links2":
        scope = (f"the {graph.nouns} mentioned by the {graph.nouns} that {start} mentions "
                 f"(leaving out {start} and the {graph.nouns} it mentions itself)")
    else:
        scope = f"the {graph.nouns} that {start} mentions"
    cond = spec.condition.shown if spec.condition else f"whose text contains {q(spec.pattern)}"
    if spec.operation == "count":
        return rng.choice((f"Of {scope}, how many are {graph.nouns} {cond}?",
                           f"Count {scope} {cond}. How many are there?"))
    if spec.operation == "list":
        return f"Which of {scope} are {graph.nouns} {cond}? List their titles."
    which = "latest" if spec.operation == "max" else "earliest"
    return f"Of {scope}, whose subject {cond} {which}?"
