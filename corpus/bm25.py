"""BM25 with rank-bm25's `BM25Okapi` scores, as a sparse term-by-passage weight matrix.

Every (term, passage) weight `idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))` is
computed once at build time and stored in a CSC matrix (one column per term). idf is
rank-bm25's: `log(N - df + 0.5) - log(df + 0.5)`, with negative values replaced by
`epsilon * average_idf`; a repeated query token counts once per occurrence, as in
`BM25Okapi.get_scores`.

A query touches only the postings of its terms: their weights are added into a per-thread
accumulator (allocated once, reset after each query), the candidates are read back, and the k
best are selected among them. Nothing of the corpus's size is allocated or scanned per query.
Weights are stored as float32 by default (half the memory; scores within 1e-6 relative of
rank-bm25's, accumulated in float64) or float64 for exact parity (`dtype="float64"`, the index
config's `bm25_dtype`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hopforge.corpus import bm25_build
from hopforge.corpus.errors import HopforgeError

log = logging.getLogger(__name__)

try:  # scipy's C loop for y += A @ x on CSC arrays: a scatter-add without temporaries
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
except ImportError:  # pragma: no cover - a scipy without it falls back to numpy indexing
    _csc_matvec = None

_ARRAYS = ("data", "indices", "indptr", "doc_len", "idf")
_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
# A query term: (first posting, end of postings, times in the query, largest weight * times)
Term = tuple[int, int, int, float]
# Queries touching at most this many postings are scored exhaustively (pruning would not pay).
SMALL_QUERY_POSTINGS = 4096


def _distinct(rows: np.ndarray) -> np.ndarray:
    """The distinct values of `rows`, sorted."""
    rows = np.sort(rows)
    if rows.size > 1:
        rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]
    return rows


class BM25Index:
    """Okapi BM25 over tokenized passages; scores match `rank_bm25.BM25Okapi` on the same tokens."""

    def __init__(
        self,
        *,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        doc_len: np.ndarray,
        idf: np.ndarray,
        vocab: dict[str, int],
        k1: float,
        b: float,
        epsilon: float,
        avgdl: float,
        average_idf: float,
    ) -> None:
        self.data, self.indices, self.indptr = data, indices, indptr
        self.doc_len, self.idf, self.vocab = doc_len, idf, vocab
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.avgdl, self.average_idf = avgdl, average_idf
        self._local = threading.local()
        self._term_max: np.ndarray | None = None

    @property
    def n_docs(self) -> int:
        return int(self.doc_len.shape[0])

    @property
    def n_terms(self) -> int:
        return len(self.vocab)

    @property
    def memory_mapped(self) -> bool:
        """Whether the postings are read from the index files rather than held in memory."""
        return isinstance(self.data.base, np.memmap) or isinstance(self.data, np.memmap)

    @property
    def dtype(self) -> str:
        return str(self.data.dtype)

    @classmethod
    def from_tokens(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        *,
        dtype: str = "float64",
    ) -> BM25Index:
        """Build in memory from the same input as `BM25Okapi(corpus_tokens)`."""
        bm25_build.check_dtype(dtype)
        n = len(corpus_tokens)
        if n == 0:
            raise HopforgeError("cannot build a BM25 index over zero passages: ingest documents first")
        vocab: dict[str, int] = {}
        postings, doc_len = bm25_build.chunk_postings(corpus_tokens, vocab)
        df = np.bincount(postings[0], minlength=len(vocab))
        idf, average_idf = bm25_build.rank_bm25_idf(df, n, epsilon)
        avgdl = float(doc_len.sum() / n)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        data = np.empty(len(postings[0]), dtype=dtype)
        indices = np.empty(len(postings[0]), dtype=np.int32)
        bm25_build.assemble([postings], df=df, doc_len=doc_len, idf=idf, k1=k1, b=b, avgdl=avgdl,
                            data=data, indices=indices)
        return cls(data=data, indices=indices, indptr=indptr, doc_len=doc_len, idf=idf,
                   vocab=vocab, k1=k1, b=b, epsilon=epsilon, avgdl=avgdl,
                   average_idf=average_idf)

    def _terms(self, query_tokens: Sequence[str]) -> list[Term]:
        """(first posting, end, count, bound) of each distinct known query term with postings."""
        out = []
        for token, count in Counter(query_tokens).items():
            t = self.vocab.get(token)
            if t is not None and self.indptr[t + 1] > self.indptr[t]:
                out.append((int(self.indptr[t]), int(self.indptr[t + 1]), count,
                            float(self.term_max[t]) * count))
        return out

    def _weights(self, lo: int, hi: int, count: int) -> np.ndarray:
        w = self.data[lo:hi].astype(np.float64)
        return w * count if count > 1 else w

    @property
    def term_max(self) -> np.ndarray:
        """The largest weight of each term (the bound that lets a query skip postings)."""
        if self._term_max is None:
            nonempty = np.flatnonzero(np.diff(self.indptr) > 0)
            out = np.zeros(self.n_terms, dtype=np.float64)
            if nonempty.size:
                out[nonempty] = np.maximum.reduceat(self.data, self.indptr[nonempty])
            self._term_max = out
        return self._term_max

    def _accumulator(self) -> np.ndarray:
        """This thread's score buffer: zeros between queries, allocated on first use."""
        acc = getattr(self._local, "acc", None)
        if acc is None or acc.shape[0] != self.n_docs:
            acc = self._local.acc = np.zeros(self.n_docs, dtype=np.float64)
        return acc

    def _scatter(self, acc: np.ndarray, term: Term) -> np.ndarray:
        """Add a term's weights into `acc` at its passages; returns those passages."""
        lo, hi, count, _ = term
        rows = self.indices[lo:hi]
        w = self.data[lo:hi].astype(np.float64)
        if _csc_matvec is not None and rows.dtype == np.int32:
            _csc_matvec(acc.shape[0], 1, np.array([0, hi - lo], dtype=np.int32), rows, w,
                        np.array([float(count)]), acc)
        else:  # rows are distinct within a term, so += is exact
            acc[rows] += w * count if count > 1 else w
        return rows

    def _accumulate(self, terms: list[Term]) -> tuple[np.ndarray, np.ndarray]:
        """(passages, summed weights of `terms`) of every posting of `terms`; a passage repeats
        once per term it holds."""
        if len(terms) == 1:
            lo, hi, count, _ = terms[0]
            return self.indices[lo:hi], self._weights(lo, hi, count)
        acc = self._accumulator()
        rows: list[np.ndarray] = []
        try:
            for term in terms:
                rows.append(self._scatter(acc, term))
            cand = np.concatenate(rows)
            scores = acc.take(cand)
        finally:
            for r in rows:
                acc[r] = 0.0
        return cand, scores

    def _add_terms(self, cand: np.ndarray, scores: np.ndarray, term: Term) -> None:
        """Add to `scores` the weights of `term` in passages `cand` (which may repeat)."""
        lo, hi, count, _ = term
        if cand.size * 4 > hi - lo:  # scanning the postings is cheaper than searching them
            acc = self._accumulator()
            rows = self._scatter(acc, term)
            scores += acc.take(cand)
            acc[rows] = 0.0
            return
        rows = self.indices[lo:hi]
        pos = np.minimum(np.searchsorted(rows, cand), hi - lo - 1)
        hit = rows[pos] == cand
        w = self.data[lo:hi][pos[hit]].astype(np.float64)
        scores[hit] += w * count if count > 1 else w

    def _maxscore(self, terms: list[Term], k: int) -> tuple[np.ndarray, np.ndarray, int]:
        """MaxScore: (passages, full scores, repeats) holding every passage that can reach the
        top k; a passage appears at most `repeats` times.

        The few passages of the terms with the highest bounds are scored first; their k-th
        score is a threshold. A passage holding only terms whose bounds sum below it cannot
        enter the top k, so those terms' postings are not scanned for candidates; and a
        candidate whose partial score plus the bounds still to add stays below it is dropped.
        """
        if min(term[3] for term in terms) <= 0:  # bounds must be positive to add up
            return *self._accumulate(terms), len(terms)
        terms = sorted(terms, key=lambda term: term[3])
        bound = np.cumsum([term[3] for term in terms]) * (1 + 1e-9) + 1e-12  # rounding slack
        sizes = np.array([hi - lo for lo, hi, _, _ in terms])
        seed = len(terms) - 1
        while seed > 0 and int(sizes[seed:].sum()) < k:
            seed -= 1
        if int(sizes[seed:].sum()) * 4 > int(sizes.sum()):
            return *self._accumulate(terms), len(terms)
        cand = self._union(terms[seed:])
        scores = np.zeros(cand.shape[0], dtype=np.float64)
        for term in terms:
            self._add_terms(cand, scores, term)
        if cand.size < k:
            return *self._accumulate(terms), len(terms)
        theta = float(np.partition(scores, cand.size - k)[cand.size - k])
        first = int((bound < theta).sum())  # terms[:first] alone stay below theta
        if first >= seed:
            return cand, scores, 1
        cand, scores = self._accumulate(terms[first:])
        for i in range(first - 1, -1, -1):  # the other terms, highest bound first
            keep = scores + bound[i] >= theta
            cand, scores = cand[keep], scores[keep]
            self._add_terms(cand, scores, terms[i])
        return cand, scores, len(terms) - first

    def _union(self, terms: list[Term]) -> np.ndarray:
        if len(terms) == 1:
            lo, hi, _, _ = terms[0]
            return np.asarray(self.indices[lo:hi])
        return _distinct(np.concatenate([self.indices[lo:hi] for lo, hi, _, _ in terms]))

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores of every passage, as `BM25Okapi.get_scores(query_tokens)` returns them."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        for lo, hi, count, _ in self._terms(query_tokens):
            out[self.indices[lo:hi]] += self._weights(lo, hi, count)
        return out

    def top_k(self, query_tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best passages containing a query token: (indices, scores), best first.

        Ties are broken by the lower index, so results are deterministic.
        """
        terms = self._terms(query_tokens)
        if k <= 0 or not terms:
            return _EMPTY
        if len(terms) == 1 or sum(hi - lo for lo, hi, _, _ in terms) <= SMALL_QUERY_POSTINGS:
            rows, scores = self._accumulate(terms)
            repeats = len(terms)
        else:
            rows, scores, repeats = self._maxscore(terms, k)
        keep_n = k * repeats  # the k best passages lie among the k * repeats best postings
        if rows.size > keep_n:
            kth = np.partition(scores, rows.size - keep_n)[rows.size - keep_n]
            keep = scores >= kth  # ties with the cut-off are all kept, then ordered
            rows, scores = rows[keep], scores[keep]
        if repeats > 1:
            rows, first = np.unique(rows, return_index=True)
            scores = scores[first]
        order = np.lexsort((rows, -scores))[:k]
        return rows[order].astype(np.int64), scores[order]

    def top_k_batch(self, queries: Sequence[Sequence[str]],
                    k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """`top_k` for each query, sharing one accumulator."""
        return [self.top_k(q, k) for q in queries]

    def save(self, directory: Path) -> None:
        """Write the index as .npy arrays (loadable memory-mapped) plus vocab and parameters."""
        directory.mkdir(parents=True, exist_ok=True)
        for name in _ARRAYS:
            np.save(directory / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        bm25_build.write_vocab(directory, self.vocab)
        meta = bm25_build.params(k1=self.k1, b=self.b, epsilon=self.epsilon, avgdl=self.avgdl,
                                 average_idf=self.average_idf, n_docs=self.n_docs,
                                 n_terms=self.n_terms, dtype=self.dtype)
        (directory / "params.json").write_text(json.dumps(meta, indent=2), "utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> BM25Index:
        """Read an index written by `save` or `BM25Builder`; memory-mapped unless `mmap=False`."""
        missing = [f"{n}.npy" for n in _ARRAYS if not (directory / f"{n}.npy").exists()]
        missing += [n for n in ("vocab.json", "params.json") if not (directory / n).exists()]
        if missing:
            raise HopforgeError(
                f"BM25 index at {directory} is incomplete (missing {', '.join(missing)}): "
                "rebuild it with `hopforge index BUILD`"
            )
        # Plain ndarray views of the maps: indexing a np.memmap costs microseconds per call.
        arrays = {n: np.asarray(np.load(directory / f"{n}.npy", mmap_mode="r" if mmap else None))
                  for n in _ARRAYS}
        terms = json.loads((directory / "vocab.json").read_text("utf-8"))
        meta = json.loads((directory / "params.json").read_text("utf-8"))
        return cls(
            **arrays,
            vocab={t: i for i, t in enumerate(terms)},
            k1=meta["k1"],
            b=meta["b"],
            epsilon=meta["epsilon"],
            avgdl=meta["avgdl"],
            average_idf=meta["average_idf"],
        )
