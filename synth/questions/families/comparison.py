"""Comparisons: two documents, each reached from a named start through a clue, that state one
year for the same event of COMPARABLE ("born", "released"); the answer is the one that did it
earlier (later)."""

from __future__ import annotations

import math
import random

from hopforge.synth.questions.facts import LIFE_KEYS
from hopforge.synth.questions.families.base import Draft, Families, Family, alias_forms
from hopforge.synth.questions.families.calls import calls_before, clue_pages, pages_to_mention
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.wording import clue_text, q
from hopforge.synth.records import Clue, Spec, Step

# events two documents can be ordered by: one date each, the same kind of happening
COMPARABLE = frozenset(["born", "died", "founded", "established", "released", "published",
                        "premiered", "formed", "opened", "built", "completed", "launched",
                        "crowned", "elected", "buried", "debuted", "introduced", "created",
                        "coined", "originated"])
_NUMBERS = {2: "two", 3: "three", 4: "four"}


class Comparison(Family):
    name = "comparison"
    plan = "comparison"
    sides = 2  # documents compared
    shortcut_by_name = False  # a page naming one side does not say which came first
    needs = ("two documents that each state the year of the same kind of event (born, founded, "
             "released ...)")

    def dated_pool(self, s: Families) -> dict[str, list[str]]:
        """relation key -> documents that state one year for it and that a page names."""
        if "dated" not in s.memo:
            pool: dict[str, list[str]] = {}
            for doc_id in s.g.order:
                if doc_id not in s.usable or not s.inbound[doc_id]:
                    continue
                dated = s.book.dates.get(doc_id, {})
                person = any(k in dated for k in LIFE_KEYS)
                for key, years in dated.items():
                    if person and key not in LIFE_KEYS:
                        continue  # a person is born and dies; what was released is a work
                    if len(set(years)) == 1 and key in COMPARABLE:
                        pool.setdefault(key, []).append(doc_id)
            s.memo["dated"] = {k: v for k, v in sorted(pool.items()) if len(v) >= 2}
        found: dict[str, list[str]] = s.memo["dated"]
        return found

    def sample(self, s: Families, seed: int) -> Draft | None:
        pool = {k: v for k, v in self.dated_pool(s).items() if len(v) >= self.sides}
        if not pool:
            return None
        keys = list(pool)
        key = s.rng.choices(keys, [math.sqrt(len(pool[k])) for k in keys])[0]
        picks = s.rng.sample(pool[key], self.sides)
        years = [s.book.dates[d][key][0] for d in picks]
        if len(set(years)) < len(years):
            return None
        sides: list[Step] = []
        used: set[str] = set(picks)
        alternatives: list[tuple[Clue, ...]] = []
        for target, year in zip(picks, years, strict=True):
            starts = [a for a in s.inbound[target] if a not in used
                      and not s.g.ambiguous(a)]
            if not starts:
                return None
            a = s.rng.choice(starts)
            used.add(a)
            made = s.clue(target, s.g.rivals[a], [*picks, *used], undated=True, taken=sides)
            if made is None:
                return None
            sides += [Step(doc=a, relation="start"),
                      s.step(target, "compare", a, made[0], value=str(year))]
            alternatives += [(), made[1]]
        shown = s.book.verb(picks[0], key)
        later = s.rng.random() < 0.4
        win = max(zip(picks, years), key=lambda t: t[1] * (1 if later else -1))[0]
        condition = Clue(kind="date", key=key, shown=shown)
        spec = Spec(family=self.name, start=sides[0].doc, steps=tuple(sides), target=win,
                    operation="later" if later else "earlier", condition=condition)
        calls = comparison_calls(s.g, spec)
        if not s.fits(calls):
            return None
        s.take(sides)
        return s.draft(self.name, spec, s.g.title(win), alias_forms(s.g, win, ""),
                       win, calls, seed, alternatives)

    def unique(self, spec: Spec, graph: CorpusGraph) -> bool:
        """Every clue picks its side, each side states one year for the event, and no two
        sides state the same one."""
        if not super().unique(spec, graph):
            return False
        key = spec.condition.key if spec.condition else ""
        sides = [s for s in spec.steps if s.relation == "compare"]
        stated = [graph.facts.dates.get(s.doc, {}).get(key, []) for s in sides]
        if not all(len(set(y)) == 1 and str(y[0]) == s.value
                   for y, s in zip(stated, sides, strict=True)):
            return False
        return len({s.value for s in sides}) == len(sides)

    def together(self, spec: Spec) -> set[str]:
        return {s.doc for s in spec.steps if s.relation == "compare"}

    def asks(self, spec: Spec) -> str:
        return spec.operation

    def ask_lines(self, spec: Spec, graph: CorpusGraph) -> list[str]:
        what = spec.condition.shown if spec.condition else ""
        sides = sum(s.relation == "compare" for s in spec.steps)
        return [f"ask which of the {_NUMBERS.get(sides, sides)} {what} {spec.operation}"]

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        a, x, b, y = spec.steps
        verb = spec.condition.shown if spec.condition else "is dated"
        which = "earlier" if spec.operation == "earlier" else "later"
        frame = rng.choice((
            ("Take the {n} that {A} mentions {p}, and the one that {B} mentions {r}. "
             "Whose subject {v} {w}?"),
            ("Of the {n} mentioned by {A} {p} and the {n} mentioned by {B} {r}, "
             "whose subject {v} {w}?"),
        ))
        return frame.format(A=q(graph.title(a.doc)), B=q(graph.title(b.doc)), n=graph.noun,
                            p=clue_text(x), r=clue_text(y), v=verb, w=which)


def comparison_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per side: search the start, open it to the mention, search the title, open to the year."""
    calls = 1
    for start, side in zip(spec.steps[::2], spec.steps[1::2], strict=True):
        calls += 1 + pages_to_mention(g, start.doc, side.doc)
        calls += 1 + calls_before(g, start.doc, side.doc) + clue_pages(g, side)
    return calls


COMPARISON = Comparison()
