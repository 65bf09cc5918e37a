"""Build-directory runner of the trajectories stage: questions in, trajectory parts out.

Accepted questions (empty `rejected`) are read from BUILD/questions in order and cut into parts
of `part_questions` questions; part i holds every sample of its questions, sorted. Finished
trajectories are appended to a hidden journal of their part as they come in, and the part is
written (atomically, then marked done) once all its trajectories are there. A killed run,
started again, keeps the done parts and the journaled trajectories and runs only the rest, so
its output equals that of an uninterrupted run.

Two ways to run it. `run_trajectories_build` runs every pending part in this process, batching
the searches of all trajectories in flight. `plan_trajectory_parts`, then `run_trajectory_part`
for each pending part (in any process, on any machine that mounts the build directory), then
`finish_trajectories_build` spread the parts over a cluster's workers. A trajectory's seed
depends only on its question and sample, so both ways write the same records.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.names import NameIndex
from hopforge.corpus.parts import clear_parts, done_indexes, done_parts, read_parts, write_json
from hopforge.corpus.search import Searcher, open_searcher
from hopforge.corpus.settings import operational
from hopforge.corpus.store import read_documents
from hopforge.flows.stages.trajectory_journal import PartWriter, journal_path, read_journal
from hopforge.flows.stages.trajectory_report import trajectory_report
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.trajectories.fairness import Choice, choices
from hopforge.synth.trajectories.scripted import ScriptedTeacher
from hopforge.synth.trajectories.stage import (
    TrajectoryConfig,
    run_trajectories,
    trajectory_id,
)

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None] | None
RUN_FILE = "run.json"
_CACHE_LOCK = threading.Lock()  # for what a worker process keeps between parts


def accepted_questions(build: BuildDir) -> list[Question]:
    """The questions to solve: every row of BUILD/questions with an empty `rejected`, in order."""
    if not build.questions.is_dir():
        raise HopforgeError(
            f"no questions in {build.questions}: run `hopforge questions {build.root}` first"
        )
    questions = [Question.from_row(r) for r in read_parts(build.questions)]
    return [q for q in questions if not q.rejected]


def chunk(questions: Sequence[Question], size: int) -> list[list[Question]]:
    """Deterministic parts: consecutive runs of `size` questions."""
    return [list(questions[i : i + size]) for i in range(0, len(questions), size)]


def _run_hash(config: TrajectoryConfig, teacher: str, questions: Sequence[Question]) -> str:
    skip = operational(TrajectoryConfig)
    settings = {k: v for k, v in dataclasses.asdict(config).items() if k not in skip}
    settings["faults"].pop("timeout_delay_s", None)
    body = json.dumps({"config": settings, "teacher": teacher,
                       "questions": [q.qid for q in questions]}, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _check_run(directory: Path, run_hash: str, force: bool) -> None:
    path = directory / RUN_FILE
    if force:
        clear_parts(directory)
        return
    changed = path.is_file() and json.loads(path.read_text("utf-8")).get("hash") != run_hash
    if changed and (done_indexes(directory) or any(directory.glob(".part-*.journal.jsonl"))):
        raise HopforgeError(
            f"{directory} holds trajectories made with other settings, teacher or questions: "
            "rerun with the same options to continue, or pass --force to start over"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _QuestionParts:
    """A run's accepted questions cut into parts, with the trajectory ids each part holds."""

    teacher: str
    questions: list[Question]
    parts: list[list[Question]]
    expected: dict[int, list[str]]
    hash: str


_QUESTIONS: dict[tuple[Any, ...], list[Question]] = {}


def _accepted_cached(build: BuildDir) -> list[Question]:
    """`accepted_questions`, kept while the question parts on disk stay the same (a worker
    reads them once, not once per part)."""
    key = tuple((str(p.resolve()), p.stat().st_mtime_ns, p.stat().st_size)
                for p in done_parts(build.questions))
    with _CACHE_LOCK:
        questions = _QUESTIONS.get(key)
    if questions is None:
        questions = accepted_questions(build)
        with _CACHE_LOCK:
            _QUESTIONS.clear()
            _QUESTIONS[key] = questions
    return questions


def _prepare(build: BuildDir, config: TrajectoryConfig, teacher: str, *,
             cached: bool = False) -> _QuestionParts:
    questions = _accepted_cached(build) if cached else accepted_questions(build)
    parts = chunk(questions, config.part_questions)
    expected = {i: [trajectory_id(q.qid, s) for q in part for s in range(config.samples)]
                for i, part in enumerate(parts)}
    return _QuestionParts(teacher=teacher, questions=questions, parts=parts, expected=expected,
                          hash=_run_hash(config, teacher, questions))


def _start(build: BuildDir, run: _QuestionParts, config: TrajectoryConfig, force: bool) -> None:
    directory = build.trajectories
    directory.mkdir(parents=True, exist_ok=True)
    _check_run(directory, run.hash, force)
    write_json(directory / RUN_FILE, {"hash": run.hash, "teacher": run.teacher,
                                      "questions": len(run.questions), "samples": config.samples})


def _write_report(build: BuildDir, run: _QuestionParts, info: dict[str, Any]) -> dict[str, Any]:
    answers = {q.qid: (q.answer, *q.answer_aliases) for q in run.questions}
    specs = {q.qid: q.spec for q in run.questions}
    names = NameIndex(read_documents(build)) if build.corpus.is_dir() else None

    def check(traj: Trajectory) -> list[Choice]:
        spec = specs.get(traj.qid)
        return choices(traj, spec, names) if spec is not None and names is not None else []

    report = trajectory_report(read_parts(build.trajectories), answers, check)
    report["run"] = info
    write_json(build.reports / "trajectories.json", report)
    return report


def _here() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_trajectories_build(
    build: BuildDir,
    config: TrajectoryConfig,
    *,
    teacher: ChatModel | None = None,
    searcher: Searcher | None = None,
    force: bool = False,
    progress: Progress = None,
) -> dict[str, Any]:
    """Solve the build's accepted questions; `teacher` None means the scripted teacher.

    Writes BUILD/trajectories/part-*.jsonl and BUILD/reports/trajectories.json; returns the report.
    """
    started = time.perf_counter()
    run = _prepare(build, config, teacher.name if teacher is not None else "scripted")
    _start(build, run, config, force)
    directory = build.trajectories
    expected = run.expected
    done = done_indexes(directory)
    pending = [i for i in expected if i not in done]
    journaled = {i: read_journal(journal_path(directory, i), set(expected[i]))
                 for i in pending}
    writer = PartWriter(directory, {i: expected[i] for i in pending}, journaled)
    reused = sum(len(rows) for rows in journaled.values())
    for i in pending:
        writer.finish(i)  # a run killed after its last trajectory but before the part was written
    pending = [i for i in pending if i in writer.rows]
    todo_questions = [q for i in pending for q in run.parts[i]]
    skip = {tid for rows in writer.rows.values() for tid in rows}
    total = sum(len(t) for t in expected.values())
    finished = total - sum(len(expected[i]) for i in pending) + len(skip)
    if progress is not None:
        progress(finished, total)

    def on_result(trajectory: Trajectory) -> None:
        nonlocal finished
        writer.add(trajectory)
        finished += 1
        if progress is not None:
            progress(finished, total)

    if todo_questions:
        searcher = searcher or open_searcher(build)
        try:
            asyncio.run(_run(todo_questions, searcher, teacher, config, on_result, skip))
        finally:
            writer.close()
    return _write_report(build, run, {
        "seconds": round(time.perf_counter() - started, 3),
        "teacher": run.teacher,
        "questions": len(run.questions),
        "parts": len(run.parts),
        "parts_written": writer.parts_written,
        "parts_already_done": len(done),
        "trajectories_reused_from_journal": reused,
        "ran_on": {_here(): writer.parts_written} if writer.parts_written else {},
    })


@dataclass(frozen=True, slots=True, kw_only=True)
class PartPlan:
    """The parts of a planned run: trajectories per part (by index), and the parts not done."""

    sizes: tuple[int, ...]
    pending: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.sizes)

    @property
    def finished(self) -> int:
        """Trajectories in done parts."""
        return self.total - sum(self.sizes[i] for i in self.pending)


def plan_trajectory_parts(
    build: BuildDir, config: TrajectoryConfig, *, teacher: str = "scripted", force: bool = False
) -> PartPlan:
    """Start or continue a run by `teacher` (its name: "scripted", "openai:MODEL"); its parts.

    Then `run_trajectory_part` for each pending part, anywhere, and `finish_trajectories_build`.
    """
    run = _prepare(build, config, teacher)
    _start(build, run, config, force)
    done = done_indexes(build.trajectories)
    return PartPlan(sizes=tuple(len(run.expected[i]) for i in range(len(run.parts))),
                    pending=tuple(i for i in range(len(run.parts)) if i not in done))


def run_trajectory_part(
    build: BuildDir,
    config: TrajectoryConfig,
    index: int,
    *,
    teacher: ChatModel | None = None,
    searcher: Searcher | None = None,
) -> dict[str, Any]:
    """Solve part `index` of a planned run and write it; returns what it did and where it ran.

    Trajectories already in the part's journal are kept, not run again; a done part is left as
    it is. The searcher defaults to the build's index, loaded once per process.
    """
    started = time.perf_counter()
    run = _prepare(build, config, teacher.name if teacher is not None else "scripted",
                   cached=True)
    directory = build.trajectories
    path = directory / RUN_FILE
    planned = json.loads(path.read_text("utf-8")).get("hash") if path.is_file() else None
    if planned != run.hash:
        raise HopforgeError(
            f"{directory} is not planned for these settings, teacher and questions: call "
            "plan_trajectory_parts with them first (`hopforge build` does)"
        )
    if index not in run.expected:
        raise HopforgeError(
            f"trajectory part {index} does not exist: this run has parts 0 to {len(run.parts) - 1}"
        )
    meta: dict[str, Any] = {"part": index, "trajectories": len(run.expected[index]), "ran": 0,
                            "reused": 0, "written": False, "ran_on": _here()}
    if index in done_indexes(directory):
        return {**meta, "seconds": round(time.perf_counter() - started, 3)}
    journaled = read_journal(journal_path(directory, index), set(run.expected[index]))
    writer = PartWriter(directory, {index: run.expected[index]}, {index: dict(journaled)})
    writer.finish(index)  # complete in the journal: killed before the part was written
    ran = 0

    def on_result(trajectory: Trajectory) -> None:
        nonlocal ran
        writer.add(trajectory)
        ran += 1

    if index in writer.rows:
        searcher = searcher or open_searcher(build)
        try:
            asyncio.run(_run(run.parts[index], searcher, teacher, config, on_result,
                             set(journaled)))
        finally:
            writer.close()
    return {**meta, "ran": ran, "reused": len(journaled), "written": writer.parts_written > 0,
            "seconds": round(time.perf_counter() - started, 3)}


def finish_trajectories_build(
    build: BuildDir,
    config: TrajectoryConfig,
    *,
    teacher: str = "scripted",
    parts: Sequence[Mapping[str, Any]] = (),
    seconds: float = 0.0,
) -> dict[str, Any]:
    """Write the report of a run whose parts are all done; `parts`: what each part run returned."""
    run = _prepare(build, config, teacher)
    missing = sorted(set(run.expected) - done_indexes(build.trajectories))
    if missing:
        raise HopforgeError(
            f"{len(missing)} of {len(run.parts)} trajectory parts in {build.trajectories} are "
            f"not done (first: {missing[0]}): run them with run_trajectory_part, or rerun the build"
        )
    written = [p for p in parts if p["written"]]
    return _write_report(build, run, {
        "seconds": round(seconds, 3),
        "teacher": run.teacher,
        "questions": len(run.questions),
        "parts": len(run.parts),
        "parts_written": len(written),
        "parts_already_done": len(run.parts) - len(written),
        "trajectories_reused_from_journal": sum(p["reused"] for p in parts),
        "ran_on": dict(sorted(Counter(str(p["ran_on"]) for p in written).items())),
    })


async def _fit_context(model: ChatModel, config: TrajectoryConfig) -> TrajectoryConfig:
    """`config` with its context budget cut to the server's `max_model_len` when that is smaller."""
    window = getattr(model, "context_window", None)
    limit = await window() if window is not None else None
    if not limit or limit >= config.context_tokens:
        return config
    if config.max_tokens * 2 > limit:
        raise HopforgeError(
            f"the model server's context is {limit} tokens (max_model_len), too small for "
            f"max_tokens = {config.max_tokens} per turn: lower [trajectories] max_tokens to at "
            f"most {limit // 2}, or serve the model with a larger --max-model-len"
        )
    log.warning("the model server's context is %d tokens (max_model_len): using it instead of "
                "context_tokens = %d", limit, config.context_tokens)
    return dataclasses.replace(config, context_tokens=limit)


async def _run(
    questions: list[Question],
    searcher: Searcher,
    teacher: ChatModel | None,
    config: TrajectoryConfig,
    on_result: Callable[[Trajectory], None],
    skip: set[str],
) -> None:
    if teacher is None:
        docs = searcher.documents

        def scripted(question: Question, sample: int, seed: int) -> ChatModel:
            return ScriptedTeacher(question, docs, seed=seed, config=config.scripted)

        await run_trajectories(questions, searcher, scripted, config=config,
                               on_result=on_result, skip=skip, collect=False)
        return
    model = teacher
    enter = getattr(model, "__aenter__", None)
    if enter is not None:
        await enter()
    try:
        config = await _fit_context(model, config)
        await run_trajectories(questions, searcher, lambda q, s, seed: model, config=config,
                               on_result=on_result, skip=skip, collect=False)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
