"""The task families: each samples a `Spec` from the corpus's facts and says what answers it.

Every step is a fact a reader can check (synth/questions/clues.py): a chain walks from a named
start through the documents each page names, each next one picked among that page's names by a
blurred fact of its own; a comparison sets the same dated relation of two documents side by
side; an intersection asks for the one document that several hidden ones all name; an
aggregation counts, lists or ranks the documents a page names by a typed condition. A phrase
clue is the fallback where no fact picks a document, and at most `max_phrase_share` of all
clues drawn.

`min_calls` counts the calls of the shortest plan that also confirms every choice from a tool
result, the final `answer` included (docs/stages.md lists the formula of each family):
- search: one per document reached by name (a named start, or a title read in a text);
- open: one per page read until the mention or fact it needs has been shown;
- find: one per fact checked in a document whose text need not be read.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from hopforge.corpus.tokenize import ENGLISH_STOPWORDS
from hopforge.synth.questions.clues import FactBook, phrase_clue
from hopforge.synth.questions.graph import CorpusGraph, Mention, names
from hopforge.synth.questions.phrases import picking_phrases
from hopforge.synth.records import NOT_FOUND, Clue, Hop, Spec, Step

FAMILIES: tuple[str, ...] = ("chain", "comparison", "intersection", "aggregation")
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
    alternatives: tuple[tuple[Clue, ...], ...] = ()  # other clues per step, to blur further


def spec_id(kind: str, spec: Spec) -> str:
    """A stable qid: the same task always gets the same id."""
    cond = spec.condition.shown if spec.condition else ""
    key = "\x00".join([kind, spec.family, spec.start, spec.target, spec.operation, spec.pattern,
                       spec.scope, cond,
                       *(f"{s.doc}|{s.relation}|{s.via}|{s.fact.shown if s.fact else ''}"
                         for s in spec.steps)])
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def _cycle(pool: list[str], rng: random.Random) -> Iterator[str]:
    pool = list(pool)
    while pool:
        rng.shuffle(pool)
        yield from list(pool)


class Families:
    """Samples drafts of every family over one corpus graph, deterministic for its `rng`."""

    def __init__(self, graph: CorpusGraph, rng: random.Random, *, min_hops: int = 2,
                 max_hops: int = 4, min_clues: int = 2, max_clues: int = 4,
                 year_answer_rate: float = 0.3, min_calls: int = 0, max_calls: int = 0,
                 min_items: int = 4, min_df: int = 20, max_items: int = 400,
                 max_phrase_share: float = 0.2, max_gap: int = 0) -> None:
        self.g, self.rng = graph, rng
        self.book: FactBook = graph.facts
        self.min_hops, self.max_hops = min_hops, max_hops
        self.min_clues, self.max_clues = min_clues, max_clues
        self.year_answer_rate = year_answer_rate
        self.min_calls, self.max_calls = min_calls, max_calls
        self.min_items, self.min_df, self.max_items = min_items, min_df, max_items
        self.max_phrase_share = max_phrase_share
        self.max_gap = max_gap  # the most calls a plan may spend between two gold documents
        self.clue_kinds: Counter[str] = Counter()
        usable = [d for d in graph.order if d not in graph.shared
                  and "(disambiguation)" not in graph.title(d).lower()]
        self.usable = set(usable)
        self.inbound: dict[str, list[str]] = {d: [] for d in graph.order}
        for src in usable:
            for m in graph.mentions[src]:
                self.inbound[m.doc].append(src)
        self.height = self._heights(MAX_DEPTH)
        self._starts = _cycle([d for d in usable if self.height[d] >= min_hops
                               and not graph.ambiguous(d)], rng)
        self._targets = _cycle(usable, rng)
        self._agg_starts: list[str] | None = None
        self._dated: dict[str, list[str]] | None = None

    def draw(self, kind: str) -> Draft | None:
        """One draft of `kind` (a family, or "unanswerable"), or None when this draw failed."""
        seed = self.rng.getrandbits(32)
        if kind == "unanswerable":
            return self._unanswerable(seed)
        return getattr(self, f"_{kind}")(seed)

    def fits(self, calls: int, *, slack: bool = False) -> bool:
        """Whether `calls` lies in the configured min_calls range (0: unbounded); with `slack`,
        a lower estimate that may grow by half (pages read on top of searches and finds)."""
        low = calls * (1.5 if slack else 1.0)
        return low >= self.min_calls and (not self.max_calls or calls <= self.max_calls)

    # --- clues ----------------------------------------------------------------------------

    def _phrase_allowed(self) -> bool:
        total = sum(self.clue_kinds.values())
        return total < 10 or self.clue_kinds["phrase"] < self.max_phrase_share * total

    def clue(self, doc_id: str, rivals: Sequence[str], hidden: Sequence[str],
             *, avoid_key: str = "") -> tuple[Clue, tuple[Clue, ...]] | None:
        """A clue that picks `doc_id` among `rivals` (and others to blur further), facts first;
        the phrase fallback only while phrases stay under their share."""
        found = [c for c in self.book.picking(doc_id, rivals, hidden=hidden)
                 if not (avoid_key and c.kind == "date" and c.key == avoid_key)]
        if found:
            best = found[0].kind
            band = [c for c in found if c.kind == best]
            self.rng.shuffle(band)
            rest = [c for c in found if c.kind != best]
            return band[0], tuple(band[1:3] + rest[:2])
        if not self._phrase_allowed():
            return None
        forbidden = [n for d in hidden for n in names(self.g.docs[d])]
        phrases = picking_phrases(self.g, doc_id, list(rivals), self.rng, forbidden=forbidden,
                                  min_df=self.min_df)
        if not phrases:
            return None
        doc = self.g.docs[doc_id]
        made = [phrase_clue(doc, p) for p in phrases]
        return made[0], tuple(made[1:])

    def _take(self, steps: Sequence[Step]) -> None:
        self.clue_kinds.update(s.fact.kind for s in steps if s.fact)

    @staticmethod
    def _step(doc: str, relation: str, via: str, clue: Clue, value: str = "") -> Step:
        return Step(doc=doc, relation=relation, via=via, fact=clue, value=value,
                    phrase=clue.value if clue.kind == "phrase" else "")

    # --- chain -----------------------------------------------------------------------------

    def _heights(self, cap: int) -> dict[str, int]:
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

    def _walk(self, depth: int) -> list[Mention] | None:
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

    def _link_steps(self, path: list[Mention]) -> tuple[list[Step], list[tuple[Clue, ...]]] | None:
        hidden = [m.doc for m in path]  # no clue names a document of the walk
        steps = [Step(doc=path[0].doc, relation="start")]
        alternatives: list[tuple[Clue, ...]] = [()]
        for prev, cur in zip(path, path[1:], strict=False):
            made = self.clue(cur.doc, self.g.rivals[prev.doc], hidden)
            if made is None:
                return None
            steps.append(self._step(cur.doc, "link", prev.doc, made[0]))
            alternatives.append(made[1])
        return steps, alternatives

    def _chain(self, seed: int) -> Draft | None:
        depth = self.rng.randint(self.min_hops, self.max_hops)
        path = self._walk(depth)
        if path is None:
            return None
        made = self._link_steps(path)
        if made is None:
            return None
        steps, alternatives = made
        last = path[-1].doc
        asked = self._asked_year(last, steps[-1].fact)
        year = asked is not None and self.rng.random() < self.year_answer_rate
        spec = Spec(family="chain", start=path[0].doc, steps=tuple(steps), target=last,
                    answer_type="year" if year else "title",
                    condition=asked if year else None)
        if year and asked is not None:
            spec = replace(spec, steps=(*steps[:-1], replace(steps[-1], value=asked.value)))
        calls = chain_calls(self.g, spec)
        if not self.fits(calls):
            return None
        answer = asked.value if year and asked else self.g.title(last)
        aliases = () if year else _aliases(self.g, last, path[-1].surface)
        self._take(steps)
        return self._draft("chain", spec, answer, aliases, last, calls, seed, alternatives)

    def _asked_year(self, doc_id: str, used: Clue | None) -> Clue | None:
        """A dated relation of `doc_id` with one year only, to ask for; not the clue's own."""
        for key, years in sorted(self.book.dates.get(doc_id, {}).items()):
            if len(set(years)) == 1 and not (used and used.kind == "date" and used.key == key):
                fact = next(f for f in self.book.of(doc_id, "date")
                            if self.book.key_of.get(f) == key)
                return Clue(kind="date", relation=fact.relation, value=str(years[0]),
                            evidence=fact.evidence, key=key, shown=self.book.verb(doc_id, key))
        return None

    def _draft(self, kind: str, spec: Spec, answer: str, aliases: tuple[str, ...], answer_doc: str,
               calls: int, seed: int, alternatives: Sequence[tuple[Clue, ...]] = ()
               ) -> Draft | None:
        if self.max_gap and longest_gap(self.g, spec) > self.max_gap:
            return None  # a correct plan would trip the no-progress stop
        evidence = tuple(dict.fromkeys(
            [*(s.doc for s in spec.steps if s.doc), *(s.via for s in spec.steps if s.via)]))
        hops = tuple(Hop(from_doc=s.via, to_doc=s.doc, clue=s.fact.evidence if s.fact else "",
                         bridge=_surface(self.g, s.via, s.doc))
                     for s in spec.steps if s.relation == "link" and s.doc and s.via)
        return Draft(qid=spec_id(kind, spec), kind=kind, spec=spec, answer=answer,
                     answer_aliases=aliases, answer_doc=answer_doc, evidence=evidence, hops=hops,
                     min_calls=calls, seed=seed, alternatives=tuple(alternatives))

    # --- comparison ------------------------------------------------------------------------

    def _dated_pool(self) -> dict[str, list[str]]:
        """relation key -> documents that state one year for it and that a page names."""
        if self._dated is None:
            pool: dict[str, list[str]] = {}
            for doc_id in self.g.order:
                if doc_id not in self.usable or not self.inbound[doc_id]:
                    continue
                for key, years in self.book.dates.get(doc_id, {}).items():
                    if len(set(years)) == 1:
                        pool.setdefault(key, []).append(doc_id)
            self._dated = {k: v for k, v in sorted(pool.items()) if len(v) >= 2}
        return self._dated

    def _comparison(self, seed: int) -> Draft | None:
        pool = self._dated_pool()
        if not pool:
            return None
        keys = list(pool)
        key = self.rng.choices(keys, [math.sqrt(len(pool[k])) for k in keys])[0]
        x, y = self.rng.sample(pool[key], 2)
        yx, yy = self.book.dates[x][key][0], self.book.dates[y][key][0]
        if yx == yy:
            return None
        sides: list[Step] = []
        used: set[str] = {x, y}
        alternatives: list[tuple[Clue, ...]] = []
        for target, year in ((x, yx), (y, yy)):
            starts = [a for a in self.inbound[target] if a not in used
                      and not self.g.ambiguous(a)]
            if not starts:
                return None
            a = self.rng.choice(starts)
            used.add(a)
            made = self.clue(target, self.g.rivals[a], [x, y, *used], avoid_key=key)
            if made is None:
                return None
            sides += [Step(doc=a, relation="start"),
                      self._step(target, "compare", a, made[0], value=str(year))]
            alternatives += [(), made[1]]
        shown = self.book.verb(x, key)
        later = self.rng.random() < 0.4
        win = max((x, yx), (y, yy), key=lambda t: t[1] * (1 if later else -1))[0]
        condition = Clue(kind="date", key=key, shown=shown)
        spec = Spec(family="comparison", start=sides[0].doc, steps=tuple(sides), target=win,
                    operation="later" if later else "earlier", condition=condition)
        calls = comparison_calls(self.g, spec)
        if not self.fits(calls):
            return None
        self._take(sides)
        return self._draft("comparison", spec, self.g.title(win), _aliases(self.g, win, ""),
                           win, calls, seed, alternatives)

    # --- intersection ----------------------------------------------------------------------

    def _intersection(self, seed: int) -> Draft | None:
        """The one document that every one of 2-4 hidden documents names; each hidden
        document is reached from a named start through a fact clue, and names several others."""
        target = next(self._targets, None)
        if target is None or len(self.inbound[target]) < self.min_clues:
            return None
        sources = [e for e in dict.fromkeys(self.inbound[target])
                   if len(self.book.mentioned(e)) >= 3 and not self.g.ambiguous(e)]
        self.rng.shuffle(sources)
        chosen: list[str] = []
        left: set[str] | None = None
        for e in sources:
            ring = set(self.book.mentioned(e))
            narrowed = ring if left is None else left & ring
            if left is not None and narrowed == left:
                continue  # rules nothing out
            chosen.append(e)
            left = narrowed
            if left == {target} and len(chosen) >= self.min_clues:
                break
            if len(chosen) >= self.max_clues:
                return None
        if left != {target} or len(chosen) < self.min_clues:
            return None
        steps: list[Step] = []
        alternatives: list[tuple[Clue, ...]] = []
        used = {target, *chosen}
        for e in chosen:
            starts = [a for a in self.inbound[e] if a not in used and not self.g.ambiguous(a)
                      and target not in self.book.mentioned(a)]
            if not starts:
                return None
            a = self.rng.choice(starts)
            used.add(a)
            made = self.clue(e, self.g.rivals[a], [target, *chosen, a])
            if made is None:
                return None
            steps += [Step(doc=a, relation="start"), self._step(e, "link", a, made[0])]
            alternatives += [(), made[1]]
        steps += [Step(doc=target, relation="constraint", via=e) for e in chosen]
        spec = Spec(family="intersection", start=steps[0].doc, steps=tuple(steps),
                    target=target)
        calls = intersection_calls(self.g, spec)
        if not self.fits(calls):
            return None
        self._take(steps)
        return self._draft("intersection", spec, self.g.title(target),
                           _aliases(self.g, target, ""), target, calls, seed, alternatives)

    # --- aggregation -----------------------------------------------------------------------

    def _aggregation(self, seed: int, *, empty: bool = False) -> Draft | None:
        start = self._aggregation_start()
        if start is None:
            return None
        scopes = [(scope, *item_set(self.g, start, scope)) for scope in ("links", "links2")]
        fitting = [t for t in scopes if self.min_items <= len(t[2]) <= self.max_items
                   and self.fits(2 * len(t[2]) + 2, slack=True)
                   and not any(self.g.ambiguous(p) for p in set(t[1].values()))]
        if not fitting:
            return None
        weights = [1.0 if t[0] == "links" else 0.6 for t in fitting]
        scope, parents, items = self.rng.choices(fitting, weights)[0]
        op = "list" if empty else self.rng.choice(("count", "count", "list", "max", "min"))
        made = self._condition(items, op=op, empty=empty, start=start)
        if made is None:
            return None
        condition, matching = made
        steps = [Step(doc=start, relation="start"),
                 *(Step(doc=i, relation="item", via=parents[i]) for i in items)]
        target, answer = "", str(len(matching))
        aliases: tuple[str, ...] = ()
        if op in ("max", "min"):
            pick = max if op == "max" else min
            value = {m: pick(self.book.dates[m][condition.key]) for m in matching}
            ranked = sorted(value, key=lambda m: value[m], reverse=op == "max")
            if len(ranked) < 2 or value[ranked[0]] == value[ranked[1]]:
                return None
            target = ranked[0]
            steps = [replace(s, value=str(value[s.doc])) if s.doc in value else s
                     for s in steps]
            answer, aliases = self.g.title(target), _aliases(self.g, target, "")
        elif op == "list":
            answer = "; ".join(self.g.title(m) for m in matching) if matching else NOT_FOUND
        spec = Spec(family="aggregation", start=start, steps=tuple(steps), target=target,
                    answer_type={"count": "count", "list": "list"}.get(op, "title"),
                    operation=op, scope=scope, items=tuple(items), matching=tuple(matching),
                    pattern=condition.value if condition.kind == "phrase" else "",
                    condition=condition)
        if empty:
            spec = replace(spec, answer_type="not_found",
                           unanswerable=f"none of the {len(items)} documents is "
                                        f"{condition.shown}")
        calls = aggregation_calls(self.g, spec)
        if not self.fits(calls):
            return None
        self.clue_kinds[condition.kind] += 1
        return self._draft("unanswerable" if empty else "aggregation", spec, answer, aliases,
                           target, calls, seed)

    def _condition(self, items: list[str], *, op: str, empty: bool, start: str
                   ) -> tuple[Clue, list[str]] | None:
        """A typed condition over `items` that suits `op`, and the items that meet it."""
        n = len(items)
        if op in ("max", "min"):
            keys = Counter(k for i in items for k in self.book.dates.get(i, {}))
            usable = sorted(k for k, c in keys.items() if c >= 2)
            if not usable:
                return None
            key = self.rng.choice(usable)
            having = [i for i in items if key in self.book.dates.get(i, {})]
            return Clue(kind="date", key=key, shown=self.book.verb(having[0], key)), having
        pool: dict[str, Clue] = {}
        sources = items if not empty else self.rng.sample(self.g.order, min(40, len(self.g.order)))
        for i in sources:
            for c in self.book.clues(i, hidden=[start]):
                pool.setdefault(c.shown, c)
        typed = list(pool.values())
        self.rng.shuffle(typed)
        typed.sort(key=lambda c: ("date", "entity", "number", "category").index(c.kind)
                   if c.kind != "phrase" else 9)
        for c in typed[:60]:
            matching = [i for i in items if self.book.holds(c, i)]
            if _fits_op(op, len(matching), n, empty):
                if empty and not any(c.key in self.book.dates.get(i, {})
                                     or c.key in self.book.numbers.get(i, {}) for i in items
                                     ) and c.kind in ("date", "number"):
                    continue  # a premise about something none of the items states at all
                return _general(c), matching
        if not self._phrase_allowed():
            return None
        pattern, matching = _pattern(self.g, items, self.rng, op=op, empty=empty,
                                     forbidden=names(self.g.docs[start]))
        if pattern is None:
            return None
        return Clue(kind="phrase", value=pattern, key=pattern,
                    shown=f"whose text contains the words “{pattern}”"), matching

    def _aggregation_start(self) -> str | None:
        if self._agg_starts is None:
            self._agg_starts = [d for d in self.g.order if d in self.usable
                                and not self.g.ambiguous(d)
                                and len(self.book.mentioned(d)) >= self.min_items
                                and self._could_fit(d)]
            self.rng.shuffle(self._agg_starts)
        if not self._agg_starts:
            return None
        return self.rng.choice(self._agg_starts)

    def _could_fit(self, doc_id: str) -> bool:
        """A cheap bound: the smallest and largest set from `doc_id` against the range."""
        if not self.min_calls and not self.max_calls:
            return True
        ring = self.book.mentioned(doc_id)
        low = 2 + 2 * len(ring)
        high = 3 + 4 * len(ring) + sum(2 + 3 * len(self.book.mentioned(m)) for m in ring)
        return high >= self.min_calls and (not self.max_calls or low <= self.max_calls)

    # --- unanswerable ----------------------------------------------------------------------

    def _unanswerable(self, seed: int) -> Draft | None:
        if self.rng.random() < 0.5:
            return self._aggregation(seed, empty=True)
        depth = self.rng.randint(self.min_hops, self.max_hops)
        path = self._walk(depth)
        if path is None:
            return None
        made = self._link_steps(path[:-1])
        if made is None:
            return None
        steps, alternatives = made
        last = path[-2].doc
        rivals = self.g.rivals[last]
        premise = self._absent(path[-1].doc, rivals)
        if premise is None:
            return None
        spec = Spec(family="chain", start=path[0].doc,
                    steps=(*steps, Step(doc="", relation="link", via=last, fact=premise,
                                        phrase=premise.value if premise.kind == "phrase" else "")),
                    answer_type="not_found",
                    unanswerable=f"none of the documents {self.g.title(last)!r} names is "
                                 f"{premise.shown}")
        calls = chain_calls(self.g, spec)
        if not self.fits(calls):
            return None
        self._take(spec.steps)
        return self._draft("unanswerable", spec, NOT_FOUND, (), "", calls, seed,
                           [*alternatives, ()])

    def _absent(self, source: str, rivals: Sequence[str]) -> Clue | None:
        """A clue of `source` (a real document's fact) that none of `rivals` passes."""
        options = [c for c in self.book.clues(source) if c.kind != "entity"]
        self.rng.shuffle(options)
        for c in sorted(options, key=lambda c: c.kind == "phrase"):
            if rivals and not any(self.book.holds(c, r) for r in rivals):
                return _general(c)
        return None


def _general(c: Clue) -> Clue:
    """A clue as a condition on other documents: its test, not the one fact it came from."""
    return Clue(kind=c.kind, key=c.key, low=c.low, high=c.high, shown=c.shown,
                target=c.target, value=c.value if c.kind in ("phrase", "category") else "")


def _fits_op(op: str, k: int, n: int, empty: bool) -> bool:
    if empty:
        return k == 0
    if op == "list":
        return 2 <= k <= 4
    return 2 <= k <= max(2, int(0.6 * n))


def _surface(g: CorpusGraph, src: str, dst: str) -> str:
    for m in g.mentions.get(src, ()):
        if m.doc == dst:
            return m.surface
    return g.title(dst)


def _aliases(g: CorpusGraph, doc_id: str, surface: str) -> tuple[str, ...]:
    title = g.title(doc_id)
    found = [n for n in (*names(g.docs[doc_id]), surface) if n and n != title]
    return tuple(dict.fromkeys(found))


def item_set(g: CorpusGraph, start: str, scope: str) -> tuple[dict[str, str], list[str]]:
    """The documents an aggregation enumerates from `start`, each with the document that
    names it: `links`, every document `start`'s text names; `links2`, every document those
    name (not `start` itself nor its own names)."""
    ring = sorted(g.facts.mentioned(start), key=lambda d: _first(g, start, d))
    if scope == "links":
        return {d: start for d in ring}, ring
    parents: dict[str, str] = {}
    skip = {start, *ring}
    for r in ring:
        for d in sorted(g.facts.mentioned(r), key=lambda d: _first(g, r, d)):
            if d not in skip:
                parents.setdefault(d, r)
    return parents, list(parents)


def _first(g: CorpusGraph, src: str, dst: str) -> int:
    """Where `src`'s text first names `dst`."""
    for h in g.names.find(g.docs[src].text, exclude=src):
        if h.doc == dst:
            return h.start
    return len(g.docs[src].text)


def _pattern(g: CorpusGraph, items: list[str], rng: random.Random, *, op: str, empty: bool,
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
        if _fits_op(op, len(matching), n, empty):
            return w, matching
    return None, []


def longest_gap(g: CorpusGraph, spec: Spec) -> int:
    """The most calls the min_calls plan spends between two gold documents: the documents a
    page names before the one a clue picks are each searched and checked."""
    gaps = [2 * _before(g, s.via, s.doc) + 2 for s in spec.steps
            if s.relation in ("link", "compare") and s.doc and s.via]
    gaps += [2 * len(g.rivals[s.via]) for s in spec.steps if s.relation == "link" and not s.doc]
    return max(gaps, default=0)


def _clue_pages(g: CorpusGraph, step: Step) -> int:
    """Pages of `step.doc` to read until its clue's evidence has been shown."""
    if step.fact and step.fact.evidence:
        return g.pages_to(step.doc, step.fact.evidence[:60])
    return g.pages_to(step.doc, step.phrase)


def chain_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start, open it to the first mention; per later step: search and check every
    name the page shows before it (two calls each), search the title read, open it to the next
    mention and its clue (the last: find its clue, or open to the year);
    an unanswerable last step: search and find in every document the one before names."""
    steps = list(spec.steps)
    calls = 1 + _pages_to_mention(g, steps[0].doc, steps[1].doc) if len(steps) > 1 else 1
    for i, step in enumerate(steps[1:], start=1):
        if not step.doc:  # unanswerable: every candidate checked
            calls += 2 * len(g.rivals[step.via])
            continue
        calls += 1 + 2 * _before(g, step.via, step.doc)
        if i + 1 < len(steps) and steps[i + 1].doc:
            calls += max(_pages_to_mention(g, step.doc, steps[i + 1].doc), _clue_pages(g, step))
        elif i + 1 < len(steps):
            calls += g.pages(step.doc)  # every mention read before giving up
        elif spec.answer_type == "year" and spec.condition:
            calls += max(g.pages_to(step.doc, spec.condition.evidence[:60]),
                         _clue_pages(g, step))
        else:
            calls += 1  # find the clue
    return calls + 1


def _pages_to_mention(g: CorpusGraph, src: str, dst: str) -> int:
    for m in g.mentions[src]:
        if m.doc == dst:
            return g.page_of(src, m.pos) + 1
    return g.pages(src)


def _before(g: CorpusGraph, src: str, dst: str) -> int:
    """How many documents `src`'s text names before it first names `dst`: each is searched
    and checked (two calls) before the clue reaches `dst`."""
    order = g.memo.setdefault("name_order", {})
    if src not in order:
        order[src] = list(dict.fromkeys(h.doc for h in g.names.find(g.docs[src].text,
                                                                    exclude=src) if h.doc))
    names = order[src]
    return names.index(dst) if dst in names else len(names)


def comparison_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per side: search the start, open it to the mention, search the title, open to the year."""
    calls = 1
    for start, side in zip(spec.steps[::2], spec.steps[1::2], strict=True):
        calls += 1 + _pages_to_mention(g, start.doc, side.doc)
        calls += 1 + 2 * _before(g, start.doc, side.doc) + _clue_pages(g, side)
    return calls


def intersection_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per hidden document: search its start, open it to the mention, search the title read and
    read all its pages (every mention, to intersect them); answer."""
    calls = 1
    for start, hidden in zip(spec.steps[::2], spec.steps[1::2], strict=False):
        if start.relation != "start":
            break
        calls += 1 + _pages_to_mention(g, start.doc, hidden.doc) + 1 + g.pages(hidden.doc)
        calls += 2 * _before(g, start.doc, hidden.doc)
    return calls


def aggregation_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start and read all its pages; links2: search and read every document of the
    first ring; per item: search its title and find the condition's word (max/min: read the
    matching items to their year); answer."""
    calls = 1 + g.pages(spec.start)
    if spec.scope == "links2":
        calls += sum(1 + g.pages(d) for d in g.facts.mentioned(spec.start))
    calls += 2 * len(spec.items)
    if spec.operation in ("max", "min"):
        calls += sum(g.pages(m) for m in spec.matching)
    return calls + 1
