"""Records of the export stage: its config, the shards it writes and what it left out.

`FORMATS` and `KINDS` (the layouts each format writes) come from the layout list,
hopforge.export.layouts.registry.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import SETTINGS
from hopforge.export.layouts.registry import DEFAULT_FORMATS, FORMATS, KINDS, layouts_of
from hopforge.export.splits import SPLITS
from hopforge.export.windows import Window
from hopforge.filters.records import Decision, Score
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.trajectories.context import ReasoningMode
from pydantic import Field

__all__ = ["FORMATS", "KINDS", "SPLITS", "Contamination", "Distributions", "EvalItem", "Example",
           "ExportConfig", "ExportResult", "Rejected", "ShardInfo"]

SCHEMA_VERSION = 1


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class ExportConfig:
    """How to export a build; validated on construction."""

    formats: tuple[str, ...] = Field(default=DEFAULT_FORMATS, description=(
        f"the formats to write, one or more of {', '.join(FORMATS)}"))
    shard_records: int = Field(default=10_000, ge=1, description="most records in one shard")
    shard_bytes: int = Field(default=128 * 2**20, ge=1024, description=(
        "most bytes of JSON lines in one shard (before compression)"))
    parquet: bool = Field(default=False, description="write Parquet shards instead of JSONL")
    zstd: bool = Field(default=False, description="compress JSONL shards with zstd (.jsonl.zst)")
    validation_fraction: float = Field(default=0.05, ge=0.0, lt=1.0, description=(
        "share of evidence chains put in the validation split"))
    seed: int = Field(default=0, description="random seed of the split")
    decontaminate: tuple[str, ...] = Field(default=(), description=(
        "evaluation-set files to decontaminate against"))
    decontam_n: int = Field(default=8, ge=1, description="question n-gram size")
    answer_context_n: int = Field(default=3, ge=1, description=(
        "n-gram size of the question overlap required with a same answer"))
    data_source: str = Field(default="hopforge", description="verl `data_source`")
    ability: str = Field(default="search", description="verl `ability`")
    dataset_name: str = Field(default="hopforge", description=(
        "name used in dataset_info.json and the dataset card"))
    allow_unfiltered: bool = Field(default=False, description=(
        "export every trajectory when the filter stage has not run"))
    tools: tuple[dict[str, Any], ...] = Field(default=(), description=(
        "tool schemas; empty: found from the build"))
    licence: str = Field(default="", description="licence of the corpus; empty: found from the build")
    max_seq_tokens: int = Field(default=32_768, ge=256, le=10_000_000, description=(
        "longest SFT row in tokens; longer trajectories are cut into windows"))
    tokenizer: str = Field(default="", description=(
        "tokenizer (name or folder, loaded offline) that counts row tokens"))
    reasoning: ReasoningMode = Field(default="keep", description=(
        "which assistant messages keep their reasoning: keep (every one), last (only the "
        "trained last one) or drop"))

    def __post_init__(self) -> None:
        unknown = [f for f in self.formats if f not in FORMATS]
        if unknown or not self.formats:
            raise HopforgeError(
                f"export formats {list(self.formats)!r} are not valid: choose one or more of "
                f"{', '.join(FORMATS)} (e.g. --formats sft,rl)"
            )
        needy = [lay.name for lay in layouts_of(self.formats) if lay.needs_tokenizer]
        if needy and not self.tokenizer:
            raise HopforgeError(
                f"export layout {', '.join(needy)} renders its rows with the student's chat "
                "template: set [export] tokenizer to a tokenizer folder or cached model name, "
                "or leave its format out of formats"
            )

    @property
    def kinds(self) -> tuple[str, ...]:
        """The layouts its formats write, by folder name."""
        return tuple(lay.name for lay in layouts_of(self.formats))

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["formats"] = list(self.formats)
        row["decontaminate"] = list(self.decontaminate)
        row["tools"] = list(self.tools)
        return row


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One trajectory to export, with its question, split, score and filter decision."""

    trajectory: Trajectory
    question: Question
    split: str
    chain: str  # the question's evidence-chain key
    score: Score | None = None
    decision: Decision | None = None
    windows: tuple[Window, ...] = ()  # the SFT windows, with per-message weights
    turn_windows: tuple[Window, ...] = ()  # one per trained turn: the exact prompt it had


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardInfo:
    """One written shard; `path` is relative to BUILD/export."""

    path: str
    kind: str
    split: str
    records: int
    bytes: int  # size of the file as written
    sha256: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ShardInfo:
        return cls(**row)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejected:
    """A record that was not written, and why."""

    kind: str
    record_id: str
    reason: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalItem:
    """One item of a user-supplied evaluation set."""

    question: str
    answers: tuple[str, ...] = ()
    source: str = ""  # the file it came from


@dataclass(frozen=True, slots=True, kw_only=True)
class Contamination:
    """A question that overlaps an evaluation item."""

    qid: str
    reason: str  # "question" (shared question n-gram) or "answer" (same answer, related question)
    source: str
    eval_question: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportResult:
    """What an export wrote: shards, rejected records, removed questions and the manifest."""

    root: str
    shards: tuple[ShardInfo, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    contaminated: tuple[Contamination, ...] = ()
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> split -> records

    @property
    def total(self) -> int:
        return sum(sum(s.values()) for s in self.counts.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class Distributions:
    """Raw values behind the dataset card's plots."""

    hops: tuple[int, ...] = ()  # per exported trajectory
    kinds: tuple[str, ...] = ()  # per exported trajectory: its question's family
    min_calls: tuple[int, ...] = ()  # per exported trajectory: its question's min_calls
    turns: tuple[int, ...] = ()  # per exported trajectory
    terminations: tuple[str, ...] = ()  # per exported trajectory
    rewards: dict[str, tuple[float, ...]] = field(default_factory=dict)  # name -> values
