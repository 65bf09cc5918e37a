"""Run the tasks of every (budget, fault mix) cell through the trajectories stage's agent loop.

Each cell is one `run_trajectories` call with the budget as `max_turns` and the fault preset as
the fault layer, so an eval sees the same loop, tools, context and faults as a build. The agent
loop's no-progress rule (gold evidence only) is switched off in favour of the eval's
plan-change stop (stops.py), which also counts an aggregation's items.

A finished cell's trajectories are written to DIR/trajectories/budget-B_faults-F.jsonl as soon
as it ends, then a `.cell.json` beside them with the key of what made them (teacher, settings,
tasks); `finished_cell` gives such a cell back to a later run with the same key, so a dead
server or a kill costs only the cell that was running.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopforge.corpus.parts import atomic_write_bytes, write_json
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.synth.evaluation.config import EvalConfig
from hopforge.synth.evaluation.injections import InjectingTeacher
from hopforge.synth.evaluation.stops import plan_change_stop
from hopforge.synth.evaluation.tasks import Ladder
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.trajectories.scripted import ScriptedTeacher
from hopforge.synth.trajectories.stage import TeacherFactory, run_trajectories, trajectory_id

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """The trajectories of one (budget, fault mix) and how long the cell took."""

    budget: int
    faults: str
    tasks: tuple[Question, ...]
    trajectories: tuple[Trajectory, ...]
    seconds: float
    injected: Mapping[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)  # by tid


def teacher_factory(model: ChatModel | None, documents: Mapping[str, Document],
                    config: EvalConfig,
                    injecting: dict[str, InjectingTeacher] | None = None) -> TeacherFactory:
    """One teacher per task: the scripted teacher (model None) or `model`, with injections;
    each injecting wrapper is kept in `injecting` under its trajectory id."""
    def make(question: Question, sample: int, seed: int) -> ChatModel:
        base: ChatModel = model if model is not None else ScriptedTeacher(
            question, documents, seed=seed, config=config.scripted)
        if not config.injections:
            return base
        wrapper = InjectingTeacher(base, config.injections, question, documents)
        if injecting is not None:
            injecting[trajectory_id(question.qid, sample)] = wrapper
        return wrapper

    return make


async def run_cells(
    ladders: Sequence[Ladder],
    searcher: Searcher,
    model: ChatModel | None,
    config: EvalConfig,
    *,
    on_result: Callable[[Trajectory], None] | None = None,
    on_cell: Callable[[Cell], None] | None = None,
    finished: Callable[[Ladder, str], Cell | None] | None = None,
) -> list[Cell]:
    """Every budget's ladder under every fault mix, cell after cell; `finished` gives a cell an
    earlier run already finished (it is not run again)."""
    cells = []
    for ladder in ladders:
        by_qid = {q.qid: q for q in ladder.tasks}
        for faults in config.faults:
            earlier = finished(ladder, faults) if finished is not None else None
            if earlier is not None:
                if on_result is not None:
                    for t in earlier.trajectories:
                        on_result(t)
                if on_cell is not None:
                    on_cell(earlier)
                cells.append(earlier)
                continue
            injecting: dict[str, InjectingTeacher] = {}
            factory = teacher_factory(model, searcher.documents, config, injecting)
            started = time.perf_counter()
            runs = await run_trajectories(list(ladder.tasks), searcher, factory,
                                          config=config.trajectory_config(ladder.budget, faults),
                                          on_result=on_result)
            runs = [plan_change_stop(t, by_qid[t.qid], config.plan_change_limit) for t in runs]
            cell = Cell(budget=ladder.budget, faults=faults, tasks=ladder.tasks,
                        trajectories=tuple(runs), seconds=time.perf_counter() - started,
                        injected={tid: tuple(w.injected) for tid, w in injecting.items()})
            if on_cell is not None:
                on_cell(cell)
            cells.append(cell)
    return cells


async def run_with(model: ChatModel | None, ladders: Sequence[Ladder], searcher: Searcher,
                   config: EvalConfig, **callbacks: Any) -> list[Cell]:
    """`run_cells` (`callbacks`: its keyword arguments) with `model` opened first, when it is
    an async context, and closed after."""
    enter = getattr(model, "__aenter__", None)
    if enter is not None:
        await enter()
    try:
        return await run_cells(ladders, searcher, model, config, **callbacks)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


def cell_path(out: Path, budget: int, faults: str) -> Path:
    """DIR/trajectories/budget-B_faults-F.jsonl: the raw trajectories of one cell."""
    return out / "trajectories" / f"budget-{budget}_faults-{faults}.jsonl"


def cell_key(teacher: str, config: EvalConfig, ladder: Ladder, faults: str) -> str:
    """What makes a cell's trajectories: the teacher, the settings, the budget, mix and tasks."""
    settings = {k: v for k, v in dataclasses.asdict(config).items()
                if k not in ("budgets", "faults", "concurrency")}
    body = {"teacher": teacher, "settings": settings, "budget": ladder.budget,
            "faults": faults, "tasks": [q.qid for q in ladder.tasks]}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def write_cell(out: Path, cell: Cell, key: str) -> Path:
    """Write a finished cell's trajectories, then its `.cell.json` (which marks it finished)."""
    path = cell_path(out, cell.budget, cell.faults)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(t.to_row(), ensure_ascii=False) + "\n" for t in cell.trajectories)
    atomic_write_bytes(path, body.encode("utf-8"))
    meta = {"key": key, "seconds": round(cell.seconds, 3),
            "injected": {tid: [list(i) for i in v] for tid, v in cell.injected.items()}}
    write_json(path.with_suffix(".cell.json"), meta)  # last: the cell counts as finished
    return path


def finished_cell(out: Path, key: str, ladder: Ladder, faults: str) -> Cell | None:
    """The cell an earlier run finished in `out` with `key`, or None when it has to run."""
    path = cell_path(out, ladder.budget, faults)
    meta_path = path.with_suffix(".cell.json")
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
        if meta.get("key") != key:
            return None
        runs = tuple(Trajectory.from_row(json.loads(line))
                     for line in path.read_text("utf-8").splitlines() if line.strip())
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not finished, or from other settings: run it
    if {t.qid for t in runs} != {q.qid for q in ladder.tasks}:
        return None
    log.info("budget %d, faults %s: reusing the %d trajectories of an earlier run (%s)",
             ladder.budget, faults, len(runs), path)
    return Cell(budget=ladder.budget, faults=faults, tasks=ladder.tasks, trajectories=runs,
                seconds=float(meta.get("seconds", 0.0)),
                injected={tid: tuple((int(t), str(m)) for t, m in v)
                          for tid, v in (meta.get("injected") or {}).items()})
