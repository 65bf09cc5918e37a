"""Dense retrieval: the real offline model on a few passages, the embedding cache, faiss indexes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hopforge.corpus.dense import (
    LazyEmbedder,
    SentenceTransformerEmbedder,
    cache_salt,
    embed_with_cache,
    read_cache,
    write_cache,
)
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import IndexConfig
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.corpus.vectors import VectorIndex, choose_kind, ivf_nlist

from tests.helpers.tiny import load_tiny


class CountingEmbedder:
    """Deterministic bag-of-characters vectors that count how many texts were embedded."""

    name = "counting"
    dim = 16

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(max_seq_length=128)


@pytest.fixture(scope="module")
def tiny_dense(tiny_corpus_path: Path, model: SentenceTransformerEmbedder) -> Searcher:
    docs = load_tiny(tiny_corpus_path)
    return Searcher.from_documents(docs, dense=True, embedder=model)


@pytest.mark.slow
def test_default_model_embeds_normalized_vectors(model: SentenceTransformerEmbedder) -> None:
    vecs = model.embed(["a lighthouse", "a tower with a lamp for ships", "salted fish"])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    assert model.embed([]).shape == (0, 384)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("a place where you can look at paintings", "orvin-gallery"),
        ("catching fish through a hole in frozen water", "ice-fishing"),
        ("the man who built the lighthouse", "dorran-pell"),
    ],
)
def test_dense_finds_paraphrases(tiny_dense: Searcher, query: str, expected: str) -> None:
    assert tiny_dense.search(query, k=3, mode="dense")[0].doc_id == expected


@pytest.mark.slow
def test_hybrid_fuses_both_rankings(tiny_dense: Searcher) -> None:
    assert tiny_dense.default_mode == "hybrid"
    query = "the man who built the lighthouse"
    bm25 = [h.doc_id for h in tiny_dense.search(query, k=5, mode="bm25")]
    dense = [h.doc_id for h in tiny_dense.search(query, k=5, mode="dense")]
    hybrid = tiny_dense.search(query, k=5, mode="hybrid")
    assert bm25[0] != dense[0] and hybrid[0].doc_id in (bm25[0], dense[0])
    rrf = tiny_dense.config.rrf_k
    assert hybrid[0].score <= 2 / (rrf + 1) and hybrid[0].snippet
    assert {h.doc_id for h in hybrid} <= set(bm25) | set(dense) | {
        h.doc_id for h in tiny_dense.search(query, k=100, mode="dense")}
    batch = tiny_dense.search_batch([query, "Lake Orvin"], k=5, mode="hybrid")
    assert batch[0] == hybrid and batch[1] == tiny_dense.search("Lake Orvin", k=5)


def test_embedding_cache_embeds_only_new_text(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    texts = ["alpha beta", "gamma delta", "alpha beta", "epsilon"]
    first = embed_with_cache(emb, texts, salt="counting")
    assert first.embedded == 3 and emb.calls == [3]
    np.testing.assert_array_equal(first.vectors[0], first.vectors[2])
    write_cache(tmp_path, "counting", first.hashes, first.vectors)
    cache = read_cache(tmp_path, "counting")
    changed = ["alpha beta", "gamma delta CHANGED", "epsilon", "zeta"]
    second = embed_with_cache(emb, changed, salt="counting", cache=cache)
    assert second.embedded == 2 and emb.calls == [3, 2]
    np.testing.assert_array_equal(second.vectors[0], first.vectors[0])
    np.testing.assert_allclose(second.vectors, emb.embed(changed), atol=1e-6)
    assert read_cache(tmp_path, "another model") == {}


def test_lazy_embedder_loads_on_first_use() -> None:
    made: list[CountingEmbedder] = []

    def factory() -> CountingEmbedder:
        made.append(CountingEmbedder())
        return made[-1]

    lazy = LazyEmbedder(factory, name="counting", dim=16)
    assert not made
    assert lazy.embed(["x"]).shape == (1, 16) and len(made) == 1
    lazy.embed(["y"])
    assert len(made) == 1
    assert cache_salt("", 256) != cache_salt("", 128)


def _clustered(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(40, d))
    x = centers[rng.integers(0, 40, n)] + 0.6 * rng.normal(size=(n, d))
    return x.astype(np.float32)


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_indexes_agree_with_exact_search(kind: str, tmp_path: Path) -> None:
    x, q = _clustered(4000, 32, 0), _clustered(100, 32, 1)
    config = IndexConfig(index_kind=kind, ivf_nprobe=16, hnsw_ef_search=64)
    exact = VectorIndex.build(x, config, kind="flat")
    approx = VectorIndex.build(x, config)
    assert approx.kind == kind and approx.ntotal == 4000
    _, truth = exact.search(q, 10)
    _, found = approx.search(q, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, found, strict=True)])
    assert recall >= 0.9
    approx.save(tmp_path / kind)
    loaded = VectorIndex.load(tmp_path / kind)
    assert loaded.kind == kind and loaded.params == approx.params
    np.testing.assert_array_equal(loaded.search(q, 10)[1], found)


def test_ivfpq_rescored_against_memory_mapped_vectors(tmp_path: Path) -> None:
    from hopforge.corpus.dense import write_cache

    x, q = _clustered(5_000, 32, 3), _clustered(100, 32, 4)
    config = IndexConfig(index_kind="ivfpq", ivf_nprobe=64, pq_m=8, pq_refine=8)
    approx = VectorIndex.build(x, config)
    assert approx.kind == "ivfpq" and approx.params["pq_m"] == 8
    _, truth = VectorIndex.build(x, kind="flat").search(q, 10)
    scores, found = approx.search(q, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, found, strict=True)])
    assert recall >= 0.9
    assert np.all(np.diff(scores, axis=1) <= 1e-6)  # exact scores, best first
    write_cache(tmp_path, "salt", [str(i) for i in range(len(x))], x)
    approx.save(tmp_path)
    loaded = VectorIndex.load(tmp_path)
    assert isinstance(loaded.exact_vectors, np.memmap)
    np.testing.assert_array_equal(loaded.search(q, 10)[1], found)


def test_auto_kind_past_a_million_vectors_follows_the_memory_budget() -> None:
    big = 2_000_000
    assert choose_kind(big, dim=384, memory_budget_gb=64) == "hnsw"
    assert choose_kind(big, dim=384, memory_budget_gb=2) == "ivfpq"  # HNSW would take ~3.3 GiB
    assert choose_kind(500_000, dim=384, memory_budget_gb=0.1) == "hnsw"  # below a million


def test_flat_index_is_exact_cosine() -> None:
    x = _clustered(300, 8, 2)
    index = VectorIndex.build(x)
    assert index.kind == "flat"
    scores, ids = index.search(x[:5] * 3.0, 1)  # scale does not matter: cosine
    assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-5)
    assert index.search(x[:1], 1000)[1].shape == (1, 300)


def test_index_kind_choice_and_errors(tmp_path: Path) -> None:
    assert choose_kind(10, flat_threshold=100) == "flat"
    assert choose_kind(100, flat_threshold=100, ann="ivf") == "ivf"
    assert choose_kind(10, index_kind="hnsw") == "hnsw"
    assert ivf_nlist(1_000_000) == 4000 and ivf_nlist(100) == 2 and ivf_nlist(10) == 1
    with pytest.raises(HopforgeError, match="at least one passage"):
        VectorIndex.build(np.zeros((0, 4), dtype=np.float32))
    with pytest.raises(HopforgeError, match="--no-dense"):
        VectorIndex.load(tmp_path)


class CountingVectors:
    """A `VectorIndex` that counts its search calls and the query rows of each."""

    def __init__(self, inner: VectorIndex) -> None:
        self.inner = inner
        self.calls: list[int] = []

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.calls.append(len(queries))
        return self.inner.search(queries, k)


@pytest.fixture(scope="module")
def batch_searcher(tiny_corpus_path: Path) -> Searcher:
    """The tiny corpus plus one document of many passages (dense searches must go deeper)."""
    docs = load_tiny(tiny_corpus_path)
    docs.append(Document(doc_id="harbour-log", title="Harbour log", source="tiny",
                         text=" ".join(f"the harbour lamp was lit on day {i}." for i in range(300))))
    config = IndexConfig(passage_words=24, passage_overlap=0, depth=12)
    return Searcher.from_documents(docs, dense=True, config=config, embedder=CountingEmbedder())


BATCH_QUERIES = [
    "Who first surveyed Mount Fendle?", "harbour lamp", "the harbour lamp was lit", "Quillon",
    "", "zzzqqq", "lighthouse at the entrance of Quillon harbour", "harbour lamp",
    "engineer who designed harbours and lighthouses", "salt cod", "Lake Orvin", "day 7",
    *(f"harbour day {i}" for i in range(12)),
]


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
@pytest.mark.parametrize("k", [3, 10])
def test_search_batch_equals_one_by_one(batch_searcher: Searcher, mode: str, k: int) -> None:
    vectors = batch_searcher.vectors
    assert vectors is not None
    counting = CountingVectors(vectors)
    batch_searcher.vectors = counting  # type: ignore[assignment]
    try:
        batch = batch_searcher.search_batch(BATCH_QUERIES, k=k, mode=mode)
        calls = list(counting.calls)
        single = [batch_searcher.search(q, k=k, mode=mode) for q in BATCH_QUERIES]
    finally:
        batch_searcher.vectors = vectors
    assert batch == single
    assert sum(map(len, batch)) > len(BATCH_QUERIES)
    if mode == "bm25":
        assert calls == [] and [] in batch
    else:  # the whole matrix in one call, then only the queries that needed a deeper search
        assert calls[0] == len(BATCH_QUERIES) and 1 < len(calls) < 5
        assert all(a >= b for a, b in itertools.pairwise(calls))


def test_flat_search_rows_are_exact_whatever_the_batch(tmp_path: Path) -> None:
    import faiss

    x, q = _clustered(20_000, 64, 3), _clustered(9, 64, 4)
    x[100:140] = x[7]  # a block of duplicates: exact ties across the cut at k
    q[4] = x[7]
    index = VectorIndex.build(x, kind="flat")
    index.save(tmp_path / "flat")
    loaded = VectorIndex.load(tmp_path / "flat")
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(4)  # more threads than a small batch has queries
    try:
        scores, ids = index.search(q, 20)  # 9 queries: faiss's matrix-product kernel
        for size in (1, 2, 3, 5):  # scans, some split over threads
            for start in range(0, len(q), size):
                s, i = loaded.search(q[start : start + size], 20)
                np.testing.assert_array_equal(s, scores[start : start + size])
                np.testing.assert_array_equal(i, ids[start : start + size])
    finally:
        faiss.omp_set_num_threads(threads)
    qn = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    truth = qn.astype(np.float64) @ unit.astype(np.float32).astype(np.float64).T
    expected = np.lexsort((np.broadcast_to(np.arange(len(x)), truth.shape), -truth))[:, :20]
    np.testing.assert_array_equal(ids, expected)
    assert ids[4].tolist()[:20] == [7, *range(100, 119)]  # duplicates in id order
    empty_scores, empty_ids = index.search(np.zeros((0, 64), dtype=np.float32), 5)
    assert empty_scores.shape == empty_ids.shape == (0, 5)


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_query_gets_the_same_hits_whatever_is_searched_with_it(
        tiny_corpus_path: Path, model: SentenceTransformerEmbedder, mode: str) -> None:
    """The real model: a batch pads and reshapes, yet each query's scores are bit-identical."""
    docs = load_tiny(tiny_corpus_path)
    config = IndexConfig(passage_words=24, passage_overlap=0, depth=12)
    batched, alone = (Searcher.from_documents(docs, dense=True, config=config, embedder=model)
                      for _ in range(2))
    batch = batched.search_batch(BATCH_QUERIES, k=5, mode=mode)
    single = [alone.search(q, k=5, mode=mode) for q in reversed(BATCH_QUERIES)][::-1]
    assert batch == single and sum(map(len, batch)) > len(BATCH_QUERIES)
