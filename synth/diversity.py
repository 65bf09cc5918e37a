"""Diversity of a set of texts: distinct-n and self-BLEU; shingles and Jaccard for near-duplicates.

- `distinct_n`: distinct n-grams over all n-grams of all texts (Li et al., 2016). Higher is more
  diverse. It falls as a set grows, so compare sets of the same size.
- `self_bleu`: the mean BLEU-n of each text against all the others as references (Zhu et al.,
  2018, Texygen), with NLTK's `sentence_bleu` conventions: uniform weights, clipped counts over
  the references, brevity penalty from the closest reference length, smoothing method 1
  (epsilon 0.1 for an order with no match). Lower is more diverse. Computed in one pass over
  n-gram counts (the two largest counts of each n-gram over all texts), not by calling BLEU once
  per pair.
- `shingles` and `jaccard`: the word n-gram sets and their overlap that the question checks and
  the trajectory dedup filter compare (each with its own tokenizer).
"""

from __future__ import annotations

import bisect
import math
import random
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"\w+(?:'\w+)?")
_EPSILON = 0.1  # NLTK SmoothingFunction().method1


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (punctuation dropped)."""
    return _TOKEN.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def shingles(tokens: Sequence[str], n: int = 3) -> set[str]:
    """Word n-grams of `tokens`, joined by spaces (all tokens as one when fewer than n)."""
    if len(tokens) < n:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """Exact Jaccard similarity |a & b| / |a | b| (1.0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 1.0


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Distinct n-grams / all n-grams over `texts` (0.0 when there are none)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    total = 0
    seen: set[tuple[str, ...]] = set()
    for text in texts:
        grams = ngrams(tokenize(text), n)
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else 0.0


def self_bleu(
    texts: Sequence[str], *, n: int = 4, sample: int | None = None, seed: int = 0
) -> float:
    """Mean BLEU-`n` of each text (or of `sample` of them) against all the other texts."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    docs = [tokenize(t) for t in texts]
    if len(docs) < 2:
        raise ValueError(f"self-BLEU needs at least 2 texts, got {len(docs)}")
    counts = [[Counter(ngrams(d, k)) for k in range(1, n + 1)] for d in docs]
    # per order: n-gram -> (largest count, its text, second largest count)
    top: list[dict[tuple[str, ...], tuple[int, int, int]]] = [{} for _ in range(n)]
    for i, per_order in enumerate(counts):
        for k, grams in enumerate(per_order):
            table = top[k]
            for gram, c in grams.items():
                first, owner, second = table.get(gram, (0, -1, 0))
                if c > first:
                    table[gram] = (c, i, first)
                elif c > second:
                    table[gram] = (first, owner, c)
    lengths = sorted(len(d) for d in docs)
    chosen: Sequence[int] = range(len(docs))
    if sample is not None and sample < len(docs):
        chosen = sorted(random.Random(seed).sample(range(len(docs)), sample))
    scores = [_bleu(i, docs[i], counts[i], top, lengths, n) for i in chosen]
    return sum(scores) / len(scores)


def _bleu(
    i: int,
    hyp: list[str],
    hyp_counts: list[Counter[tuple[str, ...]]],
    top: list[dict[tuple[str, ...], tuple[int, int, int]]],
    lengths: list[int],
    n: int,
) -> float:
    numerators: list[int] = []
    denominators: list[int] = []
    for k in range(n):
        clipped = 0
        for gram, c in hyp_counts[k].items():
            first, owner, second = top[k][gram]
            clipped += min(c, second if owner == i else first)
        numerators.append(clipped)
        denominators.append(max(1, sum(hyp_counts[k].values())))
    if numerators[0] == 0:
        return 0.0
    log_sum = 0.0
    for num, den in zip(numerators, denominators, strict=True):
        p = (num + _EPSILON) / den if num == 0 else num / den
        log_sum += math.log(p) / n
    hyp_len = len(hyp)
    ref_len = _closest_other_length(lengths, hyp_len)
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(log_sum)


def _closest_other_length(lengths: list[int], own: int) -> int:
    """The reference length closest to `own` (ties: the shorter), leaving out one text of
    length `own` (the hypothesis itself)."""
    pos = bisect.bisect_left(lengths, own)
    candidates: list[int] = []
    # lengths[pos] is the hypothesis itself (or another text of the same length)
    same = bisect.bisect_right(lengths, own) - pos
    if same > 1:
        return own
    if pos > 0:
        candidates.append(lengths[pos - 1])
    if pos + same < len(lengths):
        candidates.append(lengths[pos + same])
    return min(candidates, key=lambda r: (abs(r - own), r))
