"""Style caps on what a trainer reads: turns that carry an over-cap pattern become context only.

A trainer reads the trained turns of each row, unweighted (TRL ignores sample weights). After the
trajectory-level steps of the filter, a fingerprint pattern may still be carried by the trained
turns of more than `pattern_cap` of the kept trajectories. For each such pattern, the
worst-ranked carrier has the turns that carry it turned into context only (weight 0 in every
export layout), until the share is at the cap. A trajectory left with no trained turn is dropped
(`pattern-turns:PATTERN`), at most `pattern_cap_budget` of the kept ones; past that budget such a
carrier is skipped and the pattern may stay above the cap (the report shows it). A recovery turn
(a working call after a fault) and the final answer are never made context only: a carrier whose
recovery or answer carries the pattern is skipped the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hopforge.corpus.tools import is_final
from hopforge.filters.records import Score
from hopforge.filters.style import StyleConfig, turn_patterns
from hopforge.synth.annotate import sft_weight
from hopforge.synth.records import Question, Trajectory, Turn


def trained_turns(traj: Trajectory, score: Score | None) -> list[int]:
    """Positions of the turns an SFT row trains (see hopforge.synth.annotate.sft_weight)."""
    rewards = score.turn_rewards if score is not None else ()
    aligned = len(rewards) == len(traj.turns)
    return [i for i, t in enumerate(traj.turns)
            if sft_weight(t, rewards[i] if aligned else None)]


def trained_patterns(traj: Trajectory, question: str, turns: Sequence[int],
                     patterns: Sequence[str], config: StyleConfig) -> dict[int, set[str]]:
    """Turn position -> the patterns its own text carries, for the given turns."""
    return {i: turn_patterns(traj.turns[i], question, patterns, config) for i in turns}


def cap_turns(
    order: Sequence[str],
    trajectories: Mapping[str, Trajectory],
    questions: Mapping[str, Question],
    scores: Mapping[str, Score],
    patterns: Sequence[str],
    *,
    cap: float,
    budget: float,
    style: StyleConfig,
) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
    """(tid -> turns made context only, tid -> drop reason) for kept trajectories, best first."""
    if not patterns or cap >= 1.0:
        return {}, {}
    carried: dict[str, dict[int, set[str]]] = {}
    for tid in order:
        t = trajectories[tid]
        turns = trained_turns(t, scores.get(tid))
        carried[tid] = trained_patterns(t, _question(questions, t), turns, patterns, style)
    masked: dict[str, set[int]] = {tid: set() for tid in order}
    alive = list(order)
    dropped: dict[str, str] = {}
    allowed = math.floor(budget * len(order))

    def carries(tid: str, p: str) -> list[int]:
        return [i for i, ps in carried[tid].items() if p in ps and i not in masked[tid]]

    for _ in range(2):  # a drop shrinks the kept set, which can lift an earlier pattern again
        for p in patterns:
            carriers = [tid for tid in alive if carries(tid, p)]
            skipped: set[str] = set()
            while carriers and len(carriers) > cap * len(alive):
                pick = next((c for c in reversed(carriers) if c not in skipped), None)
                if pick is None:
                    break
                tid = pick
                if any(_kept_trained(trajectories[tid].turns[i]) for i in carries(tid, p)):
                    skipped.add(tid)  # a recovery or the answer stays trained: what the data
                    continue  # must teach
                left = set(carried[tid]) - masked[tid] - set(carries(tid, p))
                if not left and len(dropped) >= allowed:
                    skipped.add(tid)
                    continue
                masked[tid] |= set(carries(tid, p))
                carriers.remove(tid)
                if not left:
                    dropped[tid] = f"pattern-turns:{p}"
                    alive.remove(tid)
    context = {tid: tuple(sorted(trajectories[tid].turns[i].index for i in m))
               for tid, m in masked.items() if m and tid not in dropped}
    return context, dropped


def untrained(kept: Sequence[str], trajectories: Mapping[str, Trajectory],
              questions: Mapping[str, Question], scores: Mapping[str, Score],
              patterns: Sequence[str], *, style: StyleConfig) -> dict[str, tuple[int, ...]]:
    """tid -> the trained turns (by `Turn.index`) that carry one of `patterns`, which no
    trainer may learn (a recovery too: other runs teach the recovery without the habit)."""
    out: dict[str, tuple[int, ...]] = {}
    for tid in kept:
        t = trajectories[tid]
        turns = trained_turns(t, scores.get(tid))
        found = trained_patterns(t, _question(questions, t), turns, patterns, style)
        hits = tuple(t.turns[i].index for i, ps in found.items() if ps)
        if hits:
            out[tid] = hits
    return out


def _kept_trained(turn: Turn) -> bool:
    """A turn no style cap makes context: a recovery (a working call after a fault) or the final
    answer (without it a row never shows how a search ends)."""
    return turn.label == "recovery" or (turn.call is not None and is_final(turn.call.name))


def trained_share(kept: Sequence[str], trajectories: Mapping[str, Trajectory],
                  questions: Mapping[str, Question], scores: Mapping[str, Score],
                  patterns: Sequence[str], context: Mapping[str, Sequence[int]],
                  style: StyleConfig) -> dict[str, float]:
    """Pattern -> share of kept trajectories whose trained turns (after `context`) carry it."""
    counts = dict.fromkeys(patterns, 0)
    for tid in kept:
        t = trajectories[tid]
        off = set(context.get(tid, ()))
        turns = [i for i in trained_turns(t, scores.get(tid)) if t.turns[i].index not in off]
        found: set[str] = set()
        for ps in trained_patterns(t, _question(questions, t), turns, patterns, style).values():
            found |= ps
        for p in found:
            counts[p] += 1
    n = max(1, len(kept))
    return {p: round(c / n, 4) for p, c in counts.items()}


def _question(questions: Mapping[str, Question], traj: Trajectory) -> str:
    q = questions.get(traj.qid)
    return q.question if q is not None else ""
