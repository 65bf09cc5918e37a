"""Hand-made spec questions over a real corpus, one maker per family, for the trajectory tests.

Plain frames around the spec; each is checked against the corpus as it is made (the phrase of a
link step is in no other document the one before it names, an intersection's phrases meet in
one document only, an aggregation's matching items are computed from the texts). "Names" are
the names a reader sees (hopforge.corpus.names), phrases match as whole words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from hopforge.corpus.matching import matches
from hopforge.corpus.names import index_for
from hopforge.corpus.records import Document
from hopforge.synth.questions.families.calls import longest_gap
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import NOT_FOUND, Question, Spec, Step

_YEAR = re.compile(r"\b(1[89]\d\d|20[0-2]\d)\b")
_PAIR = re.compile(r"\b([a-z]{4,} [a-z]{4,})\b")


def _phrases(doc: Document) -> list[str]:
    return list(dict.fromkeys(_PAIR.findall(doc.text.lower())))


def _has(doc: Document, phrase: str) -> bool:
    return matches(doc.text, phrase)


class SpecMaker:
    """Makes spec questions from a corpus with a seeded random stream."""

    def __init__(self, docs: Sequence[Document], seed: int = 0) -> None:
        self.docs = {d.doc_id: d for d in docs}
        self.names = index_for(self.docs)
        self._named: dict[str, list[str]] = {}
        self.rng = random.Random(seed)
        self.seed = seed
        self.n = 0
        self._graph: CorpusGraph | None = None

    def _q(self, kind: str, text: str, answer: str, spec: Spec) -> Question:
        """The question, with the calls a fair plan may make between two gold documents as the
        question stage counts them (the trajectory's no-progress window follows them)."""
        self.n += 1
        if self._graph is None:
            self._graph = CorpusGraph(list(self.docs.values()))
        return Question(qid=f"spec{self.seed}-{self.n}", question=text, answer=answer, kind=kind,  # type: ignore[arg-type]
                        spec=spec, evidence=tuple(dict.fromkeys(s.doc for s in spec.steps)),
                        answer_doc=spec.target, quiet_calls=longest_gap(self._graph, spec))

    def _links(self, doc_id: str) -> list[str]:
        """The documents `doc_id`'s text names (what `open` lists), first mention first."""
        if doc_id not in self._named:
            self._named[doc_id] = [h.doc for h in self.names.entries(self.docs[doc_id].text,
                                                                       exclude=doc_id)]
        return self._named[doc_id]

    def _step(self, via: str, exclude: set[str]) -> tuple[str, str] | None:
        links = self._links(via)
        order = links[:]
        self.rng.shuffle(order)
        for cand in order:
            if cand in exclude:
                continue
            others = [self.docs[d] for d in links if d != cand]
            for p in _phrases(self.docs[cand]):
                if not any(_has(o, p) for o in others) and not _has(self.docs[via], p):
                    return cand, p
        return None

    def chain(self, depth: int, unanswerable: bool = False) -> Question | None:
        starts = [d for d in self.docs if len(self._links(d)) >= 2]
        for _ in range(200):
            d0 = self.rng.choice(starts)
            steps, path, phrases = [Step(doc=d0, relation="start")], [d0], []
            while len(path) <= depth:
                nxt = self._step(path[-1], set(path))
                if nxt is None:
                    break
                steps.append(Step(doc=nxt[0], relation="link", via=path[-1], phrase=nxt[1]))
                path.append(nxt[0])
                phrases.append(nxt[1])
            if len(path) <= depth:
                continue
            title = self.docs[d0].title
            clues = ", then ".join(f'the one it mentions whose text has "{p}"' for p in phrases)
            if unanswerable:
                via = path[-2]
                absent = next((p for p in _phrases(self.docs[self.rng.choice(starts)])
                               if not any(_has(self.docs[d], p) for d in self._links(via))), "")
                if not absent:
                    continue
                steps[-1] = Step(doc="", relation="link", via=via, phrase=absent)
                clues = clues.rsplit(phrases[-1], 1)[0] + absent + '"'
                spec = Spec(family="chain", start=d0, steps=tuple(steps), target="",
                            answer_type="not_found",
                            unanswerable=f'no entry that {self.docs[via].title} mentions has "{absent}"')
                return self._q("unanswerable", f"Start at {title}; follow {clues}. Which entry is it?",
                               NOT_FOUND, spec)
            spec = Spec(family="chain", start=d0, steps=tuple(steps), target=path[-1])
            return self._q("chain", f"Start at {title}; follow {clues}. Which entry is it?",
                           self.docs[path[-1]].title, spec)
        return None

    def aggregation(self, min_items: int, scope: str = "links", operation: str = "count",
                    unanswerable: bool = False, max_items: int = 10_000) -> Question | None:
        hubs = sorted(self.docs, key=lambda d: -len(self._links(d)))[:2000]
        self.rng.shuffle(hubs)
        for s in hubs:
            items = self._links(s)
            if scope == "links2":
                items = list(dict.fromkeys(x for d in items for x in self._links(d)
                                           if x != s and x not in items))
            if not min_items <= len(items) <= max_items:
                continue
            texts = [self.docs[d].text.lower() for d in items]
            words = sorted({w for t in texts[:50] for w in re.findall(r"[a-z]{6,}", t)})
            self.rng.shuffle(words)
            for w in words:
                matching = [d for d in items if _has(self.docs[d], w)]
                ok = (not matching) if unanswerable else 2 <= len(matching) <= len(items) // 2
                if not ok:
                    continue
                title = self.docs[s].title
                where = "the entries it mentions" if scope == "links" else (
                    "the entries mentioned by the entries it mentions")
                steps = [Step(doc=s, relation="start")] + [
                    Step(doc=d, relation="item", via=s) for d in items]
                spec = Spec(family="aggregation", start=s, steps=tuple(steps), scope=scope,
                            items=tuple(items), matching=tuple(matching), pattern=w,
                            operation=operation, answer_type="count",
                            unanswerable=f'no such entry contains "{w}"' if unanswerable else "")
                answer = NOT_FOUND if unanswerable else str(len(matching))
                return self._q("unanswerable" if unanswerable else "aggregation",
                               f'Start at {title}. Of {where}, how many contain "{w}"?',
                               answer, spec)
        return None

    def intersection(self) -> Question | None:
        ids = list(self.docs)
        self.rng.shuffle(ids)
        for t in ids[:300]:
            cands = [p for p in _phrases(self.docs[t])
                     if 3 <= sum(_has(d, p) for d in self.docs.values()) <= 40]
            if len(cands) < 2:
                continue
            for a in cands:
                for b in cands:
                    both = [d for d in self.docs.values() if _has(d, a) and _has(d, b)]
                    if a < b and len(both) == 1:
                        steps = (Step(doc=t, relation="constraint", phrase=a),
                                 Step(doc=t, relation="constraint", phrase=b))
                        spec = Spec(family="intersection", steps=steps, target=t)
                        return self._q("intersection",
                                       f'Which entry has both "{a}" and "{b}" in its text?',
                                       self.docs[t].title, spec)
        return None
