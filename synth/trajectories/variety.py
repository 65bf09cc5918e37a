"""How varied a set of thoughts is once what they are about is masked out.

A thought is masked by replacing quoted phrases with Q, numbers with N, and every title the
trajectory's results showed (and every search query it sent) with X, longest first. Thoughts
that are one template with different names then read the same, and `top_share` says what share
of all thoughts the most common masked forms cover.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from hopforge.corpus.tools import is_search, search_query
from hopforge.synth.records import Trajectory

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_HIT = re.compile(r"\[doc_id: [^\]\s]+\] ([^|\n\"\\]+)")
_SPACES = re.compile(r"\s+")


def trajectory_names(t: Trajectory) -> list[str]:
    """Titles the results of `t` showed and the queries it sent, longest first."""
    names: set[str] = set()
    for turn in t.turns:
        for title in _HIT.findall(turn.result):
            names.add(title.strip().split(" page ")[0].strip())
        if turn.call is not None and is_search(turn.call.name):
            names.add(str(search_query(turn.call.name, turn.call.arguments) or "").strip('" '))
    return sorted((n for n in names if len(n) > 1), key=len, reverse=True)


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """One regex for the names, longest first, matched as whole words."""
    body = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True) if n)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE) if body else None


def mask(text: str, names: re.Pattern[str] | None) -> str:
    """`text` with quoted phrases, numbers and the given names masked."""
    text = _QUOTED.sub("Q", text)
    if names is not None:
        text = names.sub("X", text)
    return _SPACES.sub(" ", _NUMBER.sub("N", text)).strip()


def masked_thoughts(trajectories: Iterable[Trajectory]) -> Counter[str]:
    """How often each masked thought occurs across `trajectories`."""
    counts: Counter[str] = Counter()
    for t in trajectories:
        names = names_pattern(trajectory_names(t))
        for turn in t.turns:
            if turn.thought:
                counts[mask(turn.thought, names)] += 1
    return counts


def top_share(trajectories: Iterable[Trajectory], n: int = 30) -> float:
    """The share of thoughts that the `n` most common masked forms cover."""
    counts = masked_thoughts(trajectories)
    total = sum(counts.values())
    return sum(c for _, c in counts.most_common(n)) / total if total else 0.0
