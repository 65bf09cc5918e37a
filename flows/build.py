"""The Prefect flow of a whole build: one task run per stage, over the build directory.

`build_flow` validates the build file, prepares the directory (frozen config, --from/--force),
then runs the stages in order through `run_stage`, passing only paths. CPU stages go to the
configured task runner (local threads, a Dask cluster, or Ray); the model-bound stages run in
the flow's process, where the teacher client spreads requests over its replicas. Each stage
leaves a table and a markdown artifact; long stages update a progress artifact.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.artifacts import ProgressArtifact, artifact_key, publish_stage
from hopforge.flows.config import STAGES, BuildConfig, BuildSettings, load_config, today_utc
from hopforge.flows.engine import TerminalProgress, prepare_build, resolve_config, run_stage
from hopforge.flows.state import build_lock
from hopforge.flows.summary import summary_markdown
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import TaskRunner

log = logging.getLogger(__name__)

FLOW_NAME = "hopforge-build"
# Stages that only use the CPU: these go to the Dask or Ray runner when one is configured.
CPU_STAGES = frozenset({"ingest", "index", "score", "filter", "export"})
# Stages long enough to deserve a progress artifact.
PROGRESS_STAGES = frozenset({"questions", "trajectories"})


def _stage(build_root: str, stage: str, build_name: str) -> dict[str, Any]:
    if stage not in PROGRESS_STAGES:
        return run_stage(build_root, stage).to_row()
    artifact = ProgressArtifact(build_name, stage)
    bar = TerminalProgress(stage)

    def progress(done: int, total: int) -> None:
        bar(done, total)
        artifact(done, total)

    try:
        return run_stage(build_root, stage, progress=progress).to_row()
    finally:
        bar.close()


# Correctness rests on the done-markers on disk, so Prefect neither caches nor persists results.
stage_task = task(name="stage", cache_policy=NO_CACHE, persist_result=False)(_stage)


@contextlib.contextmanager
def cpu_runner(settings: BuildSettings) -> Iterator[TaskRunner[Any] | None]:
    """The task runner for CPU stages: None (run in the flow) for local, else Dask or Ray."""
    if settings.runner == "local":
        yield None
        return
    runner = _make_runner(settings)  # import errors surface before anything starts
    with _api_url_in_environment(), runner:
        yield runner


def _make_runner(settings: BuildSettings) -> TaskRunner[Any]:
    if settings.runner == "dask":
        from prefect_dask import DaskTaskRunner

        if settings.address:
            return DaskTaskRunner(address=settings.address)
        return DaskTaskRunner(cluster_kwargs={
            "n_workers": settings.workers, "threads_per_worker": 1,
            "processes": True, "dashboard_address": ":0",
        })
    try:
        from prefect_ray import RayTaskRunner  # type: ignore[import-not-found]
    except ImportError:
        raise HopforgeError(
            "[build] runner = \"ray\" needs prefect-ray: `pip install prefect-ray`, or "
            "use runner = \"dask\" (installed) or \"local\""
        ) from None
    return RayTaskRunner(address=settings.address or None)  # type: ignore[no-any-return]


@contextlib.contextmanager
def _api_url_in_environment() -> Iterator[None]:
    """Let worker processes report to the same Prefect API as this flow (ephemeral one too)."""
    if os.environ.get("PREFECT_API_URL"):
        yield
        return
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        url = str(client.api_url)
    os.environ["PREFECT_API_URL"] = url
    try:
        yield
    finally:
        os.environ.pop("PREFECT_API_URL", None)


@flow(name=FLOW_NAME, persist_result=False, validate_parameters=True)
def build_flow(
    config: str,
    out: str | None = None,
    from_stage: str | None = None,
    force: list[str] | None = None,
) -> dict[str, Any]:
    """Build the dataset described by the build file `config` (or "builtin:demo")."""
    cfg = resolve_config(config, out)
    today = today_utc()  # one date for the whole run
    with build_lock(cfg.out_dir(today).resolve()):
        return _build(cfg, today, from_stage, force or [])


def _build(cfg: BuildConfig, today: str, from_stage: str | None, force: list[str]
           ) -> dict[str, Any]:
    build = prepare_build(cfg, from_stage=from_stage, force=force, today=today)
    rows: list[dict[str, Any]] = []
    with cpu_runner(cfg.build) as runner:
        for stage in STAGES:
            params = {"build_root": str(build.root), "stage": stage, "build_name": cfg.name}
            stage_run = stage_task.with_options(task_run_name=stage)
            if runner is not None and stage in CPU_STAGES:
                row = runner.submit(stage_run, params).result()
            else:
                row = stage_run(**params)
            publish_stage(build, cfg.name, row)
            rows.append(row)
    create_markdown_artifact(
        markdown=summary_markdown(build, rows),
        key=artifact_key(cfg.name, "summary"),
        description=f"what build {cfg.name} made, and where",
    )
    from prefect.runtime import flow_run

    return {"build": str(build.root), "name": cfg.name, "stages": rows,
            "flow_run_id": str(flow_run.id)}


def run_build_flow(
    config: str,
    *,
    out: str | None = None,
    from_stage: str | None = None,
    force: Sequence[str] = (),
) -> dict[str, Any]:
    """Run `build_flow` and return its result; user errors surface as HopforgeError."""
    return build_flow(config, out=out, from_stage=from_stage, force=list(force) or None)


def serve_build(config_path: str, cron: str, *, out: str | None = None) -> None:
    """Serve the build as the deployment `hopforge-build/NAME`, scheduled by `cron`."""
    from prefect.deployments.runner import EntrypointType

    cfg = load_config(config_path, out=out)
    params: dict[str, Any] = {"config": os.path.abspath(config_path)}
    if out:
        params["out"] = os.path.abspath(out)
    build_flow.serve(
        name=cfg.name,
        cron=cron,
        parameters=params,
        description=f"hopforge build {cfg.name} from {params['config']}",
        tags=["hopforge"],
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
