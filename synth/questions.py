"""The question stage: plans sampled from the corpus, composed, checked; rejects keep a reason.

`generate_questions` is a plain coroutine over records: documents and a searcher in, accepted
and rejected `Question`s out, deterministic for its `rng` (and the teacher's replies). The
build-directory runner that writes parts lives in `hopforge.flows.run_questions`.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from hopforge.corpus.records import Document
from hopforge.synth.chains import MAX_HOPS, LinkGraph
from hopforge.synth.chat import ChatModel, ModelResponseError, ModelUnavailable
from hopforge.synth.concurrency import bounded_map
from hopforge.synth.model_questions import ModelComposer, QuestionParseError, supported_answer
from hopforge.synth.plans import KINDS, Planner, QuestionPlan
from hopforge.synth.question_checks import (
    NearDuplicates,
    SearchBackend,
    find_leak,
    is_unique,
    leak_names,
    readability_problem,
    shortcut_ranks,
    well_formed_problem,
)
from hopforge.synth.records import Checks, Question
from hopforge.synth.scripted_questions import ScriptedComposer, UnreadableClue

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionConfig:
    """Settings of the question stage; validated on construction."""

    n: int = 100  # accepted questions wanted (the runner; `generate_questions` takes its own n)
    seed: int = 0
    part_size: int = 50  # accepted questions per output part
    kinds: tuple[str, ...] = KINDS
    min_hops: int = 2
    max_hops: int = 4
    min_clues: int = 2  # intersection: clues from different documents
    max_clues: int = 4
    fact_answer_rate: float = 0.3  # chain: share of answers that are a year stated in the last doc
    shortcut_rank: int = 3  # reject when a search with the question ranks the answer doc <= this
    shortcut_depth: int = 50  # how deep the rank is looked up (deeper: stored as None)
    search_mode: str = ""  # "" uses the searcher's default (hybrid when there is a dense index)
    min_words: int = 8
    max_words: int = 120
    near_duplicate: float = 0.7  # word-shingle Jaccard at or above which a question repeats one
    closed_book: bool = False  # model teacher only: reject questions it answers without tools
    attempts_per_question: int = 10  # plans tried per wanted question before giving up
    concurrency: int = 16  # model calls in flight
    temperature: float = 0.7
    max_tokens: int = 400

    def __post_init__(self) -> None:
        _check_range("n", self.n, 1, 10_000_000)
        _check_range("part_size", self.part_size, 1, 1_000_000)
        bad = [k for k in self.kinds if k not in KINDS]
        if not self.kinds or bad:
            raise ValueError(
                f"QuestionConfig.kinds={self.kinds!r}: use one or more of {', '.join(KINDS)}"
            )
        _check_range("min_hops", self.min_hops, 1, MAX_HOPS)
        _check_range("max_hops", self.max_hops, self.min_hops, MAX_HOPS, low_name="min_hops")
        _check_range("min_clues", self.min_clues, 2, 8)
        _check_range("max_clues", self.max_clues, self.min_clues, 8, low_name="min_clues")
        _check_range("fact_answer_rate", self.fact_answer_rate, 0.0, 1.0)
        _check_range("shortcut_rank", self.shortcut_rank, 0, 1000)
        _check_range("shortcut_depth", self.shortcut_depth, max(1, self.shortcut_rank), 10_000,
                     low_name="shortcut_rank")
        _check_range("min_words", self.min_words, 1, 1000)
        _check_range("max_words", self.max_words, self.min_words, 10_000, low_name="min_words")
        _check_range("near_duplicate", self.near_duplicate, 0.01, 1.0)
        _check_range("attempts_per_question", self.attempts_per_question, 1, 1000)
        _check_range("concurrency", self.concurrency, 1, 4096)
        _check_range("temperature", self.temperature, 0.0, 2.0)
        _check_range("max_tokens", self.max_tokens, 16, 100_000)
        if self.search_mode not in ("", "bm25", "dense", "hybrid"):
            raise ValueError(
                f"QuestionConfig.search_mode={self.search_mode!r}: use bm25, dense, hybrid or ''"
            )


def _check_range(
    name: str, value: float, low: float, high: float, *, low_name: str = ""
) -> None:
    if not low <= value <= high:
        lower = f"{low_name}={low}" if low_name else f"{low}"
        raise ValueError(f"QuestionConfig.{name}={value} is out of range: expected {lower}..{high}")


def from_plan(plan: QuestionPlan, text: str, composer: str) -> Question:
    """The question record for `plan` with `text` (checks not run yet)."""
    return Question(
        qid=plan.qid,
        question=text,
        answer=plan.answer,
        answer_aliases=plan.answer_aliases,
        kind=plan.kind,
        hops=plan.hops,
        evidence=plan.evidence,
        answer_doc=plan.answer_doc,
        composer=composer,
        seed=plan.seed,
    )


async def generate_questions(
    docs: Sequence[Document],
    searcher: SearchBackend,
    *,
    config: QuestionConfig,
    rng: random.Random,
    n: int,
    teacher: ChatModel | None = None,
    accepted_so_far: Iterable[Question] = (),
    seen_qids: Iterable[str] = (),
    graph: LinkGraph | None = None,
    near_duplicates: NearDuplicates | None = None,
) -> list[Question]:
    """Questions in attempt order, up to and including the `n`-th accepted one.

    Rejected questions carry `rejected` (comma-separated reasons) and their checks. Plans whose
    qid is in `seen_qids` (or of `accepted_so_far`) are not tried again; accepted questions must
    not nearly repeat `accepted_so_far`. At most `n * config.attempts_per_question` plans are
    tried, so fewer than `n` come back when the corpus runs out of new ones. A caller running
    many batches may pass its own `near_duplicates` index (already holding `accepted_so_far`);
    the questions accepted here are added to it.
    """
    graph = graph or LinkGraph(docs)
    planner = Planner(
        graph,
        rng,
        kinds=config.kinds,
        min_hops=config.min_hops,
        max_hops=config.max_hops,
        min_clues=config.min_clues,
        max_clues=config.max_clues,
        fact_answer_rate=config.fact_answer_rate,
    )
    earlier = list(accepted_so_far)
    seen = {*seen_qids, *(q.qid for q in earlier)}
    dups = near_duplicates
    if dups is None:
        dups = NearDuplicates(config.near_duplicate)
        for q in earlier:
            dups.add(q.qid, q.question)
    stage = _Stage(graph, searcher, config, teacher)
    out: list[Question] = []
    kinds = Counter(q.kind for q in earlier)
    accepted = 0
    budget = n * config.attempts_per_question
    tried = 0
    while accepted < n and tried < budget:
        size = min(budget - tried, max(2 * (n - accepted), 8))
        wave = planner.plans(size, seen, accepted=kinds)
        if not wave:
            log.info("no new question plans left after %d attempts", tried)
            break
        tried += len(wave)
        for q in await stage.run(wave):
            if accepted >= n:
                break
            if not q.rejected:
                dup = dups.find(q.question)
                if dup:
                    q = replace(q, checks=replace(q.checks, near_duplicate_of=dup),
                                rejected="near_duplicate")
                else:
                    dups.add(q.qid, q.question)
                    accepted += 1
                    kinds[q.kind] += 1
            out.append(q)
    return out


def check_question(
    q: Question, *, graph: LinkGraph, rank: int | None, config: QuestionConfig
) -> Question:
    """`q` with its checks filled in (leakage, shortcut, uniqueness, form and readability) and
    `rejected` set to the comma-separated reasons when any fails; `rank` is the answer
    document's search rank. An unreadable question is not well-formed; its reason is counted
    apart ("unreadable(no_verb)") from the other form problems ("malformed(too_long(...))")."""
    leaked = find_leak(q.question, leak_names(q, graph.docs))
    problem = well_formed_problem(q.question, min_words=config.min_words, max_words=config.max_words)
    unreadable = readability_problem(q.question) if not problem else ""
    checks = Checks(
        leakage=bool(leaked),
        leaked=leaked,
        shortcut_rank=rank,
        shortcut=rank is not None and rank <= config.shortcut_rank,
        unique=is_unique(q, graph),
        well_formed=not problem and not unreadable,
    )
    reasons = [
        name
        for name, failed in (
            ("leakage", checks.leakage),
            ("shortcut", checks.shortcut),
            ("not_unique", checks.unique is False),
            (f"malformed({problem})", bool(problem)),
            (f"unreadable({unreadable})", bool(unreadable)),
        )
        if failed
    ]
    return replace(q, checks=checks, rejected=",".join(reasons))


class _Stage:
    """Compose and check one wave of plans."""

    def __init__(
        self, graph: LinkGraph, searcher: SearchBackend, config: QuestionConfig,
        teacher: ChatModel | None,
    ) -> None:
        self.graph, self.searcher, self.config = graph, searcher, config
        self.scripted = ScriptedComposer(graph)
        self.model = (
            ModelComposer(teacher, graph.docs, temperature=config.temperature,
                          max_tokens=config.max_tokens)
            if teacher is not None
            else None
        )

    async def run(self, plans: list[QuestionPlan]) -> list[Question]:
        limit = self.config.concurrency
        composed = await bounded_map(self._compose, plans, limit=limit)
        drafts = [q for q in composed if not q.rejected]
        ranks = dict(zip((q.qid for q in drafts), shortcut_ranks(
            self.searcher, drafts, k=self.config.shortcut_depth, mode=self.config.search_mode
        ), strict=True))
        checked = [q if q.rejected else self._check(q, ranks[q.qid]) for q in composed]
        if self.model is not None and self.config.closed_book:
            checked = await bounded_map(self._closed_book, checked, limit=limit)
        return checked

    async def _compose(self, plan: QuestionPlan) -> Question:
        if self.model is None:
            try:
                return from_plan(plan, self.scripted.compose(plan), self.scripted.name)
            except UnreadableClue as exc:  # a clue that is only a fragment: never written
                draft = from_plan(plan, "", self.scripted.name)
                return replace(draft, rejected=f"unreadable({exc.reason})", raw=str(exc))
        draft = from_plan(plan, "", self.model.name)
        try:
            made = await self.model.compose(plan)
        except QuestionParseError as exc:
            return replace(draft, rejected=f"parse_error({exc})", raw=exc.raw)
        except ModelUnavailable:
            raise  # the whole run fails; finished parts stay
        except ModelResponseError as exc:
            return replace(draft, rejected="model_error", raw=str(exc))
        found = supported_answer(made.answer, plan, self.graph.docs)
        if found is None:
            return replace(draft, question=made.question, answer=made.answer,
                           rejected="unsupported_answer", raw=made.raw)
        answer, aliases, answer_doc = found
        return replace(draft, question=made.question, answer=answer, answer_aliases=aliases,
                       answer_doc=answer_doc)

    def _check(self, q: Question, rank: int | None) -> Question:
        return check_question(q, graph=self.graph, rank=rank, config=self.config)

    async def _closed_book(self, q: Question) -> Question:
        if q.rejected or self.model is None:
            return q
        try:
            easy = await self.model.closed_book(q.question, q.answer, q.answer_aliases)
        except ModelUnavailable:
            raise
        except ModelResponseError as exc:
            log.warning("closed-book check failed for %s: %s", q.qid, exc)
            return q
        checks = replace(q.checks, closed_book=easy)
        return replace(q, checks=checks, rejected="closed_book" if easy else "")
