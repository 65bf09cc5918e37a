"""faiss index kinds: build time, per-query latency and recall@10 against exact (flat) search.

Vectors: 384-d like all-MiniLM-L6-v2, L2-normalized, drawn around 200 cluster centres with
noise in a 48-d subspace per cluster, clusters overlapping (real sentence embeddings have a low
intrinsic dimension; isotropic Gaussians would make every approximate index look worse than it
is on text, well-separated clusters better). 10k and 100k vectors (`--quick`: 5k and 20k); 200
queries drawn the same way. IVF-PQ (what `auto` takes past a million vectors when HNSW would not
fit the memory budget) keeps 48-byte codes in memory and rescores `refine * k` candidates
exactly against the vectors (memory-mapped embeddings.npy in a build); `index_mb` is the faiss
index alone. The last rows show what `auto` takes at 1M, 5M and 21M vectors (Search-R1's
Wikipedia) under a 12 GiB budget and the memory it projects. Latency is one query per call on one thread, as the search tool
issues them; speed-ups are ratios against flat search in the same process.
"""

from __future__ import annotations

import time

import numpy as np


def make_vectors(n: int, d: int = 384, seed: int = 0, n_clusters: int = 200,
                 sub_dim: int = 48, spread: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(corpus vectors, query vectors), clustered with low intrinsic dimension."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(n_clusters, d)).astype(np.float32) * spread
    bases = rng.normal(size=(n_clusters, sub_dim, d)).astype(np.float32) / np.sqrt(sub_dim)
    draw = np.random.default_rng(seed + 1)

    def sample(m: int) -> np.ndarray:
        c = draw.integers(0, n_clusters, m)
        z = draw.normal(size=(m, sub_dim)).astype(np.float32)
        x = centers[c] + np.einsum("mk,mkd->md", z, bases[c])
        x += 0.05 * draw.normal(size=x.shape).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    return sample(n), sample(200)


def run(quick: bool = False) -> list[dict]:
    """One row per (size, index kind, search setting)."""
    import faiss
    from hopforge.corpus.index import IndexConfig
    from hopforge.corpus.vectors import VectorIndex

    rows: list[dict] = []
    for n in ([5_000, 20_000] if quick else [10_000, 100_000]):
        x, q = make_vectors(n)
        settings = [("flat", IndexConfig(index_kind="flat"), {}),
                    ("hnsw M=32", IndexConfig(index_kind="hnsw"), {"ef_search": 64}),
                    ("hnsw M=32", None, {"ef_search": 128}),
                    ("hnsw M=32", None, {"ef_search": 256}),
                    ("ivf", IndexConfig(index_kind="ivf"), {"nprobe": 8}),
                    ("ivf", None, {"nprobe": 16}),
                    ("ivf", None, {"nprobe": 64}),
                    ("ivfpq + exact rescoring", IndexConfig(index_kind="ivfpq"),
                     {"nprobe": 16, "refine": 4}),
                    ("ivfpq + exact rescoring", None, {"nprobe": 64, "refine": 8})]
        truth: np.ndarray | None = None
        flat_ms = 0.0
        index = None
        build_s = 0.0
        for name, config, params in settings:
            if config is not None:
                t = time.perf_counter()
                index = VectorIndex.build(x, config)
                build_s = time.perf_counter() - t
            assert index is not None
            index.params.update(params)
            index._apply_search_params()
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            index.search(q[:1], 10)
            t = time.perf_counter()
            ids = np.vstack([index.search(q[i : i + 1], 10)[1] for i in range(len(q))])
            ms = 1000 * (time.perf_counter() - t) / len(q)
            faiss.omp_set_num_threads(threads)
            if truth is None:
                truth, flat_ms = ids, ms
            recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, ids)])
            label = ", ".join(f"{k}={v}" for k, v in index.params.items() if k in params)
            rows.append({"vectors": n, "index": name, "search": label or "exact",
                         "build_s": round(build_s, 2),
                         "index_mb": round(faiss.serialize_index(index.index).nbytes / 2**20, 1),
                         "query_ms": round(ms, 3),
                         "speedup_vs_flat": round(flat_ms / ms, 1),
                         "recall@10": round(float(recall), 3)})
    return rows + auto_choices()


def auto_choices(budget_gb: float = 12.0) -> list[dict]:
    """What `index_kind = "auto"` takes at Wikipedia sizes under a memory budget (half of a 24 GiB
    machine), with the index memory it projects; not built here."""
    from hopforge.corpus.vectors import choose_kind, index_bytes

    rows = []
    for n in (1_000_000, 5_000_000, 21_000_000):
        kind = choose_kind(n, memory_budget_gb=budget_gb)
        rows.append({"vectors": n, "index": f"auto -> {kind}",
                     "search": f"chosen for a {budget_gb:g} GiB budget",
                     "build_s": "", "index_mb": round(index_bytes(kind, n, 384) / 2**20, 1),
                     "query_ms": "", "speedup_vs_flat": "", "recall@10": ""})
    return rows
