"""Word n-grams and the log-odds ratio with an informative Dirichlet prior (Monroe et al., 2008).

For an n-gram w with counts y_t (target) and y_r (reference), totals n_t and n_r, and prior
pseudo-counts a_w summing to a_0:

    delta_w = log((y_t + a_w) / (n_t + a_0 - y_t - a_w)) - log((y_r + a_w) / (n_r + a_0 - y_r - a_w))
    var_w   = 1 / (y_t + a_w) + 1 / (y_r + a_w)
    z_w     = delta_w / sqrt(var_w)

z_w > 0 means w is over-represented in the target. Without an explicit prior, a_w is the combined
(target + reference) frequency of w scaled to a_0 = prior_strength * (n_t + n_r).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|<e>")
_PRONOUN_I = frozenset({"I", "I'm", "I'll", "I've", "I'd"})
NAME = "<e>"  # placeholder for a capitalized name or a number
MISSING_PRIOR = 0.01  # pseudo-count for an n-gram absent from an explicit prior


def words(text: str) -> list[str]:
    """Lowercased word tokens (letters and digits, with inner apostrophes) and <e>."""
    return _WORD.findall(text.lower())


def mask_names(text: str, *, sentences: bool = True) -> str:
    """Replace capitalized words (names) and numbers with <e>, so templates show their slots.

    A capitalized word that starts a sentence is kept ("Opening Grey Needle." -> "Opening <e>.";
    "Grey Needle looks right" -> "Grey <e> looks right"); runs of names become one <e>. With
    sentences=False (search queries) every capitalized word is a name.
    """
    out: list[str] = []
    start = sentences
    for tok in text.split():
        core = tok.strip("\"'()[]{},.;:!?")
        if (not start and core and (core[0].isupper() or core[0].isdigit())
                and core not in _PRONOUN_I):
            tail = tok[len(tok.rstrip(".,;:!?)")) :]
            if not (out and out[-1] == NAME):
                out.append(NAME)
            if tail:
                out.append(tail)
        else:
            out.append(tok)
        start = sentences and tok[-1] in ".!?:"
    return " ".join(out)


def has_content(gram: str, stopwords: frozenset[str]) -> bool:
    """True when an n-gram holds a word that is neither a stopword nor <e>."""
    return any(w != NAME and w not in stopwords for w in gram.split())


def ngrams(tokens: Sequence[str], n: int) -> list[str]:
    """Space-joined word n-grams of a token list."""
    if n == 1:
        return list(tokens)
    return list(map(" ".join, zip(*(tokens[k:] for k in range(n)))))


def count_ngrams(texts: Iterable[str], sizes: Sequence[int]) -> Counter[str]:
    """Counts of every n-gram (for each n in `sizes`) over `texts`, within each text."""
    c: Counter[str] = Counter()
    for text in texts:
        toks = words(text)
        for n in sizes:
            c.update(ngrams(toks, n))
    return c


def log_odds_z(
    target: Mapping[str, int],
    reference: Mapping[str, int],
    *,
    prior: Mapping[str, float] | None = None,
    prior_strength: float = 0.1,
    keys: Iterable[str] | None = None,
) -> dict[str, float]:
    """z-scores of the log-odds ratio target vs reference for `keys` (default: target's n-grams)."""
    n_t = sum(target.values())
    n_r = sum(reference.values())
    if prior is None:
        total = n_t + n_r
        a0 = prior_strength * total
        scale = a0 / total if total else 0.0

        def alpha(w: str) -> float:
            return scale * (target.get(w, 0) + reference.get(w, 0)) or MISSING_PRIOR
    else:
        a0 = float(sum(prior.values()))

        def alpha(w: str) -> float:
            return prior.get(w, 0.0) or MISSING_PRIOR

    out: dict[str, float] = {}
    for w in target if keys is None else keys:
        a = alpha(w)
        yt, yr = target.get(w, 0), reference.get(w, 0)
        delta = math.log((yt + a) / (n_t + a0 - yt - a)) - math.log((yr + a) / (n_r + a0 - yr - a))
        out[w] = delta / math.sqrt(1.0 / (yt + a) + 1.0 / (yr + a))
    return out


def drop_contained(phrases: Sequence[str], counts: Mapping[str, int], *,
                   ratio: float = 0.8) -> list[str]:
    """Drop a phrase when a longer kept phrase contains it and has >= ratio of its count."""
    kept: list[str] = []
    for p in sorted(phrases, key=lambda s: (-len(s.split()), s)):
        if not any(f" {p} " in f" {q} " and counts.get(q, 0) >= ratio * counts.get(p, 0)
                   for q in kept):
            kept.append(p)
    order = {p: i for i, p in enumerate(phrases)}
    return sorted(kept, key=order.__getitem__)


def merge_overlapping(phrases: Sequence[str], counts: Mapping[str, int], *,
                      ratio: float = 0.8, min_overlap: int = 2) -> dict[str, list[str]]:
    """Chain n-grams that overlap (a's tail is b's head) and co-occur into longer phrases.

    "as a meticulous research" + "a meticulous research assistant" becomes "as a meticulous
    research assistant" when their counts are within `ratio` of each other. Returns each merged
    phrase with the n-grams it was made of. One merge at a time: the first phrase `a` in sorted
    order that has a partner, with its first partner `b` in sorted order, at their longest
    overlap; then again from the start. Partners are looked up by their first k words, so a
    pass costs the phrases times their lengths, not the phrases squared.
    """
    groups: dict[str, list[str]] = {p: [p] for p in phrases}
    count = {p: counts.get(p, 0) for p in phrases}
    tokens = {p: tuple(p.split()) for p in phrases}
    heads: dict[tuple[str, ...], set[str]] = {}  # first k words (k >= min_overlap) -> phrases

    def index(p: str, add: bool) -> None:
        t = tokens[p]
        for k in range(min_overlap, len(t)):
            bucket = heads.setdefault(t[:k], set())
            if add:
                bucket.add(p)
            else:
                bucket.discard(p)

    def partner(a: str) -> tuple[str, int] | None:
        ta = tokens[a]
        best: dict[str, int] = {}  # partner -> its longest overlap with a
        for k in range(min_overlap, len(ta)):
            for b in heads.get(ta[-k:], ()):
                if b != a and k < len(tokens[b]):
                    lo, hi = sorted((count[a], count[b]))
                    if hi and lo >= ratio * hi:
                        best[b] = max(best.get(b, 0), k)
        if not best:
            return None
        b = min(best)
        return b, best[b]

    for p in groups:
        index(p, True)
    keys = sorted(groups)
    while True:
        found = None
        for i in range(len(keys)):
            hit = partner(keys[i])
            if hit is not None:
                found = (i, keys[i], *hit)
                break
        if found is None:
            return groups
        i, a, b, k = found
        new = " ".join(tokens[a] + tokens[b][k:])
        for old in (a, b):
            index(old, False)
        parts = groups.pop(a) + groups.pop(b)
        lo = min(count[a], count[b])
        if new in groups:
            index(new, False)
        groups[new] = parts
        count[new], tokens[new] = lo, tuple(new.split())
        index(new, True)
        keys = sorted(groups)
