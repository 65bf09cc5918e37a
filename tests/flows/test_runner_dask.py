"""Scale-out: a build on a local Dask cluster gives the same dataset as the default runner, its
CPU stages run on workers, and the trajectories stage runs part by part on several workers.
Also the part-by-part path without Prefect: a run that fails part-way continues without redoing
or duplicating a trajectory."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes
from hopforge.flows.build.context import open_build
from hopforge.flows.build.engine import (
    StageResult,
    begin_parts,
    finish_parts,
    prepare_build,
    run_stage,
    run_stage_part,
)
from hopforge.flows.config.build_file import load_config

from tests.helpers.runner_builds import (
    assert_ran_on_workers,
    assert_same_dataset,
    dataset,
    marker,
    pid,
    write_config,
)


def test_dask_runner_gives_the_same_dataset_as_local(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    from hopforge.flows.build.flow import build_flow

    result = build_flow(str(write_config(tmp_path, tiny_corpus_path, "dask")),
                            out=str(tmp_path / "dask"))
    distributed = BuildDir.at(result["build"])

    assert {r["status"] for r in result["stages"]} == {"ran"}
    assert_same_dataset(local_build, distributed)
    assert_ran_on_workers(result, distributed)


def in_process(build: BuildDir, fail_after: int | None = None
               ) -> tuple[list[list[int]], Any]:
    """A part map running each part here; with `fail_after`, it fails after that many parts."""
    calls: list[list[int]] = []

    def map_parts(indexes: Sequence[int]) -> Iterator[dict[str, Any]]:
        calls.append(list(indexes))
        for n, index in enumerate(indexes):
            if fail_after is not None and n == fail_after:
                raise RuntimeError("worker lost")
            yield run_stage_part(build.root, "trajectories", index)

    return calls, map_parts


def run_in_parts(build: BuildDir, map_parts: Any,
                 progress: Any = None) -> StageResult:
    """The trajectories stage part by part, as the flow drives it: plan, run the pending
    parts through `map_parts`, finish."""
    begun = begin_parts(build.root, "trajectories")
    if isinstance(begun, StageResult):
        return begun
    results = begun.collect(map_parts(list(begun.plan.pending)), progress)
    return finish_parts(build.root, begun, results)


def test_parts_resume_without_redoing_or_duplicating(
    tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    config = load_config(write_config(tmp_path, tiny_corpus_path, "local"), out=tmp_path / "b")
    build = prepare_build(config)
    for stage in ("ingest", "index", "questions"):
        run_stage(build.root, stage)
    first, crashing = in_process(build, fail_after=2)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_in_parts(build, crashing)
    assert done_indexes(build.trajectories) == {0, 1}
    # part 2 was half done when the run stopped: its journal holds some trajectories
    reference = (local_build.trajectories / "part-00002.jsonl").read_text().splitlines()
    (build.trajectories / ".part-00002.journal.jsonl").write_text("\n".join(reference[:5]) + "\n")
    before = (build.trajectories / "part-00000.jsonl").stat().st_mtime_ns

    second, parts = in_process(build)
    seen: list[tuple[int, int]] = []
    result = run_in_parts(build, parts, progress=lambda d, t: seen.append((d, t)))
    assert isinstance(result, StageResult) and result.status == "resumed"
    assert second == [first[0][2:]]  # only the parts not done
    assert (build.trajectories / "part-00000.jsonl").stat().st_mtime_ns == before
    assert dataset(build, ["trajectories"]) == dataset(local_build, ["trajectories"])
    assert (build.trajectories / "part-00002.jsonl").read_text().splitlines()[:5] == reference[:5]
    assert not list(build.trajectories.glob(".part-*"))
    report = json.loads((build.reports / "trajectories.json").read_text())["run"]
    assert report["trajectories_reused_from_journal"] == 5
    assert report["parts_already_done"] == 2
    total = seen[-1][1]
    assert seen[0][0] == 2 * 5 * 2 and seen[-1] == (total, total)  # 2 parts of 5 questions, 2 samples
    assert sorted(marker(build, "trajectories")["parts_ran_on"]) == [
        f"{i:05d}" for i in second[0]]
    again = run_in_parts(build, in_process(build)[1])
    assert again.status == "skipped"


def test_a_part_needs_its_run_planned(tmp_path: Path, local_build: BuildDir) -> None:
    from hopforge.flows.stages.trajectories import run_trajectory_part
    from hopforge.synth.trajectories.stage import TrajectoryConfig

    config = load_config(local_build.config)
    with pytest.raises(HopforgeError, match="not planned"):
        run_trajectory_part(local_build, TrajectoryConfig(samples=3), 0)
    with pytest.raises(HopforgeError, match="does not exist"):
        run_trajectory_part(local_build, config.stages["trajectories"], 999)
    done = run_trajectory_part(local_build, config.stages["trajectories"], 0)
    assert done["written"] is False and done["ran"] == 0 and pid(done["ran_on"]) == str(os.getpid())


def test_a_part_opens_its_own_model_client_with_the_workers_key(
    tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir, openai_server: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from hopforge.flows.build.markers import write_frozen_config
    from hopforge.flows.build.registry import parted_stage

    from tests.helpers.openai_server import Reply

    shutil.copytree(local_build.root, tmp_path / "b", ignore=shutil.ignore_patterns("trajectories"))
    build = BuildDir.at(tmp_path / "b")
    text = write_config(tmp_path, tiny_corpus_path, "local").read_text() + (
        f'\n[teacher]\nkind = "openai"\nurls = ["{openai_server.base_url}"]\n'
        'model = "test-model"\n')
    (tmp_path / "openai.toml").write_text(text)
    write_frozen_config(build, load_config(tmp_path / "openai.toml", out=build.root,
                                           env={}).frozen_toml())
    openai_server.set_handler(lambda request: Reply.tool_call("answer", {"text": "Quillon"}))
    monkeypatch.setenv("HOPFORGE_API_KEY", "sk-worker")  # the worker's own environment
    plan = parted_stage("trajectories").plan_parts(open_build(build.root))
    meta = run_stage_part(build.root, "trajectories", plan.pending[0])
    assert meta["written"] and meta["ran"] == plan.sizes[plan.pending[0]]
    assert {h["authorization"] for h in openai_server.headers} == {"Bearer sk-worker"}
    assert "sk-worker" not in build.config.read_text()
    part = (build.trajectories / "part-00000.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in part]
    assert {r["teacher"] for r in rows} == {"openai:test-model"}
    assert {r["final_answer"] for r in rows} == {"Quillon"}
