"""BM25 build time and per-query latency: hopforge's BM25Index against rank-bm25 and bm25s.

Passages are made from real text: the sentences of ../shared/data (2WikiMultihopQA and HotpotQA
paragraphs, FOLDOC entries) regrouped at random into passages of 2-6 sentences (~80 words), so
10k and 100k passages have real vocabulary and length distributions. Queries are the 100
HotpotQA questions. All three libraries get the same tokens (hopforge's default tokenizer).
Speeds are ratios against rank-bm25's `BM25Okapi` in the same process; `top10_agree` is the mean
share of rank-bm25's top-10 (by `get_scores`) found in each system's top-10.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def real_sentences() -> list[str]:
    """Sentences of the real corpora in ../shared/data."""
    sents: list[str] = []
    for p in json.loads((SHARED / "wiki" / "2wikimultihopqa_corpus.json").read_text("utf-8")):
        sents += re.split(r"(?<=[.!?])\s+", p["text"])
    corpus = json.loads((SHARED / "wiki" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for title_sents in corpus.values():
        sents += [s.strip() for s in title_sents]
    with gzip.open(SHARED / "dictd" / "foldoc.dict.dz", "rt", encoding="utf-8",
                   errors="replace") as fh:
        text = " ".join(fh.read().split())
    sents += re.split(r"(?<=[.!?])\s+", text)
    return [s for s in sents if len(s.split()) >= 4]


def make_passages(n: int, sentences: list[str], seed: int = 0) -> list[str]:
    """n passages of 2-6 random real sentences each."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(sentences, k=rng.randint(2, 6))) for _ in range(n)]


def queries() -> list[str]:
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    return [r["question"] for r in rows]


def _agree(ref_top: list[set[int]], tops: list[np.ndarray]) -> float:
    return float(np.mean([len(r & set(t.tolist())) / max(1, len(r)) for r, t in zip(ref_top, tops)]))


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def run(quick: bool = False) -> list[dict]:
    """One row per (passages, system)."""
    import bm25s
    from hopforge.corpus.bm25 import BM25Index
    from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig
    from rank_bm25 import BM25Okapi

    tok = Tokenizer(TokenizerConfig(stopwords=True, stem=True))
    sentences = real_sentences()
    qtoks = [tok(q) for q in queries()]
    rows: list[dict] = []
    for n in ([2_000, 10_000] if quick else [10_000, 100_000]):
        texts = make_passages(n, sentences)
        corpus, tok_s = _timed(tok.batch, texts)
        n_ref = 10 if (quick or n >= 100_000) else 30  # get_scores is slow: fewer queries
        ref, ref_build = _timed(BM25Okapi, corpus)
        t = time.perf_counter()
        ref_scores = [ref.get_scores(q) for q in qtoks[:n_ref]]
        ref_ms = 1000 * (time.perf_counter() - t) / n_ref
        ref_top = [{int(i) for i in np.argsort(-s, kind="stable")[:10] if s[i] > 0}
                   for s in ref_scores]

        ours, our_build = _timed(BM25Index.from_tokens, corpus)
        ours.top_k(qtoks[0], 10)
        reps = 5
        t = time.perf_counter()
        for _ in range(reps):
            tops = [ours.top_k(q, 10)[0] for q in qtoks]
        our_ms = 1000 * (time.perf_counter() - t) / (reps * len(qtoks))
        max_diff = max(float(np.abs(ours.scores(q) - s).max()) for q, s in zip(qtoks, ref_scores))

        bm = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
        t = time.perf_counter()
        bm.index(corpus, show_progress=False)
        bm_build = time.perf_counter() - t
        bm.retrieve([qtoks[0]], k=10, show_progress=False)
        t = time.perf_counter()
        bm_tops = [bm.retrieve([q], k=10, show_progress=False, n_threads=1)[0][0] for q in qtoks]
        bm_ms = 1000 * (time.perf_counter() - t) / len(qtoks)

        common = {"passages": n, "tokenize_s": round(tok_s, 2)}
        rows.append({**common, "system": "rank-bm25 BM25Okapi", "build_s": ref_build,
                     "build_speedup": 1.0, "query_ms": ref_ms, "query_speedup": 1.0,
                     "top10_agree": 1.0, "max_score_diff": 0.0})
        rows.append({**common, "system": "hopforge BM25Index", "build_s": our_build,
                     "build_speedup": ref_build / our_build, "query_ms": our_ms,
                     "query_speedup": ref_ms / our_ms,
                     "top10_agree": _agree(ref_top, tops[:n_ref]), "max_score_diff": max_diff})
        rows.append({**common, "system": "bm25s robertson", "build_s": bm_build,
                     "build_speedup": ref_build / bm_build, "query_ms": bm_ms,
                     "query_speedup": ref_ms / bm_ms,
                     "top10_agree": _agree(ref_top, bm_tops[:n_ref]), "max_score_diff": float("nan")})
    return rows
