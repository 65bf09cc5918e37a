"""Diversity statistics for reports: distinct-n and self-BLEU.

`hopforge.synth.diversity` owns these for questions; when it is importable the report uses it,
and these implementations (same definitions) are the fallback:

- distinct-n = distinct word n-grams / all word n-grams over the texts (Li et al., 2016);
- self-BLEU = mean over texts of BLEU-n of the text against all the others as references
  (Zhu et al., 2018, Texygen), uniform weights over 1..n, add-one smoothing for n > 1, brevity penalty
  against the closest reference length.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence

from hopforge.filters.logodds import ngrams, words


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Distinct n-grams over all n-grams of `texts` (0 when there are none)."""
    grams: Counter[str] = Counter()
    for t in texts:
        grams.update(ngrams(words(t), n))
    total = sum(grams.values())
    return len(grams) / total if total else 0.0


def _bleu(hyp: list[str], refs: list[dict[int, Counter[str]]], lens: list[int], n: int) -> float:
    if not hyp:
        return 0.0
    c = len(hyp)
    r = min(lens, key=lambda x: (abs(x - c), x))
    bp = 1.0 if c > r else math.exp(1 - r / c)
    logp = 0.0
    for k in range(1, n + 1):
        h = Counter(ngrams(hyp, k))
        total = sum(h.values())
        clipped = sum(min(c, max((r[k].get(g, 0) for r in refs), default=0))
                      for g, c in h.items())
        if k == 1 and clipped == 0:
            return 0.0
        num, den = (clipped, total) if k == 1 else (clipped + 1, total + 1)
        logp += math.log(num / den) / n if den else 0.0
    return bp * math.exp(logp)


def self_bleu(texts: Sequence[str], *, n: int = 4, sample: int | None = None,
              seed: int = 0, max_words: int = 200) -> float:
    """Mean BLEU-n of each text against the others (higher: less diverse)."""
    toks = [words(t)[:max_words] for t in texts]
    if sample is not None and len(toks) > sample:
        toks = random.Random(seed).sample(toks, sample)
    if len(toks) < 2:
        return 0.0
    grams = [{k: Counter(ngrams(t, k)) for k in range(1, n + 1)} for t in toks]
    lens = [len(t) for t in toks]
    scores = [_bleu(t, grams[:i] + grams[i + 1 :], lens[:i] + lens[i + 1 :], n)
              for i, t in enumerate(toks)]
    return sum(scores) / len(scores)


def diversity_functions() -> tuple[Callable[..., float], Callable[..., float], str]:
    """(distinct_n, self_bleu, where they come from): synth's when present, else these."""
    try:
        from hopforge.synth import diversity
    except ImportError:
        return distinct_n, self_bleu, "hopforge.filters.textstats"
    return diversity.distinct_n, diversity.self_bleu, "hopforge.synth.diversity"
