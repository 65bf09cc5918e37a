"""The task families: each samples a `Spec` from the corpus and says what answers it.

`min_calls` counts the calls of the shortest plan that also confirms every choice from a tool
result, the final `answer` included (docs/stages.md lists the formula of each family):
- search: one per document reached by name (a named start, or a title read in a text);
- open: one per page read until the mention or phrase it needs has been shown;
- find: one per phrase checked in a document whose text need not be read.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hopforge.synth.questions.graph import CorpusGraph, Mention, names, years
from hopforge.synth.questions.phrases import picking_phrases
from hopforge.synth.records import NOT_FOUND, Hop, Spec, Step

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
    alternatives: tuple[tuple[str, ...], ...] = ()  # other phrases per step, to blur further


def spec_id(kind: str, spec: Spec) -> str:
    """A stable qid: the same task always gets the same id."""
    key = "\x00".join([kind, spec.family, spec.start, spec.target, spec.operation, spec.pattern,
                       spec.scope, *(f"{s.doc}|{s.relation}|{s.via}" for s in spec.steps)])
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
                 min_items: int = 4, min_df: int = 20) -> None:
        self.g, self.rng = graph, rng
        self.min_hops, self.max_hops = min_hops, max_hops
        self.min_clues, self.max_clues = min_clues, max_clues
        self.year_answer_rate = year_answer_rate
        self.min_calls, self.max_calls = min_calls, max_calls
        self.min_items, self.min_df = min_items, min_df
        usable = [d for d in graph.order if "(disambiguation)" not in graph.title(d).lower()]
        self._starts = _cycle([d for d in usable if graph.mentions[d]], rng)
        self._targets = _cycle(usable, rng)
        dated = [(src, m) for src in usable for m in graph.mentions[src]
                 if len(years(graph.docs[m.doc].text)) == 1]
        self._dated = dated
        self._agg_starts: list[str] | None = None

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

    # --- chain -----------------------------------------------------------------------------

    def _walk(self, depth: int) -> list[Mention] | None:
        start = next(self._starts, None)
        if start is None:
            return None
        path, seen = [Mention(doc=start, surface=self.g.title(start), pos=0)], {start}
        for _ in range(depth):
            options = [m for m in self.g.mentions[path[-1].doc] if m.doc not in seen
                       and "(disambiguation)" not in self.g.title(m.doc).lower()]
            if not options:
                return None
            weights = [1.0 / math.log(2.0 + len(self.g.inbound[m.doc])) for m in options]
            step = self.rng.choices(options, weights)[0]
            path.append(step)
            seen.add(step.doc)
        return path

    def _link_steps(self, path: list[Mention], hidden: list[str]) -> tuple[list[Step], list[tuple[str, ...]]] | None:
        steps = [Step(doc=path[0].doc, relation="start")]
        alternatives: list[tuple[str, ...]] = [()]
        for prev, cur in itertools.pairwise(path):
            rivals = [m.doc for m in self.g.mentions[prev.doc] if m.doc != cur.doc]
            phrases = picking_phrases(self.g, cur.doc, rivals, self.rng, forbidden=hidden,
                                      min_df=self.min_df)
            if not phrases:
                return None
            steps.append(Step(doc=cur.doc, relation="link", via=prev.doc, phrase=phrases[0]))
            alternatives.append(tuple(phrases[1:]))
        return steps, alternatives

    def _hidden_names(self, doc_ids: Sequence[str]) -> list[str]:
        return [n for d in doc_ids for n in names(self.g.docs[d])]

    def _chain(self, seed: int) -> Draft | None:
        depth = self.rng.randint(self.min_hops, self.max_hops)
        path = self._walk(depth)
        if path is None:
            return None
        hidden = [m.doc for m in path[1:]]
        made = self._link_steps(path, self._hidden_names(hidden))
        if made is None:
            return None
        steps, alternatives = made
        last = path[-1].doc
        stated = years(self.g.docs[last].text)
        year = len(stated) == 1 and self.rng.random() < self.year_answer_rate
        spec = Spec(family="chain", start=path[0].doc, steps=tuple(steps), target=last,
                    answer_type="year" if year else "title")
        if year:
            spec = _with_last(spec, value=stated[0])
        calls = chain_calls(self.g, spec)
        if not self.fits(calls):
            return None
        answer = stated[0] if year else self.g.title(last)
        aliases = () if year else _aliases(self.g, last, path[-1].surface)
        return self._draft("chain", spec, answer, aliases, last, calls, seed, alternatives)

    def _draft(self, kind: str, spec: Spec, answer: str, aliases: tuple[str, ...], answer_doc: str,
               calls: int, seed: int, alternatives: Sequence[tuple[str, ...]] = ()) -> Draft:
        evidence = tuple(dict.fromkeys(
            [*(s.doc for s in spec.steps if s.doc), *(s.via for s in spec.steps if s.via)]))
        hops = tuple(Hop(from_doc=s.via, to_doc=s.doc, clue=s.phrase,
                         bridge=_surface(self.g, s.via, s.doc))
                     for s in spec.steps if s.relation == "link" and s.doc and s.via)
        return Draft(qid=spec_id(kind, spec), kind=kind, spec=spec, answer=answer,
                     answer_aliases=aliases, answer_doc=answer_doc, evidence=evidence, hops=hops,
                     min_calls=calls, seed=seed, alternatives=tuple(alternatives))

    # --- comparison ------------------------------------------------------------------------

    def _comparison(self, seed: int) -> Draft | None:
        if len(self._dated) < 2:
            return None
        (a, x), (b, y) = self.rng.sample(self._dated, 2)
        yx, yy = years(self.g.docs[x.doc].text)[0], years(self.g.docs[y.doc].text)[0]
        if yx == yy or len({a, b, x.doc, y.doc}) < 4:
            return None
        hidden = self._hidden_names([x.doc, y.doc])
        sides: list[Step] = []
        for start, m, year in ((a, x, yx), (b, y, yy)):
            rivals = [r.doc for r in self.g.mentions[start] if r.doc != m.doc]
            phrases = picking_phrases(self.g, m.doc, rivals, self.rng, forbidden=hidden,
                                      min_df=self.min_df, count=1)
            if not phrases:
                return None
            sides += [Step(doc=start, relation="start"),
                      Step(doc=m.doc, relation="compare", via=start, phrase=phrases[0],
                           value=year)]
        later = self.rng.random() < 0.4
        win = max((x, yx), (y, yy), key=lambda t: int(t[1]) * (1 if later else -1))[0]
        spec = Spec(family="comparison", start=a, steps=tuple(sides), target=win.doc,
                    operation="later" if later else "earlier")
        calls = comparison_calls(self.g, spec)
        if not self.fits(calls):
            return None
        return self._draft("comparison", spec, self.g.title(win.doc),
                           _aliases(self.g, win.doc, win.surface), win.doc, calls, seed)

    # --- intersection ----------------------------------------------------------------------

    def _intersection(self, seed: int) -> Draft | None:
        """The one document that every one of 2-4 hidden documents mentions; each hidden
        document is reached from a named start through a phrase, and mentions several others."""
        target = next(self._targets, None)
        if target is None or len(self.g.inbound[target]) < self.min_clues:
            return None
        sources = [e for e in dict.fromkeys(self.g.inbound[target])
                   if len(self.g.mentions[e]) >= 3]
        self.rng.shuffle(sources)
        chosen: list[str] = []
        left: set[str] | None = None
        for e in sources:
            ring = {m.doc for m in self.g.mentions[e]}
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
        hidden = self._hidden_names([target, *chosen])
        steps: list[Step] = []
        alternatives: list[tuple[str, ...]] = []
        used = {target, *chosen}
        for e in chosen:
            starts = [a for a in self.g.inbound[e] if a not in used
                      and target not in {m.doc for m in self.g.mentions[a]}]
            if not starts:
                return None
            a = self.rng.choice(starts)
            used.add(a)
            rivals = [m.doc for m in self.g.mentions[a] if m.doc != e]
            phrases = picking_phrases(self.g, e, rivals, self.rng, forbidden=hidden,
                                      min_df=self.min_df)
            if not phrases:
                return None
            steps += [Step(doc=a, relation="start"),
                      Step(doc=e, relation="link", via=a, phrase=phrases[0])]
            alternatives += [(), tuple(phrases[1:])]
        steps += [Step(doc=target, relation="constraint", via=e) for e in chosen]
        spec = Spec(family="intersection", start=steps[0].doc, steps=tuple(steps),
                    target=target)
        calls = intersection_calls(self.g, spec)
        if not self.fits(calls):
            return None
        return self._draft("intersection", spec, self.g.title(target),
                           _aliases(self.g, target, ""), target, calls, seed, alternatives)

    # --- aggregation -----------------------------------------------------------------------

    def _aggregation(self, seed: int, *, empty: bool = False) -> Draft | None:
        start = self._aggregation_start()
        if start is None:
            return None
        scopes = [(scope, *item_set(self.g, start, scope)) for scope in ("links", "links2")]
        fitting = [t for t in scopes if len(t[2]) >= self.min_items
                   and self.fits(2 * len(t[2]) + 2, slack=True)]
        if not fitting:
            return None
        weights = [1.0 if t[0] == "links" else 0.6 for t in fitting]
        scope, parents, items = self.rng.choices(fitting, weights)[0]
        op = "list" if empty else self.rng.choice(("count", "count", "list", "max", "min"))
        pattern, matching = _pattern(self.g, items, self.rng, op=op, empty=empty,
                                     forbidden=names(self.g.docs[start]))
        if pattern is None:
            return None
        steps = [Step(doc=start, relation="start"),
                 *(Step(doc=i, relation="item", via=parents[i]) for i in items)]
        target, answer = "", str(len(matching))
        aliases: tuple[str, ...] = ()
        if op in ("max", "min"):
            pick = max if op == "max" else min
            value = {m: pick(int(y) for y in years(self.g.docs[m].text))
                     for m in matching if years(self.g.docs[m].text)}
            ranked = sorted(value, key=lambda m: value[m], reverse=op == "max")
            if len(ranked) < 2 or value[ranked[0]] == value[ranked[1]]:
                return None
            target = ranked[0]
            steps = [Step(doc=s.doc, relation="item", via=s.via, value=str(value[s.doc]))
                     if s.doc in value else s for s in steps]
            answer, aliases = self.g.title(target), _aliases(self.g, target, "")
        elif op == "list":
            answer = "; ".join(self.g.title(m) for m in matching) if matching else NOT_FOUND
        spec = Spec(family="aggregation", start=start, steps=tuple(steps), target=target,
                    answer_type={"count": "count", "list": "list"}.get(op, "title"),
                    operation=op, scope=scope, items=tuple(items), matching=tuple(matching),
                    pattern=pattern)
        if empty:
            spec = _unanswerable(spec, f"none of the {len(items)} documents contains "
                                       f"{pattern!r}")
        calls = aggregation_calls(self.g, spec)
        if not self.fits(calls):
            return None
        return self._draft("unanswerable" if empty else "aggregation", spec, answer, aliases,
                           target, calls, seed)

    def _aggregation_start(self) -> str | None:
        if self._agg_starts is None:
            self._agg_starts = [d for d in self.g.order
                                if len(self.g.mentions[d]) >= self.min_items
                                and self._could_fit(d)]
            self.rng.shuffle(self._agg_starts)
        if not self._agg_starts:
            return None
        return self.rng.choice(self._agg_starts)

    def _could_fit(self, doc_id: str) -> bool:
        """A cheap bound: the smallest and largest set from `doc_id` against the range."""
        if not self.min_calls and not self.max_calls:
            return True
        ring = len(self.g.mentions[doc_id])
        low = 2 + 2 * ring
        high = 3 + 4 * ring + sum(2 + 3 * len(self.g.mentions[m.doc])
                                  for m in self.g.mentions[doc_id])
        return high >= self.min_calls and (not self.max_calls or low <= self.max_calls)

    # --- unanswerable ----------------------------------------------------------------------

    def _unanswerable(self, seed: int) -> Draft | None:
        if self.rng.random() < 0.5:
            return self._aggregation(seed, empty=True)
        depth = self.rng.randint(self.min_hops, self.max_hops)
        path = self._walk(depth)
        if path is None:
            return None
        made = self._link_steps(path[:-1], self._hidden_names([m.doc for m in path[1:]]))
        if made is None:
            return None
        steps, alternatives = made
        last = path[-2].doc
        mentioned = [m.doc for m in self.g.mentions[last]]
        phrase = _absent_phrase(self.g, mentioned, path[-1].doc, self.rng, self.min_df)
        if phrase is None:
            return None
        spec = Spec(family="chain", start=path[0].doc,
                    steps=(*steps, Step(doc="", relation="link", via=last, phrase=phrase)),
                    answer_type="not_found")
        spec = _unanswerable(spec, f"no document that {self.g.title(last)!r} mentions "
                                   f"contains {phrase!r}")
        calls = chain_calls(self.g, spec)
        if not self.fits(calls):
            return None
        return self._draft("unanswerable", spec, NOT_FOUND, (), "", calls, seed,
                           [*alternatives, ()])


def _with_last(spec: Spec, **changes: str) -> Spec:
    last = spec.steps[-1]
    fields = {"doc": last.doc, "relation": last.relation, "via": last.via,
              "phrase": last.phrase, "value": last.value, **changes}
    return Spec(**{**spec.to_row(), "steps": (*spec.steps[:-1], Step(**fields)),
                   "items": spec.items, "matching": spec.matching})


def _unanswerable(spec: Spec, why: str) -> Spec:
    return Spec(**{**spec.to_row(), "steps": spec.steps, "items": spec.items,
                   "matching": spec.matching, "answer_type": "not_found", "unanswerable": why})


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
    mentions it: `links`, those `start` mentions; `links2`, those its mentions mention (not
    `start` itself nor its own mentions)."""
    ring = [m.doc for m in g.mentions[start]]
    if scope == "links":
        return {d: start for d in ring}, ring
    parents: dict[str, str] = {}
    skip = {start, *ring}
    for r in ring:
        for m in g.mentions[r]:
            if m.doc not in skip:
                parents.setdefault(m.doc, r)
    return parents, list(parents)


def _pattern(g: CorpusGraph, items: list[str], rng: random.Random, *, op: str, empty: bool,
             forbidden: Sequence[str]) -> tuple[str | None, list[str]]:
    """A word that some of `items` contain (none when `empty`), and those that do."""
    counts: dict[str, int] = {}
    for i in items:
        for w in set(g.lower[i].split()):
            w = w.strip(".,;:()\"'“”‘’!?[]{}")
            if len(w) >= 5 and w.isalpha():
                counts[w] = counts.get(w, 0) + 1
    n = len(items)
    pool = sorted(w for w, c in counts.items() if 0.1 * n <= c <= 0.6 * n or (op == "list"
                  and 2 <= c <= 4) or (op in ("max", "min") and c >= 2))
    if empty:
        pool = sorted(w for w in (g.lower[rng.choice(g.order)].split()) if len(w) >= 6
                      and w.isalpha() and counts.get(w, 0) == 0 and g.doc_freq(w) >= 3)
    pool = [w for w in pool if not any(w in f.lower() or f.lower() in w for f in forbidden)]
    rng.shuffle(pool)
    for w in pool[:20]:
        matching = [i for i in items if w in g.lower[i]]
        if empty and matching:
            continue
        if op == "list" and not empty and not 2 <= len(matching) <= 4:
            continue
        if op == "count" and len(matching) < 2:
            continue
        if op in ("max", "min") and sum(bool(years(g.docs[m].text)) for m in matching) < 2:
            continue
        return w, matching
    return None, []


def _absent_phrase(g: CorpusGraph, rivals: list[str], source: str, rng: random.Random,
                   min_df: int) -> str | None:
    """A phrase of `source` (a real document's words) that none of `rivals` contains."""
    texts = [g.lower[r] for r in rivals]
    words = [w for w in g.words(source) if len(w) >= 5 and w.isalpha()]
    rng.shuffle(words)
    for w in words:
        if not any(w.lower() in t for t in texts) and g.doc_freq(w) >= min_df:
            return w
    return None


def chain_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start, open it to the first mention; per later step: search the title read,
    open it to the next mention and its phrase (the last: find its phrase, or open to the year);
    an unanswerable last step: search and find in every document the one before mentions."""
    steps = list(spec.steps)
    calls = 1 + _pages_to_mention(g, steps[0].doc, steps[1].doc) if len(steps) > 1 else 1
    for i, step in enumerate(steps[1:], start=1):
        if not step.doc:  # unanswerable: every candidate checked
            calls += 2 * len(g.mentions[step.via])
            continue
        calls += 1
        if i + 1 < len(steps) and steps[i + 1].doc:
            calls += max(_pages_to_mention(g, step.doc, steps[i + 1].doc),
                         g.pages_to(step.doc, step.phrase))
        elif i + 1 < len(steps):
            calls += g.pages(step.doc)  # every mention read before giving up
        elif spec.answer_type == "year":
            calls += max(g.pages_to(step.doc, step.value), g.pages_to(step.doc, step.phrase))
        else:
            calls += 1  # find the phrase
    return calls + 1


def _pages_to_mention(g: CorpusGraph, src: str, dst: str) -> int:
    for m in g.mentions[src]:
        if m.doc == dst:
            return g.page_of(src, m.pos) + 1
    return g.pages(src)


def comparison_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per side: search the start, open it to the mention, search the title, open to the year."""
    calls = 1
    for start, side in zip(spec.steps[::2], spec.steps[1::2], strict=True):
        calls += 1 + _pages_to_mention(g, start.doc, side.doc)
        calls += 1 + max(g.pages_to(side.doc, side.value), g.pages_to(side.doc, side.phrase))
    return calls


def intersection_calls(g: CorpusGraph, spec: Spec) -> int:
    """Per hidden document: search its start, open it to the mention, search the title read and
    read all its pages (every mention, to intersect them); answer."""
    calls = 1
    for start, hidden in zip(spec.steps[::2], spec.steps[1::2], strict=False):
        if start.relation != "start":
            break
        calls += 1 + _pages_to_mention(g, start.doc, hidden.doc) + 1 + g.pages(hidden.doc)
    return calls


def aggregation_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start and read all its pages; links2: search and read every document of the
    first ring; per item: search its title and find the pattern (max/min: read the matching
    items to their year); answer."""
    calls = 1 + g.pages(spec.start)
    if spec.scope == "links2":
        calls += sum(1 + g.pages(m.doc) for m in g.mentions[spec.start])
    calls += 2 * len(spec.items)
    if spec.operation in ("max", "min"):
        calls += sum(g.pages(m) for m in spec.matching)
    return calls + 1
