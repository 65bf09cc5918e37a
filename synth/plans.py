"""What to ask before how to ask it: question plans sampled from the corpus.

A plan fixes the kind, the evidence documents, the hops with their clues and the answer. The
composers (scripted or model) only turn a plan into question text, so both kinds of teacher ask
about the same sampled evidence and every check can be traced to a plan.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from hopforge.synth.chains import LinkGraph, mention_names, spread_starts, walk, weighted_order
from hopforge.synth.facts import YearFact, description, type_noun, year_facts
from hopforge.synth.records import Hop, QuestionKind

KINDS: tuple[str, ...] = ("chain", "comparison", "intersection")


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionPlan:
    """The evidence and answer of one question to compose."""

    qid: str
    kind: QuestionKind
    hops: tuple[Hop, ...]
    evidence: tuple[str, ...]  # gold doc_ids in reading order
    answer: str
    answer_aliases: tuple[str, ...]
    answer_doc: str
    seed: int  # seeds the composer's choices for this plan
    fact: YearFact | None = None  # chain: the answer is its year; intersection: a clue on the answer
    compared: tuple[YearFact, ...] = ()  # comparison: one fact per side, same event
    later: bool = False  # comparison: ask for the later one instead of the earlier


def plan_id(kind: str, evidence: Sequence[str], answer_doc: str, answer: str) -> str:
    """A stable qid: the same plan always gets the same id (so it is never written twice)."""
    key = "\x00".join((kind, *evidence, "|", answer_doc, answer))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


class Planner:
    """Draws plans of the configured kinds, deterministic for its `rng`."""

    def __init__(
        self,
        graph: LinkGraph,
        rng: random.Random,
        *,
        kinds: Sequence[str] = KINDS,
        min_hops: int = 2,
        max_hops: int = 4,
        min_clues: int = 2,
        max_clues: int = 4,
        fact_answer_rate: float = 0.3,
        own_fact_rate: float = 0.5,
    ) -> None:
        self.graph = graph
        self.rng = rng
        self.kinds = tuple(kinds)
        self.min_hops, self.max_hops = min_hops, max_hops
        self.min_clues, self.max_clues = min_clues, max_clues
        self.fact_answer_rate = fact_answer_rate
        self.own_fact_rate = own_fact_rate
        self._turn = 0
        self._clue_uses: Counter[str] = Counter()
        self._draws: Counter[str] = Counter()  # plan draws per kind, and those that succeeded
        self._hits: Counter[str] = Counter()
        self._starts = spread_starts(graph, rng)
        self._facts: dict[str, list[YearFact]] | None = None
        self._fact_docs: Iterator[str] | None = None
        self._targets: Iterator[str] | None = None

    def facts(self, doc_id: str) -> list[YearFact]:
        return self._fact_index()[doc_id]

    def _fact_index(self) -> dict[str, list[YearFact]]:
        if self._facts is None:
            memo = self.graph.memo
            if "year_facts" not in memo:  # shared by every planner over this graph
                memo["year_facts"] = {d: year_facts(self.graph.docs[d]) for d in self.graph.order}
            self._facts = memo["year_facts"]
        return self._facts

    def plans(
        self,
        count: int,
        seen: set[str],
        *,
        accepted: Mapping[str, int] | None = None,
        max_misses: int = 200,
    ) -> list[QuestionPlan]:
        """Up to `count` new plans (qids not in `seen`, which is updated); fewer when exhausted.

        Kinds are balanced: each plan is of the kind with the fewest `accepted` questions so far
        (plus those already planned in this call); a kind whose draw fails yields to the next.
        """
        have = Counter({k: (accepted or {}).get(k, 0) for k in self.kinds})
        out: list[QuestionPlan] = []
        misses = 0
        while len(out) < count and misses < max_misses:
            start = self._turn
            self._turn += 1
            ranked = sorted(
                range(len(self.kinds)),
                key=lambda i: (have[self.kinds[i]], (i - start) % len(self.kinds)),
            )
            plan = None
            # the scarcest kind gets three draws before another kind stands in for it (on a
            # sparse link graph chain and intersection draws often fail where comparisons
            # don't), unless its draws mostly fail anyway (no dated facts for comparisons)
            first = self.kinds[ranked[0]]
            tries, hits = self._draws[first], self._hits[first]
            extra = [ranked[0]] * 2 if tries < 20 or hits >= 0.05 * tries else []
            for i in [*extra, *ranked]:
                kind = self.kinds[i]
                plan = self.plan(kind)
                self._draws[kind] += 1
                if plan is not None and plan.qid not in seen:
                    self._hits[kind] += 1
                    break
                misses += 1
                plan = None
            if plan is None:
                continue
            if self._worn(plan) and self.rng.random() < 0.8:
                misses += 1  # its clues were already asked twice: mostly draw again
                continue
            seen.add(plan.qid)
            have[plan.kind] += 1
            self._clue_uses.update(_clues(plan))
            out.append(plan)
        return out

    def _worn(self, plan: QuestionPlan) -> bool:
        """Whether a clue of `plan` was already used by two plans (a hub's sentence, or a
        document compared again and again, that would otherwise recur question after question)."""
        return any(self._clue_uses[c] >= 2 for c in _clues(plan))

    def plan(self, kind: str) -> QuestionPlan | None:
        """One plan of `kind`, or None when this draw found nothing usable."""
        seed = self.rng.getrandbits(32)
        if kind == "chain":
            return self._chain(seed)
        if kind == "comparison":
            return self._comparison(seed)
        if kind == "intersection":
            return self._intersection(seed)
        raise ValueError(f"unknown question kind {kind!r}; expected one of {', '.join(KINDS)}")

    def _chain(self, seed: int) -> QuestionPlan | None:
        start = next(self._starts, None)
        if start is None:
            return None
        chain = walk(self.graph, start, self.rng.randint(self.min_hops, self.max_hops), self.rng)
        if chain is None:
            return None
        last = self.graph.docs[chain.docs[-1]]
        if "(disambiguation)" in last.title.lower():
            return None
        facts = self.facts(last.doc_id)
        fact = None
        if facts and self.rng.random() < self.fact_answer_rate:
            fact = self.rng.choice(facts)
        answer = str(fact.year) if fact else last.title
        aliases = () if fact else mention_names(last)[1:]
        return QuestionPlan(
            qid=plan_id("chain", chain.docs, last.doc_id, answer),
            kind="chain",
            hops=chain.hops,
            evidence=chain.docs,
            answer=answer,
            answer_aliases=aliases,
            answer_doc=last.doc_id,
            seed=seed,
            fact=fact,
        )

    def _comparison(self, seed: int) -> QuestionPlan | None:
        index = self._fact_index()
        if self._fact_docs is None:
            pool = [d for d in self.graph.order if index[d]]
            self._fact_docs = _cycle(pool, self.rng)
        first = next(self._fact_docs, None)
        if first is None:
            return None
        fa = self.rng.choice(index[first])
        ring = {*self.graph.out[first], *self.graph.inbound[first]}
        near = set(ring)
        for d in ring:
            near.update(self.graph.out[d])
        near.discard(first)
        same = [
            f
            for d in sorted(near)
            for f in index[d]
            if f.event == fa.event and f.year != fa.year
        ]
        if not same:
            same = [
                f
                for d in self.rng.sample(self.graph.order, min(400, len(self.graph.order)))
                for f in index[d]
                if d != first and f.event == fa.event and f.year != fa.year
            ]
        if not same:
            return None
        fb = self.rng.choice(same)
        a, b = self.graph.docs[fa.doc_id], self.graph.docs[fb.doc_id]
        if not description(a, avoid_year=fa.year) or not description(b, avoid_year=fb.year):
            return None
        pair = (fa, fb) if self.rng.random() < 0.5 else (fb, fa)
        later = self.rng.random() < 0.4
        win = max(pair, key=lambda f: f.year) if later else min(pair, key=lambda f: f.year)
        doc = self.graph.docs[win.doc_id]
        evidence = (pair[0].doc_id, pair[1].doc_id)
        return QuestionPlan(
            qid=plan_id("comparison", sorted(evidence), doc.doc_id, f"{doc.title}|{later}"),
            kind="comparison",
            hops=(),
            evidence=evidence,
            answer=doc.title,
            answer_aliases=mention_names(doc)[1:],
            answer_doc=doc.doc_id,
            seed=seed,
            compared=pair,
            later=later,
        )

    def _intersection(self, seed: int) -> QuestionPlan | None:
        g = self.graph
        if self._targets is None:
            pool = [
                d
                for d in g.order
                if len(g.inbound[d]) >= self.min_clues
                and "(disambiguation)" not in g.docs[d].title.lower()
            ]
            self._targets = _cycle(pool, self.rng)
        target = next(self._targets, None)
        if target is None:
            return None
        sources = [s for s in g.inbound[target] if g.clue(s, target) is not None]
        if len(sources) < self.min_clues:
            return None
        weights = [1.0 / math.log(2.0 + len(g.out[s])) for s in sources]
        want = self.rng.randint(self.min_clues, self.max_clues)
        chosen: list[str] = []
        candidates: set[str] | None = None
        for s in weighted_order(sources, weights, self.rng):
            narrowed = set(g.out[s]) if candidates is None else candidates & set(g.out[s])
            if candidates is not None and len(narrowed) == len(candidates):
                continue  # this clue rules nothing out
            chosen.append(s)
            candidates = narrowed
            if len(chosen) >= self.max_clues or (len(chosen) >= want and candidates == {target}):
                break
        if len(chosen) < self.min_clues:
            return None
        hops = tuple(h for s in chosen if (h := g.hop(s, target)) is not None)
        facts = self.facts(target)
        fact = self.rng.choice(facts) if facts and self.rng.random() < self.own_fact_rate else None
        doc = g.docs[target]
        if type_noun(doc) == "entry" and fact is None and len(chosen) < 3:
            return None  # too little to pin an untyped answer
        return QuestionPlan(
            qid=plan_id("intersection", sorted(chosen), target, doc.title),
            kind="intersection",
            hops=hops,
            evidence=(*chosen, target),
            answer=doc.title,
            answer_aliases=mention_names(doc)[1:],
            answer_doc=target,
            seed=seed,
            fact=fact,
        )


def _clues(plan: QuestionPlan) -> list[str]:
    """The sentences a plan's question is written from."""
    return [*(h.clue for h in plan.hops), *(f.sentence for f in plan.compared)]


def _cycle(pool: list[str], rng: random.Random) -> Iterator[str]:
    pool = list(pool)
    while pool:
        rng.shuffle(pool)
        yield from list(pool)
