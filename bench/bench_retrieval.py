"""Retrieval quality on HotpotQA: recall@2/5/10 of the gold supporting titles, per search mode.

Corpus: the 994 paragraphs of ../shared/data/wiki/hotpotqa_train_corpus.json (one document per
title). Queries: the 100 questions of hotpotqa_train.json; gold = the titles of their
supporting facts (two per question). recall@k = share of gold titles among the top-k documents,
averaged over questions. `--quick` uses the first 30 questions and only their own paragraphs
plus 150 others.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
KS = (2, 5, 10)


def load_hotpot(quick: bool = False) -> tuple[list, list[tuple[str, set[str]]]]:
    """(documents, [(question, gold titles)]) of the HotpotQA sample."""
    from hopforge.corpus.records import Document, make_doc_id

    corpus = json.loads((SHARED / "wiki" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    qa = [(r["question"], {t for t, _ in r["supporting_facts"]}) for r in rows]
    titles = list(corpus)
    if quick:
        qa = qa[:30]
        needed = {t for r in rows[:30] for t, _ in r["context"]}
        titles = [t for t in titles if t in needed] + [t for t in titles if t not in needed][:150]
    docs = [Document(doc_id=make_doc_id("hotpotqa", t), title=t, text=" ".join(corpus[t]).strip(),
                     source="hotpotqa") for t in titles]
    return docs, qa


def recall_at(hit_titles: list[list[str]], qa: list[tuple[str, set[str]]], k: int) -> float:
    """Mean share of gold titles found in the top k."""
    shares = [len(gold & set(titles[:k])) / len(gold) for titles, (_, gold) in zip(hit_titles, qa)]
    return sum(shares) / len(shares)


def run(quick: bool = False) -> list[dict]:
    """One row per retrieval setting."""
    from hopforge.corpus.dense import SentenceTransformerEmbedder
    from hopforge.corpus.index import IndexConfig
    from hopforge.corpus.search import Searcher

    docs, qa = load_hotpot(quick)
    questions = [q for q, _ in qa]
    embedder = SentenceTransformerEmbedder()
    t = time.perf_counter()
    base = Searcher.from_documents(docs, dense=True, embedder=embedder)
    dense_build = time.perf_counter() - t
    settings: list[tuple[str, Searcher, str]] = [
        ("bm25, plain tokens", Searcher.from_documents(
            docs, config=IndexConfig(stopwords=False, stem=False)), "bm25"),
        ("bm25 (default: stopwords + stems)", base, "bm25"),
        ("dense all-MiniLM-L6-v2", base, "dense"),
        ("hybrid RRF 1:1 (default)", base, "hybrid"),
    ]
    for w_bm25, w_dense in ((1.0, 2.0), (2.0, 1.0)):
        cfg = IndexConfig(bm25_weight=w_bm25, dense_weight=w_dense)
        variant = Searcher(documents=docs, passages=base.passages, bm25=base.bm25, config=cfg,
                           embedder=base.embedder, vectors=base.vectors)
        settings.append((f"hybrid RRF {w_bm25:g}:{w_dense:g}", variant, "hybrid"))
    rows = []
    for name, searcher, mode in settings:
        t = time.perf_counter()
        results = searcher.search_batch(questions, k=max(KS), mode=mode)
        elapsed = time.perf_counter() - t
        titles = [[h.title for h in hits] for hits in results]
        row: dict = {"setting": name, "mode": mode}
        row.update({f"recall@{k}": round(recall_at(titles, qa, k), 3) for k in KS})
        row["query_ms"] = round(1000 * elapsed / len(questions), 2)
        rows.append(row)
    for row in rows:
        row["docs"] = len(docs)
        row["questions"] = len(qa)
        row["embed_all_s"] = round(dense_build, 1)
    return rows
