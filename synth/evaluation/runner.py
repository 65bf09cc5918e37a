"""Run the tasks of every (budget, fault mix) cell through the trajectories stage's agent loop.

Each cell is one `run_trajectories` call with the budget as `max_turns` and the fault preset as
the fault layer, so an eval sees the same loop, tools, context and faults as a build. The agent
loop's no-progress rule (gold evidence only) is switched off in favour of the eval's
plan-change stop (synth/evaluation/stops.py), which also counts an aggregation's items.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.synth.evaluation.injections import InjectingTeacher, Injection
from hopforge.synth.evaluation.presets import FAULT_PRESETS, fault_preset
from hopforge.synth.evaluation.stops import plan_change_stop
from hopforge.synth.evaluation.tasks import Ladder
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import (
    TeacherFactory,
    TrajectoryConfig,
    run_trajectories,
    trajectory_id,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalConfig:
    """What an eval runs: budgets, fault mixes, injections, and the agent loop's settings."""

    budgets: tuple[int, ...] = (10, 50, 100, 600)
    faults: tuple[str, ...] = ("none", "light", "heavy")
    injections: tuple[Injection, ...] = ()
    seed: int = 0
    concurrency: int = 16
    repeat_limit: int = 3  # a call repeated more than this within repeat_window: handoff
    repeat_window: int = 20
    plan_change_limit: int = 10  # plan changes in a row without new evidence: handoff
    checkpoint_every: int = 16
    keep_results: int = 5
    context_tokens: int = 32_768
    max_tokens: int = 1024
    temperature: float = 0.7
    # the scripted reference takes no deliberate detours and gives no early (wrong) answers:
    # it shows what the harness reports for a teacher that follows the plan
    scripted: ScriptedConfig = field(
        default_factory=lambda: ScriptedConfig(wrong_doc=0.0, early_answer=0.0))
    presets: Mapping[str, FaultConfig] = field(default_factory=lambda: dict(FAULT_PRESETS))

    def __post_init__(self) -> None:
        if not self.budgets or not self.faults:
            raise HopforgeError("EvalConfig needs at least one budget and one fault mix")
        if not 1 <= self.plan_change_limit <= 100_000:
            raise HopforgeError(f"EvalConfig.plan_change_limit = {self.plan_change_limit!r} is "
                                "out of range: use 1 to 100000")
        for name in self.faults:
            if name not in self.presets:
                fault_preset(name)  # raises with the list of presets

    def trajectory_config(self, budget: int, faults: str) -> TrajectoryConfig:
        """The trajectories stage's config for one cell."""
        return TrajectoryConfig(
            max_turns=budget, concurrency=self.concurrency, keep_results=self.keep_results,
            checkpoint_every=self.checkpoint_every, context_tokens=self.context_tokens,
            max_tokens=self.max_tokens, temperature=self.temperature,
            repeat_limit=self.repeat_limit, repeat_window=self.repeat_window,
            no_progress_turns=budget + 1, seed=self.seed, faults=self.presets[faults],
            scripted=self.scripted,
        )


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
