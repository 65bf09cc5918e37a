"""Synthetic passages for retrieval at scale: Zipfian text over FOLDOC's vocabulary.

FOLDOC (../shared/data/dictd/foldoc.*, read with hopforge's dictd reader) is tokenized with the
index's default tokenizer (stopwords removed, stemmed); its terms, ranked by frequency, are the
vocabulary. Each passage draws 30-90 tokens (mean 60, about a 100-word passage after stopwords)
from a Zipf law (exponent 1) over those ranks, so a few terms occur in most passages and most
terms in few, as in Wikipedia. Passages come in chunks, generated on demand, so a million of
them never have to be in memory at once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def foldoc_vocabulary() -> list[str]:
    """FOLDOC's terms under the default index tokenizer, most frequent first."""
    from hopforge.corpus.dictd import read_dictd
    from hopforge.corpus.problems import Problems
    from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig

    tok = Tokenizer(TokenizerConfig(stopwords=True, stem=True))
    counts: Counter[str] = Counter()
    for doc in read_dictd(SHARED / "dictd" / "foldoc.index", source="foldoc",
                          problems=Problems()):
        counts.update(tok(f"{doc.title}\n{doc.text}"))
    return [t for t, _ in counts.most_common()]


class ZipfCorpus:
    """n passages of Zipf-distributed FOLDOC terms, reproducible from the seed."""

    def __init__(self, n: int, vocabulary: list[str], *, seed: int = 0,
                 exponent: float = 1.0) -> None:
        self.n, self.seed = n, seed
        self.words = np.array(vocabulary, dtype=object)
        weights = 1.0 / np.arange(1, len(vocabulary) + 1, dtype=np.float64) ** exponent
        self.cdf = np.cumsum(weights / weights.sum())

    def chunks(self, size: int = 50_000) -> Iterator[list[list[str]]]:
        """Token lists of all passages, `size` passages at a time."""
        for first in range(0, self.n, size):
            rng = np.random.default_rng([self.seed, first])
            m = min(size, self.n - first)
            lengths = rng.integers(30, 91, m)
            ids = np.searchsorted(self.cdf, rng.random(int(lengths.sum())))
            ids = np.minimum(ids, len(self.words) - 1)
            flat = self.words[ids].tolist()
            ends = np.cumsum(lengths).tolist()
            starts = [0, *ends[:-1]]
            yield [flat[s:e] for s, e in zip(starts, ends)]

    def passages(self) -> list[list[str]]:
        """All passages in one list (for the libraries that need it)."""
        return [p for chunk in self.chunks() for p in chunk]


def document_queries(docs: list[list[str]], n: int, seed: int = 1) -> list[list[str]]:
    """n queries of 5 distinct tokens, each drawn from one random passage."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        d = docs[rng.randrange(len(docs))]
        distinct = sorted(set(d))
        if len(distinct) >= 5:
            out.append(rng.sample(distinct, 5))
    return out


def rare_queries(df: dict[str, int], n: int, seed: int = 2, pool: int = 200) -> list[list[str]]:
    """n queries of 2 terms among the `pool` terms that occur in the fewest passages."""
    rare = sorted((t for t, c in df.items() if c > 0), key=lambda t: (df[t], t))[:pool]
    rng = random.Random(seed)
    return [rng.sample(rare, 2) for _ in range(n)]
