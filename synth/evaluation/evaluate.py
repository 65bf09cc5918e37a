"""`hopforge eval` on a build: pick the tasks, run every cell, measure, and write DIR.

DIR/summary.json holds `{"eval": {...}, "ladders": [...], "runs": [...]}`, one run per
(budget, fault mix); DIR/report.md the table; DIR/success.png and DIR/onset.png the plots;
DIR/trajectories/budget-B_faults-F.jsonl the raw trajectories of each cell; DIR/handoffs.jsonl
the state of every handed-off run; DIR/tasks.jsonl the tasks of each budget.

Running the same eval again into the same DIR reuses every cell an earlier run finished with
the same teacher, settings and tasks (runner.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_bytes, write_json
from hopforge.corpus.search import Searcher, open_searcher
from hopforge.synth.evaluation.config import EvalConfig, EvalInputError
from hopforge.synth.evaluation.metrics import measure
from hopforge.synth.evaluation.plots import eval_plots
from hopforge.synth.evaluation.runner import Cell, cell_key, finished_cell, run_with, write_cell
from hopforge.synth.evaluation.stops import HANDOFFS, handoff_state
from hopforge.synth.evaluation.summary import min_calls_range, render_report, summarize_run
from hopforge.synth.evaluation.tasks import Ladder, build_questions, load_tasks, select_ladders
from hopforge.synth.teacher.chat import ChatModel

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalRequest:
    """Where the tasks come from and where the results go."""

    build: Path
    out: Path
    n: int | None = None  # tasks per budget (default 20)
    tasks: Path | None = None  # a JSONL file of questions instead of the build's


def ladders_for(request: EvalRequest, config: EvalConfig) -> tuple[list[Ladder], str]:
    """The tasks of each budget, and a line saying where they come from."""
    n = request.n or 20
    window = f"up to {n} per budget with min_calls in [budget/2, budget]"
    if request.tasks is not None:
        questions = load_tasks(request.tasks)
        if not questions:
            raise EvalInputError(f"--tasks {request.tasks} holds no questions: write one "
                                 "Question row (qid, question, answer, ...) per line")
        return select_ladders(questions, config.budgets, n, seed=config.seed), (
            f"questions of {request.tasks}, {window}")
    build = BuildDir.at(request.build)
    if not build.root.is_dir():
        raise EvalInputError(f"{build.root} is not a build directory: run `hopforge build` or "
                             "`hopforge demo` first, or pass --tasks FILE")
    questions = build_questions(build)
    if not questions:
        raise EvalInputError(f"{build.questions} holds no accepted questions: run "
                             f"`hopforge questions {build.root}` first, or pass --tasks FILE")
    return select_ladders(questions, config.budgets, n, seed=config.seed), (
        f"accepted questions of {build.root}, {window}")


def run_eval(request: EvalRequest, config: EvalConfig, *, model: ChatModel | None = None,
             searcher: Searcher | None = None, progress: Progress = None) -> dict[str, Any]:
    """Run the eval (`model` None: the scripted teacher) and write DIR; returns the summary."""
    started = time.perf_counter()
    ladders, source = ladders_for(request, config)
    if not any(ladder.tasks for ladder in ladders):
        raise EvalInputError("no task fits any budget: every question needs more tool calls "
                             "than the largest budget; raise --budgets or pass --tasks FILE")
    out = request.out
    out.mkdir(parents=True, exist_ok=True)
    searcher = searcher or open_searcher(BuildDir.at(request.build))
    titles = {d.doc_id: d.title for d in searcher.documents.values()}
    total = sum(len(ladder.tasks) for ladder in ladders) * len(config.faults)
    done = 0
    if progress is not None:
        progress(done, total)

    def on_result(_: Any) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    runs: list[dict[str, Any]] = []
    handoffs: list[dict[str, Any]] = []
    teacher = model.name if model else "scripted"
    keys = {(ladder.budget, faults): cell_key(teacher, config, ladder, faults)
            for ladder in ladders for faults in config.faults}

    def finished(ladder: Ladder, faults: str) -> Cell | None:
        return finished_cell(out, keys[ladder.budget, faults], ladder, faults)

    def on_cell(cell: Cell) -> None:
        by_qid = {q.qid: q for q in cell.tasks}
        results = [measure(t, by_qid[t.qid], titles) for t in cell.trajectories]
        write_cell(out, cell, keys[cell.budget, cell.faults])
        for t in cell.trajectories:
            if t.termination in HANDOFFS:
                handoffs.append({"budget": cell.budget, "faults": cell.faults,
                                 **handoff_state(t, by_qid[t.qid])})
        row = summarize_run(cell.budget, cell.faults, results,
                            cell_seconds=round(cell.seconds, 3),
                            per_task=[{"qid": r.qid, "min_calls": r.min_calls,
                                       "success": r.success, "turns": r.turns,
                                       "termination": r.termination, "onset": r.onset,
                                       **({"injected": cell.injected[r.tid][:3]}
                                          if cell.injected.get(r.tid) else {})}
                                      for r in results])
        runs.append(row)
        log.info("budget %d, faults %s: %d tasks, success %s, valid calls %s",
                 cell.budget, cell.faults, row["tasks"], row["success"], row["valid_call_rate"])

    asyncio.run(run_with(model, ladders, searcher, config, on_result=on_result,
                         on_cell=on_cell, finished=finished))
    summary = {
        "eval": {
            "build": str(request.build), "teacher": teacher,
            "budgets": list(config.budgets), "faults": list(config.faults),
            "injections": [str(i) for i in config.injections], "tasks_source": source,
            "seed": config.seed, "repeat_limit": config.repeat_limit,
            "plan_change_limit": config.plan_change_limit,
            "seconds": round(time.perf_counter() - started, 3),
        },
        "ladders": [{"budget": ladder.budget, "tasks": len(ladder.tasks),
                     "min_calls_range": min_calls_range(ladder.min_calls), "note": ladder.note}
                    for ladder in ladders],
        "runs": runs,
    }
    write_json(out / "summary.json", summary)
    atomic_write_bytes(out / "report.md", render_report(summary).encode("utf-8"))
    atomic_write_bytes(out / "handoffs.jsonl", "".join(
        json.dumps(h, ensure_ascii=False) + "\n" for h in handoffs).encode("utf-8"))
    atomic_write_bytes(out / "tasks.jsonl", "".join(
        json.dumps({"budget": ladder.budget, **q.to_row()}, ensure_ascii=False) + "\n"
        for ladder in ladders for q in ladder.tasks).encode("utf-8"))
    eval_plots(runs, out)
    return summary
