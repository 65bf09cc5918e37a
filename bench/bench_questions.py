"""Question generation on real corpora, next to human HotpotQA questions.

For the Jargon File, FOLDOC and the 2WikiMultihopQA paragraphs in ../shared/data: scripted
questions with the default checks (BM25 shortcut search), their acceptance rate, rejection
reasons, hop counts and shortcut ranks; and the diversity of the accepted questions (distinct-1/2/3
and self-BLEU-4) on a sample of the same size as the 100 human HotpotQA train questions, which get
a row of their own. Self-BLEU and distinct-n depend on the number of texts, hence equal samples;
the scripted rows average five such samples. Rejections include `unreadable` (a clue that is not
a full clause, dictionary boilerplate, a dangling "the" + adjective) apart from `malformed`.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hopforge.flows.run_questions import rank_bucket
from hopforge.synth.diversity import distinct_n, self_bleu
from hopforge.synth.questions import QuestionConfig, generate_questions
from hopforge.synth.records import Question

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPORA = {
    "jargon": "dictd/jargon.index",
    "foldoc": "dictd/foldoc.index",
    "2wiki": "wiki/2wikimultihopqa_corpus.json",
}
HUMAN = "wiki/hotpotqa_train.json"
SAMPLE = 100  # the number of human questions
HUMAN_TOKENS = 1700  # about the word tokens of the 100 human questions (17.4 words each)


def token_matched(texts: list[str], budget: int, seed: int = 0) -> list[str]:
    """Texts drawn in random order until they hold `budget` word tokens (the last one cut)."""
    out: list[str] = []
    have = 0
    for text in random.Random(seed).sample(texts, len(texts)):
        words = text.split()
        out.append(" ".join(words[: budget - have]))
        have += len(words)
        if have >= budget:
            break
    return out


def diversity(texts: list[str], seed: int = 0) -> dict[str, float]:
    """distinct-1/2/3 and self-BLEU-4 of `SAMPLE` texts drawn with `seed`; distinct-2 also on
    as many tokens as the human questions hold (longer texts lower distinct-n by themselves)."""
    if len(texts) > SAMPLE:
        texts = random.Random(seed).sample(texts, SAMPLE)
    matched = token_matched(texts, HUMAN_TOKENS, seed) if texts else []
    return {
        "distinct_1": round(distinct_n(texts, 1), 3),
        "distinct_2": round(distinct_n(texts, 2), 3),
        "distinct_3": round(distinct_n(texts, 3), 3),
        "distinct_2_tok": round(distinct_n(matched, 2), 3),
        "self_bleu_4": round(self_bleu(texts), 3) if len(texts) > 1 else 0.0,
        "mean_words": round(sum(len(t.split()) for t in texts) / max(1, len(texts)), 1),
    }


def mean_diversity(texts: list[str], draws: int = 5) -> dict[str, float]:
    """`diversity` averaged over `draws` samples: one draw of 100 out of 300 moves self-BLEU by
    a few hundredths, enough to hide or fake a change."""
    rows = [diversity(texts, seed) for seed in range(draws)]
    return {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in rows[0]}


def _fmt(counter: Counter[str], order: list[str] | None = None) -> str:
    keys = order or sorted(counter, key=lambda k: (-counter[k], k))
    return " ".join(f"{k}:{counter[k]}" for k in keys if counter[k])


def corpus_row(name: str, n: int, seed: int = 0) -> tuple[dict[str, Any], list[Question]]:
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.search import Searcher

    docs = ingest_paths([DATA / CORPORA[name]]).documents
    started = time.perf_counter()
    searcher = Searcher.from_documents(docs, dense=False)
    index_s = time.perf_counter() - started
    started = time.perf_counter()
    questions = asyncio.run(generate_questions(
        docs, searcher, config=QuestionConfig(), rng=random.Random(seed), n=n))
    gen_s = time.perf_counter() - started
    ok = [q for q in questions if not q.rejected]
    reasons = Counter(r.split("(", 1)[0] for q in questions for r in q.rejected.split(",") if r)
    buckets = ["1", "2", "3", "4-5", "6-10", "11-20", "21-50", "none"]
    row = {
        "questions": name,
        "docs": len(docs),
        "links": sum(len(d.links) for d in docs),
        "attempted": len(questions),
        "accepted": len(ok),
        "acceptance": round(len(ok) / max(1, len(questions)), 3),
        "rejections": _fmt(reasons),
        "kinds_accepted": _fmt(Counter(q.kind for q in ok)),
        "hops_accepted": _fmt(Counter(str(q.n_hops) for q in ok)),
        "shortcut_rank_all": _fmt(Counter(rank_bucket(q.checks.shortcut_rank)
                                          for q in questions if q.question), buckets),
        **mean_diversity([q.question for q in ok]),
        "gen_q_per_s": round(len(questions) / gen_s, 1),
        "index_s": round(index_s, 1),
    }
    return row, ok


def human_row() -> dict[str, Any]:
    rows = json.loads((DATA / HUMAN).read_text(encoding="utf-8"))
    texts = [r["question"] for r in rows]
    kinds = Counter(r.get("type", "?") for r in rows)
    return {
        "questions": "hotpotqa-human",
        "docs": "",
        "links": "",
        "attempted": "",
        "accepted": len(texts),
        "acceptance": "",
        "rejections": "",
        "kinds_accepted": _fmt(kinds),
        "hops_accepted": "2:" + str(len(texts)),
        "shortcut_rank_all": "",
        **diversity(texts),
        "gen_q_per_s": "",
        "index_s": "",
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per corpus, one for all scripted questions pooled, one for the human questions."""
    n = 40 if quick else 300
    rows = []
    pooled: list[str] = []
    for name in (["jargon"] if quick else list(CORPORA)):
        row, ok = corpus_row(name, n)
        rows.append(row)
        pooled.extend(q.question for q in ok)
    if len(rows) > 1:
        rows.append({**{k: "" for k in rows[0]}, "questions": "scripted-pooled",
                     "accepted": len(pooled), **mean_diversity(pooled)})
    rows.append(human_row())
    return rows
