"""BM25 with rank-bm25's `BM25Okapi` scores, as a sparse term-by-passage weight matrix.

Every (term, passage) weight `idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))` is
computed once at build time and stored in a CSC matrix (one column per term). A query then sums
a few columns: the cost depends on how many passages contain the query's terms, not on the corpus
size. idf is rank-bm25's: `log(N - df + 0.5) - log(df + 0.5)`, with negative values replaced by
`epsilon * average_idf`; a repeated query token counts once per occurrence, as in
`BM25Okapi.get_scores`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from hopforge.corpus.errors import HopforgeError

log = logging.getLogger(__name__)

_ARRAYS = ("data", "indices", "indptr", "doc_len", "idf")


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

    @property
    def n_docs(self) -> int:
        return int(self.doc_len.shape[0])

    @property
    def n_terms(self) -> int:
        return len(self.vocab)

    @classmethod
    def from_tokens(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> BM25Index:
        """Build from the same input as `BM25Okapi(corpus_tokens)`: one token list per passage."""
        n = len(corpus_tokens)
        if n == 0:
            raise HopforgeError("cannot build a BM25 index over zero passages: ingest documents first")
        doc_len = np.fromiter((len(d) for d in corpus_tokens), dtype=np.int64, count=n)
        vocab: dict[str, int] = {}
        get = vocab.setdefault
        # Term ids in order of first occurrence (the order of rank-bm25's document-frequency dict).
        term_ids = np.fromiter(
            (get(t, len(vocab)) for t in chain.from_iterable(corpus_tokens)),
            dtype=np.int64,
            count=int(doc_len.sum()),
        )
        rows = np.repeat(np.arange(n, dtype=np.int64), doc_len)
        n_terms = len(vocab)
        tf = sp.csc_matrix(
            (np.ones(term_ids.shape[0], dtype=np.float64), (rows, term_ids)), shape=(n, n_terms)
        )
        tf.sum_duplicates()
        tf.sort_indices()
        df = np.diff(tf.indptr).astype(np.float64)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        average_idf = float(idf.sum() / n_terms) if n_terms else 0.0
        idf[idf < 0] = epsilon * average_idf
        avgdl = float(doc_len.sum() / n)
        freq = tf.data
        if avgdl > 0:
            norm = k1 * (1 - b + b * doc_len[tf.indices] / avgdl)
            cols = np.repeat(np.arange(n_terms), np.diff(tf.indptr))
            weights = idf[cols] * (freq * (k1 + 1) / (freq + norm))
        else:
            weights = freq
        return cls(
            data=weights,
            indices=tf.indices.astype(np.int32),
            indptr=tf.indptr.astype(np.int64),
            doc_len=doc_len,
            idf=idf,
            vocab=vocab,
            k1=k1,
            b=b,
            epsilon=epsilon,
            avgdl=avgdl,
            average_idf=average_idf,
        )

    def _matches(self, query_tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(passage rows, weights) of every posting of the query's known tokens."""
        rows: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for token, count in Counter(query_tokens).items():
            t = self.vocab.get(token)
            if t is None:
                continue
            lo, hi = int(self.indptr[t]), int(self.indptr[t + 1])
            rows.append(self.indices[lo:hi])
            w = self.data[lo:hi]
            vals.append(w * count if count > 1 else w)
        if not rows:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float64)
        return np.concatenate(rows), np.concatenate(vals)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores of every passage, as `BM25Okapi.get_scores(query_tokens)` returns them."""
        rows, vals = self._matches(query_tokens)
        return np.bincount(rows, weights=vals, minlength=self.n_docs)

    def top_k(self, query_tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best passages containing a query token: (indices, scores), best first.

        Ties are broken by the lower index, so results are deterministic.
        """
        rows, vals = self._matches(query_tokens)
        if rows.size == 0 or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        scores = np.bincount(rows, weights=vals, minlength=self.n_docs)
        mask = np.zeros(self.n_docs, dtype=bool)
        mask[rows] = True
        cand = np.flatnonzero(mask)
        cand_scores = scores[cand]
        if cand.size > k:
            kth = np.partition(cand_scores, cand.size - k)[cand.size - k]
            keep = cand_scores >= kth
            cand, cand_scores = cand[keep], cand_scores[keep]
        order = np.lexsort((cand, -cand_scores))[:k]
        return cand[order].astype(np.int64), cand_scores[order]

    def save(self, directory: Path) -> None:
        """Write the index as .npy arrays (loadable memory-mapped) plus vocab and parameters."""
        directory.mkdir(parents=True, exist_ok=True)
        for name in _ARRAYS:
            np.save(directory / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        (directory / "vocab.json").write_text(json.dumps(terms, ensure_ascii=False), "utf-8")
        meta = {"k1": self.k1, "b": self.b, "epsilon": self.epsilon, "avgdl": self.avgdl,
                "average_idf": self.average_idf, "n_docs": self.n_docs, "n_terms": self.n_terms}
        (directory / "params.json").write_text(json.dumps(meta, indent=2), "utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> BM25Index:
        """Read an index written by `save`; arrays are memory-mapped unless `mmap=False`."""
        missing = [f"{n}.npy" for n in _ARRAYS if not (directory / f"{n}.npy").exists()]
        missing += [n for n in ("vocab.json", "params.json") if not (directory / n).exists()]
        if missing:
            raise HopforgeError(
                f"BM25 index at {directory} is incomplete (missing {', '.join(missing)}): "
                "rebuild it with `hopforge index BUILD`"
            )
        arrays = {n: np.load(directory / f"{n}.npy", mmap_mode="r" if mmap else None)
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
