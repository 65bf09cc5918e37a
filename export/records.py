"""Records of the export stage: its config, the shards it writes and what it left out.

`FORMATS` and `KINDS` (the layouts each format writes) come from the layout list,
hopforge.export.layouts.registry.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.export.layouts.registry import DEFAULT_FORMATS, FORMATS, KINDS, layouts_of
from hopforge.export.splits import SPLITS
from hopforge.export.windows import Window
from hopforge.filters.records import Decision, Score
from hopforge.synth.records import Question, Trajectory

__all__ = ["FORMATS", "KINDS", "SPLITS", "Contamination", "Distributions", "EvalItem", "Example",
           "ExportConfig", "ExportResult", "Rejected", "ShardInfo"]

SCHEMA_VERSION = 1
REASONING_MODES: tuple[str, ...] = ("keep", "last", "drop")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportConfig:
    """How to export a build; validated on construction."""

    formats: tuple[str, ...] = DEFAULT_FORMATS
    shard_records: int = 10_000  # most records in one shard
    shard_bytes: int = 128 * 2**20  # most bytes of JSON lines in one shard (before compression)
    parquet: bool = False  # write Parquet shards instead of JSONL
    zstd: bool = False  # compress JSONL shards with zstd (.jsonl.zst)
    validation_fraction: float = 0.05  # share of evidence chains put in the validation split
    seed: int = 0
    decontaminate: tuple[str, ...] = ()  # evaluation-set files to decontaminate against
    decontam_n: int = 8  # question n-gram size
    answer_context_n: int = 3  # n-gram size of the question overlap required with a same answer
    data_source: str = "hopforge"  # verl `data_source`
    ability: str = "search"  # verl `ability`
    dataset_name: str = "hopforge"  # name used in dataset_info.json and the dataset card
    allow_unfiltered: bool = False  # export every trajectory when the filter stage has not run
    tools: tuple[dict[str, Any], ...] = ()  # tool schemas; empty: found from the build
    licence: str = ""  # licence of the corpus; empty: found from the build
    max_seq_tokens: int = 32_768  # longest SFT row; longer trajectories are cut into windows
    tokenizer: str = ""  # tokenizer (name or folder, loaded offline) that counts row tokens
    reasoning: str = "keep"  # keep | last | drop: which assistant messages keep their reasoning

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
        if self.shard_records < 1:
            raise HopforgeError(
                f"shard_records={self.shard_records} must be at least 1 (e.g. --shard-records 10000)"
            )
        if self.shard_bytes < 1024:
            raise HopforgeError(
                f"shard_bytes={self.shard_bytes} must be at least 1024 (e.g. --shard-bytes 134217728)"
            )
        if not 0.0 <= self.validation_fraction < 1.0:
            raise HopforgeError(
                f"validation_fraction={self.validation_fraction} must be in [0, 1), e.g. 0.05"
            )
        if self.decontam_n < 1 or self.answer_context_n < 1:
            raise HopforgeError(
                f"decontam_n={self.decontam_n} and answer_context_n={self.answer_context_n} must be"
                " at least 1"
            )

        if self.reasoning not in REASONING_MODES:
            raise HopforgeError(
                f"[export] reasoning = {self.reasoning!r} is not valid: use keep (every "
                "assistant message keeps its reasoning), last (only the trained last one) or drop"
            )
        if not 256 <= self.max_seq_tokens <= 10_000_000:
            raise HopforgeError(
                f"max_seq_tokens={self.max_seq_tokens} must be in [256, 10000000], the longest "
                "SFT row in tokens (e.g. max_seq_tokens = 32768)"
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
