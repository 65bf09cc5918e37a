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


def _top2(grams: Sequence[Counter[str]]) -> dict[str, tuple[int, int, int]]:
    """For each n-gram: (largest count, index of the text with it, second largest count)."""
    best: dict[str, tuple[int, int, int]] = {}
    for i, c in enumerate(grams):
        for g, n in c.items():
            c1, i1, c2 = best.get(g, (0, -1, 0))
            if n > c1:
                best[g] = (n, i, c1)
            elif n > c2:
                best[g] = (c1, i1, n)
    return best


def self_bleu(texts: Sequence[str], *, n: int = 4, sample: int | None = None,
              seed: int = 0, max_words: int = 200) -> float:
    """Mean BLEU-n of each text against the others (higher: less diverse)."""
    toks = [words(t)[:max_words] for t in texts]
    if sample is not None and len(toks) > sample:
        toks = random.Random(seed).sample(toks, sample)
    if len(toks) < 2:
        return 0.0
    grams = [[Counter(ngrams(t, k)) for t in toks] for k in range(1, n + 1)]
    tops = [_top2(g) for g in grams]
    lens = sorted(len(t) for t in toks)
    scores = []
    for i, hyp in enumerate(toks):
        if not hyp:
            scores.append(0.0)
            continue
        c = len(hyp)
        others = list(lens)
        others.remove(c)
        r = min(others, key=lambda x: (abs(x - c), x))
        bp = 1.0 if c > r else math.exp(1 - r / c)
        logp = 0.0
        for k in range(n):
            h = grams[k][i]
            total = sum(h.values())
            clipped = 0
            for g, cnt in h.items():
                c1, i1, c2 = tops[k][g]
                clipped += min(cnt, c2 if i1 == i else c1)
            if k == 0 and clipped == 0:
                logp = -math.inf
                break
            num, den = (clipped, total) if k == 0 else (clipped + 1, total + 1)
            logp += math.log(num / den) / n if den else 0.0
        scores.append(bp * math.exp(logp))
    return sum(scores) / len(scores)


def diversity_functions() -> tuple[Callable[..., float], Callable[..., float], str]:
    """(distinct_n, self_bleu, where they come from): synth's when present, else these."""
    try:
        from hopforge.synth import diversity
    except ImportError:
        return distinct_n, self_bleu, "hopforge.filters.textstats"
    return diversity.distinct_n, diversity.self_bleu, "hopforge.synth.diversity"
