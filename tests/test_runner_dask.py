"""A build whose CPU stages run on a local Dask cluster gives the same dataset as the default."""

from __future__ import annotations

import json
import os
from pathlib import Path
from uuid import UUID

from hopforge.corpus.layout import BuildDir
from hopforge.flows.config import STAGES, load_config
from hopforge.flows.engine import run_build

DASK_BUILD = """\
[build]
name = "dask-{runner}"
runner = "{runner}"
workers = 2

[corpus]
sources = ["{corpus}"]

[index]
dense = false

[trajectories]
samples = 2
part_questions = 3

[filter]
dedup_questions = 0.0
"""
VOLATILE = frozenset({"latency_s", "seconds", "built_at", "created", "created_at"})


def _stable(obj):  # type: ignore[no-untyped-def]
    if isinstance(obj, dict):
        return {k: _stable(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_stable(v) for v in obj]
    return obj


def dataset(build: BuildDir) -> dict[str, list[str]]:
    """Every JSONL file of the part stages and the export, rows sorted, wall-clock fields dropped."""
    out = {}
    for name in ("questions", "trajectories", "scores", "pairs", "filtered", "export"):
        for path in sorted((build.root / name).rglob("*.jsonl")):
            rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
            out[str(path.relative_to(build.root))] = sorted(
                json.dumps(_stable(r), sort_keys=True) for r in rows)
    return out


def write_config(tmp_path: Path, corpus: Path, runner: str) -> Path:
    path = tmp_path / f"{runner}.toml"
    path.write_text(DASK_BUILD.format(corpus=corpus, runner=runner), encoding="utf-8")
    return path


def test_dask_runner_gives_the_same_dataset_as_local(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path
) -> None:
    from hopforge.flows.build import run_build_flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    local, _ = run_build(load_config(write_config(tmp_path, tiny_corpus_path, "local"),
                                     out=tmp_path / "local"))
    result = run_build_flow(str(write_config(tmp_path, tiny_corpus_path, "dask")),
                            out=str(tmp_path / "dask"))
    distributed = BuildDir.at(result["build"])

    assert {r["status"] for r in result["stages"]} == {"ran"}
    expected = dataset(local)
    assert any(k.startswith("export/") for k in expected)
    assert dataset(distributed) == expected
    counts = [json.loads((b.export / "manifest.json").read_text()).get("counts")
              for b in (local, distributed)]
    assert counts[0] == counts[1]
    # every stage reported as a task run of this flow run
    with get_client(sync_client=True) as client:
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[UUID(result["flow_run_id"])])))
    assert sorted(t.name for t in tasks) == sorted(STAGES)
    assert all(t.state_name == "Completed" for t in tasks)
    # CPU stages ran in Dask worker processes, the model-bound ones in the flow's process
    ran_on = {s: json.loads((distributed.root / "stages" / f"{s}.done.json").read_text())[
        "ran_on"].rsplit(":", 1)[1] for s in STAGES}
    here = str(os.getpid())
    assert ran_on["questions"] == ran_on["trajectories"] == here
    assert all(ran_on[s] != here for s in ("ingest", "index", "score", "filter", "export"))


def test_ray_runner_without_prefect_ray_says_how_to_install_it() -> None:
    import importlib.util

    import pytest
    from hopforge.corpus.errors import HopforgeError
    from hopforge.flows.build import cpu_runner
    from hopforge.flows.config import BuildSettings

    if importlib.util.find_spec("prefect_ray") is not None:
        pytest.skip("prefect-ray is installed")
    with pytest.raises(HopforgeError, match="pip install prefect-ray"), \
            cpu_runner(BuildSettings(name="r", runner="ray")):
        pass
