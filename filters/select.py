"""The style-bias filter: one `Decision` per trajectory, every drop with a reason.

Steps, in order (a trajectory leaves at the first step that drops it):

1. validity: its question is known and accepted; it did not fail (end in `error` or without an
   answer, unless `keep_failed`); it has a score; it makes at least `min_tool_calls` tool calls
   and at least `min_useful_share` of its turns are labelled progress or recovery (see
   hopforge.synth.annotate); it is correct (`require_correct`, on by default) and its
   point-wise total reaches `min_pointwise`;
2. near-duplicate questions (embedding cosine >= dedup_questions) and near-duplicate trajectories
   (MinHash Jaccard >= dedup_trajectories); the better-ranked one is kept;
3. style: score >= threshold is dropped; score in [downweight_from, threshold) is kept with weight
   1 - (1 - min_weight) * (score - downweight_from) / (threshold - downweight_from);
4. pattern caps: while a fingerprint pattern (opener, phrase, query habit) is carried by more
   than `pattern_cap` of the remaining trajectories, remove the trajectory that carries the most
   excess (see `cap_patterns`), spending at most `pattern_cap_budget` of the trajectories that
   reach this step; a pattern nearly every trajectory carries cannot be brought down by selection
   and stays in the report;
5. balance: for hop count (chains only), question kind and teacher in turn, no value keeps more than
   ceil(balance_ratio * size of the smallest value with at least
   max(balance_min_group, balance_min_share * trajectories) trajectories), so a rare value (a kind
   the corpus seldom yields) is kept whole without shrinking every other group to its size;
6. pattern turns (`pattern_turns`): the caps hold on what a trainer reads, unweighted: turns
   whose own text carries a pattern still above the cap in the trained turns of the kept
   trajectories become context only, worst-ranked trajectories first (see filters/turn_caps.py);
   a pattern of `never_trained` (the search that pastes the whole question) is context only
   wherever it is carried;
7. pattern weights (`pattern_weights`, off by default; trainers such as TRL ignore sample
   weights): a pattern left above the cap is capped in the weighted set instead: its
   carriers' weights are scaled down until its weighted share is at most `pattern_cap`, never
   below `min_weight` (see `cap_weights`).

"Best first" means: higher point-wise total, then higher combined reward, then lower style score.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import SETTINGS, amount, share
from hopforge.corpus.tools import is_final
from hopforge.filters.dedup import Embedder, near_duplicate_questions, near_duplicate_trajectories
from hopforge.filters.records import Decision, Score
from hopforge.filters.style import (
    COPY_PATTERN,
    Features,
    StyleConfig,
    StyleProfile,
    TrajectoryStyle,
    extract,
    fit_style,
    trajectory_style,
)
from hopforge.filters.turn_caps import cap_turns, untrained
from hopforge.synth.annotate import label_trajectory, tool_calls, useful_share
from hopforge.synth.records import Question, Trajectory
from pydantic import Field

BALANCE_KEYS = ("hops", "kind", "teacher")


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class FilterConfig:
    """Thresholds of the filter (see the module docstring for what each one does)."""

    style: StyleConfig = Field(default_factory=StyleConfig, description=(
        "the style score: the teacher's habits and the weights of its parts"))
    threshold: float = share(0.75, "step 3: style score from which a trajectory is dropped")
    downweight_from: float = share(0.5, "step 3: style score from which it is down-weighted")
    min_weight: float = share(0.25, "step 3: the lowest weight a kept trajectory gets")
    pattern_cap: float = share(0.3, "step 4: the most trajectories one style pattern may mark")
    pattern_cap_budget: float = share(
        0.25, "step 4: the most of the trajectories reaching it that the caps may remove")
    pattern_turns: bool = Field(default=True, strict=True, description=(
        "step 6: turns carrying a pattern still over the cap become context only"))
    never_trained: tuple[str, ...] = Field(default=(COPY_PATTERN,), description=(
        "step 6: patterns no trained turn carries: every turn with one is context only (a "
        "search that pastes the whole question: the agent prompt asks for keyword queries)"))
    pattern_weights: bool = Field(default=False, strict=True, description=(
        "step 7: down-weight the carriers of what is still over the cap"))
    balance_ratio: float = amount(3.0, "step 5: the largest group over the smallest (0: off)")
    balance_min_group: int = amount(5, "step 5: the smallest group that sets the cap")
    balance_min_share: float = share(0.1, "step 5: values rarer than this share set no cap")
    balance_keys: tuple[str, ...] = Field(default=BALANCE_KEYS, description="step 5: what is balanced")
    dedup_trajectories: float = share(
        0.8, "step 2: MinHash Jaccard of near-duplicate trajectories (0: off)")
    dedup_questions: float = share(
        0.95, "step 2: embedding cosine of near-duplicate questions (0: off)")
    require_correct: bool = Field(default=True, strict=True, description=(
        "step 1: keep only correct trajectories (a wrong run's steps are no lesson; its "
        "preference pairs still use it)"))
    min_pointwise: float = share(0.0, "step 1: the lowest point-wise total kept")
    min_tool_calls: int = amount(2, "step 1: fewer parsed tool calls (the answer included) drop "
                                 "a trajectory", most=100_000)
    min_useful_share: float = share(
        0.2, "step 1: a smaller share of progress and recovery turns drops a trajectory")
    keep_failed: bool = Field(default=False, strict=True, description=(
        "step 1: keep trajectories that ended in error or without an answer"))
    rows_per_part: int = Field(default=1000, ge=1, description="rows per output part")

    def __post_init__(self) -> None:
        if self.downweight_from > self.threshold:
            raise HopforgeError(
                f"FilterConfig.downweight_from={self.downweight_from} must not exceed "
                f"threshold={self.threshold}; lower it or raise --threshold")
        bad = set(self.balance_keys) - set(BALANCE_KEYS)
        if bad:
            raise HopforgeError(f"FilterConfig.balance_keys has {sorted(bad)}; use {BALANCE_KEYS}")


def style_weight(score: float, config: FilterConfig) -> float:
    """Sample weight for a kept trajectory with this style score."""
    if score < config.downweight_from or config.threshold <= config.downweight_from:
        return 1.0
    frac = (score - config.downweight_from) / (config.threshold - config.downweight_from)
    return round(1.0 - (1.0 - config.min_weight) * min(1.0, frac), 6)


def failure(traj: Trajectory) -> str:
    """Why a trajectory failed (it ended in error, or without an answer), or "" when it did not."""
    if traj.termination == "error":
        return "failed:error"
    if not traj.final_answer.strip():
        return f"no-answer:{traj.termination}"
    return ""


def validity(traj: Trajectory, question: Question | None, score: Score | None,
             config: FilterConfig) -> str:
    """Why a trajectory cannot be kept at all, or "" when it can (its turns labelled)."""
    if question is None:
        return "question-missing"
    if question.rejected:
        return f"question-rejected:{question.rejected}"
    failed = failure(traj)
    if failed and not config.keep_failed:
        return failed
    if score is None:
        return "unscored"
    calls = tool_calls(traj)
    if calls < config.min_tool_calls:
        return f"few-tool-calls:{calls}<{config.min_tool_calls}"
    share = useful_share(traj)
    if share < config.min_useful_share:
        return f"low-useful-share:{share:.3f}<{config.min_useful_share}"
    if config.require_correct and not score.correct:
        return "incorrect"
    if score.pointwise < config.min_pointwise:
        return f"low-reward:{score.pointwise:.3f}<{config.min_pointwise}"
    return ""


def priority(score: Score, style: TrajectoryStyle | None) -> tuple[float, float, float]:
    """Sort key: best trajectories first."""
    return (-score.pointwise, -score.combined, style.score if style else 0.0)


def cap_patterns(
    order: Sequence[str], styles: Mapping[str, TrajectoryStyle], config: FilterConfig
) -> dict[str, str]:
    """tid -> "pattern-cap:PATTERN" for trajectories removed to bring patterns under the cap.

    Greedy: while some pattern is carried by more than `pattern_cap` of the remaining
    trajectories and the budget (pattern_cap_budget of them) lasts, remove the trajectory with
    the largest total excess sum(share_p - cap) over the over-cap patterns it carries (the worst
    ranked one among equals). The reason names its most over-represented pattern.
    """
    n0 = len(order)
    pats = sorted({p for tid in order if tid in styles for p in styles[tid].patterns})
    budget = math.floor(config.pattern_cap_budget * n0)
    if not pats or budget == 0:
        return {}
    col = {p: j for j, p in enumerate(pats)}
    carried = np.zeros((n0, len(pats)), dtype=np.float64)
    for i, tid in enumerate(order):
        for p in styles[tid].patterns if tid in styles else ():
            carried[i, col[p]] = 1.0
    alive = np.ones(n0, dtype=bool)
    counts = carried.sum(0)
    rank = np.arange(n0)
    dropped: dict[str, str] = {}
    while len(dropped) < budget:
        share = counts / alive.sum()
        excess = np.where(share > config.pattern_cap, share - config.pattern_cap, 0.0)
        if not excess.any():
            break
        gain = np.where(alive, carried @ excess, -1.0)
        best = gain.max()
        if best <= 0:
            break
        i = int(rank[gain >= best - 1e-12].max())
        worst = max((p for p in pats if carried[i, col[p]]), key=lambda p: excess[col[p]])
        dropped[order[i]] = f"pattern-cap:{worst}"
        alive[i] = False
        counts -= carried[i]
    return dropped


def cap_weights(
    kept: Sequence[str], styles: Mapping[str, TrajectoryStyle], weights: Mapping[str, float],
    config: FilterConfig, *, rounds: int = 20,
) -> dict[str, tuple[float, str]]:
    """tid -> (weight, PATTERN) for kept trajectories down-weighted to cap weighted pattern shares.

    One pass: for each pattern whose weighted share s_p = W_p / W exceeds the cap c, the factor
    f_p = c (W - W_p) / ((1 - c) W_p) would bring it alone to the cap; each kept trajectory's
    weight is multiplied by the smallest f_p of the patterns it carries, but never goes below
    `min_weight`. Passes repeat while they lower the largest weighted share of a pattern (a pass
    that does not is undone), so habits that pull against each other cannot drive every weight
    to the floor. A pattern every kept trajectory carries is left alone (no weighting changes
    its share). PATTERN is the pattern whose factor lowered the weight most.
    """
    cap = config.pattern_cap
    pats = sorted({p for tid in kept if tid in styles for p in styles[tid].patterns})
    if not pats or cap >= 1.0:
        return {}
    col = {p: j for j, p in enumerate(pats)}
    carried = np.zeros((len(kept), len(pats)), dtype=bool)
    for i, tid in enumerate(kept):
        for p in styles[tid].patterns if tid in styles else ():
            carried[i, col[p]] = True
    movable = ~carried.all(0)  # patterns some kept trajectory does not carry
    if not movable.any():
        return {}
    w0 = np.array([weights[tid] for tid in kept], dtype=np.float64)
    floor = np.minimum(w0, config.min_weight)
    w = w0.copy()
    cut = np.ones(len(kept))  # the smallest factor applied to each trajectory ...
    why = np.zeros(len(kept), dtype=np.int64)  # ... and the pattern it came from

    def top_share(v: np.ndarray) -> float:
        return float(((v @ carried[:, movable]) / v.sum()).max())

    for _ in range(rounds):
        wp = w @ carried
        rest = w.sum() - wp
        over = movable & (wp > 0) & (wp / w.sum() > cap + 1e-9)
        if not over.any():
            break
        f = np.ones(len(pats))
        f[over] = cap * rest[over] / ((1.0 - cap) * wp[over])
        per = np.where(carried & over, f, np.inf)  # factor of each carried over-cap pattern
        j = per.argmin(1)
        factor = np.minimum(per[np.arange(len(kept)), j], 1.0)
        new = np.maximum(w * factor, floor)
        if top_share(new) >= top_share(w) - 1e-9:
            break
        ratio = new / w0
        lower = ratio < cut - 1e-12
        cut[lower] = ratio[lower]
        why[lower] = j[lower]
        w = new
    return {kept[i]: (round(float(w[i]), 6), pats[why[i]])
            for i in range(len(kept)) if w[i] < w0[i] - 1e-9}


def balance(
    order: Sequence[str], key: Callable[[str], str | None], name: str, config: FilterConfig
) -> dict[str, str]:
    """tid -> "balance:NAME=VALUE" for the worst members of over-full groups (key None: none)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for tid in order:
        value = key(tid)
        if value is not None:
            groups[value].append(tid)
    floor = max(config.balance_min_group, config.balance_min_share * len(order))
    sizes = [len(g) for g in groups.values() if len(g) >= floor]
    if config.balance_ratio <= 0 or len(sizes) < 2:
        return {}
    cap = math.ceil(config.balance_ratio * min(sizes))
    return {tid: f"balance:{name}={value}"
            for value, g in groups.items() for tid in g[cap:]}


def select(
    trajectories: Sequence[Trajectory],
    questions: Mapping[str, Question],
    scores: Mapping[str, Score],
    styles: Mapping[str, TrajectoryStyle],
    config: FilterConfig,
    *,
    question_duplicates: Mapping[str, str] | None = None,
    trajectory_duplicates: Mapping[str, str] | None = None,
    unsettled: Mapping[str, str] | None = None,
) -> list[Decision]:
    """Decide keep / drop / down-weight for every trajectory (in input order).

    `unsettled`: tid -> why its final answer is not a conclusion the run reached (a "not found"
    given before every candidate its pages showed was ruled out); such a kept run's answer turn
    is context only, never trained."""
    qdup = question_duplicates or {}
    tdup = trajectory_duplicates or {}
    by_tid = {t.tid: t for t in trajectories}
    reason: dict[str, str] = {}
    for t in trajectories:
        why = validity(t, questions.get(t.qid), scores.get(t.tid), config)
        if not why and t.qid in qdup:
            why = f"near-duplicate-question:{qdup[t.qid]}"
        if not why and t.tid in tdup:
            why = f"near-duplicate:{tdup[t.tid]}"
        st = styles.get(t.tid)
        if not why and st is not None and st.score >= config.threshold:
            why = f"style:{st.score:.3f}>={config.threshold}"
        if why:
            reason[t.tid] = why
    order = sorted((t.tid for t in trajectories if t.tid not in reason),
                   key=lambda tid: (*priority(scores[tid], styles.get(tid)), tid))
    reason.update(cap_patterns(order, styles, config))
    keys: dict[str, Callable[[str], str | None]] = {
        # hop count balances chains against chains; other families have no hops (the kind
        # balances them), and a ladder's long aggregations must not be cut as "hops=0"
        "hops": lambda tid: (str(questions[by_tid[tid].qid].n_hops)
                             if questions[by_tid[tid].qid].kind == "chain" else None),
        "kind": lambda tid: questions[by_tid[tid].qid].kind,
        "teacher": lambda tid: by_tid[tid].teacher,
    }
    for name in config.balance_keys:
        order = [tid for tid in order if tid not in reason]
        reason.update(balance(order, keys[name], name, config))
    kept = [tid for tid in order if tid not in reason]
    context: dict[str, tuple[int, ...]] = {}
    if config.pattern_turns:
        carried = Counter(p for tid in kept if tid in styles for p in styles[tid].patterns)
        pats = sorted(carried, key=lambda p: (-carried[p], p))
        context, capped_out = cap_turns(kept, by_tid, questions, scores, pats,
                                        cap=config.pattern_cap, budget=config.pattern_cap_budget,
                                        style=config.style)
        reason.update(capped_out)
        kept = [tid for tid in kept if tid not in capped_out]
    if config.never_trained:
        banned = untrained(kept, by_tid, questions, scores, config.never_trained,
                           style=config.style)
        context = {tid: tuple(sorted({*context.get(tid, ()), *banned.get(tid, ())}))
                   for tid in {*context, *banned}}
    weights = {tid: style_weight(styles[tid].score if tid in styles else 0.0, config)
               for tid in kept}
    capped = cap_weights(kept, styles, weights, config) if config.pattern_weights else {}
    out = []
    for t in trajectories:
        st = styles.get(t.tid)
        s = st.score if st else 0.0
        if t.tid in reason:
            out.append(Decision(tid=t.tid, qid=t.qid, kept=False, weight=0.0,
                                reason=reason[t.tid], style_score=s))
            continue
        w = weights[t.tid]
        notes = [f"style={s:.3f}"] if w < 1.0 else []
        if t.tid in capped:
            w, pattern = capped[t.tid]
            notes.append(f"pattern-cap={pattern}")
        why = f"down-weighted:{';'.join(notes)}" if notes else ""
        turns = context.get(t.tid, ())
        given_up = (unsettled or {}).get(t.tid, "")
        if given_up:
            final = [x.index for x in t.turns if x.call and is_final(x.call.name)]
            turns = tuple(sorted({*turns, *final}))
            why = ";".join(filter(None, [why, f"answer-context:{given_up}"]))
        out.append(Decision(tid=t.tid, qid=t.qid, kept=True, weight=w, style_score=s,
                            reason=why, context_turns=turns, answer_trained=not given_up))
    return out


def reason_counts(decisions: Sequence[Decision]) -> dict[str, int]:
    """How many decisions carry each kind of reason (the part before the first colon)."""
    c = Counter(d.reason.split(":", 1)[0] if d.reason else "kept" for d in decisions)
    return dict(sorted(c.items()))


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterResult:
    """Decisions plus everything the report needs to explain them."""

    decisions: tuple[Decision, ...]
    profile: StyleProfile
    features: Mapping[str, Features]
    styles: Mapping[str, TrajectoryStyle]
    question_duplicates: Mapping[str, str]
    trajectory_duplicates: Mapping[str, str]
    labelled: tuple[Trajectory, ...] = ()  # the trajectories with their turns labelled


def filter_trajectories(
    trajectories: Sequence[Trajectory],
    questions: Mapping[str, Question],
    scores: Mapping[str, Score],
    reference_texts: Iterable[str],
    config: FilterConfig,
    *,
    embedder: Embedder | None = None,
    unsettled: Mapping[str, str] | None = None,
) -> FilterResult:
    """Fit the style profile, find near-duplicates and decide on every trajectory (`unsettled`:
    answers that are context only, see `select`).

    Turns are labelled anew first (see hopforge.synth.annotate.label_trajectory).
    """
    trajectories = [label_trajectory(t, questions.get(t.qid)) for t in trajectories]
    valid = [t for t in trajectories
             if not validity(t, questions.get(t.qid), scores.get(t.tid), config)]
    feats = {t.tid: extract(t, questions[t.qid].question, config.style) for t in valid}
    profile = fit_style(list(feats.values()), reference_texts, config.style)
    styles = {tid: trajectory_style(f, profile, config.style) for tid, f in feats.items()}
    qdup: dict[str, str] = {}
    if embedder is not None and config.dedup_questions > 0:
        qs = [questions[qid] for qid in sorted({t.qid for t in valid})]
        qdup = near_duplicate_questions(qs, embedder, threshold=config.dedup_questions)
    tdup: dict[str, str] = {}
    if config.dedup_trajectories > 0:
        ranked = sorted(valid, key=lambda t: (*priority(scores[t.tid], styles[t.tid]), t.tid))
        tdup = near_duplicate_trajectories(ranked, threshold=config.dedup_trajectories)
    decisions = select(trajectories, questions, scores, styles, config,
                       question_duplicates=qdup, trajectory_duplicates=tdup, unsettled=unsettled)
    return FilterResult(decisions=tuple(decisions), profile=profile, features=feats,
                        styles=styles, question_duplicates=qdup, trajectory_duplicates=tdup,
                        labelled=tuple(trajectories))
