"""The combined reward: point-wise total and pair-wise strength, normalized within each question.

For the trajectories of one question (its group):

    combined = s * z(pointwise) + (1 - s) * z(strength),   s = ScoreConfig.pointwise_share

where z(x) = (x - mean) / std inside the group (0 for a group of one or with no spread). The
reward is therefore relative: it ranks a question's trajectories, as GRPO-style advantages do.

Length check: x = log(1 + length), z-normalized inside each group, where length is what the
teacher wrote (ScoreConfig.length_measure: "chars", the default, or "turns"); r = corr(combined,
x) over all trajectories. When |r| >= ScoreConfig.length_corr_threshold, the reward is
length-controlled as in length-controlled AlpacaEval: fit combined = a + b * x + c * correct +
d * efficiency by least squares (correctness and efficiency are rewarded on purpose, so they are
held fixed rather than regressed away), then remove the length term:
length_controlled = combined - b * x. Both correlations are reported.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hopforge.filters.pairwise import (
    Comparison,
    agreement,
    preference_pairs,
    rule_comparisons,
    strengths,
)
from hopforge.filters.pointwise import ScoreConfig, score_trajectory
from hopforge.filters.records import PreferencePair, Score
from hopforge.synth.records import Question, Trajectory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreResult:
    """What the score stage produces: scores, preference pairs, comparisons and statistics."""

    scores: tuple[Score, ...]
    pairs: tuple[PreferencePair, ...]
    comparisons: tuple[Comparison, ...]
    stats: dict[str, Any] = field(default_factory=dict)


Floats = Sequence[float] | np.ndarray


def zscore(values: Floats) -> np.ndarray:
    """(x - mean) / std, or zeros when there is no spread."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return x
    sd = float(x.std())
    return np.zeros_like(x) if sd < 1e-12 else (x - x.mean()) / sd


def pearson(x: Floats, y: Floats) -> float:
    """Pearson correlation, NaN when either side is constant or shorter than 2."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 2 or a.std() < 1e-12 or b.std() < 1e-12:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def group_length(scores: Sequence[Score], measure: str = "chars") -> np.ndarray:
    """log(1 + length), z-normalized within each question's group."""
    out = np.zeros(len(scores))
    groups: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(scores):
        groups[s.qid].append(i)
    for idx in groups.values():
        out[idx] = zscore([math.log1p(scores[i].n_chars if measure == "chars"
                                      else scores[i].n_turns) for i in idx])
    return out


def length_control(rewards: Floats, length: Floats, *controls: Floats
                   ) -> tuple[np.ndarray, float]:
    """Rewards with the fitted length term removed (controls held fixed), and its coefficient."""
    r = np.asarray(rewards, dtype=float)
    x = np.asarray(length, dtype=float)
    design = np.column_stack([np.ones_like(x), x, *(np.asarray(c, dtype=float) for c in controls)])
    coef = np.linalg.lstsq(design, r, rcond=None)[0]
    return r - coef[1] * x, float(coef[1])


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def score_all(
    questions: Mapping[str, Question],
    trajectories: Sequence[Trajectory],
    config: ScoreConfig,
    *,
    judge_scores: Mapping[str, float] | None = None,
    judge_comparisons: Mapping[str, Sequence[Comparison]] | None = None,
    judge_source: str = "",
) -> ScoreResult:
    """Score every trajectory, compare within questions, fit strengths and combine."""
    judge_scores = judge_scores or {}
    judge_comparisons = judge_comparisons or {}
    groups: dict[str, list[Score]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    for t in trajectories:
        q = questions.get(t.qid)
        if q is None:
            skipped["question-missing"] += 1
            continue
        groups[t.qid].append(score_trajectory(t, q, config, judge=judge_scores.get(t.tid)))
    if skipped:
        log.warning("skipped %d trajectories whose question is missing", sum(skipped.values()))
    scores: list[Score] = []
    pairs: list[PreferencePair] = []
    comps: list[Comparison] = []
    agreements = []
    for qid in sorted(groups):
        group = sorted(groups[qid], key=lambda s: s.tid)
        judged = qid in judge_comparisons
        cs = list(judge_comparisons[qid]) if judged else rule_comparisons(group)
        st = strengths([s.tid for s in group], cs, prior=config.bt_prior)
        combined = (config.pointwise_share * zscore([s.pointwise for s in group])
                    + (1 - config.pointwise_share) * zscore([st[s.tid] for s in group]))
        scored = [replace(s, strength=round(st[s.tid], 6), combined=round(float(c), 6))
                  for s, c in zip(group, combined)]
        scores += scored
        pairs += preference_pairs(
            scored, pair_margin=config.pair_margin,
            source=judge_source if judged else "rules",
            max_pairs=config.max_pairs_per_question, require_correct=config.pairs_require_correct,
            min_gap=config.pair_min_gap,
        )
        comps += cs
        if len(group) > 1:
            agreements.append(agreement(cs, st))
    x = group_length(scores, config.length_measure)
    rewards = [s.combined for s in scores]
    before = pearson(rewards, x)
    corrected = not math.isnan(before) and abs(before) >= config.length_corr_threshold
    after, coef = before, 0.0
    if corrected:
        lc, coef = length_control(rewards, x, [float(s.correct) for s in scores],
                                  [s.efficiency for s in scores])
        after = pearson(lc, x)
        scores = [replace(s, length_controlled=round(float(v), 6)) for s, v in zip(scores, lc)]
        log.info("reward/length correlation %.3f >= %.3f: length-controlled (after: %.3f)",
                 before, config.length_corr_threshold, after)
    agree = [a for a in agreements if not math.isnan(a)]
    stats = {
        "trajectories": len(scores),
        "questions": len(groups),
        "skipped": dict(skipped),
        "comparisons": len(comps),
        "ties": sum(1 for c in comps if c.outcome == 0.5),
        "pairs": len(pairs),
        "bt_agreement": _nan_to_none(float(np.mean(agree))) if agree else None,
        "length_correlation": {
            "measure": f"pearson(combined, within-question z of log(1 + {config.length_measure}))",
            "length": config.length_measure,
            "threshold": config.length_corr_threshold,
            "before": _nan_to_none(before),
            "after": _nan_to_none(after),
            "corrected": corrected,
            "length_coefficient": round(coef, 6),
        },
    }
    return ScoreResult(scores=tuple(scores), pairs=tuple(pairs), comparisons=tuple(comps),
                       stats=stats)
