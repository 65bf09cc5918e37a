"""faiss vector indexes over normalized embeddings: exact below a size threshold, HNSW or IVF above."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from hopforge.corpus.errors import HopforgeError

if TYPE_CHECKING:
    from hopforge.corpus.index import IndexConfig

log = logging.getLogger(__name__)

KINDS = ("flat", "hnsw", "ivf")


def choose_kind(n_vectors: int, *, index_kind: str = "auto", flat_threshold: int = 50_000,
                ann: str = "hnsw") -> str:
    """Exact search below `flat_threshold` vectors, else the approximate `ann` kind."""
    if index_kind != "auto":
        return index_kind
    return "flat" if n_vectors < flat_threshold else ann


def ivf_nlist(n_vectors: int, requested: int = 0) -> int:
    """Number of IVF lists: `requested`, or about 4*sqrt(n); at most n/39 so training is sound."""
    nlist = requested or int(4 * math.sqrt(n_vectors))
    return max(1, min(nlist, n_vectors // 39))


def _normalized(vectors: np.ndarray) -> np.ndarray:
    out = np.array(vectors, dtype=np.float32, order="C", copy=True)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


class VectorIndex:
    """Inner-product search over L2-normalized vectors (cosine similarity)."""

    def __init__(self, index: Any, kind: str, params: dict[str, Any]) -> None:
        self.index, self.kind, self.params = index, kind, params
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
        from hopforge.corpus.index import IndexConfig

        config = config or IndexConfig()
        if vectors.ndim != 2 or vectors.shape[0] == 0:
            raise HopforgeError(f"cannot build a vector index from an array of shape "
                                f"{vectors.shape}: embed at least one passage")
        n, d = vectors.shape
        kind = kind or choose_kind(n, index_kind=config.index_kind,
                                   flat_threshold=config.flat_threshold, ann=config.ann)
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
        else:
            nlist = ivf_nlist(n, config.ivf_nlist)
            index = faiss.index_factory(d, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
            index.train(x)
            params = {"nlist": nlist, "nprobe": min(config.ivf_nprobe, nlist)}
        index.add(x)
        log.info("built %s vector index over %d vectors of dim %d", kind, n, d)
        return cls(index, kind, params)

    def _apply_search_params(self) -> None:
        import faiss

        if self.kind == "hnsw":
            self.index.hnsw.efSearch = int(self.params.get("ef_search", 128))
        elif self.kind == "ivf":
            faiss.extract_index_ivf(self.index).nprobe = int(self.params.get("nprobe", 16))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the k nearest vectors per query row; id -1 marks a missing result."""
        q = _normalized(np.atleast_2d(queries))
        k = max(1, min(k, self.ntotal))
        scores, ids = self.index.search(q, k)
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
        return cls(index, meta["kind"], meta.get("params", {}))
