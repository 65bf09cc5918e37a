"""The small build that the runner tests make with each runner, and the checks they share: the
same dataset as the default runner, a task run per stage and per trajectory part, and the CPU
stages and parts on several worker processes."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes
from hopforge.flows.config.build_file import STAGES

from tests.helpers.snapshots import canonical_rows
from tests.helpers.tiny import tiny_build_file

RUNNER_TABLES = """\
[trajectories]
samples = 2
part_questions = {part_questions}

[filter]
dedup_questions = 0.0
"""
CPU_STAGES = ("ingest", "index", "score", "filter", "export")
LAYOUTS = ("questions", "trajectories", "scores", "pairs", "filtered", "export")


def write_config(tmp_path: Path, corpus: Path, runner: str, part_questions: int = 5) -> Path:
    """The small build file for `runner` (local, dask or ray) in `tmp_path`."""
    path = tmp_path / f"{runner}.toml"
    build = f'name = "runner-{runner}"\nrunner = "{runner}"\nworkers = 2'
    later = RUNNER_TABLES.format(part_questions=part_questions)
    path.write_text(tiny_build_file(corpus, build, later), encoding="utf-8")
    return path


def dataset(build: BuildDir, names: Sequence[str] = LAYOUTS) -> dict[str, list[str]]:
    """Every JSONL file of the part stages and the export, rows sorted, wall-clock fields dropped."""
    return {str(path.relative_to(build.root)): canonical_rows(path)
            for name in names for path in sorted((build.root / name).rglob("*.jsonl"))}


def marker(build: BuildDir, stage: str) -> dict[str, Any]:
    """The done-marker of `stage`."""
    return json.loads((build.root / "stages" / f"{stage}.done.json").read_text())  # type: ignore[no-any-return]


def pid(ran_on: str) -> str:
    """The process id in a `host:pid` that says where something ran."""
    return ran_on.rsplit(":", 1)[1]


def assert_same_dataset(local: BuildDir, distributed: BuildDir) -> None:
    """Every layout's records and the export's counts equal those of the local build."""
    expected = dataset(local)
    assert any(k.startswith("export/") for k in expected)
    assert dataset(distributed) == expected
    counts = [json.loads((b.export / "manifest.json").read_text()).get("counts")
              for b in (local, distributed)]
    assert counts[0] == counts[1]


def assert_ran_on_workers(result: dict[str, Any], build: BuildDir) -> set[str]:
    """A flow run on a cluster: a task run per stage but one per part for the trajectories, all
    completed; CPU stages and parts on worker processes, several of them; the questions stage
    and the planning and finishing of trajectories in the flow's process. Returns the worker
    pids of the parts."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    parts = sorted(f"{i:05d}" for i in done_indexes(build.trajectories))
    with get_client(sync_client=True) as client:
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[UUID(result["flow_run_id"])])))
    assert sorted(t.name for t in tasks) == sorted(
        [*(s for s in STAGES if s != "trajectories"), *(f"trajectories-part-{p}" for p in parts)])
    assert all(t.state_name == "Completed" for t in tasks)
    here = str(os.getpid())
    assert pid(marker(build, "questions")["ran_on"]) == here
    assert pid(marker(build, "trajectories")["ran_on"]) == here
    assert all(pid(marker(build, s)["ran_on"]) != here for s in CPU_STAGES)
    ran_on = marker(build, "trajectories")["parts_ran_on"]
    assert sorted(ran_on) == parts
    workers = {pid(w) for w in ran_on.values()}
    assert len(workers) >= 2 and here not in workers
    report = json.loads((build.reports / "trajectories.json").read_text())["run"]
    assert report["parts_written"] == len(parts) and report["parts_already_done"] == 0
    assert sorted(report["ran_on"].values()) == sorted(
        list(ran_on.values()).count(w) for w in report["ran_on"])
    return workers
