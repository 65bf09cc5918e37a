"""Chains: from a named start, through the documents each page names, each next one picked by
a blurred fact of its own; the answer is the last one's title, or the one year it gives for a
dated relation."""

from __future__ import annotations

import random
from dataclasses import replace

from hopforge.synth.questions.families.base import Draft, Families, Family, alias_forms
from hopforge.synth.questions.families.calls import (
    calls_before,
    clue_pages,
    pages_to_mention,
)
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.wording import clue_text, q
from hopforge.synth.records import Spec


class Chain(Family):
    name = "chain"
    needs = ("a walk of documents that name the next one, each step with a clue (a fact or a "
             "phrase) only that document meets")

    def sample(self, s: Families, seed: int) -> Draft | None:
        depth = s.rng.randint(s.min_hops, s.max_hops)
        path = s.walk(depth)
        if path is None:
            return None
        made = s.link_steps(path)
        if made is None:
            return None
        steps, alternatives = made
        last = path[-1].doc
        asked = s.asked_year(last, steps[-1].fact)
        year = asked is not None and s.rng.random() < s.year_answer_rate
        spec = Spec(family="chain", start=path[0].doc, steps=tuple(steps), target=last,
                    answer_type="year" if year else "title",
                    condition=asked if year else None)
        if year and asked is not None:
            spec = replace(spec, steps=(*steps[:-1], replace(steps[-1], value=asked.value)))
        calls = chain_calls(s.g, spec)
        if not s.fits(calls):
            return None
        answer = asked.value if year and asked else s.g.title(last)
        aliases = () if year else alias_forms(s.g, last, path[-1].surface)
        s.take(steps)
        return s.draft("chain", spec, answer, aliases, last, calls, seed, alternatives)

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        noun = graph.noun
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
        opening = rng.choice((f"The {noun} {start}", start))
        return f"{opening} mentions an {noun} {clues[0]}{rest}. {ask}"


def chain_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start, open it to the first mention; per later step: search and check every
    document the page names before it (two calls each; a name of no document: one search),
    search the title read, open it to the next
    mention and its clue (the last: find its clue, or open to the year);
    an unanswerable last step: search and find in every document the one before names."""
    steps = list(spec.steps)
    calls = 1 + pages_to_mention(g, steps[0].doc, steps[1].doc) if len(steps) > 1 else 1
    for i, step in enumerate(steps[1:], start=1):
        if not step.doc:  # unanswerable: every candidate checked
            calls += 2 * len(g.rivals[step.via])
            continue
        calls += 1 + calls_before(g, step.via, step.doc)
        if i + 1 < len(steps) and steps[i + 1].doc:
            calls += max(pages_to_mention(g, step.doc, steps[i + 1].doc), clue_pages(g, step))
        elif i + 1 < len(steps):
            calls += g.pages(step.doc)  # every mention read before giving up
        elif spec.answer_type == "year" and spec.condition:
            calls += max(g.pages_to(step.doc, spec.condition.evidence[:60]),
                         clue_pages(g, step))
        else:
            calls += 1  # find the clue
    return calls + 1


CHAIN = Chain()
