"""One smoke test of the whole build as a Prefect flow, against a temporary Prefect API server."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts
from hopforge.flows.config.build_file import STAGES

from tests.helpers.tiny import tiny_build_file

FLOW_TABLES = """\
[trajectories]
samples = 2

[filter]
dedup_questions = 0.0
"""


def test_build_flow_runs_every_stage_and_reports_to_prefect(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path
) -> None:
    from hopforge.flows.build.flow import build_flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    config = tmp_path / "smoke.toml"
    config.write_text(tiny_build_file(tiny_corpus_path, 'name = "flow-smoke"', FLOW_TABLES),
                      encoding="utf-8")
    result = build_flow(str(config), out=str(tmp_path / "out"))
    build = BuildDir.at(result["build"])

    assert [r["stage"] for r in result["stages"]] == list(STAGES)
    assert {r["status"] for r in result["stages"]} == {"ran"}
    # the build directory holds every stage's output
    assert "config_hash" in build.config.read_text()
    assert (build.corpus / "links.parquet").exists() and (build.index / "manifest.json").exists()
    questions = [r for r in read_parts(build.questions) if not r["rejected"]]
    trajectories = list(read_parts(build.trajectories))
    assert questions and len(trajectories) == 2 * len(questions)
    assert len(list(read_parts(build.scores))) == len(trajectories)
    assert len(list(read_parts(build.filtered))) == len(trajectories)
    manifest = json.loads((build.export / "manifest.json").read_text())
    assert manifest and list(build.export.rglob("*.jsonl"))
    for stage in STAGES:
        assert json.loads((build.root / "stages" / f"{stage}.done.json").read_text())["key"]

    # Prefect saw one flow run, a task run per stage, and the stage artifacts
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(UUID(result["flow_run_id"]))
        assert run.state_name == "Completed"
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(
            any_=[run.id])))
        assert sorted(t.name for t in tasks) == sorted(STAGES)
        assert all(t.state_name == "Completed" for t in tasks)
        keys = {a.key for a in client.read_artifacts()}
    assert {f"flow-smoke-{s}-stats" for s in STAGES} <= keys
    assert {f"flow-smoke-{s}-report" for s in STAGES} <= keys
    assert {"flow-smoke-trajectories-progress", "flow-smoke-summary"} <= keys

    # a second run finds every stage done on disk and skips it
    again = build_flow(str(config), out=str(tmp_path / "out"))
    assert {r["status"] for r in again["stages"]} == {"skipped"}
