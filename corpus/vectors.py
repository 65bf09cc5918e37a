"""faiss vector indexes over normalized embeddings: exact when small, HNSW / IVF / IVF-PQ when large."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import IndexConfig

log = logging.getLogger(__name__)

KINDS = ("flat", "hnsw", "ivf", "ivfpq")
# Past this many vectors `auto` weighs memory: HNSW while it fits the budget, else IVF-PQ.
LARGE_INDEX = 1_000_000


def memory_budget_bytes(budget_gb: float = 0.0) -> int:
    """`budget_gb` in bytes; 0 means half of this machine's physical memory."""
    if budget_gb > 0:
        return int(budget_gb * 2**30)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # no sysconf: assume 8 GiB
        return 8 * 2**30


def index_bytes(kind: str, n_vectors: int, dim: int, *, hnsw_m: int = 32, pq_m: int = 0) -> int:
    """About how much memory a faiss index of `kind` over n vectors of `dim` takes."""
    flat = n_vectors * dim * 4
    if kind == "hnsw":
        return flat + n_vectors * hnsw_m * 2 * 4
    if kind == "ivfpq":
        return n_vectors * (pq_bytes(dim, pq_m) + 8)
    return flat + (n_vectors * 8 if kind == "ivf" else 0)


def pq_bytes(dim: int, requested: int = 0) -> int:
    """PQ sub-quantizers (one byte each): `requested`, or the largest divisor of dim <= dim / 8."""
    if requested:
        return requested
    return max(m for m in range(1, max(1, dim // 8) + 1) if dim % m == 0)


def choose_kind(n_vectors: int, *, index_kind: str = "auto", flat_threshold: int = 50_000,
                ann: str = "hnsw", dim: int = 384, memory_budget_gb: float = 0.0,
                hnsw_m: int = 32) -> str:
    """Exact search below `flat_threshold` vectors, else the approximate `ann` kind; past
    `LARGE_INDEX` vectors, IVF-PQ when `ann` would not fit the memory budget."""
    if index_kind != "auto":
        return index_kind
    if n_vectors < flat_threshold:
        return "flat"
    if n_vectors < LARGE_INDEX:
        return ann
    need = index_bytes(ann, n_vectors, dim, hnsw_m=hnsw_m)
    return ann if need <= memory_budget_bytes(memory_budget_gb) else "ivfpq"


def ivf_nlist(n_vectors: int, requested: int = 0) -> int:
    """Number of IVF lists: `requested`, or about 4*sqrt(n); at most n/39 so training is sound."""
    nlist = requested or int(4 * math.sqrt(n_vectors))
    return max(1, min(nlist, n_vectors // 39))


def _normalized(vectors: np.ndarray) -> np.ndarray:
    out = np.array(vectors, dtype=np.float32, order="C", copy=True)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


# Exact (flat) search: from this many queries on, faiss's matrix-multiply kernel is used (about
# 8x less CPU per query at 64 queries over 100k vectors; faiss's own default switches to it
# only for far larger batches).
BLAS_MIN_QUERIES = 4
# Candidates fetched per query beyond k, rescored exactly before the k best are kept.
RESCORE_SLACK = 8
_BLAS_LOCK = threading.Lock()


@contextlib.contextmanager
def _blas_kernel(on: bool) -> Iterator[None]:
    """Let faiss compute a flat search as a matrix product.

    The switch is a process-wide faiss setting: a search in another thread at that moment may
    take the same kernel, which changes only float rounding (flat results are rescored).
    """
    if not on:
        yield
        return
    import faiss

    with _BLAS_LOCK:  # serialized, so that the saved threshold is always the original one
        old = faiss.cvar.distance_compute_blas_threshold
        faiss.cvar.distance_compute_blas_threshold = 0
        try:
            yield
        finally:
            faiss.cvar.distance_compute_blas_threshold = old


class VectorIndex:
    """Inner-product search over L2-normalized vectors (cosine similarity)."""

    def __init__(self, index: Any, kind: str, params: dict[str, Any]) -> None:
        self.index, self.kind, self.params = index, kind, params
        self._stored: np.ndarray | None = None  # the vectors of a flat index, a view
        # IVF-PQ: the full vectors (memory-mapped embeddings.npy) its candidates are rescored on
        self.exact_vectors: np.ndarray | None = None
        self._apply_search_params()

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    @classmethod
    def build(cls, vectors: np.ndarray, config: IndexConfig | None = None,
              *, kind: str | None = None) -> VectorIndex:
        """Index `vectors` (n, d); the kind follows the config unless given."""
        import faiss

        config = config or IndexConfig()
        if vectors.ndim != 2 or vectors.shape[0] == 0:
            raise HopforgeError(f"cannot build a vector index from an array of shape "
                                f"{vectors.shape}: embed at least one passage")
        n, d = vectors.shape
        kind = kind or choose_kind(n, index_kind=config.index_kind,
                                   flat_threshold=config.flat_threshold, ann=config.ann, dim=d,
                                   memory_budget_gb=config.memory_budget_gb,
                                   hnsw_m=config.hnsw_m)
        if kind not in KINDS:
            raise HopforgeError(f"vector index kind {kind!r} is not one of {', '.join(KINDS)}")
        x = _normalized(vectors)
        params: dict[str, Any] = {}
        index: Any
        if kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = config.hnsw_ef_construction
            params = {"m": config.hnsw_m, "ef_construction": config.hnsw_ef_construction,
                      "ef_search": config.hnsw_ef_search}
        elif kind == "ivf":
            nlist = ivf_nlist(n, config.ivf_nlist)
            index = faiss.index_factory(d, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
            index.train(x)
            params = {"nlist": nlist, "nprobe": min(config.ivf_nprobe, nlist)}
        else:
            nlist = ivf_nlist(n, config.ivf_nlist)
            m = pq_bytes(d, config.pq_m)
            index = faiss.index_factory(d, f"IVF{nlist},PQ{m}x8np", faiss.METRIC_INNER_PRODUCT)
            rng = np.random.default_rng(0)  # train on a sample: enough for the lists and codes
            sample = max(64 * nlist, 20_000)
            index.train(x if n <= sample else x[np.sort(rng.choice(n, sample, replace=False))])
            params = {"nlist": nlist, "nprobe": min(config.ivf_nprobe, nlist), "pq_m": m,
                      "refine": config.pq_refine}
        index.add(x)
        log.info("built %s vector index over %d vectors of dim %d", kind, n, d)
        out = cls(index, kind, params)
        if kind == "ivfpq":
            out.exact_vectors = vectors
        return out

    def _apply_search_params(self) -> None:
        import faiss

        if self.kind == "hnsw":
            self.index.hnsw.efSearch = int(self.params.get("ef_search", 128))
        elif self.kind in ("ivf", "ivfpq"):
            faiss.extract_index_ivf(self.index).nprobe = int(self.params.get("nprobe", 16))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the k nearest vectors per query row; id -1 marks a missing result.

        On a flat index each row is exact and does not depend on the other rows: a query alone
        gets the same ids and scores as in any batch, ties broken by the lower id.
        """
        q = _normalized(np.atleast_2d(queries))
        k = max(1, min(k, self.ntotal))
        if len(q) == 0:
            return np.zeros((0, k), dtype=np.float32), np.full((0, k), -1, dtype=np.int64)
        if self.kind == "ivfpq" and self.exact_vectors is not None:
            return self._refined(q, k)
        if self.kind != "flat":
            scores, ids = self.index.search(q, k)
            return scores, ids
        return self._exact(q, k)

    def _refined(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """IVF-PQ candidates (`refine` times k) rescored exactly against the stored vectors."""
        assert self.exact_vectors is not None
        fetch = min(self.ntotal, k * max(1, int(self.params.get("refine", 4))))
        _, found = self.index.search(q, fetch)
        safe = np.where(found < 0, 0, found)
        wanted = np.unique(safe)  # sorted: one pass over the memory-mapped rows
        rows = np.asarray(self.exact_vectors[wanted], dtype=np.float64)
        pos = np.searchsorted(wanted, safe)
        norms = np.linalg.norm(rows, axis=1)
        norms[norms == 0] = 1.0
        exact = np.einsum("qd,qcd->qc", q.astype(np.float64), (rows / norms[:, None])[pos])
        exact[found < 0] = -np.inf
        order = np.lexsort((found, -exact), axis=-1)[:, :k]
        ids = np.take_along_axis(found, order, axis=-1)
        scores = np.take_along_axis(exact, order, axis=-1).astype(np.float32)
        return scores, ids

    def _exact(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Flat search: faiss finds candidates, which are rescored in float64 and sorted.

        faiss's float32 scores depend on its kernel (a matrix product for batches, a scan for
        one query, split over threads or not). A row is settled once its k-th rescored score
        beats the bound on any vector faiss left out; otherwise it is fetched again, deeper.
        """
        import faiss

        if self._stored is None:
            self._stored = faiss.rev_swig_ptr(self.index.get_xb(), self.ntotal * self.dim
                                              ).reshape(self.ntotal, self.dim)
        tolerance = 2.0 * self.dim * 2.0**-24  # float32 rounding of a dot product of unit vectors
        scores = np.zeros((len(q), k), dtype=np.float32)
        ids = np.zeros((len(q), k), dtype=np.int64)
        todo = np.arange(len(q))
        fetch = min(self.ntotal, k + RESCORE_SLACK)
        while len(todo):
            with _blas_kernel(len(todo) >= BLAS_MIN_QUERIES):
                approx, found = self.index.search(q[todo], fetch)
            exact = np.einsum("qd,qcd->qc", q[todo].astype(np.float64),
                              self._stored[found].astype(np.float64))
            order = np.lexsort((found, -exact), axis=-1)[:, :k]
            best = np.take_along_axis(exact, order, axis=-1)
            settled = best[:, -1] > approx[:, -1].astype(np.float64) + tolerance
            if fetch >= self.ntotal:
                settled[:] = True
            rows = todo[settled]
            scores[rows] = best[settled]
            ids[rows] = np.take_along_axis(found, order, axis=-1)[settled]
            todo = todo[~settled]
            fetch = min(self.ntotal, fetch * 2)
        return scores, ids

    def save(self, directory: Path) -> None:
        """Write `vectors.faiss` and its parameters to `directory`."""
        import faiss

        directory.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(directory / "vectors.faiss"))
        meta = {"kind": self.kind, "params": self.params, "ntotal": self.ntotal, "dim": self.dim}
        (directory / "vectors.json").write_text(json.dumps(meta, indent=2), "utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> VectorIndex:
        """Read an index written by `save` (memory-mapped where faiss supports it)."""
        import faiss

        path, meta_path = directory / "vectors.faiss", directory / "vectors.json"
        if not path.exists() or not meta_path.exists():
            raise HopforgeError(f"no vector index at {directory}: rebuild it with "
                                "`hopforge index BUILD` (without --no-dense)")
        meta = json.loads(meta_path.read_text("utf-8"))
        flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
        try:
            index = faiss.read_index(str(path), flags)
        except RuntimeError:  # index types without mmap support are read into memory
            index = faiss.read_index(str(path))
        out = cls(index, meta["kind"], meta.get("params", {}))
        if out.kind == "ivfpq" and (directory / "embeddings.npy").exists():
            out.exact_vectors = np.load(directory / "embeddings.npy", mmap_mode="r")
        return out
