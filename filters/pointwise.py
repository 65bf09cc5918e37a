"""Point-wise scores: one `Score` per trajectory, each component kept apart, plus turn rewards.

Every component lies in [0, 1]; the point-wise total is their weighted mean (weights in
`ScoreConfig`, formulas in its docstring). Turn rewards are one value per turn, aligned with the
trajectory's turns, so a trainer can use them for process-level credit assignment.
"""

from __future__ import annotations

from typing import Literal

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import OPERATIONAL, SETTINGS, amount, share
from hopforge.corpus.tools import READ_TOOLS, is_final
from hopforge.filters.answers import (
    answer_type,
    gold_answers,
    grade_answer,
    mentions_answer,
    token_f1,
)
from hopforge.filters.records import Score
from hopforge.synth.records import Question, Trajectory, Turn
from pydantic import Field
from pydantic.dataclasses import dataclass


class ScoreConfigError(HopforgeError, ValueError):
    """A `ScoreConfig` field is out of its allowed range."""


@dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class ScoreConfig:
    """Weights and formulas of the score stage (point-wise, pair-wise and combined).

    Point-wise components, each in [0, 1]:

    - correctness = em_weight * EM + (1 - em_weight) * F1, where EM and F1 compare the normalized
      final answer with the answer and its aliases (best match; on a question with no answer F1
      is EM: a stop has no tokens to overlap). With a judge verdict j in [0, 1]:
      correctness = (1 - judge_weight) * that + judge_weight * j.
    - evidence = recall_weight * recall + (1 - recall_weight) * [answer stated in what it read],
      recall = |gold docs opened with open/find without error| / |gold docs| (1 when no gold docs).
    - format = share of turns that are schema-valid and have valid arguments (0 without turns).
    - efficiency = clip(min(1, ideal / turns) - repeat_penalty * repeats / turns, 0, 1), where
      ideal = turns_per_doc * max(hops + 1, |gold docs|) + 1 (a search and an open per document,
      then the answer).
    - recovery = min(1, recovered turns / faulted turns), and no_fault_recovery when no fault met
      (a result in another layout is no fault to recover from: all of it is there).

    pointwise = sum(w_c * component) / sum(w_c) over the five weights below.

    Turn rewards: reward_new_evidence * (gold docs first seen in the turn)
    + reward_recovery * [turn recovered] - penalty_invalid * [invalid call]
    - penalty_repeat * [turn repeats an earlier call].

    Pair-wise and combined (see filters/pairwise.py and filters/combine.py): a trajectory is
    "correct" when correctness >= correct_threshold; Bradley-Terry strengths use a prior of
    bt_prior virtual half-won games per trajectory; combined = pointwise_share * z(pointwise)
    + (1 - pointwise_share) * z(strength) within each question; length control runs when
    |corr(combined, length)| >= length_corr_threshold, length being what the teacher wrote
    (length_measure: characters or turns); a preference pair is a correct trajectory against a
    wrong one, or two equally correct ones whose combined rewards differ by more than
    pair_margin with point-wise totals at least pair_min_gap apart; the chosen side has the
    higher combined reward (and, with pairs_require_correct, is correct).

    Judge: with judge_urls and judge_model, a model judge (see filters/judge.py) gives the
    point-wise verdict j and replaces the rule comparator for pairs. Prefer a judge from another
    model family than the teacher.
    """

    weight_correctness: float = amount(0.5, "point-wise weight of correctness")
    weight_evidence: float = amount(0.2, "point-wise weight of evidence")
    weight_format: float = amount(0.1, "point-wise weight of format")
    weight_efficiency: float = amount(0.1, "point-wise weight of efficiency")
    weight_recovery: float = amount(0.1, "point-wise weight of recovery")
    em_weight: float = share(0.5, "correctness: the weight of exact match against F1")
    judge_weight: float = share(0.5, "correctness: the weight of the judge's verdict")
    recall_weight: float = share(0.75, "evidence: the weight of gold-document recall")
    turns_per_doc: float = Field(default=2.0, gt=0.0, description=(
        "efficiency: the ideal turns per gold document (a search and an open)"))
    repeat_penalty: float = amount(0.5, "efficiency: the penalty per repeated call")
    no_fault_recovery: float = share(1.0, "recovery of a run that met no fault")
    reward_new_evidence: float = amount(0.5, "turn reward per gold document first seen")
    reward_recovery: float = amount(0.25, "turn reward for recovering from a fault")
    penalty_invalid: float = amount(0.5, "turn penalty for an invalid call")
    penalty_repeat: float = amount(0.25, "turn penalty for repeating an earlier call")
    correct_threshold: float = share(0.8, "correctness at which a trajectory counts as correct")
    bt_prior: float = amount(0.1, "Bradley-Terry prior: virtual half-won games per trajectory")
    pointwise_share: float = share(0.5, "combined: the weight of the point-wise z-score")
    length_corr_threshold: float = share(
        0.3, "|corr(combined, length)| from which length control runs")
    length_measure: Literal["chars", "turns"] = Field(default="chars", description=(
        "length control's length: characters the teacher wrote, or turns"))
    pair_margin: float = amount(0.5, "combined-reward gap an equally correct pair must exceed")
    pair_min_gap: float = amount(
        0.1, "... and the point-wise gap it must reach (combined is relative)")
    max_pairs_per_question: int = amount(0, "preference pairs per question (0: no limit)")
    pairs_require_correct: bool = Field(default=True, strict=True, description=(
        "the chosen side of a preference pair must be correct"))
    rows_per_part: int = Field(default=1000, ge=1, description="rows per output part")
    judge_urls: tuple[str, ...] = Field(default=(), json_schema_extra=OPERATIONAL,
        description=(
        "OpenAI-compatible judge server(s); empty: rules only"))
    judge_model: str = Field(default="", description="the judge model's name")
    judge_concurrency: int = Field(default=8, json_schema_extra=OPERATIONAL,
        ge=1, description="judge requests in flight")

    def __post_init__(self) -> None:
        if sum(self.weights().values()) <= 0:
            raise ScoreConfigError("ScoreConfig weights are all 0; give at least one weight > 0")
        if self.judge_urls and not self.judge_model:
            raise ScoreConfigError(
                "ScoreConfig.judge_urls is set but judge_model is empty; name the judge model "
                "(--judge-model or HOPFORGE_JUDGE_MODEL)")
        for url in self.judge_urls:
            if not url.startswith(("http://", "https://")):
                raise ScoreConfigError(
                    f"ScoreConfig.judge_urls has {url!r}; use http(s) base URLs such as "
                    "http://127.0.0.1:8000/v1")

    def weights(self) -> dict[str, float]:
        """The point-wise component weights by component name."""
        return {
            "correctness": self.weight_correctness,
            "evidence": self.weight_evidence,
            "format": self.weight_format,
            "efficiency": self.weight_efficiency,
            "recovery": self.weight_recovery,
        }


def gold_docs(question: Question) -> tuple[str, ...]:
    """The question's gold documents: its evidence ids, else its answer document."""
    if question.evidence:
        return question.evidence
    return (question.answer_doc,) if question.answer_doc else ()


def _failed(turn: Turn) -> bool:
    return bool(turn.error) or (turn.fault is not None and turn.fault.kind in ("empty", "timeout"))


def opened_docs(traj: Trajectory) -> set[str]:
    """Documents the trajectory read with open/find calls that did not fail."""
    out: set[str] = set()
    for t in traj.turns:
        if t.call is not None and t.call.name in READ_TOOLS and not _failed(t):
            doc = t.call.arguments.get("doc_id")
            if isinstance(doc, str):
                out.add(doc)
    return out


def read_text(traj: Trajectory) -> str:
    """Every tool result the trajectory saw, except the echo of its own answer."""
    return "\n".join(
        t.result for t in traj.turns
        if t.call is not None and not is_final(t.call.name) and not _failed(t)
    )


def is_valid(turn: Turn) -> bool:
    return turn.schema_valid and turn.args_valid and turn.call is not None


def teacher_chars(traj: Trajectory) -> int:
    """Characters the teacher wrote: thoughts plus raw assistant messages."""
    return sum(len(t.thought) + len(t.raw) for t in traj.turns)


def correctness(em: float, f1: float, judge: float | None, config: ScoreConfig) -> float:
    """The correctness component from EM, F1 and an optional judge verdict."""
    base = config.em_weight * em + (1 - config.em_weight) * f1
    if judge is None:
        return base
    return (1 - config.judge_weight) * base + config.judge_weight * judge


def efficiency(traj: Trajectory, question: Question, config: ScoreConfig) -> float:
    """Turns used against the ideal for the hop count, with repeats penalized."""
    n = len(traj.turns)
    if n == 0:
        return 0.0
    docs = max(question.n_hops + 1, len(gold_docs(question)))
    ideal = config.turns_per_doc * docs + 1
    repeats = sum(1 for t in traj.turns if t.repeat_of is not None)
    value = min(1.0, ideal / n) - config.repeat_penalty * repeats / n
    return min(1.0, max(0.0, value))


def recovery(traj: Trajectory, config: ScoreConfig) -> float:
    """Share of faults met that a later turn recovered from (a result in another layout lost
    nothing, and reading it as it is needs no second call)."""
    faults = sum(1 for t in traj.turns
                 if (t.fault is not None and t.fault.kind != "format") or t.error)
    if faults == 0:
        return config.no_fault_recovery
    return min(1.0, sum(1 for t in traj.turns if t.recovered) / faults)


def turn_rewards(traj: Trajectory, config: ScoreConfig) -> tuple[float, ...]:
    """One reward per turn: new evidence +, recovery +, invalid call -, repeat -."""
    out = []
    for t in traj.turns:
        r = config.reward_new_evidence * len(t.new_evidence)
        if t.recovered:
            r += config.reward_recovery
        if not is_valid(t):
            r -= config.penalty_invalid
        if t.repeat_of is not None:
            r -= config.penalty_repeat
        out.append(round(r, 6))
    return tuple(out)


def score_trajectory(
    traj: Trajectory, question: Question, config: ScoreConfig, *, judge: float | None = None
) -> Score:
    """Every point-wise component of one trajectory, and their weighted total."""
    golds = gold_answers(question.answer, question.answer_aliases)
    em = grade_answer(traj.final_answer, question)  # the RL reward: lists as sets, "not found"
    # a stop for lack of evidence has no tokens to overlap: "none of them" is as right as "none"
    f1 = em if answer_type(question) == "not_found" else token_f1(traj.final_answer, golds)
    corr = correctness(em, f1, judge, config)
    gold = set(gold_docs(question))
    recall = len(gold & opened_docs(traj)) / len(gold) if gold else 1.0
    in_evidence = mentions_answer(read_text(traj), golds)
    evid = config.recall_weight * recall + (1 - config.recall_weight) * float(in_evidence)
    n = len(traj.turns)
    fmt = sum(1 for t in traj.turns if is_valid(t)) / n if n else 0.0
    eff = efficiency(traj, question, config)
    rec = recovery(traj, config)
    parts = {"correctness": corr, "evidence": evid, "format": fmt, "efficiency": eff,
             "recovery": rec}
    w = config.weights()
    total = sum(w[k] * parts[k] for k in w) / sum(w.values())
    return Score(
        tid=traj.tid,
        qid=traj.qid,
        exact_match=em,
        f1=round(f1, 6),
        judge=judge,
        evidence_recall=round(recall, 6),
        answer_in_evidence=in_evidence,
        format=round(fmt, 6),
        efficiency=round(eff, 6),
        recovery=round(rec, 6),
        pointwise=round(total, 6),
        turn_rewards=turn_rewards(traj, config),
        correctness=round(corr, 6),
        evidence=round(evid, 6),
        n_turns=n,
        n_chars=teacher_chars(traj),
        correct=corr >= config.correct_threshold,
    )
