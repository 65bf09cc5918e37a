"""Aggregations: the documents a page names (or those they name), a typed condition on them,
and a count, a list of titles, or the one that did a dated thing latest (earliest)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from hopforge.synth.questions.facts import LIFE_KEYS, YEAR, life_dates, sentences
from hopforge.synth.questions.families.base import (
    Draft,
    Families,
    Family,
    alias_forms,
    fits_op,
    general,
)
from hopforge.synth.questions.families.comparison import COMPARABLE
from hopforge.synth.questions.families.sets import (
    item_set,
    loose_items,
    reads_the_same,
    word_condition,
)
from hopforge.synth.questions.graph import CorpusGraph, names
from hopforge.synth.questions.wording import q
from hopforge.synth.records import NONE, Clue, Question, Spec, Step


class Aggregation(Family):
    name = "aggregation"
    plan = "aggregation"
    needs = ("a document that names at least min_items others, and a condition some of them "
             "meet that one search does not single out")

    def sample(self, s: Families, seed: int, *, empty: bool = False) -> Draft | None:
        start = self.start(s)
        if start is None:
            return None
        scopes = [(scope, *item_set(s.g, start, scope)) for scope in ("links", "links2")]
        fitting = [t for t in scopes if s.min_items <= len(t[2]) <= s.max_items
                   and s.fits(2 * len(t[2]) + 2, slack=True)
                   and not any(p in s.g.listings
                               for p in set(t[1].values()))]
        if not fitting:
            return None
        weights = [1.0 if t[0] == "links" else 0.6 for t in fitting]
        scope, parents, items = s.rng.choices(fitting, weights)[0]
        op = "list" if empty else s.rng.choice(("count", "count", "list", "max", "min"))
        loose = loose_items(s.g, start, scope, items)
        made = self.condition(s, items, op=op, empty=empty, start=start, loose=loose)
        if made is None:
            return None
        condition, matching = made
        steps = [Step(doc=start, relation="start"),
                 *(Step(doc=i, relation="item", via=parents[i]) for i in items)]
        target, answer = "", str(len(matching))
        aliases: tuple[str, ...] = ()
        if op in ("max", "min"):
            pick = max if op == "max" else min
            value = {m: pick(s.book.dates[m][condition.key]) for m in matching}
            ranked = sorted(value, key=lambda m: value[m], reverse=op == "max")
            if len(ranked) < 2 or value[ranked[0]] == value[ranked[1]]:
                return None
            target = ranked[0]
            steps = [replace(st, value=str(value[st.doc])) if st.doc in value else st
                     for st in steps]
            answer, aliases = s.g.title(target), alias_forms(s.g, target, "")
        elif op == "list":
            answer = "; ".join(s.g.title(m) for m in matching) if matching else NONE
        if op not in ("max", "min") and condition.kind == "date":  # the year a run reads of
            dated = {i: s.book.year_for(i, condition) for i in items}  # each, met or not
            steps = [replace(st, value=str(dated[st.doc])) if dated.get(st.doc) else st
                     for st in steps]
        spec = Spec(family="aggregation", start=start, steps=tuple(steps), target=target,
                    answer_type={"count": "count", "list": "list"}.get(op, "title"),
                    operation=op, scope=scope, items=tuple(items), matching=tuple(matching),
                    pattern=condition.value if condition.kind == "phrase" else "",
                    condition=condition)
        if empty:
            spec = replace(spec, answer_type="not_found",
                           unanswerable=f"none of the {len(items)} documents is "
                                        f"{condition.shown}")
        calls = aggregation_calls(s.g, spec)
        if not s.fits(calls):
            return None
        s.take((), condition)
        return s.draft("unanswerable" if empty else "aggregation", spec, answer, aliases,
                           target, calls, seed)

    def condition(self, s: Families, items: list[str], *, op: str, empty: bool, start: str,
                  loose: Sequence[str] = ()) -> tuple[Clue, list[str]] | None:
        """A typed condition over `items` that suits `op`, and the items that meet it; none of
        `loose` (names a reader may count in the set too) meets it."""
        n = len(items)
        if op in ("max", "min"):
            shown = {k for d in loose for k in s.book.dates.get(d, {})}
            keys = Counter(k for i in items for k in s.book.dates.get(i, {}) if k not in shown)
            usable = sorted(k for k, c in keys.items() if c >= 2 and k in COMPARABLE and all(
                decided(s, Clue(kind="date", key=k), i) for i in items))
            if not usable:
                return None
            key = s.rng.choice(usable)
            having = [i for i in items if key in s.book.dates.get(i, {})]
            return Clue(kind="date", key=key, shown=s.book.verb(having[0], key)), having
        pool: dict[str, Clue] = {}
        sources = items if not empty else s.rng.sample(s.g.order, min(40, len(s.g.order)))
        for i in sources:
            for c in s.book.clues(i, hidden=[start]):
                pool.setdefault(c.shown, c)
        typed = list(pool.values())
        s.rng.shuffle(typed)
        typed.sort(key=lambda c: ("date", "entity", "number", "category").index(c.kind)
                   if c.kind != "phrase" else 9)
        fitting: list[tuple[Clue, list[str]]] = []
        for c in typed[:60]:
            if fitting and c.kind != fitting[0][0].kind:
                break  # the first kind that fits, and every condition of it to pick from
            matching = [i for i in items if s.book.holds(c, i)]
            if c.kind == "entity" and c.target in items:
                continue  # the named entry is an item: its own text holds its name
            if not reads_the_same(lambda d, lo, c=c: s.book.holds(c, d, loose=lo),
                                  items, matching, loose):
                continue  # a reader counting a name the text writes gets another answer
            if c.kind in ("date", "number") and not all(decided(s, c, i) for i in items):
                continue  # an item that may be of the kind but gives no figure: undecidable
            if fits_op(op, len(matching), n, empty):
                if op in ("count", "list") and not empty and not blurred(s, c, len(matching)):
                    continue  # one search for the condition would list the matching items
                if empty and c.kind in ("date", "number") and not any(
                        c.key in s.book.dates.get(i, {}) or c.key in s.book.numbers.get(i, {})
                        for i in items):
                    continue  # a premise about something none of the items states at all
                fitting.append((general(c), matching))
        if fitting:  # the count drafted least so far: answers spread over what sets allow
            k = min(sorted({len(m) for _, m in fitting}),  # (most fit with one or two)
                    key=lambda k: (s.answer_counts[op, k], s.rng.random()))
            s.answer_counts[op, k] += 1
            return s.rng.choice([f for f in fitting if len(f[1]) == k])
        if not s.phrase_allowed() or s.book.fact_share() >= 0.2:
            return None  # a corpus of facts asks about facts, not a word some items contain
        pattern, matching = word_condition(s.g, items, s.rng, op=op, empty=empty,
                                     forbidden=names(s.g.docs[start]))
        if pattern is None or any(s.g.contains(d, pattern) for d in loose):
            return None
        word = Clue(kind="phrase", value=pattern, key=pattern,
                    shown=f"whose text contains the words “{pattern}”")
        if not empty and not blurred(s, word, len(matching)):
            return None
        return word, matching

    def unique(self, spec: Spec, graph: CorpusGraph) -> bool:
        """The start names exactly the spec's items, exactly its matching ones meet the
        condition, read strictly or as a reader may take the names the texts write, and no
        document a reader may count in the set too meets it."""
        _, items = item_set(graph, spec.start, spec.scope)

        def meets(doc_id: str, loose: bool = False) -> bool:
            if spec.condition is not None:
                return graph.facts.holds(spec.condition, doc_id, loose=loose)
            return graph.contains(doc_id, spec.pattern)

        matching = [i for i in items if meets(i)]
        unsure = loose_items(graph, spec.start, spec.scope, items)
        return (items == list(spec.items) and matching == list(spec.matching)
                and reads_the_same(meets, items, matching, unsure))

    def together(self, spec: Spec) -> set[str]:
        return set(spec.matching) if spec.operation in ("count", "list") else set()

    def hidden(self, q: Question) -> list[str]:
        """Of the set, only the items its answer names (naming another gives nothing away)."""
        assert q.spec is not None
        if q.spec.operation == "list":
            return list(q.spec.matching)
        return [q.answer_doc] * bool(q.answer_doc)

    def read_back(self, spec: Spec) -> list[Clue]:
        """Its condition is the one clue, on the set's documents."""
        return [spec.condition or Clue(kind="phrase", value=spec.pattern)]

    def asks(self, spec: Spec) -> str:
        return {"max": "later", "min": "earlier"}.get(spec.operation, spec.operation)

    def ask_lines(self, spec: Spec, graph: CorpusGraph) -> list[str]:
        start, nouns = graph.title(spec.start), graph.nouns
        scope = (f"the {nouns} mentioned by the {nouns} that \"{start}\" mentions (not those "
                 f"nor \"{start}\")" if spec.scope == "links2"
                 else f"the {nouns} that \"{start}\" mentions")
        cond = spec.condition.shown if spec.condition else f"contains \"{spec.pattern}\""
        return [(f"set: {scope}; condition: {cond}; ask for: "
                f"{OPERATIONS.get(spec.operation, spec.operation)}")]

    def start(self, s: Families) -> str | None:
        if "aggregation_starts" not in s.memo:
            # (a name that is ambiguous is no member: `open` lists a set's members exactly)
            starts = [d for d in s.g.order if d in s.usable
                      and len(s.book.mentioned(d)) >= s.min_items and self.could_fit(s, d)]
            s.rng.shuffle(starts)
            s.memo["aggregation_starts"] = starts
        found: list[str] = s.memo["aggregation_starts"]
        return s.rng.choice(found) if found else None

    def could_fit(self, s: Families, doc_id: str) -> bool:
        """A cheap bound: the smallest and largest set from `doc_id` against the range."""
        if not s.min_calls and not s.max_calls:
            return True
        ring = s.book.mentioned(doc_id)
        low = 2 + 2 * len(ring)
        high = 3 + 4 * len(ring) + sum(2 + 3 * len(s.book.mentioned(m)) for m in ring)
        return high >= s.min_calls and (not s.max_calls or low <= s.max_calls)

    def render(self, spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
        start = q(graph.title(spec.start))
        nouns = graph.nouns
        if spec.scope == "links2":
            scope = (f"the {nouns} mentioned by the {nouns} that {start} mentions "
                     f"(leaving out {start} and the {nouns} it mentions itself)")
            intro = (f"{start} mentions some {nouns}, and they mention others. Leaving out "
                     f"{start} and the {nouns} it mentions itself,")
            them = f"those other {nouns}"
        else:
            scope = f"the {nouns} that {start} mentions"
            intro, them = f"{start} mentions a number of {nouns}.", "them"
        cond = (spec.condition.shown if spec.condition
                else f"whose text contains {q(spec.pattern)}")
        which = "latest" if spec.operation == "max" else "earliest"
        if rng.random() < 0.5:  # the start's title opens half of them
            ask = {"count": f"how many of {them} are {nouns} {cond}?",
                   "list": f"which of {them} are {nouns} {cond}? List their titles.",
                   }.get(spec.operation, f"which of {them} has a subject that {cond} {which}?")
            if intro.endswith("."):
                ask = ask[0].upper() + ask[1:]
            return f"{intro} {ask}"
        if spec.operation == "count":
            return rng.choice((f"Of {scope}, how many are {nouns} {cond}?",
                               f"Count {scope} {cond}. How many are there?",
                               f"How many of {scope} are {nouns} {cond}?"))
        if spec.operation == "list":
            return rng.choice((f"Which of {scope} are {nouns} {cond}? List their titles.",
                               f"Among {scope}, which are {nouns} {cond}? Give their titles."))
        return rng.choice((f"Of {scope}, whose subject {cond} {which}?",
                           f"Among {scope}, which one's subject {cond} {which}?"))


OPERATIONS = {"count": "how many of the set meet the condition",  # the model composer's words
              "list": "the titles of those that meet it",
              "max": "which of the set did it latest",
              "min": "which of the set did it earliest"}
BLUR = 5  # a count or list condition is met by at least this many documents besides the items


def decided(s: Families, c: Clue, item: str) -> bool:
    """Whether a reader can tell if `item` meets a date or number condition: its text gives
    the figure, or its first sentence dates it as another kind of thing ("is a 1984 crime
    film" was never born). A person whose page gives no year at all (or only a death, for
    "born") might have been born in the range: undecidable."""
    figures = s.book.dates if c.kind == "date" else s.book.numbers
    if c.key in figures.get(item, {}):
        return True
    other = set(s.book.dates.get(item, {})) - {c.key}
    if c.key in LIFE_KEYS:
        other -= set(LIFE_KEYS)
    if other:
        return True
    lead = next((text for _, text in sentences(s.g.docs[item].text)), "")
    return c.key in LIFE_KEYS and not life_dates(lead, s.g.title(item)) and bool(
        re.search(rf"\b{YEAR}\b", lead))


def blurred(s: Families, c: Clue, matching: int) -> bool:
    """Whether documents outside the items meet condition `c` too (BLUR of them at least), so
    that one search for the condition does not list the matching items."""
    if c.kind == "entity":
        holders = len(s.g.inbound.get(c.target, ()))
    elif c.kind == "phrase":
        holders = s.g.doc_freq(c.value)
    else:
        holders = sum(s.book.holds(c, d) for d in (
            s.book.dates if c.kind == "date" else s.book.numbers if c.kind == "number"
            else s.book.categories))
    return holders >= matching + BLUR


def aggregation_calls(g: CorpusGraph, spec: Spec) -> int:
    """search the start and read all its pages; links2: search and read every document of the
    first ring; one search per name of no document those pages show; per item: search its
    title and find the condition's word (max/min: read the
    matching items to their year); answer."""
    calls = 1 + g.pages(spec.start)
    if spec.scope == "links2":
        calls += sum(1 + g.pages(d) for d in g.facts.mentioned(spec.start))
    calls += 2 * len(spec.items)
    if spec.operation in ("max", "min"):
        calls += sum(g.pages(m) for m in spec.matching)
    return calls + 1


AGGREGATION = Aggregation()
