"""Intersections: the one document that 2-4 hidden documents all name, each hidden one reached
from a named start through a clue."""

from __future__ import annotations

import random

from hopforge.synth.questions.families.base import (
    Draft,
    Families,
    Family,
    alias_forms,
    picked,
)
from hopforge.synth.questions.families.calls import calls_before, pages_to_mention
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.wording import and_, clue_text, q
from hopforge.synth.records import Clue, Spec, Step


class Intersection(Family):
    name = "intersection"
    plan = "intersection"
    needs = "a document named by two others that name nothing else in common"
    answer_relation = "mentioned_by_clues"

    def unique(self, spec: Spec, graph: CorpusGraph) -> bool:
        """Every clue picks its hidden document, and those name exactly one in common, however
        a reader takes the names they write (a common word such as "hacker" or "Internet" too)."""
        rings = [ring(graph, s.via) for s in spec.steps if s.relation == "constraint"]
        links = all(picked(graph, s) for s in spec.steps if s.relation == "link")
        return links and set.intersection(*rings) == {spec.target}

    def ask_lines(self, spec: Spec, graph: CorpusGraph) -> list[str]:
        return [(f"ask for the one {graph.noun} that each {graph.noun} reached by a \"go to\" "
                "step mentions")]

    def sample(self, s: Families, seed: int) -> Draft | None:
        """The one document that every one of 2-4 hidden documents names; each hidden
        document is reached from a named start through a fact clue, and names several others."""
        target = next(s._targets, None)
        if target is None or len(s.inbound[target]) < s.min_clues:
            return None
        sources = [e for e in dict.fromkeys(s.inbound[target])
                   if len(s.book.mentioned(e)) >= 3 and not s.g.ambiguous(e)]
        s.rng.shuffle(sources)
        chosen: list[str] = []
        left: set[str] | None = None
        for e in sources:
            names = ring(s.g, e)
            narrowed = names if left is None else left & names
            if left is not None and narrowed == left:
                continue  # rules nothing out
            chosen.append(e)
            left = narrowed
            if left == {target} and len(chosen) >= s.min_clues:
                break
            if len(chosen) >= s.max_clues:
                return None
        if left != {target} or len(chosen) < s.min_clues:
            return None
        steps: list[Step] = []
        alternatives: list[tuple[Clue, ...]] = []
        used = {target, *chosen}
        for e in chosen:
            starts = [a for a in s.inbound[e] if a not in used and not s.g.ambiguous(a)
                      and target not in s.book.mentioned(a)]
            if not starts:
                return None
            a = s.rng.choice(starts)
            used.add(a)
            made = s.clue(e, s.g.rivals[a], [target, *chosen, a], taken=steps,
                          unfound=True)  # each side names the answer: its clue hides it
            if made is None:
                return None
            steps += [Step(doc=a, relation="start"), s.step(e, "link", a, made[0])]
            alternatives += [(), made[1]]
        steps += [Step(doc=target, relation="constraint", via=e) for e in chosen]
        spec = Spec(family="intersection", start=steps[0].doc, steps=tuple(steps),
                    target=target)
        calls = intersection_calls(s.g, spec)
        if not s.fits(calls):
            return None
        s.take(steps)
        return s.draft("intersection", spec, s.g.title(target),
                           alias_forms(s.g, target, ""), target, calls, seed, alternatives)

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        noun = graph.noun
        sides = [f"the {noun} that {q(graph.title(a.doc))} mentions {clue_text(e)}"
                 for a, e in zip(spec.steps[::2], spec.steps[1::2], strict=False)
                 if a.relation == "start"]
        every = "both" if len(sides) == 2 else "each of"
        frame = rng.choice(("Which {n} is mentioned by {E} {S}?",
                            "One {n} is mentioned by {E} {S}. Which is it?",
                            "Name the {n} mentioned by {E} {S}."))
        return frame.format(n=noun, E=every, S=and_(sides))


def ring(g: CorpusGraph, doc_id: str) -> set[str]:
    """Every document `doc_id`'s text names, as `open` lists them or as a reader may take a
    name it writes (common words, namesakes, shared titles)."""
    return set(g.facts.mentioned(doc_id)) | set(g.rivals.get(doc_id, ()))


def intersection_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per hidden document: search its start, open it to the mention, search the title read and
    read all its pages (every mention, to intersect them); answer."""
    calls = 1
    for start, hidden in zip(spec.steps[::2], spec.steps[1::2], strict=False):
        if start.relation != "start":
            break
        calls += 1 + pages_to_mention(g, start.doc, hidden.doc) + 1 + g.pages(hidden.doc)
        calls += calls_before(g, start.doc, hidden.doc)
    return calls


INTERSECTION = Intersection()
