"""Point-wise scores: one `Score` per trajectory, each component kept apart, plus turn rewards.

Every component lies in [0, 1]; the point-wise total is their weighted mean (weights in
`ScoreConfig`, formulas in its docstring). Turn rewards are one value per turn, aligned with the
trajectory's turns, so a trainer can use them for process-level credit assignment.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.tools import READ_TOOLS, is_final
from hopforge.filters.answers import gold_answers, grade_answer, mentions_answer, token_f1
from hopforge.filters.records import Score
from hopforge.synth.records import Question, Trajectory, Turn


class ScoreConfigError(HopforgeError, ValueError):
    """A `ScoreConfig` field is out of its allowed range."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreConfig:
    """Weights and formulas of the score stage (point-wise, pair-wise and combined).

    Point-wise components, each in [0, 1]:

    - correctness = em_weight * EM + (1 - em_weight) * F1, where EM and F1 compare the normalized
      final answer with the answer and its aliases (best match). With a judge verdict j in [0, 1]:
      correctness = (1 - judge_weight) * that + judge_weight * j.
    - evidence = recall_weight * recall + (1 - recall_weight) * [answer stated in what it read],
      recall = |gold docs opened with open/find without error| / |gold docs| (1 when no gold docs).
    - format = share of turns that are schema-valid and have valid arguments (0 without turns).
    - efficiency = clip(min(1, ideal / turns) - repeat_penalty * repeats / turns, 0, 1), where
      ideal = turns_per_doc * max(hops + 1, |gold docs|) + 1 (a search and an open per document,
      then the answer).
    - recovery = min(1, recovered turns / faulted turns), and no_fault_recovery when no fault met.

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

    weight_correctness: float = 0.5
    weight_evidence: float = 0.2
    weight_format: float = 0.1
    weight_efficiency: float = 0.1
    weight_recovery: float = 0.1
    em_weight: float = 0.5
    judge_weight: float = 0.5
    recall_weight: float = 0.75
    turns_per_doc: float = 2.0
    repeat_penalty: float = 0.5
    no_fault_recovery: float = 1.0
    reward_new_evidence: float = 0.5
    reward_recovery: float = 0.25
    penalty_invalid: float = 0.5
    penalty_repeat: float = 0.25
    correct_threshold: float = 0.8
    bt_prior: float = 0.1
    pointwise_share: float = 0.5
    length_corr_threshold: float = 0.3
    length_measure: Literal["chars", "turns"] = "chars"
    pair_margin: float = 0.5  # combined-reward gap an equally correct pair must exceed
    pair_min_gap: float = 0.1  # ... and the point-wise gap it must reach (combined is relative)
    max_pairs_per_question: int = 0  # 0: no limit
    pairs_require_correct: bool = True  # the chosen side of a preference pair must be correct
    rows_per_part: int = 1000
    judge_urls: tuple[str, ...] = ()  # OpenAI-compatible judge server(s); empty: rules only
    judge_model: str = ""
    judge_concurrency: int = 8

    def __post_init__(self) -> None:
        unit = ("em_weight", "judge_weight", "recall_weight", "no_fault_recovery",
                "correct_threshold", "pointwise_share", "length_corr_threshold")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type in ("bool", bool):
                if not isinstance(v, bool):
                    raise ScoreConfigError(f"ScoreConfig.{f.name} must be true or false, got {v!r}")
                continue
            if f.name in ("judge_urls", "judge_model"):
                continue
            if f.name == "length_measure":
                if v not in ("chars", "turns"):
                    raise ScoreConfigError(
                        f'ScoreConfig.length_measure={v!r} must be "chars" or "turns"')
                continue
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ScoreConfigError(f"ScoreConfig.{f.name} must be a number, got {v!r}")
            if v < 0:
                raise ScoreConfigError(f"ScoreConfig.{f.name}={v} must be >= 0")
            if f.name in unit and v > 1:
                raise ScoreConfigError(f"ScoreConfig.{f.name}={v} must lie in [0, 1]")
        if sum(self.weights().values()) <= 0:
            raise ScoreConfigError("ScoreConfig weights are all 0; give at least one weight > 0")
        if self.turns_per_doc <= 0:
            raise ScoreConfigError(f"ScoreConfig.turns_per_doc={self.turns_per_doc} must be > 0")
        if self.rows_per_part < 1:
            raise ScoreConfigError(f"ScoreConfig.rows_per_part={self.rows_per_part} must be >= 1")
        if self.judge_concurrency < 1:
            raise ScoreConfigError(
                f"ScoreConfig.judge_concurrency={self.judge_concurrency} must be >= 1")
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
    """Share of faults met that a later turn recovered from."""
    faults = sum(1 for t in traj.turns if t.fault is not None or t.error)
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
    f1 = token_f1(traj.final_answer, golds)
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
