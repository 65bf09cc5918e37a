"""`Searcher`: BM25, dense and hybrid (reciprocal-rank fusion) search, one hit per document."""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from hopforge.corpus.bm25 import BM25Index
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import MODES, IndexConfig, load_searcher_parts
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.passages import index_text, split_documents
from hopforge.corpus.records import Document, Hit, Passage
from hopforge.corpus.store import read_documents
from hopforge.corpus.tokenize import Tokenizer

if TYPE_CHECKING:
    from hopforge.corpus.dense import Embedder
    from hopforge.corpus.vectors import VectorIndex

log = logging.getLogger(__name__)

QUERY_VECTOR_CACHE = 16_384  # query vectors kept per searcher (6 MB at 384 dimensions)

# (document ordinal, score, passage index) in rank order
Ranked = list[tuple[int, float, int]]


class Searcher:
    """Search over passages, reporting each document once with its best passage as the snippet."""

    def __init__(
        self,
        *,
        documents: Sequence[Document],
        passages: Sequence[Passage],
        bm25: BM25Index,
        config: IndexConfig,
        embedder: Embedder | None = None,
        vectors: VectorIndex | None = None,
    ) -> None:
        self.config = config
        self._docs = list(documents)
        self.documents: Mapping[str, Document] = {d.doc_id: d for d in self._docs}
        ordinal = {d.doc_id: i for i, d in enumerate(self._docs)}
        missing = [p.doc_id for p in passages if p.doc_id not in ordinal]
        if missing:
            raise HopforgeError(
                f"{len(missing)} indexed passages belong to documents that are not in the corpus "
                f"(first: {missing[0]!r}): the index is stale, rebuild it with `hopforge index BUILD`"
            )
        self.passages = list(passages)
        self._passage_doc = np.fromiter((ordinal[p.doc_id] for p in self.passages), dtype=np.int64,
                                        count=len(self.passages))
        self.bm25 = bm25
        self.tokenizer = Tokenizer(config.tokenizer_config())
        self.embedder = embedder
        self.vectors = vectors
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # most recent last
        self._query_lock = threading.Lock()  # a service may search from several threads

    @property
    def has_dense(self) -> bool:
        return self.embedder is not None and self.vectors is not None

    @property
    def default_mode(self) -> str:
        return "hybrid" if self.has_dense else "bm25"

    @classmethod
    def from_documents(
        cls,
        docs: Sequence[Document],
        *,
        dense: bool = False,
        config: IndexConfig | None = None,
        embedder: Embedder | None = None,
    ) -> Searcher:
        """An in-memory searcher; BM25 only unless `dense` (which embeds every passage)."""
        config = config or IndexConfig()
        if not docs:
            raise HopforgeError("cannot search an empty corpus: pass at least one document")
        passages = list(split_documents(docs, size=config.passage_words,
                                        overlap=config.passage_overlap))
        texts = [index_text(p, with_title=config.title_in_passage) for p in passages]
        tokenizer = Tokenizer(config.tokenizer_config())
        bm25 = BM25Index.from_tokens(tokenizer.batch(texts), k1=config.k1, b=config.b,
                                     epsilon=config.epsilon, dtype=config.bm25_dtype)
        vectors = None
        if dense:
            from hopforge.corpus.dense import embedder_from_config
            from hopforge.corpus.vectors import VectorIndex

            embedder = embedder or embedder_from_config(config)
            vectors = VectorIndex.build(embedder.embed(texts), config)
        return cls(documents=docs, passages=passages, bm25=bm25, config=config,
                   embedder=embedder if dense else None, vectors=vectors)

    @classmethod
    def load(cls, build: BuildDir, *, embedder: Embedder | None = None,
             documents: Sequence[Document] | None = None) -> Searcher:
        """The searcher of a built index (BUILD/index/) over the build's corpus.

        `documents`: the corpus when the caller has read it already (it is not read again).
        """
        return cls(**load_searcher_parts(build, embedder=embedder, documents=documents))

    # -- retrieval ---------------------------------------------------------------------------

    def _check_mode(self, mode: str) -> str:
        if mode not in MODES:
            raise HopforgeError(f"search mode {mode!r} is not one of {', '.join(MODES)}")
        if mode == "dense" and not self.has_dense:
            raise HopforgeError(
                "dense search needs a dense index: rebuild without --no-dense "
                "(`hopforge index BUILD`) or use --mode bm25"
            )
        if mode == "hybrid" and not self.has_dense:
            return "bm25"
        return mode

    def _per_document(self, passage_ids: np.ndarray, scores: np.ndarray, limit: int) -> Ranked:
        """First (best) passage per document, in the given order, up to `limit` documents."""
        seen: set[int] = set()
        out: Ranked = []
        for p, s in zip(passage_ids.tolist(), scores.tolist()):
            if p < 0:
                continue
            d = int(self._passage_doc[p])
            if d in seen:
                continue
            seen.add(d)
            out.append((d, float(s), p))
            if len(out) >= limit:
                break
        return out

    def _bm25_ranked(self, query: str, limit: int) -> Ranked:
        tokens = self.tokenizer(query)
        n = len(self.passages)
        depth = min(n, limit * 2)
        while True:
            idx, scores = self.bm25.top_k(tokens, depth)
            ranked = self._per_document(idx, scores, limit)
            if len(ranked) >= limit or idx.size < depth or depth >= n:
                return ranked
            depth = min(n, depth * 4)

    def _dense_ranked(self, qvecs: np.ndarray, limit: int) -> list[Ranked]:
        """Per query row, the first `limit` documents by vector score, in one faiss call.

        A query whose passages come from too few documents is searched again, deeper, with the
        others that need it; each row goes through the same depths as it would alone.
        """
        assert self.vectors is not None
        n = len(self.passages)
        out: list[Ranked] = [[] for _ in range(len(qvecs))]
        todo = list(range(len(qvecs)))
        depth = min(n, limit * 2)
        while todo:
            scores, idx = self.vectors.search(qvecs[todo], depth)
            again = []
            for row, i in enumerate(todo):
                out[i] = self._per_document(idx[row], scores[row], limit)
                if len(out[i]) < limit and depth < n:
                    again.append(i)
            todo = again
            depth = min(n, depth * 4)
        return out

    def _fuse(self, lexical: Ranked, semantic: Ranked, k: int) -> Ranked:
        cfg = self.config
        fused: dict[int, float] = {}
        best: dict[int, tuple[float, int]] = {}  # doc -> (contribution, passage)
        for weight, ranked in ((cfg.bm25_weight, lexical), (cfg.dense_weight, semantic)):
            for rank, (d, _, p) in enumerate(ranked, start=1):
                part = weight / (cfg.rrf_k + rank)
                fused[d] = fused.get(d, 0.0) + part
                if d not in best or part > best[d][0]:
                    best[d] = (part, p)
        docs = self._docs  # equal scores: the lower doc_id first
        order = sorted(fused, key=lambda d: (-fused[d], docs[d].doc_id))[:k]
        return [(d, fused[d], best[d][1]) for d in order]

    def _hits(self, ranked: Ranked, query: str) -> list[Hit]:
        hits = []
        tokens = self.tokenizer(query)
        for rank, (d, score, p) in enumerate(ranked, start=1):
            doc, passage = self._docs[d], self.passages[p]
            snippet = make_snippet(passage.text, tokens, self.tokenizer, self.config.snippet_chars)
            hits.append(Hit(doc_id=doc.doc_id, title=doc.title, score=score, rank=rank,
                            snippet=snippet, passage_id=passage.passage_id))
        return hits

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> list[Hit]:
        """The k best documents for `query` (fewer when fewer match), best first."""
        return self.search_batch([query], k=k, mode=mode)[0]

    def search_batch(self, queries: list[str], k: int = 10, mode: str = "hybrid") -> list[list[Hit]]:
        """`search` for many queries: query vectors embedded in one batch, searched in one call."""
        mode = self._check_mode(mode)
        queries = list(queries)
        if k < 1 or not queries:
            return [[] for _ in queries]
        if mode == "bm25":
            ranked = [self._bm25_ranked(query, k) for query in queries]
        else:
            qvecs = self._embed_queries(queries)
            if mode == "dense":
                ranked = self._dense_ranked(qvecs, k)
            else:
                depth = max(self.config.depth, k)
                semantic = self._dense_ranked(qvecs, depth)
                ranked = [self._fuse(self._bm25_ranked(query, depth), sem, k)
                          for query, sem in zip(queries, semantic, strict=True)]
        if self.config.exact_title_first:
            ranked = [self._title_first(r, query, k) for r, query in zip(ranked, queries,
                                                                         strict=True)]
        return [self._hits(r, query) for r, query in zip(ranked, queries, strict=True)]

    def _embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """One vector per query, kept for the next search of it.

        Embedders give a query the same vector whatever else is searched with it (the
        sentence-transformers one embeds queries one at a time), so near-equal hits keep
        their order from run to run; the cache saves embedding a repeated query again.
        """
        assert self.embedder is not None
        out = []
        for query in queries:
            with self._query_lock:
                vec = self._query_vectors.get(query)
                if vec is not None:
                    self._query_vectors.move_to_end(query)
            if vec is None:
                vec = self.embedder.embed([query], queries=True)[0]  # alone: see the docstring
                with self._query_lock:
                    self._query_vectors[query] = vec
                    if len(self._query_vectors) > QUERY_VECTOR_CACHE:
                        self._query_vectors.popitem(last=False)
            out.append(vec)
        return np.stack(out)

    def _title_first(self, ranked: Ranked, query: str, k: int) -> Ranked:
        """`ranked` with the document whose title (or an alias) is the query itself first, or
        else one whose title has the query's stems: a reader who searches a name just read
        gets that entry, as a site search would, also when the text inflected it."""
        key = " ".join(query.casefold().split()).strip(" \"'“”‘’")
        d = self._by_title.get(key)
        if d is None:  # the name as a text used it ("operating systems"): the same stems
            d = self._by_title_stems.get(tuple(self.tokenizer(query)))
        if d is None:
            return ranked
        rest = [r for r in ranked if r[0] != d]
        found = next((r for r in ranked if r[0] == d), None)
        top = found or (d, ranked[0][1] if ranked else 0.0, self._first_passage[d])
        return [top, *rest][:k]

    @cached_property
    def _by_title(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i, doc in enumerate(self._docs):
            for name in (doc.title, *doc.aliases):
                out.setdefault(" ".join(name.casefold().split()), i)
        return out

    @cached_property
    def _by_title_stems(self) -> dict[tuple[str, ...], int]:
        """Title (or alias) tokens as the BM25 side reads them -> the first such document."""
        out: dict[tuple[str, ...], int] = {}
        for i, doc in enumerate(self._docs):
            for name in (doc.title, *doc.aliases):
                stems = tuple(self.tokenizer(name))
                if stems:
                    out.setdefault(stems, i)
        return out

    @cached_property
    def _first_passage(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for p, d in enumerate(self._passage_doc.tolist()):
            out.setdefault(int(d), p)
        return out


_OPEN_LOCK = threading.Lock()
_OPEN: dict[tuple[str, int, int], Searcher] = {}


def open_searcher(build: BuildDir, docs: Sequence[Document] | None = None) -> Searcher:
    """The build's index, loaded once per process while it stays the same.

    Every stage that searches (questions, trajectories, eval, the search service) asks here, so
    a build run in one process loads its index, documents and embedder once. A build without an
    index gets an in-memory BM25 index of its corpus. `docs`: the build's documents when the
    caller has read them already.
    """
    manifest = build.index / "manifest.json"
    watched = manifest if manifest.is_file() else build.corpus
    stat = watched.stat()
    key = (str(watched.resolve()), stat.st_mtime_ns, stat.st_size)
    with _OPEN_LOCK:
        searcher = _OPEN.get(key)
        if searcher is None:
            _OPEN.clear()
            searcher = _OPEN[key] = _load_searcher(build, docs, indexed=watched == manifest)
    return searcher


def _load_searcher(build: BuildDir, docs: Sequence[Document] | None, *, indexed: bool) -> Searcher:
    if indexed:
        return Searcher.load(build, documents=docs)
    if docs is None:

        docs = read_documents(build)
    log.warning("no index in %s: searching an in-memory BM25 index of the corpus", build.index)
    return Searcher.from_documents(docs, dense=False)


def make_snippet(text: str, query_tokens: Sequence[str], tokenizer: Tokenizer, width: int) -> str:
    """About `width` characters of `text` around the first word that matches a query token."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    wanted = set(query_tokens)
    center = 0
    if wanted:
        for m in re.finditer(r"\S+", text):
            if wanted.intersection(tokenizer(m.group())):
                center = m.start()
                break
    start = max(0, min(center - width // 3, len(text) - width))
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
