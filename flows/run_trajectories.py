"""Build-directory runner of the trajectories stage: questions in, trajectory parts out.

Accepted questions (empty `rejected`) are read from BUILD/questions in order and cut into parts
of `part_questions` questions; part i holds every sample of its questions, sorted. Finished
trajectories are appended to a hidden journal of their part as they come in, and the part is
written (atomically, then marked done) once all its trajectories are there. A killed run,
started again, keeps the done parts and the journaled trajectories and runs only the rest, so
its output equals that of an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import clear_parts, done_indexes, read_parts, write_json, write_part
from hopforge.corpus.search import Searcher
from hopforge.synth.chat import ChatModel
from hopforge.synth.records import TERMINATIONS, Question, Trajectory
from hopforge.synth.scripted_solver import ScriptedTeacher
from hopforge.synth.trajectories import (
    SPEED_FIELDS,
    TrajectoryConfig,
    run_trajectories,
    trajectory_id,
)

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None] | None
RUN_FILE = "run.json"


def accepted_questions(build: BuildDir) -> list[Question]:
    """The questions to solve: every row of BUILD/questions with an empty `rejected`, in order."""
    if not build.questions.is_dir():
        raise HopforgeError(
            f"no questions in {build.questions}: run `hopforge questions {build.root}` first"
        )
    questions = [Question.from_row(r) for r in read_parts(build.questions)]
    return [q for q in questions if not q.rejected]


def load_searcher(build: BuildDir) -> Searcher:
    """The build's index, or an in-memory BM25 index over its corpus when it has none."""
    if (build.index / "manifest.json").is_file():
        return Searcher.load(build)
    from hopforge.corpus.store import read_documents

    log.warning("no index in %s: searching an in-memory BM25 index of the corpus", build.index)
    return Searcher.from_documents(read_documents(build), dense=False)


def chunk(questions: Sequence[Question], size: int) -> list[list[Question]]:
    """Deterministic parts: consecutive runs of `size` questions."""
    return [list(questions[i : i + size]) for i in range(0, len(questions), size)]


def _journal(directory: Path, index: int) -> Path:
    return directory / f".part-{index:05d}.journal.jsonl"


def _read_journal(path: Path, expected: set[str]) -> dict[str, str]:
    """Complete, expected lines of a journal (a line cut by a kill is ignored)."""
    rows: dict[str, str] = {}
    if not path.is_file():
        return rows
    for line in path.read_text("utf-8").splitlines():
        try:
            tid = json.loads(line)["tid"]
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
        if tid in expected:
            rows[tid] = line
    return rows


class _PartWriter:
    """Collects finished trajectories per part, journals them, writes each part when full."""

    def __init__(self, directory: Path, expected: dict[int, list[str]],
                 journaled: dict[int, dict[str, str]]) -> None:
        self.directory = directory
        self.expected = expected
        self.part_of = {tid: i for i, tids in expected.items() for tid in tids}
        self.rows = journaled
        self.handles: dict[int, IO[str]] = {}
        self.parts_written = 0

    def add(self, trajectory: Trajectory) -> None:
        index = self.part_of[trajectory.tid]
        line = json.dumps(trajectory.to_row(), ensure_ascii=False, sort_keys=True)
        handle = self.handles.get(index)
        if handle is None:
            path = _journal(self.directory, index)
            handle = self.handles[index] = path.open("a", encoding="utf-8")
        handle.write(line + "\n")
        handle.flush()
        self.rows.setdefault(index, {})[trajectory.tid] = line
        self.finish(index)

    def finish(self, index: int) -> None:
        """Write part `index` if all its trajectories are in."""
        rows = self.rows.get(index, {})
        if len(rows) < len(self.expected[index]):
            return
        write_part(self.directory, index, (json.loads(rows[t]) for t in self.expected[index]))
        self.parts_written += 1
        handle = self.handles.pop(index, None)
        if handle is not None:
            handle.close()
        _journal(self.directory, index).unlink(missing_ok=True)
        del self.rows[index]

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()


def _run_hash(config: TrajectoryConfig, teacher: str, questions: Sequence[Question]) -> str:
    settings = {k: v for k, v in dataclasses.asdict(config).items() if k not in SPEED_FIELDS}
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
    questions = accepted_questions(build)
    directory = build.trajectories
    directory.mkdir(parents=True, exist_ok=True)
    teacher_name = teacher.name if teacher is not None else "scripted"
    run_hash = _run_hash(config, teacher_name, questions)
    _check_run(directory, run_hash, force)
    write_json(directory / RUN_FILE, {"hash": run_hash, "teacher": teacher_name,
                                      "questions": len(questions), "samples": config.samples})
    parts = chunk(questions, config.part_questions)
    expected = {i: [trajectory_id(q.qid, s) for q in part for s in range(config.samples)]
                for i, part in enumerate(parts)}
    done = done_indexes(directory)
    pending = [i for i in expected if i not in done]
    journaled = {i: _read_journal(_journal(directory, i), set(expected[i])) for i in pending}
    writer = _PartWriter(directory, {i: expected[i] for i in pending}, journaled)
    reused = sum(len(rows) for rows in journaled.values())
    for i in pending:
        writer.finish(i)  # a run killed after its last trajectory but before the part was written
    pending = [i for i in pending if i in writer.rows]
    todo_questions = [q for i in pending for q in parts[i]]
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
        searcher = searcher or load_searcher(build)
        try:
            asyncio.run(_run(todo_questions, searcher, teacher, config, on_result, skip))
        finally:
            writer.close()
    answers = {q.qid: (q.answer, *q.answer_aliases) for q in questions}
    report = trajectory_report(read_parts(directory), answers)
    report["run"] = {
        "seconds": round(time.perf_counter() - started, 3),
        "teacher": teacher_name,
        "questions": len(questions),
        "parts": len(parts),
        "parts_written": writer.parts_written,
        "parts_already_done": len(done),
        "trajectories_reused_from_journal": reused,
    }
    write_json(build.reports / "trajectories.json", report)
    return report


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
        await run_trajectories(questions, searcher, lambda q, s, seed: model, config=config,
                               on_result=on_result, skip=skip, collect=False)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


def _norm(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def _percentile(sorted_values: list[int], q: float) -> int:
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def trajectory_report(rows: Iterable[dict[str, Any]],
                      answers: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """Stage statistics over trajectory rows: terminations, turns, faults, annotations, usage."""
    terminations: Counter[str] = Counter({t: 0 for t in TERMINATIONS})
    faults: Counter[str] = Counter()
    turns: list[int] = []
    teachers: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    for row in rows:
        terminations[row["termination"]] += 1
        teachers[row["teacher"]] += 1
        turns.append(len(row["turns"]))
        counts["checkpoints"] += len(row.get("checkpoints") or ())
        counts["answered"] += bool(row.get("final_answer"))
        gold = (answers or {}).get(row["qid"])
        if gold and row.get("final_answer"):
            counts["answer_matches"] += _norm(row["final_answer"]) in {_norm(a) for a in gold}
        for key in ("prompt_tokens", "completion_tokens"):
            usage[key] += row["usage"][key]
        usage["seconds"] += row["usage"]["seconds"]
        for t in row["turns"]:
            counts["schema_invalid"] += not t["schema_valid"]
            counts["args_invalid"] += t["schema_valid"] and not t["args_valid"]
            counts["repeats"] += t["repeat_of"] is not None
            counts["new_evidence_turns"] += bool(t["new_evidence"])
            counts["recovered"] += bool(t["recovered"])
            if t["fault"]:
                f = t["fault"]
                faults[f"{f['kind']}:{'persistent' if f['persistent'] else 'transient'}"] += 1
    turns.sort()
    edges = (1, 5, 10, 20, 50, 100, 200, 600)
    histogram: list[dict[str, Any]] = []  # a list: bins keep their order in the JSON file
    lo = 0
    for hi in (*edges, None):
        label = f"{lo + 1}-{hi}" if hi is not None else f">{lo}"
        count = sum(1 for n in turns if n > lo and (hi is None or n <= hi))
        histogram.append({"turns": label, "trajectories": count})
        lo = hi if hi is not None else lo
    return {
        "trajectories": len(turns),
        "teachers": dict(teachers),
        "terminations": dict(terminations),
        "turns": {
            "total": sum(turns),
            "mean": round(sum(turns) / len(turns), 2) if turns else 0.0,
            "min": turns[0] if turns else 0,
            "p50": _percentile(turns, 0.5),
            "p90": _percentile(turns, 0.9),
            "max": turns[-1] if turns else 0,
            "histogram": histogram,
        },
        "faults": dict(sorted(faults.items())),
        "annotations": dict(sorted(counts.items())),
        "usage": {k: round(v, 3) if isinstance(v, float) else v for k, v in usage.items()},
    }
