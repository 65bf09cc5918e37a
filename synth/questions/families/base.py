"""What every question family shares: the draft record, the sampler and its walks and clues.

`min_calls` counts the calls of the shortest plan that also confirms every choice from a tool
result, the final `answer` included (docs/stages.md lists the formula of each family):
- search: one per document reached by name (a named start, or a title read in a text);
- open: one per page read until the mention or fact it needs has been shown;
- find: one per fact checked in a document whose text need not be read; every document a page
  names before the one a clue picks is searched and checked too (calls.names_before).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.names import name_key
from hopforge.synth.questions.clues import FactBook, phrase_clue
from hopforge.synth.questions.families.calls import longest_gap
from hopforge.synth.questions.graph import CorpusGraph, Mention, names
from hopforge.synth.questions.phrases import picking_phrases
from hopforge.synth.records import Clue, Hop, Question, Spec, Step

MAX_DEPTH = 12


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """A sampled task: its spec and answer, before any composer writes it."""

    qid: str
    kind: str
    spec: Spec
    answer: str
    answer_aliases: tuple[str, ...]
    answer_doc: str
    evidence: tuple[str, ...]
    hops: tuple[Hop, ...]
    min_calls: int
    seed: int
    quiet_calls: int = 0  # the most calls the plan makes between two gold documents
    alternatives: tuple[tuple[Clue, ...], ...] = ()  # other clues per step, to blur further


def spec_id(kind: str, spec: Spec) -> str:
    """A stable qid: the same task always gets the same id."""
    cond = spec.condition.shown if spec.condition else ""
    key = "\x00".join([kind, spec.family, spec.start, spec.target, spec.operation, spec.pattern,
                       spec.scope, cond,
                       *(f"{s.doc}|{s.relation}|{s.via}|{s.fact.shown if s.fact else ''}"
                         for s in spec.steps)])
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def cycle(pool: list[str], rng: random.Random) -> Iterator[str]:
    """The pool over and over, shuffled anew each round."""
    pool = list(pool)
    while pool:
        rng.shuffle(pool)
        yield from list(pool)


class Family:
    """A question family: it samples a spec over a `Families` sampler and words it plainly.

    A family is one module of this package and one line in `families.FAMILIES`: `name` is the
    question kind it makes (`Question.kind`), `sample` draws a draft (None when this draw
    failed), `render` is the scripted composer's wording of its specs, `plan` the scripted teacher's
    plan for them; `needs` says what of a corpus it samples from, for the summary of a build that could make none."""

    name = ""
    needs = ""
    plan = "chain"  # the scripted teacher's plan for its specs (a `Plans` method in
    # synth/trajectories/families.py): chain, comparison, intersection or aggregation
    default = True  # made by a build that does not list its `kinds`
    shortcut_by_name = True  # a search hit on a document that names the answer gives it away
    answer_relation = ""  # what the model composer's read-back must say the answer is ("": any)

    def sample(self, s: Families, seed: int) -> Draft | None:
        raise NotImplementedError

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        raise NotImplementedError

    # --- what the checks and the model composer ask of a spec (a walk's, unless overridden) --

    def unique(self, spec: Spec, graph: CorpusGraph) -> bool:
        """Whether the corpus gives exactly the spec's answer, re-derived from the documents:
        every step's clue picks its document, and a year asked for is stated once."""
        if not all(picked(graph, s) for s in spec.steps if s.relation in ("link", "compare")):
            return False
        if spec.answer_type == "year" and spec.condition:
            stated = graph.facts.dates.get(spec.target, {}).get(spec.condition.key, [])
            return len(set(stated)) == 1 and str(stated[0]) == spec.condition.value
        return True

    def together(self, spec: Spec) -> set[str]:
        """Documents one search must not list all together (each alone gives nothing away)."""
        return set()

    def hidden(self, q: Question) -> list[str]:
        """The documents the question's text may not name: all but the named starts."""
        assert q.spec is not None
        named = {s.doc for s in q.spec.steps if s.relation == "start"}
        return [d for d in q.evidence if d not in named] + [q.answer_doc] * bool(q.answer_doc)

    def read_back(self, spec: Spec) -> list[Clue]:
        """The clues a reader of the question should name, in order."""
        return [s.fact for s in spec.steps if s.fact and s.relation in ("link", "compare")]

    def asks(self, spec: Spec) -> str:
        """What the question asks for, in the model composer's read-back words."""
        return "year" if spec.answer_type == "year" else "title"

    def ask_lines(self, spec: Spec, graph: CorpusGraph) -> list[str]:
        """The model composer's lines for what to ask, after the spec's steps."""
        return []


PROBED = 6  # the clues of a band searched for before one is chosen


class Families:
    """Samples drafts of every family over one corpus graph, deterministic for its `rng`: the
    settings, the walk over visible names and the clue choice that every family shares."""

    def __init__(self, graph: CorpusGraph, rng: random.Random, *, min_hops: int = 2,
                 max_hops: int = 4, min_clues: int = 2, max_clues: int = 4,
                 year_answer_rate: float = 0.3, min_calls: int = 0, max_calls: int = 0,
                 min_items: int = 4, min_df: int = 20, max_items: int = 400,
                 max_phrase_share: float = 0.15, max_gap: int = 0,
                 probe: Callable[[str], Collection[str]] | None = None) -> None:
        self.g, self.rng = graph, rng
        self.probe = probe  # one search: the doc_ids it lists first (the shortcut check's view)
        self.book: FactBook = graph.facts
        self.min_hops, self.max_hops = min_hops, max_hops
        self.min_clues, self.max_clues = min_clues, max_clues
        self.year_answer_rate = year_answer_rate
        self.min_calls, self.max_calls = min_calls, max_calls
        self.min_items, self.min_df, self.max_items = min_items, min_df, max_items
        self.max_phrase_share = max_phrase_share
        self.max_gap = max_gap  # the most calls a plan may spend between two gold documents
        self.clue_kinds: Counter[str] = Counter()
        self.drafts = self.phrase_drafts = 0  # drafts made, and those with a phrase clue
        usable = [d for d in graph.order if d not in graph.shared and d not in graph.listings
                  and "(disambiguation)" not in graph.title(d).lower()]
        self.usable = set(usable)
        self.inbound: dict[str, list[str]] = {d: [] for d in graph.order}
        for src in usable:
            for m in graph.mentions[src]:
                self.inbound[m.doc].append(src)
        self.height = self.heights(MAX_DEPTH)
        self._starts = cycle([d for d in usable if self.height[d] >= min_hops
                               and not graph.ambiguous(d)], rng)
        self._targets = cycle(usable, rng)
        self.memo: dict[str, Any] = {}  # what a family builds once per sampler
        self._holders: dict[tuple[Any, ...], int] = {}
        self.answer_counts: Counter[tuple[str, int]] = Counter()  # (operation, k) drafted

    def fits(self, calls: int, *, slack: bool = False) -> bool:
        """Whether `calls` lies in the configured min_calls range (0: unbounded); with `slack`,
        a lower estimate that may grow by half (pages read on top of searches and finds)."""
        low = calls * (1.5 if slack else 1.0)
        return low >= self.min_calls and (not self.max_calls or calls <= self.max_calls)

    # --- clues ----------------------------------------------------------------------------

    def phrase_allowed(self, taken: Sequence[Step] = ()) -> bool:
        """Whether a draft (with `taken` steps so far) may use a phrase clue: one at most per
        question, and only while questions with one stay under `max_phrase_share`."""
        if any(s.fact is not None and s.fact.kind == "phrase" for s in taken):
            return False
        return self.drafts < 10 or self.phrase_drafts < self.max_phrase_share * self.drafts

    def clue(self, doc_id: str, rivals: Sequence[str], hidden: Sequence[str],
             *, avoid_key: str = "", undated: bool = False, taken: Sequence[Step] = (),
             unfound: bool = False) -> tuple[Clue, tuple[Clue, ...]] | None:
        """A clue that picks `doc_id` among `rivals` (and others to blur further), facts first;
        the phrase fallback only where `phrase_allowed(taken)`. `avoid_key`: no date clue of
        that relation; `undated`: no date clue at all; `unfound`: no fact clue whose words
        alone find `doc_id` (`findable`), None when every one does."""
        said = {s.fact.shown for s in taken if s.fact}  # a question states a clue once
        found = [c for c in self.book.picking(doc_id, rivals, hidden=hidden)
                 if not (c.kind == "date" and (undated or (avoid_key and c.key == avoid_key)))
                 and c.shown not in said]
        if found:
            best = found[0].kind
            band = [c for c in found if c.kind == best]
            self.rng.shuffle(band)
            # the clue most documents meet blurs best: one search for it lists many; of the
            # first few, those whose words alone find the document go last
            band.sort(key=lambda c: -self.holders(c))
            band[:PROBED] = sorted(band[:PROBED], key=lambda c: self.findable(c, doc_id))
            rest = [c for c in found if c.kind != best]
            if unfound and self.findable(band[0], doc_id):
                band = [c for c in rest[:PROBED] if not self.findable(c, doc_id)]
                if not band:
                    return None  # every clue's words find it: the question would give it away
                rest = []
            return band[0], tuple(band[1:3] + rest[:2])
        if not self.phrase_allowed(taken) or self.book.fact_share() >= 0.2:
            return None  # a corpus of facts words its clues as facts ("United States" is none)
        forbidden = [n for d in hidden for n in names(self.g.docs[d])]
        phrases = picking_phrases(self.g, doc_id, list(rivals), self.rng, forbidden=forbidden,
                                  min_df=self.min_df)
        if not phrases:
            return None
        doc = self.g.docs[doc_id]
        made = [phrase_clue(doc, p) for p in phrases]
        return made[0], tuple(made[1:])

    def findable(self, c: Clue, doc_id: str) -> bool:
        """Whether one search of the clue's words, as the question quotes or states them,
        lists `doc_id` (False without a probe)."""
        if self.probe is None:
            return False
        queries = [c.shown.replace("“", "").replace("”", "")]
        if c.kind in ("entity", "phrase", "category"):
            queries.append(c.value)
        return any(doc_id in self.probe(query) for query in queries)

    def holders(self, c: Clue) -> int:
        """How many documents of the corpus meet clue `c` (an entity clue: those naming its
        target), counted once per test."""
        key = (c.kind, c.key, c.low, c.high, c.target, c.value if c.kind == "phrase" else "")
        if key not in self._holders:
            if c.kind == "entity":
                n = len(self.inbound.get(c.target, ()))
            elif c.kind == "phrase":
                n = self.g.doc_freq(c.value)
            else:
                pool = (self.book.dates if c.kind == "date" else self.book.numbers
                        if c.kind == "number" else self.book.categories)
                n = sum(self.book.holds(c, d) for d in pool)
            self._holders[key] = n
        return self._holders[key]

    def take(self, steps: Sequence[Step], condition: Clue | None = None) -> None:
        """Count the clues of a draft that was made (the phrase share is kept per question)."""
        kinds = [s.fact.kind for s in steps if s.fact] + ([condition.kind] if condition else [])
        self.clue_kinds.update(kinds)
        self.drafts += 1
        self.phrase_drafts += "phrase" in kinds

    @staticmethod
    def step(doc: str, relation: str, via: str, clue: Clue, value: str = "") -> Step:
        return Step(doc=doc, relation=relation, via=via, fact=clue, value=value,
                    phrase=clue.value if clue.kind == "phrase" else "")

    def heights(self, cap: int) -> dict[str, int]:
        """doc_id -> the most steps a walk from it can take (up to `cap`), ignoring repeats."""
        height = {d: 0 for d in self.g.order}
        for level in range(1, cap + 1):
            changed = False
            for d in self.usable:
                if height[d] == level - 1 and any(
                        height[m.doc] >= level - 1 and m.doc in self.usable
                        for m in self.g.mentions[d]):
                    height[d] = level
                    changed = True
            if not changed:
                break
        return height

    def walk(self, depth: int) -> list[Mention] | None:
        start = next(self._starts, None)
        if start is None:
            return None
        depth = min(depth, self.height[start])
        if depth < self.min_hops and self.height[start] >= self.min_hops:
            depth = self.min_hops
        path, seen = [Mention(doc=start, surface=self.g.title(start), pos=0)], {start}
        for left in range(depth, 0, -1):
            options = [m for m in self.g.mentions[path[-1].doc] if m.doc not in seen
                       and m.doc in self.usable and self.height[m.doc] >= left - 1
                       and (left == 1 or not self.g.ambiguous(m.doc))]
            if not options:
                return None
            weights = [1.0 / math.log(2.0 + len(self.inbound[m.doc])) for m in options]
            step = self.rng.choices(options, weights)[0]
            path.append(step)
            seen.add(step.doc)
        return path

    def link_steps(self, path: list[Mention]) -> tuple[list[Step], list[tuple[Clue, ...]]] | None:
        hidden = [m.doc for m in path]  # no clue names a document of the walk
        steps = [Step(doc=path[0].doc, relation="start")]
        alternatives: list[tuple[Clue, ...]] = [()]
        for prev, cur in itertools.pairwise(path):  # the answer and the page naming it:
            made = self.clue(cur.doc, self.g.rivals[prev.doc], hidden, taken=steps,  # their
                             unfound=cur.doc in (path[-1].doc, path[-2].doc))  # clues hide them
            if made is None:
                return None
            steps.append(self.step(cur.doc, "link", prev.doc, made[0]))
            alternatives.append(made[1])
        return steps, alternatives

    def asked_year(self, doc_id: str, used: Clue | None) -> Clue | None:
        """A dated relation of `doc_id` with one year only, to ask for; not the clue's own."""
        for key, years in sorted(self.book.dates.get(doc_id, {}).items()):
            if len(set(years)) == 1 and not (used and used.kind == "date" and used.key == key):
                fact = self.book.dated(doc_id, key)
                if fact is None:
                    continue
                return Clue(kind="date", relation=fact.relation, value=str(years[0]),
                            evidence=fact.evidence, key=key, shown=self.book.verb(doc_id, key))
        return None

    def draft(self, kind: str, spec: Spec, answer: str, aliases: tuple[str, ...], answer_doc: str,
               calls: int, seed: int, alternatives: Sequence[tuple[Clue, ...]] = ()
               ) -> Draft | None:
        quiet = longest_gap(self.g, spec)
        if self.max_gap and quiet > self.max_gap:
            return None  # a correct plan would trip the no-progress stop
        evidence = tuple(dict.fromkeys(
            [*(s.doc for s in spec.steps if s.doc), *(s.via for s in spec.steps if s.via)]))
        hops = tuple(Hop(from_doc=s.via, to_doc=s.doc, clue=s.fact.evidence if s.fact else "",
                         bridge=surface(self.g, s.via, s.doc))
                     for s in spec.steps if s.relation == "link" and s.doc and s.via)
        return Draft(qid=spec_id(kind, spec), kind=kind, spec=spec, answer=answer,
                     answer_aliases=aliases, answer_doc=answer_doc, evidence=evidence, hops=hops,
                     min_calls=calls, seed=seed, quiet_calls=quiet,
                     alternatives=tuple(alternatives))


def picked(graph: CorpusGraph, step: Step) -> bool:
    """Whether the step's clue picks exactly `step.doc` among every document `step.via`
    names (none, for an unanswerable step); a rival fails an entity clue only when its text
    does not write the name at all."""
    rivals = graph.rivals[step.via]
    if step.fact is not None:  # a rival as a reader may take it, the step's own as it is
        having = [d for d in rivals if graph.facts.holds(step.fact, d, loose=d != step.doc)]
    else:
        having = [d for d in rivals if graph.contains(d, step.phrase)]
    return having == ([step.doc] if step.doc else [])


def general(c: Clue) -> Clue:
    """A clue as a condition on other documents: its test, not the one fact it came from."""
    return Clue(kind=c.kind, key=c.key, low=c.low, high=c.high, shown=c.shown,
                target=c.target, value=c.value if c.kind in ("phrase", "category") else "")


def fits_op(op: str, k: int, n: int, empty: bool) -> bool:
    """Whether `k` of a set of `n` meeting a condition suits `op`: a list names two to four,
    a count one to 60% of the set (every count a reader may meet), a latest / earliest two
    to 60%, an unanswerable set none."""
    if empty:
        return k == 0
    if op == "list":
        return 2 <= k <= 4
    return (1 if op == "count" else 2) <= k <= max(2, int(0.6 * n))


def surface(g: CorpusGraph, src: str, dst: str) -> str:
    for m in g.mentions.get(src, ()):
        if m.doc == dst:
            return m.surface
    return g.title(dst)


def alias_forms(g: CorpusGraph, doc_id: str, surface: str) -> tuple[str, ...]:
    """The other names an answer may be given by: the document's names and the form the text
    wrote, none that names another document too ("Type Objects" for "Type Objects
    (c-api/type)" while "Type Objects (c-api/typeobj)" is another)."""
    if "named_by" not in g.memo:
        named_by: dict[str, set[str]] = {}
        for d in g.order:
            for n in names(g.docs[d]):
                named_by.setdefault(name_key(n), set()).add(d)
        g.memo["named_by"] = named_by
    title = g.title(doc_id)
    found = [n for n in (*names(g.docs[doc_id]), surface) if n and n != title
             and g.memo["named_by"].get(name_key(n), set()) <= {doc_id}]
    return tuple(dict.fromkeys(found))
