"""Question generation on real corpora: how hard, how many, how long, next to human questions.

For the Jargon File, FOLDOC, the 2WikiMultihopQA and HotpotQA paragraphs in ../shared/data
(and any corpus named in HOPFORGE_BENCH_CORPORA, `name=path` separated by commas): the default
mix of families, with acceptance and rejections by reason; what the clues are made of (the
share of `phrase` clues, the fact kinds in use); questions that quote anything but a document's
name (its title, the title without its parenthesis, or an alias); gold answers re-derived from the raw text by independent code
(tests/helpers/rederive.py) and the share that agrees; the unanswerable share and the most
questions on one start; distinct first-three-word openings; the single-search shortcut rate
measured independently with rank-bm25 over whole documents (the whole question, each sentence,
clause and quoted phrase searched alone; top 5 holding the answer document or an evidence
document that names the answer, or both compared documents, or every matching item); the
median length of chain and intersection questions; and aggregation ladders (accepted questions
with min_calls of at least 10, 50, 100 and 300). The last row is the 100 human HotpotQA
questions (length and diversity).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hopforge.synth.diversity import distinct_n, self_bleu
from hopforge.synth.questions.checks import probe_queries
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.stage import generate_questions, split_reasons
from hopforge.synth.records import Question

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPORA = {
    "jargon": "dictd/jargon.index",
    "foldoc": "dictd/foldoc.index",
    "2wiki": "wiki/2wikimultihopqa_corpus.json",
    "hotpotqa": "wiki/hotpotqa_train_corpus.json",
}
_QUOTED = re.compile(r"“([^”]+)”")
LADDERS = {"jargon": (10, 50, 100), "foldoc": (10, 50, 100, 300)}
HUMAN = "wiki/hotpotqa_train.json"


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class Reference:
    """rank-bm25's BM25Okapi over whole documents (title and text), plain tokens."""

    def __init__(self, graph: CorpusGraph) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = graph.order
        self.bm25 = BM25Okapi([_tokens(f"{graph.title(d)} {graph.docs[d].text}")
                               for d in self.ids])

    def top(self, query: str, k: int = 5) -> set[str]:
        scores = self.bm25.get_scores(_tokens(query))
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return {self.ids[i] for i in best}


def shortcut(q: Question, graph: CorpusGraph, ref: Reference) -> bool:
    """Whether one search of the question (or a part of it) surfaces what answers it."""
    spec = q.spec
    assert spec is not None
    answering: set[str] = set()
    together: set[str] = set()
    compared = {s.doc for s in spec.steps if s.relation == "compare"}
    if compared:  # a comparison of two or more sides
        together = compared
    elif spec.family == "aggregation" and spec.operation in ("count", "list"):
        together = set(spec.matching)
    elif q.answer_doc:
        answering = {q.answer_doc}
        if spec.answer_type == "title":
            title = graph.title(q.answer_doc).lower()
            answering |= {e for e in q.evidence if title in graph.lower[e]}
    for query in probe_queries(q.question):
        top = ref.top(query)
        if answering & top or (together and together <= top):
            return True
    return False


def _fmt(counter: Counter[str]) -> str:
    return " ".join(f"{k}:{v}" for k, v in counter.most_common())


def _generate(docs: list[Any], searcher: Any, graph: CorpusGraph, n: int,
              **config: Any) -> tuple[list[Question], float]:
    started = time.perf_counter()
    made = asyncio.run(generate_questions(docs, searcher, config=QuestionConfig(**config),
                                          rng=random.Random(0), n=n, graph=graph))
    return made, time.perf_counter() - started


def _corpora() -> dict[str, Path]:
    out = {name: DATA / path for name, path in CORPORA.items()}
    for item in filter(None, os.environ.get("HOPFORGE_BENCH_CORPORA", "").split(",")):
        name, _, path = item.partition("=")
        out[name.strip()] = Path(path.strip())
    return out


def clue_figures(ok: list[Question], docs: list[Any]) -> dict[str, Any]:
    """What the accepted questions are made of, each figure re-derived from the records and
    the raw documents (not from the stage's own counters)."""
    from tests.helpers.rederive import Reader, rederive

    clues = [s.fact for q in ok if q.spec for s in q.spec.steps if s.fact]
    clues += [q.spec.condition for q in ok if q.spec and q.spec.condition]
    kinds = Counter(c.kind for c in clues)
    # a document's name: its title, the title without its parenthesis ("Rich Man, Poor Man"
    # for "Rich Man, Poor Man (novel)", as texts write it), or an alias
    titles = {d.title for d in docs} | {re.sub(r"\s*\([^()]*\)$", "", d.title) for d in docs}
    titles |= {a for d in docs for a in (d.aliases or ())}
    quoting = sum(any(t not in titles for t in _QUOTED.findall(q.question)) for q in ok)
    reader = Reader(d.to_row() for d in docs)
    agree = 0
    for q in ok:
        answer, problem = rederive(q.to_row(), reader)
        agree += not problem and answer == q.answer
    openings = {" ".join(q.question.lower().split()[:3]) for q in ok}
    starts = Counter(q.spec.start for q in ok if q.spec)
    return {
        "phrase_share": round(kinds["phrase"] / max(1, len(clues)), 3),
        "fact_kinds": _fmt(kinds),
        "quoting_non_title": round(quoting / max(1, len(ok)), 3),
        "gold_agree": f"{agree}/{len(ok)}",
        "unanswerable_share": round(sum(q.kind == "unanswerable" for q in ok) / max(1, len(ok)), 3),
        "max_per_start": max(starts.values(), default=0),
        "openings_distinct": round(len(openings) / max(1, len(ok)), 3),
    }


def corpus_rows(name: str, n: int, ladder_n: int) -> list[dict[str, Any]]:
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.search import Searcher

    docs = ingest_paths([_corpora()[name]]).documents
    searcher = Searcher.from_documents(docs, dense=False)
    graph = CorpusGraph(docs)
    ref = Reference(graph)
    made, seconds = _generate(docs, searcher, graph, n)
    ok = [q for q in made if not q.rejected]
    short = [q for q in ok if shortcut(q, graph, ref)]
    words = sorted(len(q.question.split()) for q in ok if q.kind in ("chain", "intersection"))
    agg = [q for q in ok if q.kind == "aggregation"]
    rows = [{
        "corpus": name, "set": "default mix", "docs": len(docs), "attempted": len(made),
        "accepted": len(ok), "acceptance": round(len(ok) / max(1, len(made)), 3),
        "shortcut_rank_bm25": round(len(short) / max(1, len(ok)), 3),
        "shortcut_aggregation": round(sum(q in short for q in agg) / max(1, len(agg)), 3),
        "median_words_chain_inter": words[len(words) // 2] if words else "",
        "min_calls_median": sorted(q.min_calls for q in ok)[len(ok) // 2] if ok else "",
        "kinds": _fmt(Counter(q.kind for q in ok)),
        **clue_figures(ok, docs),
        "rejections": _fmt(Counter(r.split("(")[0] for q in made
                                   for r in split_reasons(q.rejected))),
        "seconds": round(seconds, 1),
    }]
    for low in LADDERS.get(name, ()):
        made, seconds = _generate(docs, searcher, graph, ladder_n, kinds=("aggregation",),
                                  min_calls=low, max_calls=3 * low, attempts_per_question=20)
        ok = [q for q in made if not q.rejected]
        short = [q for q in ok if shortcut(q, graph, ref)]
        rows.append({
            **{k: "" for k in rows[0]}, "corpus": name, "set": f"aggregation {low}-{3 * low}",
            "attempted": len(made), "accepted": len(ok),
            "acceptance": round(len(ok) / max(1, len(made)), 3),
            "shortcut_rank_bm25": round(len(short) / max(1, len(ok)), 3),
            "min_calls_median": sorted(q.min_calls for q in ok)[len(ok) // 2] if ok else "",
            "rejections": _fmt(Counter(r.split("(")[0] for q in made
                                       for r in split_reasons(q.rejected))),
            "seconds": round(seconds, 1),
        })
    return rows


def human_row(template: dict[str, Any]) -> dict[str, Any]:
    texts = [r["question"] for r in json.loads((DATA / HUMAN).read_text(encoding="utf-8"))]
    words = sorted(len(t.split()) for t in texts)
    return {**{k: "" for k in template}, "corpus": "hotpotqa-human", "set": "100 train",
            "accepted": len(texts), "median_words_chain_inter": words[len(words) // 2],
            "kinds": f"distinct-2 {distinct_n(texts, 2):.3f} self-BLEU-4 {self_bleu(texts):.3f}"}


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Rows per corpus (default mix, then ladders) and one for the human questions."""
    rows: list[dict[str, Any]] = []
    for name in (["jargon"] if quick else list(_corpora())):
        rows.extend(corpus_rows(name, n=40 if quick else 200, ladder_n=5 if quick else 20))
    rows.append(human_row(rows[0]))
    return rows
