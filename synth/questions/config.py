"""`QuestionConfig`: the settings of the question stage, validated on construction."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hopforge.synth.questions.families import MAX_DEPTH
from hopforge.synth.records import QUESTION_KINDS


@dataclass(frozen=True, slots=True, kw_only=True)
class Rung:
    """A rung of a ladder: `n` more accepted questions whose min_calls lies in [min_calls, max_calls]."""

    min_calls: int
    max_calls: int = 0  # 0: no upper bound
    n: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.n <= 1_000_000 or not 1 <= self.min_calls <= 100_000:
            raise ValueError(f"ladder rung {self.min_calls}-{self.max_calls} x{self.n}: n and "
                             "min_calls must be at least 1")
        if self.max_calls and self.max_calls < self.min_calls:
            raise ValueError(f"ladder rung max_calls={self.max_calls} is below min_calls="
                             f"{self.min_calls}: use min_calls <= max_calls (0: no bound)")


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionConfig:
    """Settings of the question stage (the `[questions]` table of a build file)."""

    n: int = 100  # accepted questions wanted (the runner; `generate_questions` takes its own n)
    seed: int = 0
    part_size: int = 50  # accepted questions per output part
    kinds: tuple[str, ...] = QUESTION_KINDS
    unanswerable_share: float = 0.05  # of accepted questions, when "unanswerable" is a kind
    min_hops: int = 2  # chain depth
    max_hops: int = 4
    min_clues: int = 2  # intersection: phrases that together pin one document
    max_clues: int = 4
    year_answer_rate: float = 0.3  # chain: share asking for the year the last document states
    min_calls: int = 0  # keep only tasks whose min_calls lies in [min_calls, max_calls]
    max_calls: int = 0  # 0: no upper bound
    # after the n questions of the mix, each rung's n tasks of its min_calls range, in order
    # (TOML: ladder = [{min_calls = 50, max_calls = 150, n = 4}]): the long tasks of a build
    ladder: tuple[Rung, ...] = ()
    min_items: int = 4  # aggregation: the smallest set
    min_df: int = 20  # a clue phrase occurs in at least this many documents (the blur), so
    # that searching it alone ranks its document among many (keep it well above shortcut_rank);
    # never more than 1% of the corpus (stage.corpus_min_df)
    max_per_start: int = 3  # accepted questions that start at one document
    # model teacher: it reads the facts of this many documents, the most-named first (0: none);
    # each is verified against the text before use, and joins the facts read without a model
    model_fact_docs: int = 500
    shortcut_rank: int = 5  # one search may not find the answer within this rank (0: off)
    blur_rounds: int = 2  # times a shortcut draft gets other phrases before it is rejected
    search_mode: str = ""  # "" uses the searcher's default (hybrid when there is a dense index)
    page_chars: int = 1200  # as the open tool pages documents (min_calls counts pages)
    min_words: int = 6
    max_words: int = 160
    near_duplicate: float = 0.7  # word-shingle Jaccard at or above which a question repeats one
    # model composer: the model reads its question back (named starts, each relation's
    # direction, phrases, what is asked); a reading that differs from the spec rejects it
    round_trip: bool = True
    closed_book: bool = False  # model teacher: probe without tools, reject what it answers
    probe_samples: int = 2  # closed-book attempts per question
    max_probe_pass: float = 0.0  # keep questions the probe answers at most this share of times
    attempts_per_question: int = 10  # drafts tried per wanted question before giving up
    concurrency: int = 16  # model calls in flight
    temperature: float = 0.7
    max_tokens: int = 400

    def __post_init__(self) -> None:
        if self.ladder and not all(isinstance(r, Rung) for r in self.ladder):
            raise ValueError("QuestionConfig.ladder must hold Rung(min_calls, max_calls, n) items")
        if not isinstance(self.round_trip, bool):
            raise TypeError(f"QuestionConfig.round_trip={self.round_trip!r}: use true or false")
        bad = [k for k in self.kinds if k not in QUESTION_KINDS]
        if not self.kinds or bad:
            raise ValueError(f"QuestionConfig.kinds={self.kinds!r}: use one or more of "
                             f"{', '.join(QUESTION_KINDS)}")
        for name, low, high in (
            ("n", 1, 10_000_000), ("part_size", 1, 1_000_000), ("min_hops", 1, MAX_DEPTH),
            ("max_hops", self.min_hops, MAX_DEPTH), ("min_clues", 2, 8),
            ("max_clues", self.min_clues, 8), ("min_calls", 0, 100_000),
            ("max_calls", 0, 100_000), ("min_items", 2, 100_000), ("min_df", 1, 1_000_000),
            ("max_per_start", 1, 1_000_000), ("model_fact_docs", 0, 100_000_000),
            ("shortcut_rank", 0, 100), ("blur_rounds", 0, 10), ("page_chars", 100, 1_000_000),
            ("min_words", 1, 1000), ("max_words", self.min_words, 10_000),
            ("probe_samples", 1, 100), ("attempts_per_question", 1, 1000),
            ("concurrency", 1, 4096), ("max_tokens", 16, 100_000),
        ):
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"QuestionConfig.{name}={value} is out of range: expected "
                                 f"{low}..{high}")
        for name in ("unanswerable_share", "year_answer_rate", "near_duplicate",
                     "max_probe_pass"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"QuestionConfig.{name}={value} is out of range: expected 0..1")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"QuestionConfig.temperature={self.temperature} is out of range: "
                             "expected 0..2")
        if self.max_calls and self.max_calls < self.min_calls:
            raise ValueError(f"QuestionConfig.max_calls={self.max_calls} is below "
                             f"min_calls={self.min_calls}: use A-B with A <= B (0: no bound)")
        if self.search_mode not in ("", "bm25", "dense", "hybrid"):
            raise ValueError(f"QuestionConfig.search_mode={self.search_mode!r}: use bm25, "
                             "dense, hybrid or ''")

    def rounds(self) -> list[tuple[QuestionConfig, int]]:
        """(settings, accepted questions wanted) of the mix, then of each ladder rung."""
        base = dataclasses.replace(self, ladder=())
        return [(base, self.n)] + [
            (dataclasses.replace(base, min_calls=r.min_calls, max_calls=r.max_calls), r.n)
            for r in self.ladder
        ]

    @property
    def total(self) -> int:
        """Accepted questions wanted in all: the mix and every rung."""
        return self.n + sum(r.n for r in self.ladder)
