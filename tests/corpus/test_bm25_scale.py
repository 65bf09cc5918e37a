"""BM25 at scale: pruned top-k, float32 weights and the chunked build against rank-bm25."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hopforge.corpus.bm25 import BM25Index
from hopforge.corpus.bm25_build import BM25Builder
from hopforge.corpus.errors import HopforgeError
from rank_bm25 import BM25Okapi


def _zipf_docs(n: int, vocab: int = 3000, seed: int = 0) -> list[list[str]]:
    """Zipfian token lists: a few terms in almost every passage, most in a few."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1)
    cdf = np.cumsum(weights / weights.sum())
    out = []
    for length in rng.integers(5, 60, n):
        ids = np.minimum(np.searchsorted(cdf, rng.random(length)), vocab - 1)
        out.append([f"t{i}" for i in ids])
    return out


@pytest.fixture(scope="module")
def corpus() -> tuple[list[list[str]], list[list[str]], BM25Okapi]:
    docs = _zipf_docs(4000)
    rng = np.random.default_rng(1)
    queries = []
    for i in rng.integers(0, len(docs), 60):  # 5 tokens of a passage: common terms included
        d = sorted(set(docs[i]))
        queries.append([d[j] for j in rng.choice(len(d), min(5, len(d)), replace=False)])
    queries += [["t0", "t1", "t2", "t3"], ["t0", "t2999"], ["t5", "t5", "t40"], ["nope", "t7"]]
    return docs, queries, BM25Okapi(docs)


def _check_top_k(ref_scores: np.ndarray, idx: np.ndarray, scores: np.ndarray, k: int,
                 rtol: float) -> None:
    """The k best by the reference, in order; any swap only between equal reference scores."""
    order = np.lexsort((np.arange(len(ref_scores)), -ref_scores))
    n_match = int((ref_scores != 0).sum())
    want = order[: min(k, n_match)]
    assert len(idx) == len(want)
    np.testing.assert_allclose(scores, ref_scores[want], rtol=rtol, atol=1e-12)
    for got, exp in zip(idx, want):
        assert got == exp or abs(ref_scores[got] - ref_scores[exp]) <= rtol * abs(ref_scores[exp])


@pytest.mark.parametrize("k", [1, 10, 100])
def test_pruned_top_k_equals_rank_bm25_in_float64(corpus: tuple, k: int) -> None:
    docs, queries, ref = corpus
    index = BM25Index.from_tokens(docs, dtype="float64")
    for q in queries:
        ref_scores = ref.get_scores(q)
        idx, scores = index.top_k(q, k)
        _check_top_k(ref_scores, idx, scores, k, rtol=1e-9)


def test_float32_weights_stay_within_1e6_of_rank_bm25(corpus: tuple) -> None:
    docs, queries, ref = corpus
    index = BM25Index.from_tokens(docs, dtype="float32")
    assert index.dtype == "float32" and index.data.itemsize == 4
    for q in queries:
        ref_scores = ref.get_scores(q)
        np.testing.assert_allclose(index.scores(q), ref_scores, rtol=1e-6, atol=1e-9)
        idx, scores = index.top_k(q, 10)
        _check_top_k(ref_scores, idx, scores, 10, rtol=1e-6)


def test_batched_queries_equal_single_queries(corpus: tuple) -> None:
    docs, queries, _ = corpus
    index = BM25Index.from_tokens(docs)
    batch = index.top_k_batch(queries, 7)
    for q, (idx, scores) in zip(queries, batch):
        single = index.top_k(q, 7)
        assert idx.tolist() == single[0].tolist() and scores.tolist() == single[1].tolist()


def test_chunked_build_equals_in_memory_build(corpus: tuple, tmp_path: Path) -> None:
    docs, queries, _ = corpus
    builder = BM25Builder(tmp_path / "bm25", dtype="float64")
    for lo in range(0, len(docs), 700):  # chunks that do not divide the corpus
        builder.add(docs[lo : lo + 700])
    meta = builder.finish()
    assert meta["n_docs"] == len(docs) and not (tmp_path / "bm25" / "chunks").exists()
    loaded = BM25Index.load(tmp_path / "bm25")
    memory = BM25Index.from_tokens(docs)
    assert loaded.memory_mapped and loaded.vocab == memory.vocab
    for name in ("data", "indices", "indptr", "doc_len", "idf"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(memory, name))
    assert loaded.avgdl == memory.avgdl and loaded.average_idf == memory.average_idf
    for q in queries[:10]:
        assert loaded.top_k(q, 10)[0].tolist() == memory.top_k(q, 10)[0].tolist()


def test_a_query_allocates_nothing_of_corpus_size(corpus: tuple) -> None:
    import tracemalloc

    docs, _, _ = corpus
    index = BM25Index.from_tokens(docs * 10)  # 40k passages
    index.top_k(["t2999", "t2998"], 10)  # the accumulator is allocated once per thread
    tracemalloc.start()
    index.top_k(["t2999", "t2998"], 10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < index.n_docs * 8 / 10  # far below one float64 per passage


def test_builder_rejects_bad_dtype_and_empty_input(tmp_path: Path) -> None:
    with pytest.raises(HopforgeError, match="float32.*float64"):
        BM25Builder(tmp_path / "x", dtype="float16")
    with pytest.raises(HopforgeError, match="zero passages"):
        BM25Builder(tmp_path / "y").finish()
