"""`QuestionConfig`: the settings of the question stage, validated on construction."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from hopforge.corpus.settings import OPERATIONAL, SETTINGS, share
from hopforge.synth.questions.families import DEFAULT_KINDS, KINDS, MAX_DEPTH
from pydantic import Field
from pydantic.dataclasses import dataclass

RUNG_ATTEMPTS = 60  # the fewest drafts a ladder rung tries, whatever its n


@dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class Rung:
    """A rung of a ladder: `n` more accepted questions whose min_calls lies in [min_calls, max_calls]."""

    min_calls: int = Field(ge=1, le=100_000, description="the fewest tool calls of a task")
    max_calls: int = Field(default=0, ge=0, le=100_000, description="the most tool calls (0: no bound)")
    n: int = Field(default=1, ge=1, le=1_000_000, description="accepted questions of this rung")

    def __post_init__(self) -> None:
        if self.max_calls and self.max_calls < self.min_calls:
            raise ValueError(f"ladder rung max_calls={self.max_calls} is below min_calls="
                             f"{self.min_calls}: use min_calls <= max_calls (0: no bound)")


@dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class QuestionConfig:
    """Settings of the question stage (the `[questions]` table of a build file)."""

    n: int = Field(default=100, ge=1, le=10_000_000, description="accepted questions wanted")
    seed: int = Field(default=0, description="random seed")
    part_size: int = Field(default=50, ge=1, le=1_000_000, description="accepted questions per output part")
    kinds: tuple[str, ...] = Field(default=DEFAULT_KINDS, description="question kinds to make")
    unanswerable_share: float = share(
        0.05, "share of accepted questions that are unanswerable, when that is a kind")
    min_hops: int = Field(default=2, ge=1, le=MAX_DEPTH, description="the fewest hops of a chain")
    max_hops: int = Field(default=4, ge=1, le=MAX_DEPTH, description="the most hops of a chain")
    min_clues: int = Field(default=2, ge=2, le=8, description="intersection: the fewest clues")
    max_clues: int = Field(default=4, ge=2, le=8, description="intersection: the most clues")
    year_answer_rate: float = share(
        0.3, "chain: share asking for the year the last document states")
    min_calls: int = Field(default=0, ge=0, le=100_000, description=(
        "keep only tasks whose fewest tool calls lie in [min_calls, max_calls]"))
    max_calls: int = Field(default=0, ge=0, le=100_000, description="0: no upper bound")
    ladder: tuple[Rung, ...] = Field(default=(), description=(
        "after the n questions of the mix, each rung's n tasks of its min_calls range, in "
        "order (TOML: ladder = [{min_calls = 50, max_calls = 150, n = 4}])"))
    min_items: int = Field(default=4, ge=2, le=100_000, description="aggregation: the smallest set")
    min_df: int = Field(default=20, ge=1, le=1_000_000, description=(
        "a clue phrase occurs in at least this many documents (the blur); never more than 1% "
        "of the corpus (stage.corpus_min_df)"))
    max_per_start: int = Field(default=3, ge=1, le=1_000_000, description=(
        "accepted questions that start at one document"))
    model_fact_docs: int = Field(default=500, ge=0, le=100_000_000, description=(
        "model teacher: documents whose facts it reads, the most-named first (0: none); each "
        "fact is verified against the text before use"))
    shortcut_rank: int = Field(default=5, ge=0, le=100, description=(
        "one search may not find the answer within this rank (0: off)"))
    blur_rounds: int = Field(default=2, ge=0, le=10, description=(
        "times a shortcut draft gets other phrases before it is rejected"))
    search_mode: Literal["", "bm25", "dense", "hybrid"] = Field(default="", description=(
        "the searcher's mode; empty: its default (hybrid when there is a dense index)"))
    page_chars: int = Field(default=1200, ge=100, le=1_000_000, description=(
        "as the open tool pages documents (min_calls counts pages)"))
    min_words: int = Field(default=6, ge=1, le=1000, description="the shortest question, in words")
    max_words: int = Field(default=160, ge=1, le=10_000, description="the longest question, in words")
    near_duplicate: float = share(
        0.7, "word-shingle Jaccard at or above which a question repeats one")
    round_trip: bool = Field(default=True, strict=True, description=(
        "model composer: the model reads its question back; a reading that differs from the "
        "spec rejects it"))
    closed_book: bool = Field(default=False, strict=True, description=(
        "model teacher: probe without tools, reject what it answers"))
    probe_samples: int = Field(default=2, ge=1, le=100, description="closed-book attempts per question")
    max_probe_pass: float = share(
        0.0, "model teacher: keep questions the closed-book probe answers at most this share "
        "of times (giving it turns the probe on)")
    attempts_per_question: int = Field(default=10, ge=1, le=1000, description=(
        "drafts tried per wanted question before giving up"))
    concurrency: int = Field(default=16, json_schema_extra=OPERATIONAL,
        ge=1, le=4096, description="model calls in flight")
    temperature: float = Field(default=0.7, ge=0.0, le=2.0, description="the model composer's temperature")
    max_tokens: int = Field(default=400, ge=16, le=100_000, description="the model composer's reply limit")

    def __post_init__(self) -> None:
        bad = [k for k in self.kinds if k not in KINDS]
        if not self.kinds or bad:
            raise ValueError(f"QuestionConfig.kinds={self.kinds!r}: use one or more of "
                             f"{', '.join(KINDS)}")
        for low, high in (("min_hops", "max_hops"), ("min_clues", "max_clues"),
                          ("min_words", "max_words")):
            if getattr(self, high) < getattr(self, low):
                raise ValueError(f"QuestionConfig.{high}={getattr(self, high)} is below "
                                 f"{low}={getattr(self, low)}")
        if self.max_calls and self.max_calls < self.min_calls:
            raise ValueError(f"QuestionConfig.max_calls={self.max_calls} is below "
                             f"min_calls={self.min_calls}: use A-B with A <= B (0: no bound)")

    def rounds(self) -> list[tuple[QuestionConfig, int]]:
        """(settings, accepted questions wanted) of each ladder rung, then of the mix (last).
        The rungs go first: few documents can make a long task, and the mix would take them
        (a set once per start); each rung tries at least `RUNG_ATTEMPTS` drafts in all."""
        base = dataclasses.replace(self, ladder=())
        return [
            (dataclasses.replace(base, min_calls=r.min_calls, max_calls=r.max_calls,
                                 attempts_per_question=max(self.attempts_per_question,
                                                           math.ceil(RUNG_ATTEMPTS / r.n))), r.n)
            for r in self.ladder
        ] + [(base, self.n)]

    @property
    def total(self) -> int:
        """Accepted questions wanted in all: the mix and every rung."""
        return self.n + sum(r.n for r in self.ladder)
