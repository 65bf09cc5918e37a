"""Run a build stage by stage on its directory: the plain engine under the Prefect flow.

`prepare_build` checks the directory against the settings and writes the frozen config;
`run_stage` runs one stage (or skips it when its done-marker matches); `run_build` runs them
all in order without Prefect. The Prefect flow in flows/build/flow.py calls the same functions, and
`begin_parts`, `run_stage_part` on each pending part (on a cluster's workers) and
`finish_parts` to spread a stage's parts; data goes down and results come back, no callbacks.
A build's config is read once: `run_build` passes the one it was given to every stage as a
`BuildContext`; a stage run without one reads BUILD/build.toml once per process (`open_build`).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.context import BuildContext, open_build
from hopforge.flows.build.markers import (
    LOCK,
    PREFECT_HOME,
    build_lock,
    check_stage,
    drop_markers,
    output_digest,
    plan_rerun,
    read_marker,
    remove_temporaries,
    reset_outputs,
    stage_key,
    stage_outputs,
    write_frozen_config,
    write_marker,
)
from hopforge.flows.build.registry import STAGES, find_stage, parted_stage
from hopforge.flows.config.build_file import BuildConfig, load_config, read_frozen_hash, today_utc
from hopforge.flows.config.demo import DEMO_CONFIG_NAME, demo_config

log = logging.getLogger(__name__)
if TYPE_CHECKING:
    from hopforge.flows.stages.trajectories import PartPlan

Progress = Callable[[int, int], None] | None
# Runs `run_stage_part` for each given part index (anywhere) and yields each result as it ends.


@dataclass(frozen=True, slots=True, kw_only=True)
class StageResult:
    """What one stage did: ran or was skipped, its statistics and how long it took."""

    stage: str
    status: str  # "ran" | "resumed" | "skipped"
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_row(self) -> dict[str, Any]:
        return {"stage": self.stage, "status": self.status, "stats": self.stats,
                "seconds": round(self.seconds, 3)}


def prepare_build(
    config: BuildConfig,
    *,
    from_stage: str | None = None,
    force: Sequence[str] = (),
    today: str = "",
    check_only: bool = False,
) -> BuildDir:
    """Check the build directory against `config`, drop markers of stages to redo, freeze config.

    `check_only` raises the same errors without changing anything (to fail before Prefect starts).
    """
    if from_stage:
        check_stage(from_stage, "--from")
    for stage in force:
        check_stage(stage, "--force")
    build = BuildDir.at(config.out_dir(today).resolve())
    root = build.root
    if root.exists() and not root.is_dir():
        raise HopforgeError(f"{root} is a file; pick a directory for --out")
    if root.is_dir() and any(p.name not in (LOCK, PREFECT_HOME) for p in root.iterdir()) \
            and not build.config.exists():
        raise HopforgeError(
            f"{root} is not empty and holds no build.toml, so it is not a hopforge build "
            "directory; pick an empty or new directory for --out"
        )
    hashes = config.stage_hashes()
    redo = plan_rerun(build, hashes, from_stage=from_stage, force=force, apply=not check_only)
    if check_only:
        return build
    if redo:
        log.info("starting over: %s", ", ".join(redo))
    text = config.frozen_toml()
    old = build.config.read_text(encoding="utf-8") if build.config.exists() else ""
    if old != text:
        if old and read_frozen_hash(old) != config.config_hash():
            log.info("settings changed since the last run of %s", root)
        write_frozen_config(build, text)
    return build


def load_build_config(build: BuildDir) -> BuildConfig:
    """The frozen config of a prepared build directory (read once per process)."""
    return open_build(build.root).config


def _current_key(build: BuildDir, stage: str, config: BuildConfig, extra: str) -> str:
    i = STAGES.index(stage)
    previous = read_marker(build, STAGES[i - 1], "done") if i else None
    if i and previous is None:
        return ""
    return stage_key(stage, config.stage_hashes()[stage], previous, extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class StageRun:
    """A stage that was started (its start-marker written) and has not finished yet."""

    stage: str
    key: str
    config_hash: str
    resume: bool
    started: float  # time.perf_counter() of this process when the stage started


def begin_stage(build_root: str | Path, stage: str, context: BuildContext | None = None, *,
                reset: bool = True) -> StageRun | StageResult:
    """Start a stage: its skipped result when it is done already, else the started run.

    `reset=False` keeps the outputs of a resumable stage that is not resumed (a per-stage
    command's runner checks them against its own settings).
    """

    context = context or open_build(build_root)
    build, config = context.build, context.config
    i = STAGES.index(stage)
    if i and read_marker(build, STAGES[i - 1], "done") is None:
        raise HopforgeError(f"stage {stage} needs {STAGES[i - 1]} to finish first")
    config_hash = config.stage_hashes()[stage]
    key = _current_key(build, stage, config, find_stage(stage).fingerprint(config))
    done = read_marker(build, stage, "done")
    if done and done.get("key") == key and all(p.exists() for p in stage_outputs(build, stage)[:1]):
        log.info("%s: done already, skipped", stage)
        return StageResult(stage=stage, status="skipped", stats=done.get("stats", {}))
    start = read_marker(build, stage, "start")
    resume = bool(start and start.get("key") == key and find_stage(stage).resumable)
    drop_markers(build, stage)
    if reset and not resume and find_stage(stage).resumable:
        reset_outputs(build, stage)
    remove_temporaries(stage_outputs(build, stage))
    write_marker(build, stage, "start", {"stage": stage, "key": key, "config_hash": config_hash})
    log.info("%s: %s", stage, "resuming" if resume else "running")
    return StageRun(stage=stage, key=key, config_hash=config_hash, resume=resume,
                    started=time.perf_counter())


def finish_stage(build_root: str | Path, run: StageRun, stats: dict[str, Any],
                 extra: dict[str, Any] | None = None) -> StageResult:
    """Write the done-marker of a started stage (with `extra` fields) and return its result."""
    build = BuildDir.at(Path(build_root))
    seconds = time.perf_counter() - run.started
    # every part is written: a temporary left now is a killed writer's (a Ray worker lost
    # mid-part, whose part another worker wrote again)
    remove_temporaries(stage_outputs(build, run.stage))
    write_marker(build, run.stage, "done", {
        "stage": run.stage, "key": run.key, "config_hash": run.config_hash,
        "seconds": round(seconds, 3),
        "output": output_digest(stage_outputs(build, run.stage)), "stats": stats,
        "ran_on": f"{socket.gethostname()}:{os.getpid()}", **(extra or {}),
    })
    return StageResult(stage=run.stage, status="resumed" if run.resume else "ran", stats=stats,
                       seconds=seconds)


def run_stage(
    build_root: str | Path,
    stage: str,
    *,
    progress: Progress = None,
    context: BuildContext | None = None,
) -> StageResult:
    """Run one stage of a prepared build (skipped when done with the same key); returns stats.

    `context`: the build as its caller holds it; None reads BUILD/build.toml (once per process).
    """

    context = context or open_build(build_root)
    begun = begin_stage(build_root, stage, context)
    if isinstance(begun, StageResult):
        return begun
    stats = find_stage(stage).run(context, progress)
    return finish_stage(build_root, begun, stats)


@dataclass(frozen=True, slots=True, kw_only=True)
class PartedRun:
    """A parted stage that was started: its run and the plan of its parts."""

    run: StageRun
    plan: PartPlan

    def collect(self, results: Iterable[dict[str, Any]],
                progress: Progress = None) -> list[dict[str, Any]]:
        """The pending parts' results as they arrive, with the trajectories done reported."""
        finished, out = self.plan.finished, []
        if progress is not None:
            progress(finished, self.plan.total)
        for result in results:
            out.append(result)
            finished += self.plan.sizes[result["part"]]
            if progress is not None:
                progress(finished, self.plan.total)
        return out


def begin_parts(build_root: str | Path, stage: str,
                context: BuildContext | None = None) -> PartedRun | StageResult:
    """Start a stage that runs part by part: its skipped result when done, else its plan.

    The caller runs `run_stage_part` on each index of `plan.pending` (on any worker that
    mounts the build directory), gathers the results with `collect` and hands them to
    `finish_parts`.
    """
    parted = parted_stage(stage)
    context = context or open_build(build_root)
    begun = begin_stage(build_root, stage, context)
    if isinstance(begun, StageResult):
        return begun
    return PartedRun(run=begun, plan=parted.plan_parts(context))


def finish_parts(build_root: str | Path, parted: PartedRun,
                 results: Sequence[dict[str, Any]]) -> StageResult:
    """Finish a parted stage whose pending parts all returned `results`; writes its marker.

    The done-marker's `parts_ran_on` says where each part of this run ran.
    """
    run = parted.run
    stats = parted_stage(run.stage).finish_parts(open_build(build_root), results,
                                                 seconds=time.perf_counter() - run.started)
    ran_on = {f"{r['part']:05d}": r["ran_on"] for r in sorted(results, key=lambda r: r["part"])}
    return finish_stage(build_root, run, stats, {"parts_ran_on": ran_on})


def run_stage_part(build_root: str | Path, stage: str, index: int) -> dict[str, Any]:
    """Run part `index` of a stage that `begin_parts` planned, in this process."""

    return parted_stage(stage).run_part(open_build(build_root), index)


def resolve_config(config: str, out: str | Path | None = None) -> BuildConfig:
    """A build file path, or "builtin:demo" for the built-in demo."""

    if config == DEMO_CONFIG_NAME:
        return demo_config(out)
    return load_config(config, out=out)


class TerminalProgress:
    """Progress of one stage fed by `(done, total)` calls: a tqdm bar on stderr when it is a
    terminal, else a plain line every `every_s` seconds and one when the stage ends (logs and
    CI output stay readable)."""

    def __init__(self, stage: str, every_s: float = 10.0, stream: Any = None) -> None:
        self.stage = stage
        self.every_s = every_s
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        self._last: tuple[int, int] | None = None
        self._t0 = time.monotonic()
        self._next = self._t0 + every_s
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        self._last = (done, total)
        if self._tty:
            from tqdm import tqdm

            if self._bar is None:
                self._bar = tqdm(total=total, desc=self.stage, unit="rec", file=self.stream,
                                 mininterval=0.5, dynamic_ncols=True)
            self._bar.total = total
            self._bar.update(done - self._bar.n)
            return
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.every_s
            self._line(done, total)

    def _line(self, done: int, total: int) -> None:
        share = f" ({100 * done / total:.0f}%)" if total else ""
        print(f"{self.stage}: {done}/{total}{share}, {time.monotonic() - self._t0:.0f} s",
              file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._last is not None and not self._tty:
            self._line(*self._last)


def run_build(
    config: BuildConfig,
    *,
    from_stage: str | None = None,
    force: Sequence[str] = (),
    on_stage: Callable[[StageResult], None] | None = None,
) -> tuple[BuildDir, list[dict[str, Any]]]:
    """The whole build without Prefect: every stage in order, on the same on-disk markers."""
    rows = []
    today = today_utc()
    with build_lock(config.out_dir(today).resolve()):
        build = prepare_build(config, from_stage=from_stage, force=force, today=today)
        context = BuildContext(build=build, config=config, frozen_toml=config.frozen_toml())
        for stage in STAGES:
            bar = TerminalProgress(stage)
            try:
                result = run_stage(build.root, stage, progress=bar, context=context)
            finally:
                bar.close()
            log.info("%s: %s in %.1f s", stage, result.status, result.seconds)
            rows.append(result.to_row())
            if on_stage:
                on_stage(result)
    return build, rows
