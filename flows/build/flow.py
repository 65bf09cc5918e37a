"""The Prefect flow of a whole build: a task run per stage (per part for trajectories on a
cluster), over the build directory.

`build_flow` validates the build file, prepares the directory (frozen config, --from/--force),
then runs the stages in order through `run_stage`, passing only paths. With a Dask or Ray
runner, CPU stages run as one task each on a worker, and the trajectories stage runs as one
task per part, spread over the workers (each with its own teacher client), planned and
finished in the flow. With the local runner every stage runs in the flow's process, where the
trajectories of all parts share one search batcher. The questions stage always runs in the
flow's process; its teacher client spreads requests over the replicas. Each stage leaves a
table and a markdown artifact; long stages update a progress artifact.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.build.artifacts import ProgressArtifact, artifact_key, publish_stage
from hopforge.flows.build.engine import (
    StageResult,
    TerminalProgress,
    begin_parts,
    finish_parts,
    prepare_build,
    resolve_config,
    run_stage,
    run_stage_part,
)
from hopforge.flows.build.markers import build_lock
from hopforge.flows.build.registry import STAGES, find_stage
from hopforge.flows.build.summary import summary_markdown
from hopforge.flows.config.build_file import BuildConfig, BuildSettings, load_config, today_utc
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import TaskRunner

log = logging.getLogger(__name__)

FLOW_NAME = "hopforge-build"
RAY_MISSING = (
    "[build] runner = \"ray\" needs prefect-ray and Ray: `pip install 'hopforge[ray]'` "
    "(prefect-ray, ray[default]), or use runner = \"dask\" (installed) or \"local\""
)
Progress = Callable[[int, int], None] | None


def _with_progress(stage: str, build_name: str,
                   run: Callable[[Progress], StageResult]) -> dict[str, Any]:
    if not find_stage(stage).progress:
        return run(None).to_row()
    artifact = ProgressArtifact(build_name, stage)
    bar = TerminalProgress(stage)

    def progress(done: int, total: int) -> None:
        bar(done, total)
        artifact(done, total)

    try:
        return run(progress).to_row()
    finally:
        bar.close()


def _stage(build_root: str, stage: str, build_name: str) -> dict[str, Any]:
    return _with_progress(stage, build_name,
                          lambda progress: run_stage(build_root, stage, progress=progress))


# Correctness rests on the done-markers on disk, so Prefect neither caches nor persists results.
stage_task = task(name="stage", cache_policy=NO_CACHE, persist_result=False)(_stage)


def _part(build_root: str, stage: str, index: int) -> dict[str, Any]:
    return run_stage_part(build_root, stage, index)


part_task = task(name="part", cache_policy=NO_CACHE, persist_result=False)(_part)


def _parted_stage(runner: TaskRunner[Any], build_root: str, stage: str,
                  build_name: str) -> dict[str, Any]:
    """A parted stage: planned and finished in the flow, one task per part on `runner`.

    The part tasks are submitted from the flow itself: Prefect cannot send a task run's
    context to Dask, so a stage task could not submit them.
    """
    begun = begin_parts(build_root, stage)
    if isinstance(begun, StageResult):
        return begun.to_row()

    def run(progress: Progress) -> StageResult:
        futures = [runner.submit(
            part_task.with_options(task_run_name=f"{stage}-part-{i:05d}"),
            {"build_root": build_root, "stage": stage, "index": i},
        ) for i in begun.plan.pending]
        return finish_parts(build_root, begun, begun.collect(_results(futures), progress))

    return _with_progress(stage, build_name, run)


def _results(futures: list[PrefectFuture[Any]]) -> Iterator[dict[str, Any]]:
    """Each part's result as it finishes. After a failure the other parts still finish (their
    work lands on disk for the next run), then the first failure is raised."""
    failed: list[PrefectFuture[Any]] = []
    for future in as_completed(futures):
        future.wait()  # takes the final state from the runner, not from the API
        if future.state.is_completed():
            yield future.result()
        else:
            failed.append(future)
    for future in failed:
        future.result()  # raises the part's error
    if failed:
        raise HopforgeError(f"{len(failed)} parts did not finish ({failed[0].state.name}); "
                            "run the build again to continue where it stopped")


@contextlib.contextmanager
def cpu_runner(settings: BuildSettings) -> Iterator[TaskRunner[Any] | None]:
    """The task runner for CPU stages and trajectory parts: None (the flow) for local, else
    Dask or Ray."""
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
    return _ray_runner(settings)


def _ray_runner(settings: BuildSettings) -> TaskRunner[Any]:
    """Ray: join the cluster at `address`, or start a local one of `workers` CPUs, one task
    per CPU, that stops with the build. Its workers are processes kept for the whole build, so
    each loads the index once for all the parts it runs."""
    try:
        from prefect_ray import RayTaskRunner  # type: ignore[import-not-found]
    except ImportError:
        raise HopforgeError(RAY_MISSING) from None
    if settings.address:
        return RayTaskRunner(address=settings.address)  # type: ignore[no-any-return]
    # "local" starts a new cluster even where RAY_ADDRESS or a `ray start` cluster is around
    return RayTaskRunner(address="local", init_kwargs={  # type: ignore[no-any-return]
        "num_cpus": settings.workers, "include_dashboard": False,
    })


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
            spec = find_stage(stage)
            if runner is not None and spec.cpu:
                row = runner.submit(stage_run, params).result()
            elif runner is not None and spec.parted:
                row = _parted_stage(runner, **params)
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
