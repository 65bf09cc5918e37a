"""The scripted composer: a spec put into one of a few fixed frames around its quoted phrases.

Grammatical by construction: the only words that vary are titles of named documents, quoted
phrases from the spec and the corpus noun ("entry", "article"). It is the built-in default and
the test fixture; its questions read plainly and carry every step of the spec.
"""

from __future__ import annotations

import random

from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import Spec

NAME = "scripted"


def q(text: str) -> str:
    """A phrase or title in quotes, as the questions show them."""
    return f"“{text}”"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render(spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
    """The question text for `spec`."""
    noun = graph.noun
    if spec.family == "chain":
        return _chain(spec, graph, noun, rng)
    if spec.family == "comparison":
        a, x, b, y = spec.steps
        which = "earlier" if spec.operation == "earlier" else "later"
        frame = rng.choice((
            ("{A} mentions an {n} containing {p}, and {B} mentions one containing {r}. "
            "Which of those two states the {w} year?"),
            ("Compare the {n} that {A} mentions containing {p} with the one that {B} mentions "
            "containing {r}: which states the {w} year?"),
        ))
        return frame.format(A=q(graph.title(a.doc)), B=q(graph.title(b.doc)), n=noun,
                            p=q(x.phrase), r=q(y.phrase), w=which)
    if spec.family == "intersection":
        sides = [f"the {noun} that {q(graph.title(a.doc))} mentions containing {q(e.phrase)}"
                 for a, e in zip(spec.steps[::2], spec.steps[1::2], strict=False)
                 if a.relation == "start"]
        every = "both" if len(sides) == 2 else "each of"
        frame = rng.choice(("Which {n} is mentioned by {E} {S}?",
                            "One {n} is mentioned by {E} {S}. Which is it?"))
        return frame.format(n=noun, E=every, S=_and(sides))
    return _aggregation(spec, graph, noun, rng)


def _chain(spec: Spec, graph: CorpusGraph, noun: str, rng: random.Random) -> str:
    start = q(graph.title(spec.start))
    phrases = [q(s.phrase) for s in spec.steps[1:]]
    ask = ("What year does that last {n} state?" if spec.answer_type == "year"
           else rng.choice(("Which {n} do you reach?", "What is the title of that last {n}?")))
    if len(phrases) <= 2 and rng.random() < 0.5:
        body = f"Start at the {noun} {start}. It mentions an {noun} containing {phrases[0]}"
        if len(phrases) == 2:
            body += f"; that {noun} mentions one containing {phrases[1]}"
        return f"{body}. {ask.format(n=noun)}"
    rest = "".join(f", then to one containing {p}" for p in phrases[1:])
    return (f"From the {noun} {start}, follow mentions to an {noun} containing {phrases[0]}"
            f"{rest}. {ask.format(n=noun)}")


def _aggregation(spec: Spec, graph: CorpusGraph, noun: str, rng: random.Random) -> str:
    start, pattern = q(graph.title(spec.start)), q(spec.pattern)
    if spec.scope == "links2":
        scope = (f"the {graph.nouns} mentioned by the {graph.nouns} that {start} mentions (leaving out "
                 f"{start} and the {graph.nouns} it mentions itself)")
    else:
        scope = f"the {graph.nouns} that {start} mentions"
    if spec.operation == "count":
        return rng.choice((f"How many of {scope} contain {pattern}?",
                           f"Count {scope} whose text contains {pattern}. How many are there?"))
    if spec.operation == "list":
        return f"Which of {scope} contain {pattern}? List their titles."
    which = "latest" if spec.operation == "max" else "earliest"
    return f"Of {scope}, which one containing {pattern} states the {which} year?"
