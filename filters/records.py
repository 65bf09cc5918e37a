"""Records produced by the filters stage: scores, preference pairs and filter decisions."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """Every reward component of one trajectory, kept apart so a trainer can re-weigh them."""

    tid: str
    qid: str
    exact_match: float = 0.0
    f1: float = 0.0
    judge: float | None = None  # model judge verdict in [0, 1], when a judge ran
    evidence_recall: float = 0.0  # share of gold documents opened
    answer_in_evidence: bool = False  # the answer is stated in what the trajectory read
    format: float = 0.0  # share of schema-valid turns
    efficiency: float = 0.0
    recovery: float = 0.0
    pointwise: float = 0.0  # weighted total of the components above
    turn_rewards: tuple[float, ...] = ()  # aligned with the trajectory's turns
    strength: float = 0.0  # Bradley-Terry strength within the question's group
    combined: float = 0.0  # normalized combination of point-wise and pair-wise
    length_controlled: float | None = None  # combined, corrected for length when needed
    correctness: float = 0.0  # the correctness component (EM / F1, blended with the judge)
    evidence: float = 0.0  # the evidence component (recall blended with answer_in_evidence)
    n_turns: int = 0  # trajectory length in turns (the length that length control uses)
    n_chars: int = 0  # characters the teacher wrote (thoughts and calls)
    correct: bool = False  # correctness reached ScoreConfig.correct_threshold

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["turn_rewards"] = list(self.turn_rewards)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Score:
        return cls(**{**row, "turn_rewards": tuple(row.get("turn_rewards") or ())})


@dataclass(frozen=True, slots=True, kw_only=True)
class PreferencePair:
    qid: str
    chosen: str  # tid
    rejected: str  # tid
    margin: float  # difference in combined reward (chosen minus rejected, always > 0)
    source: str = "rules"  # "rules" or "judge:MODEL"
    basis: str = "margin"  # "correctness" (correct against wrong) or "margin" (equally correct)

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> PreferencePair:
        return cls(**row)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The filter's verdict on one trajectory; every drop has a reason."""

    tid: str
    qid: str
    kept: bool
    weight: float = 1.0  # sample weight for kept records (down-weighting)
    reason: str = ""  # why it was dropped or down-weighted
    style_score: float = 0.0
    context_turns: tuple[int, ...] = ()  # turns kept as context only (not trained): style caps
    answer_trained: bool = True  # False: the final answer is context too (a "not found" given up)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["context_turns"] = list(self.context_turns)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Decision:
        return cls(**{**row, "context_turns": tuple(row.get("context_turns") or ())})
