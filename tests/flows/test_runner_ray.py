"""Scale-out on Ray: a build with `runner = "ray"` starts a local Ray cluster of `workers` CPUs,
runs its CPU stages and trajectory parts there and stops the cluster after, with the same
dataset as the default runner; a build killed with SIGKILL mid-trajectories resumes on Ray with
the same records, redoing only the parts that were not done; a Ray worker killed mid-part has its
part run again; with an `address` the build joins that cluster and leaves it running; and the
message when prefect-ray is missing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes
from hopforge.flows.stages.trajectory_journal import read_journal

from tests.helpers.runner_builds import (
    CPU_STAGES,
    assert_ran_on_workers,
    assert_same_dataset,
    marker,
    pid,
    write_config,
)

# Runs `hopforge build CONFIG --out OUT` (the Prefect flow) and, once the flow has collected at
# least one finished trajectory part, writes the id, start time and command line of all its
# descendant processes (the Ray cluster it started: GCS, raylet, agents, workers) to PIDS and
# kills itself with SIGKILL.
KILLED_BUILD = r"""
import json, os, signal, sys
import psutil
import hopforge.flows.build.flow as flow

config, out, pids = sys.argv[1:4]

class KilledAfterOnePart(flow.TerminalProgress):
    def __call__(self, done, total):
        super().__call__(done, total)
        if self.stage == "trajectories" and done > 0:
            kids = [{"pid": p.pid, "started": p.create_time(), "cmd": " ".join(p.cmdline())}
                    for p in psutil.Process().children(recursive=True)]
            with open(pids, "w") as fh:
                json.dump(kids, fh)
            os.kill(os.getpid(), signal.SIGKILL)

flow.TerminalProgress = KilledAfterOnePart
from hopforge.flows.commands.cli import main
sys.exit(main(["build", config, "--out", out]))
"""


def gone(pids: list[int], timeout: float = 60.0) -> list[int]:
    """The processes of `pids` still running after up to `timeout` seconds (zombies count as
    gone)."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for p in pids:
            try:
                if psutil.Process(p).status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def stop(processes: list[dict[str, Any]]) -> None:
    """Kill those of `processes` (pid, start time) that still run."""
    for p in processes:
        try:
            process = psutil.Process(p["pid"])
            if process.create_time() == p["started"]:
                process.kill()
        except psutil.NoSuchProcess:
            pass


def journaled_trajectories(build: BuildDir, reference: BuildDir) -> int:
    """Trajectories that the journals of unfinished parts hold whole (ids of `reference`'s
    part of the same number)."""
    count = 0
    for path in build.trajectories.glob(".part-*.journal.jsonl"):
        part = path.name.removeprefix(".").split(".")[0]
        rows = (reference.trajectories / f"{part}.jsonl").read_text().splitlines()
        count += len(read_journal(path, {json.loads(row)["tid"] for row in rows}))
    return count


def ray_children() -> list[int]:
    """Processes this process started that belong to a Ray cluster."""
    return [p.pid for p in psutil.Process().children(recursive=True)
            if "ray" in " ".join(p.cmdline()).lower()]


def test_ray_runner_gives_the_same_dataset_as_local(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    import ray
    from hopforge.flows.build.flow import build_flow

    assert not ray.is_initialized() and not ray_children()
    result = build_flow(str(write_config(tmp_path, tiny_corpus_path, "ray")),
                        out=str(tmp_path / "ray"))
    distributed = BuildDir.at(result["build"])

    assert {r["status"] for r in result["stages"]} == {"ran"}
    assert_same_dataset(local_build, distributed)
    workers = assert_ran_on_workers(result, distributed)
    # two CPUs: two Ray worker processes ran every part, each kept between parts (so each
    # loaded the index once), and the cluster stopped with the build
    parts = marker(distributed, "trajectories")["parts_ran_on"]
    assert len(workers) == 2 < len(parts)
    assert not ray.is_initialized()
    assert not gone([int(w) for w in workers]) and not gone(ray_children())


def kill_a_part_worker(trajectories: Path, stop_watching: threading.Event) -> list[str]:
    """Watch this process's Ray workers; once a trajectory part is half done (its journal
    exists), SIGKILL a worker running a part. Returns the `host:pid` it killed (in a list that
    fills in the background)."""
    killed: list[str] = []

    def watch() -> None:
        while not stop_watching.is_set():
            if any(trajectories.glob(".part-*.journal.jsonl")):
                for process in psutil.Process().children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        if process.cmdline()[0].startswith("ray::part"):
                            process.kill()
                            killed.append(f"{socket.gethostname()}:{process.pid}")
                            return
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
    return killed


def test_a_ray_worker_killed_mid_part_has_its_part_run_again(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    from hopforge.flows.build.flow import build_flow

    stop_watching = threading.Event()
    killed = kill_a_part_worker(tmp_path / "b" / "trajectories", stop_watching)
    try:
        result = build_flow(str(write_config(tmp_path, tiny_corpus_path, "ray")),
                            out=str(tmp_path / "b"))
    finally:
        stop_watching.set()
    build = BuildDir.at(result["build"])

    # Ray ran the lost task again on a live worker: the build finished in this run, with one
    # completed task run and one written file per part, and the same dataset
    assert len(killed) == 1 and not gone([int(pid(killed[0]))])
    assert {r["status"] for r in result["stages"]} == {"ran"}
    assert_same_dataset(local_build, build)
    assert_ran_on_workers(result, build)
    ran_on = marker(build, "trajectories")["parts_ran_on"]
    assert len(ran_on) == len(done_indexes(local_build.trajectories))
    assert not list(build.trajectories.glob(".part-*"))


def test_ray_build_killed_mid_trajectories_resumes_with_the_same_records(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    from hopforge.flows.build.flow import build_flow
    from prefect.settings import PREFECT_API_URL

    config, out, pids = write_config(tmp_path, tiny_corpus_path, "ray"), tmp_path / "b", \
        tmp_path / "pids.json"
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()),
           "HF_HUB_OFFLINE": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    proc = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(config), str(out), str(pids)],
                          check=False, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    # the killed build's Ray cluster went down with it: no worker finishes a part afterwards.
    # (Its idle dashboard and runtime-env agents notice later; stop them here.)
    cluster = json.loads(pids.read_text())
    try:
        assert not gone([p["pid"] for p in cluster if "Agent" not in p["cmd"]])
    finally:
        stop([p for p in cluster if "Agent" in p["cmd"]])
    build = BuildDir.at(out)
    assert not (build.root / "stages" / "trajectories.done.json").exists()
    done = done_indexes(build.trajectories)
    total = len(done_indexes(local_build.trajectories))
    assert 1 <= len(done) < total
    written = {i: (build.trajectories / f"part-{i:05d}.jsonl").stat().st_mtime_ns for i in done}
    journaled = journaled_trajectories(build, local_build)

    result = build_flow(str(config), out=str(out))
    status = {r["stage"]: r["status"] for r in result["stages"]}
    assert status["trajectories"] == "resumed"
    assert all(status[s] == "skipped" for s in ("ingest", "index", "questions"))
    assert_same_dataset(local_build, build)
    # the parts done before the kill were kept as they were; the others (in flight on the
    # killed workers, or not started) ran on the new cluster's workers
    assert {i: (build.trajectories / f"part-{i:05d}.jsonl").stat().st_mtime_ns
            for i in done} == written
    ran_on = marker(build, "trajectories")["parts_ran_on"]
    assert sorted(ran_on) == [f"{i:05d}" for i in range(total) if i not in done]
    report = json.loads((build.reports / "trajectories.json").read_text())["run"]
    assert report["parts_already_done"] == len(done)
    assert report["parts_written"] == total - len(done)
    assert report["trajectories_reused_from_journal"] == journaled
    assert not list(build.trajectories.glob(".part-*"))


CLI = "import sys; from hopforge.flows.commands.cli import main; sys.exit(main(sys.argv[1:]))"
# A Ray cluster of its own, as `ray start` would leave one: prints its GCS address, keeps it
# running until its stdin closes, then stops it.
RAY_CLUSTER = r"""
import sys
import ray
context = ray.init(num_cpus=2, include_dashboard=False)
print("gcs_address", context.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
"""


def test_ray_runner_with_an_address_joins_that_cluster_and_leaves_it_running(
    prefect_harness: None, tmp_path: Path, tiny_corpus_path: Path, local_build: BuildDir
) -> None:
    from prefect.settings import PREFECT_API_URL

    with subprocess.Popen([sys.executable, "-c", RAY_CLUSTER], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as cluster:
        try:
            assert cluster.stdout is not None
            line = cluster.stdout.readline()
            while line and not line.startswith("gcs_address "):
                line = cluster.stdout.readline()
            config = write_config(tmp_path, tiny_corpus_path, "ray")
            config.write_text(config.read_text().replace(
                "workers = 2", f'workers = 2\naddress = "{line.split()[-1]}"'))
            # `hopforge build` as a user runs it against a cluster of Ray 2.60, which asks for its
            # token (~/.ray/auth_token, written when the cluster started): RAY_AUTH_MODE=token
            env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()),
                   "RAY_AUTH_MODE": "token", "HF_HUB_OFFLINE": "1"}
            with tempfile.TemporaryFile("w+") as stderr:
                proc = subprocess.Popen([sys.executable, "-c", CLI, "build", str(config), "--out",
                                         str(tmp_path / "b")], env=env, stderr=stderr,
                                        stdout=subprocess.DEVNULL, text=True)
                theirs: set[int] = set()  # the cluster's processes while the build runs
                while proc.poll() is None:
                    theirs |= {p.pid for p in psutil.Process(cluster.pid).children(recursive=True)}
                    time.sleep(0.05)
                stderr.seek(0)
                assert proc.returncode == 0, stderr.read()[-3000:]
            build = BuildDir.at(tmp_path / "b")

            assert_same_dataset(local_build, build)
            # the CPU stages and parts ran in that cluster's workers, two of them, and the build
            # left the cluster running
            ran_on = {int(pid(marker(build, s)["ran_on"])) for s in CPU_STAGES}
            parts = {int(pid(w)) for w in marker(build, "trajectories")["parts_ran_on"].values()}
            assert ran_on <= theirs and parts <= theirs and len(parts) == 2
            assert cluster.poll() is None
        finally:
            assert cluster.stdin is not None
            cluster.stdin.close()  # the cluster stops
            cluster.wait(timeout=120)


def test_ray_runner_without_prefect_ray_says_how_to_install_it(
    tmp_path: Path, tiny_corpus_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hopforge.flows.build.flow import cpu_runner
    from hopforge.flows.config.build_file import BuildSettings, ConfigError, load_config

    monkeypatch.setitem(sys.modules, "prefect_ray", None)  # as if it were not installed
    with pytest.raises(ConfigError, match=r"pip install 'hopforge\[ray\]'"):
        load_config(write_config(tmp_path, tiny_corpus_path, "ray"))
    with pytest.raises(HopforgeError, match=r"pip install 'hopforge\[ray\]'"), \
            cpu_runner(BuildSettings(name="r", runner="ray")):
        pass


def test_the_ray_extra_pins_the_versions_tested_here() -> None:
    from importlib.metadata import requires, version

    extra = [r.split(";")[0].replace(" ", "") for r in requires("hopforge") or []
             if 'extra=="ray"' in r.replace(" ", "")]
    assert sorted(extra) == sorted([f"prefect-ray=={version('prefect-ray')}",
                                    f"ray[default]=={version('ray')}"])
