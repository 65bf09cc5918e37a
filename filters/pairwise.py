"""Pair-wise comparisons within a question: the rule-based comparator and the per-question fit.

The rule comparator orders two scored trajectories lexicographically: correct over wrong, then
more evidence, then higher efficiency, then brevity (fewer turns, then fewer characters). Values
closer than `tolerance` count as equal; when every key is equal the pair is a tie.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hopforge.filters.bradley_terry import Outcome, fit_bradley_terry
from hopforge.filters.records import PreferencePair, Score


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """One compared pair of a question: `outcome` is the score of `a` (1, 0.5 or 0)."""

    qid: str
    a: str  # tid
    b: str  # tid
    outcome: float
    source: str = "rules"  # "rules" or "judge:MODEL"
    reason: str = ""  # the deciding key, or why the judge verdict became a tie

    def to_row(self) -> dict[str, object]:
        return {"qid": self.qid, "a": self.a, "b": self.b, "outcome": self.outcome,
                "source": self.source, "reason": self.reason}

    @classmethod
    def from_row(cls, row: dict[str, object]) -> Comparison:
        return cls(**row)  # type: ignore[arg-type]


def _cmp(x: float, y: float, tolerance: float) -> int:
    if abs(x - y) <= tolerance:
        return 0
    return 1 if x > y else -1


def rule_compare(a: Score, b: Score, *, tolerance: float = 1e-6) -> tuple[float, str]:
    """Score of `a` against `b` (1 win, 0.5 tie, 0 loss) and the key that decided it."""
    keys: tuple[tuple[str, float, float], ...] = (
        ("correct", float(a.correct), float(b.correct)),
        ("evidence", a.evidence, b.evidence),
        ("efficiency", a.efficiency, b.efficiency),
        ("brevity:turns", -float(a.n_turns), -float(b.n_turns)),
        ("brevity:chars", -float(a.n_chars), -float(b.n_chars)),
    )
    for name, x, y in keys:
        c = _cmp(x, y, tolerance)
        if c:
            return (1.0 if c > 0 else 0.0), name
    return 0.5, "tie"


def rule_comparisons(scores: Sequence[Score]) -> list[Comparison]:
    """Every pair of one question's trajectories compared by the rules."""
    out = []
    for a, b in itertools.combinations(scores, 2):
        outcome, reason = rule_compare(a, b)
        out.append(Comparison(qid=a.qid, a=a.tid, b=b.tid, outcome=outcome, reason=reason))
    return out


def strengths(
    tids: Sequence[str], comparisons: Sequence[Comparison], *, prior: float
) -> dict[str, float]:
    """Bradley-Terry log-strengths of one question's trajectories from its comparisons."""
    index = {t: i for i, t in enumerate(tids)}
    outcomes: list[Outcome] = [
        (index[c.a], index[c.b], c.outcome)
        for c in comparisons if c.a in index and c.b in index
    ]
    theta = fit_bradley_terry(len(tids), outcomes, prior=prior)
    return {t: float(theta[i]) for t, i in index.items()}


def preference_pairs(
    group: Sequence[Score],
    *,
    pair_margin: float,
    source: str,
    max_pairs: int = 0,
    require_correct: bool = True,
    min_gap: float = 0.0,
) -> list[PreferencePair]:
    """Preference pairs of one question's scored trajectories, each with a real margin.

    A pair is a correct trajectory against a wrong one, or, with equal correctness, two whose
    combined rewards differ by more than `pair_margin` and whose point-wise totals differ by at
    least `min_gap` (the combined reward is relative within a question, so in a group of close
    trajectories a tiny difference can look large). The chosen side always has the higher
    combined reward (a wrong trajectory that out-scores a correct one gives no pair), and with
    `require_correct` it is correct. `margin` is the combined-reward difference; pairs are ordered
    by it (largest first) and `max_pairs` > 0 keeps only the first ones.
    """
    pairs = []
    for x, y in itertools.combinations(sorted(group, key=lambda s: s.tid), 2):
        hi, lo = (x, y) if x.combined >= y.combined else (y, x)
        margin = hi.combined - lo.combined
        if margin <= 0 or (require_correct and not hi.correct):
            continue
        if hi.correct != lo.correct:
            if not hi.correct:
                continue
            basis = "correctness"
        elif margin > pair_margin and hi.pointwise - lo.pointwise >= min_gap:
            basis = "margin"
        else:
            continue
        pairs.append(PreferencePair(qid=hi.qid, chosen=hi.tid, rejected=lo.tid,
                                    margin=round(float(margin), 6), source=source, basis=basis))
    pairs.sort(key=lambda p: (-p.margin, p.chosen, p.rejected))
    return pairs[:max_pairs] if max_pairs > 0 else pairs


def agreement(comparisons: Sequence[Comparison], strength: dict[str, float]) -> float:
    """Share of decided comparisons whose winner also has the higher fitted strength."""
    decided = [c for c in comparisons if c.outcome != 0.5]
    if not decided:
        return float("nan")
    ok = [(strength[c.a] > strength[c.b]) == (c.outcome > 0.5) for c in decided]
    return float(np.mean(ok))
