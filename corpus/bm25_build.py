"""BM25 postings built in bounded memory: token chunks go to chunk files, then one CSC matrix.

`BM25Builder.add` turns a chunk of tokenized passages into (term, passage, tf) triples sorted by
term and writes them to a chunk file; only the vocabulary, document frequencies and passage
lengths stay in memory. `BM25Builder.finish` computes rank-bm25's idf and writes the weight
matrix column by column into memory-mapped `.npy` files, one chunk at a time, so peak memory
follows the chunk size rather than the corpus. `BM25Index.from_tokens` runs the same arithmetic
on one in-memory chunk, so both paths give the same weights.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from hopforge.corpus.errors import HopforgeError

WEIGHT_DTYPES = ("float32", "float64")
# (term ids, passage ids, term frequencies) of one chunk, sorted by term then passage
Postings = tuple[np.ndarray, np.ndarray, np.ndarray]


def check_dtype(dtype: str) -> None:
    """Raise unless `dtype` is a supported stored-weight type."""
    if dtype not in WEIGHT_DTYPES:
        raise HopforgeError(f"BM25 weight dtype {dtype!r} is not supported: use float32 (half the "
                            "memory, scores within 1e-6 relative) or float64 (exact)")


def chunk_postings(docs_tokens: Sequence[Sequence[str]], vocab: dict[str, int],
                   first_doc: int = 0) -> tuple[Postings, np.ndarray]:
    """Postings of one chunk (new terms are added to `vocab`) and the chunk's passage lengths."""
    n = len(docs_tokens)
    doc_len = np.fromiter((len(d) for d in docs_tokens), dtype=np.int64, count=n)
    get = vocab.setdefault
    # Term ids in order of first occurrence (the order of rank-bm25's document-frequency dict).
    ids = np.fromiter((get(t, len(vocab)) for t in chain.from_iterable(docs_tokens)),
                      dtype=np.int64, count=int(doc_len.sum()))
    rows = np.repeat(np.arange(n, dtype=np.int64), doc_len)
    keys, tf = np.unique(ids * max(n, 1) + rows, return_counts=True)
    terms = (keys // max(n, 1)).astype(np.int32)
    docs = (keys % max(n, 1) + first_doc).astype(np.int32)
    return (terms, docs, tf.astype(np.int32)), doc_len


def rank_bm25_idf(df: np.ndarray, n_docs: int, epsilon: float) -> tuple[np.ndarray, float]:
    """rank-bm25's idf per term (negative values floored to epsilon * average) and the average."""
    freq = df.astype(np.float64)
    idf = np.log(n_docs - freq + 0.5) - np.log(freq + 0.5)
    average_idf = float(idf.sum() / len(idf)) if len(idf) else 0.0
    idf[idf < 0] = epsilon * average_idf
    return idf, average_idf


def assemble(chunks: Iterable[Postings], *, df: np.ndarray, doc_len: np.ndarray, idf: np.ndarray,
             k1: float, b: float, avgdl: float, data: np.ndarray, indices: np.ndarray) -> None:
    """Fill CSC `data` (weights) and `indices` (passages) from chunks given in passage order."""
    n_terms = len(df)
    cursor = np.zeros(n_terms, dtype=np.int64)
    cursor[1:] = np.cumsum(df)[:-1]
    for terms, docs, tf in chunks:
        counts = np.bincount(terms, minlength=n_terms)
        start = np.cumsum(counts) - counts
        pos = cursor[terms] + (np.arange(len(terms), dtype=np.int64) - start[terms])
        indices[pos] = docs
        freq = tf.astype(np.float64)
        if avgdl > 0:
            norm = k1 * (1 - b + b * doc_len[docs] / avgdl)
            data[pos] = idf[terms] * (freq * (k1 + 1) / (freq + norm))
        else:
            data[pos] = freq
        cursor += counts


def params(*, k1: float, b: float, epsilon: float, avgdl: float, average_idf: float,
           n_docs: int, n_terms: int, dtype: str) -> dict[str, Any]:
    """The parameters saved beside the arrays (params.json)."""
    return {"k1": k1, "b": b, "epsilon": epsilon, "avgdl": avgdl, "average_idf": average_idf,
            "n_docs": n_docs, "n_terms": n_terms, "dtype": dtype}


def write_vocab(directory: Path, vocab: dict[str, int]) -> None:
    """vocab.json: the terms in id order."""
    terms = sorted(vocab, key=vocab.__getitem__)
    (directory / "vocab.json").write_text(json.dumps(terms, ensure_ascii=False), "utf-8")


class BM25Builder:
    """Streams tokenized passages to chunk files; `finish` writes a loadable index directory."""

    def __init__(self, directory: Path, *, k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25, dtype: str = "float32") -> None:
        check_dtype(dtype)
        self.directory = directory
        self.k1, self.b, self.epsilon, self.dtype = k1, b, epsilon, dtype
        self.vocab: dict[str, int] = {}
        self.n_docs = 0
        self.postings = 0
        self._df = np.zeros(0, dtype=np.int64)
        self._lens: list[np.ndarray] = []
        self._chunks: list[Path] = []
        self._tmp = directory / "chunks"
        shutil.rmtree(self._tmp, ignore_errors=True)
        self._tmp.mkdir(parents=True)

    def add(self, docs_tokens: Sequence[Sequence[str]]) -> None:
        """Add the next passages (one token list each), in corpus order."""
        if not docs_tokens:
            return
        if self.n_docs + len(docs_tokens) >= 2**31:
            raise HopforgeError("a BM25 index holds fewer than 2**31 passages: shard the corpus")
        (terms, docs, tf), doc_len = chunk_postings(docs_tokens, self.vocab, self.n_docs)
        df = np.bincount(terms, minlength=len(self.vocab))
        df[: len(self._df)] += self._df
        self._df = df
        self._lens.append(doc_len)
        path = self._tmp / f"chunk-{len(self._chunks):05d}.npz"
        np.savez(path, terms=terms, docs=docs, tf=tf)
        self._chunks.append(path)
        self.n_docs += len(docs_tokens)
        self.postings += len(terms)

    def _read_chunks(self) -> Iterable[Postings]:
        for path in self._chunks:
            with np.load(path) as z:
                yield z["terms"], z["docs"], z["tf"]
            path.unlink()

    def finish(self) -> dict[str, Any]:
        """Write data/indices/indptr/doc_len/idf .npy, vocab.json and params.json; returns params."""
        if self.n_docs == 0:
            raise HopforgeError("cannot build a BM25 index over zero passages: ingest documents "
                                "first")
        d = self.directory
        doc_len = np.concatenate(self._lens)
        self._lens = []
        idf, average_idf = rank_bm25_idf(self._df, self.n_docs, self.epsilon)
        avgdl = float(doc_len.sum() / self.n_docs)
        indptr = np.zeros(len(self._df) + 1, dtype=np.int64)
        np.cumsum(self._df, out=indptr[1:])
        open_memmap = np.lib.format.open_memmap
        data = open_memmap(d / "data.npy", mode="w+", dtype=self.dtype, shape=(self.postings,))
        indices = open_memmap(d / "indices.npy", mode="w+", dtype=np.int32, shape=(self.postings,))
        assemble(self._read_chunks(), df=self._df, doc_len=doc_len, idf=idf, k1=self.k1,
                 b=self.b, avgdl=avgdl, data=data, indices=indices)
        data.flush()
        indices.flush()
        del data, indices
        shutil.rmtree(self._tmp, ignore_errors=True)
        np.save(d / "indptr.npy", indptr)
        np.save(d / "doc_len.npy", doc_len)
        np.save(d / "idf.npy", idf)
        write_vocab(d, self.vocab)
        meta = params(k1=self.k1, b=self.b, epsilon=self.epsilon, avgdl=avgdl,
                      average_idf=average_idf, n_docs=self.n_docs, n_terms=len(self.vocab),
                      dtype=self.dtype)
        (d / "params.json").write_text(json.dumps(meta, indent=2), "utf-8")
        return meta
