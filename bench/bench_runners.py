"""One build, three runners: the wall time of `hopforge build` with runner local, dask and ray.

The build is the Jargon File with BM25 only, 48 questions and 8 samples each in parts of 6
questions, `workers = 2`. The three builds run back to back, each as its own `hopforge build`
process (the Prefect flow) against one temporary Prefect server, each from scratch in its own
directory; `wall_s` is the whole process, cluster start and stop included. `same_records` says
whether every record of every layout (wall-clock fields aside) equals the local build's.
The 1-minute load average before each build is printed beside it: on a shared machine the
times move with the others' work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNNERS = ("local", "dask", "ray")
BUILD = """\
[build]
name = "runners-{runner}"
runner = "{runner}"
workers = 2

[corpus]
sources = ["builtin:jargon"]

[index]
dense = false

[questions]
n = {questions}
part_size = 24

[trajectories]
samples = {samples}
part_questions = 6
"""
CLI = "import sys; from hopforge.flows.commands.cli import main; sys.exit(main(sys.argv[1:]))"


def run(quick: bool = False) -> list[dict]:
    """One row per runner, local first."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.parts import done_indexes
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    from tests.helpers.runner_builds import dataset

    questions, samples = (12, 2) if quick else (48, 8)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=120):
        env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()),
               "HF_HUB_OFFLINE": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        reference = None
        for runner in RUNNERS:
            config, out = Path(tmp) / f"{runner}.toml", Path(tmp) / runner
            config.write_text(BUILD.format(runner=runner, questions=questions, samples=samples))
            load = os.getloadavg()[0]
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", CLI, "build", str(config), "--out",
                                   str(out)], env=env, capture_output=True, text=True,
                                  check=False)
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                raise RuntimeError(f"{runner} build failed:\n{proc.stderr[-3000:]}")
            build = BuildDir.at(out)
            records = dataset(build)
            reference = reference or (records, wall)
            marker = json.loads((out / "stages" / "trajectories.done.json").read_text())
            ran_on = marker.get("parts_ran_on", {})  # the local runner runs the stage whole
            rows.append({
                "runner": runner, "load_1m_before": round(load, 1), "wall_s": round(wall, 1),
                "vs_local": round(wall / reference[1], 2),
                "trajectories_s": marker["seconds"],
                "parts": len(done_indexes(build.trajectories)),
                "part_processes": len(set(ran_on.values())) or 1,
                "records": sum(len(r) for r in records.values()),
                "same_records": records == reference[0],
            })
    return rows
