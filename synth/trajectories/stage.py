"""Run the teacher on many questions: N samples each, bounded concurrency, batched searches.

`run_trajectories` fans `run_agent` out with `bounded_map`. Every search any trajectory makes
goes through one `SearchBatcher`, which coalesces the searches issued at the same moment into
one `Searcher.search_batch` call, so dense query embedding is batched across trajectories.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, cast

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Document, Hit
from hopforge.corpus.search import Searcher
from hopforge.corpus.settings import OPERATIONAL, SETTINGS
from hopforge.corpus.tools import ToolBox, ToolResult
from hopforge.synth.concurrency import bounded_map
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.trajectories.faults import FaultConfig, FaultyTools
from hopforge.synth.trajectories.loop import run_agent
from hopforge.synth.trajectories.scripted import ScriptedConfig
from pydantic import Field
from pydantic.dataclasses import dataclass

TeacherFactory = Callable[[Question, int, int], ChatModel]  # (question, sample, seed) -> teacher



@dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class TrajectoryConfig:
    """Options of the trajectories stage; validated on construction."""

    samples: int = Field(default=1, ge=1, le=1024, description=(
        "trajectories per question, each with its own seed"))
    max_turns: int = Field(default=64, ge=1, le=1_000_000, description=(
        "stop rule max_turns: the most turns of a run (600 and more is fine)"))
    concurrency: int = Field(default=16, json_schema_extra=OPERATIONAL,
        ge=1, le=100_000, description="trajectories in flight")
    keep_results: int = Field(default=5, ge=1, le=10_000, description=(
        "tool results shown verbatim; older ones become pointers"))
    checkpoint_every: int = Field(default=16, ge=0, le=1_000_000, description=(
        "turns between checkpoints; 0 turns them off"))
    context_tokens: int = Field(default=32_768, ge=512, le=100_000_000, description=(
        "the teacher's context length"))
    max_tokens: int = Field(default=1024, ge=1, le=10_000_000, description=(
        "completion budget per call (kept free in the context)"))
    temperature: float = Field(default=0.7, ge=0.0, le=2.0, description="the teacher's temperature")
    repeat_limit: int = Field(default=3, ge=1, le=10_000, description=(
        "stop rule repetition: a call repeated more than this within repeat_window turns"))
    repeat_window: int = Field(default=20, ge=1, le=1_000_000, description=(
        "the turns the repetition rule looks back over"))
    no_progress_turns: int = Field(default=40, ge=1, le=1_000_000, description=(
        "stop rule no_progress: turns without new gold evidence"))
    max_invalid_turns: int = Field(default=3, ge=0, le=1000, description=(
        "unusable turns in a row before termination error"))
    call_format: Literal["native", "text"] = Field(default="native", description=(
        "native: the server's tool calls; text: <tool_call> tags in the prompt"))
    reasoning: bool = Field(default=False, strict=True, description=(
        "a reasoning teacher: the prompt does not limit its thinking"))
    seed: int = Field(default=0, description="random seed")
    faults: FaultConfig = Field(default_factory=FaultConfig, description="injected tool faults")
    scripted: ScriptedConfig = Field(default_factory=ScriptedConfig, description=(
        "the scripted teacher's mistakes and habits"))
    part_questions: int = Field(default=32, ge=1, le=1_000_000, description=(
        "questions per output part (all samples of a question together)"))
    search_batch: int = Field(default=64, json_schema_extra=OPERATIONAL,
        ge=1, le=65_536, description="most searches in one batch")
    search_wait_s: float = Field(default=0.0, json_schema_extra=OPERATIONAL,
        ge=0.0, le=10.0, description=(
        "how long a search waits for others to join its batch"))

    def __post_init__(self) -> None:
        if self.max_tokens * 2 > self.context_tokens:
            raise ValueError(
                f"TrajectoryConfig.max_tokens = {self.max_tokens} leaves too little room in "
                f"context_tokens = {self.context_tokens}: use at most half of it."
            )


def sample_seed(base: int, qid: str, sample: int) -> int:
    """The seed of one (question, sample): stable across runs, different per sample."""
    digest = hashlib.sha256(f"{base}\x00{qid}\x00{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def trajectory_id(qid: str, sample: int) -> str:
    return f"{qid}-s{sample}"


class SearchBatcher:
    """Coalesces concurrent searches into `search_batch` calls (one batch running at a time)."""

    def __init__(self, searcher: Searcher, *, max_batch: int = 64, wait_s: float = 0.0,
                 threaded: bool | None = None) -> None:
        self.searcher = searcher
        self.max_batch = max_batch
        self.wait_s = wait_s
        self.threaded = searcher.has_dense if threaded is None else threaded
        self.batches = 0
        self.queries = 0
        self._pending: list[tuple[str, int, str, asyncio.Future[list[Hit]]]] = []
        self._draining = False
        self._task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None

    async def search(self, query: str, k: int, mode: str) -> list[Hit]:
        """Hits for one query, computed in a batch with whatever else is waiting."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Hit]] = loop.create_future()
        self._pending.append((query, k, mode, future))
        if not self._draining:
            self._draining = True
            self._task = loop.create_task(self._drain())  # held: a task must not be collected
        return await future

    async def _drain(self) -> None:
        try:
            await asyncio.sleep(self.wait_s)
            while self._pending:
                batch, self._pending = (self._pending[: self.max_batch],
                                        self._pending[self.max_batch :])
                try:
                    if self.threaded:
                        if self._executor is None:
                            self._executor = ThreadPoolExecutor(1, thread_name_prefix="search")
                        loop = asyncio.get_running_loop()
                        results = await loop.run_in_executor(self._executor, self._run, batch)
                    else:
                        results = self._run(batch)
                except HopforgeError as exc:
                    for *_, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (*_, future), hits in zip(batch, results):
                    if not future.done():
                        future.set_result(hits)
        finally:
            self._draining = False

    def _run(self, batch: Sequence[tuple[str, int, str, Any]]) -> list[list[Hit]]:
        self.batches += 1
        self.queries += len(batch)
        out: list[list[Hit] | None] = [None] * len(batch)
        groups: dict[tuple[str, int], list[int]] = {}
        for i, (_, k, mode, _) in enumerate(batch):  # k sets the fusion depth: never mixed
            groups.setdefault((mode, k), []).append(i)
        for (mode, k), idx in groups.items():
            hits = self.searcher.search_batch([batch[i][0] for i in idx], k=k, mode=mode)
            for i, h in zip(idx, hits, strict=True):
                out[i] = h
        return cast(list[list[Hit]], out)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


class _PrimedSearcher:
    """A searcher whose next `search` for a query returns hits fetched in a batch beforehand."""

    def __init__(self, searcher: Searcher) -> None:
        self.inner = searcher
        self.primed: dict[tuple[str, int, str], list[Hit]] = {}

    @property
    def documents(self) -> Mapping[str, Document]:
        return self.inner.documents

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> list[Hit]:
        hits = self.primed.pop((query, k, mode), None)
        return hits if hits is not None else self.inner.search(query, k=k, mode=mode)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class BatchedTools:
    """The `AsyncTools` the agent uses: a `ToolBox` whose searches go through a `SearchBatcher`."""

    def __init__(self, toolbox: ToolBox, batcher: SearchBatcher) -> None:
        self._primed = _PrimedSearcher(toolbox.searcher)
        self.toolbox = ToolBox(cast(Searcher, self._primed), page_chars=toolbox.page_chars,
                               default_k=toolbox.default_k, max_k=toolbox.max_k, mode=toolbox.mode)
        self.schemas = self.toolbox.schemas
        self.batcher = batcher

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run a tool; a valid search is fetched through the batcher first."""
        if name == "search" and not self.toolbox.validate(name, arguments):
            query, k = arguments["query"], arguments.get("k", self.toolbox.default_k)
            mode = self.toolbox.mode
            try:
                hits = await self.batcher.search(query, k, mode)
            except HopforgeError:
                return self.toolbox.call(name, arguments)  # reports the failure to the model
            self._primed.primed[(query, k, mode)] = hits
        return self.toolbox.call(name, arguments)


def limits_for(question: Question, config: TrajectoryConfig) -> TrajectoryConfig:
    """The stop rules for one task. A fair plan may go `quiet_calls` calls without a new gold
    document (ruling out the names a page shows before the one a clue picks): the no-progress
    window is at least twice that plus a few turns, times 1 + 3 x the fault rate (retries). A task that
    needs more calls than `max_turns` allows (a ladder's long task) gets twice its min_calls."""
    # each call is retried about once per fault it meets, a persistent fault up to three
    # times before another way: the window grows with the fault rate
    retries = 1.0 + 3.0 * config.faults.total
    quiet = max(config.no_progress_turns,
                math.ceil((2 * question.quiet_calls + 8) * retries))
    turns = config.max_turns if question.min_calls <= config.max_turns else 2 * question.min_calls
    if (quiet, turns) == (config.no_progress_turns, config.max_turns):
        return config
    return dataclasses.replace(config, max_turns=turns, no_progress_turns=quiet)


async def run_trajectories(
    questions: Sequence[Question],
    tools: Searcher | ToolBox,
    teacher_factory: TeacherFactory,
    *,
    config: TrajectoryConfig,
    on_result: Callable[[Trajectory], None] | None = None,
    skip: Collection[str] = (),
    collect: bool = True,
) -> list[Trajectory]:
    """Run `config.samples` trajectories per question; `skip` holds tids already done.

    `on_result` sees each trajectory as it finishes. With `collect=False` nothing is kept in
    memory here (the caller writes them out in `on_result`) and an empty list is returned.
    """
    toolbox = tools if isinstance(tools, ToolBox) else ToolBox(tools)
    batcher = SearchBatcher(toolbox.searcher, max_batch=config.search_batch,
                            wait_s=config.search_wait_s)
    batched = BatchedTools(toolbox, batcher)
    skip = set(skip)
    jobs = [(q, s) for q in questions for s in range(config.samples)
            if trajectory_id(q.qid, s) not in skip]

    async def one(job: tuple[Question, int]) -> Trajectory | None:
        question, sample = job
        seed = sample_seed(config.seed, question.qid, sample)
        teacher = teacher_factory(question, sample, seed)
        faulty = FaultyTools(batched, config.faults, random.Random(seed ^ 0x5EED))
        trajectory = await run_agent(question, teacher, faulty,
                                     config=limits_for(question, config),
                                     tid=trajectory_id(question.qid, sample),
                                     sample=sample, seed=seed)
        if on_result is not None:
            on_result(trajectory)
        return trajectory if collect else None

    try:
        results = await bounded_map(one, jobs, limit=config.concurrency)
    finally:
        batcher.close()
    return [t for t in results if t is not None]
