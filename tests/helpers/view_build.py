"""A small real build for the viewer's tests: the built-in Jargon File, the scripted teacher,
every stage, with one long aggregation task so a trajectory spans several pages of turns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("HOPFORGE_TEST_ARTIFACTS", REPO / "test-artifacts"))

VIEW_TOML = """\
[build]
name = "view-test"
seed = 0

[corpus]
sources = ["builtin:jargon"]
licence = "cc0"

[index]
dense = false

[questions]
n = 24
part_size = 12
ladder = [{ min_calls = 50, max_calls = 150, n = 1 }]

[trajectories]
samples = 2
max_turns = 400
faults = { empty = 0.04, timeout = 0.02, format = 0.02, partial = 0.02, timeout_delay_s = 0.0 }

[filter]
balance_min_group = 40
"""


def make_view_build(tmp: Path) -> Path:
    """Run `hopforge build` (without Prefect) on VIEW_TOML in a child process; the build dir."""
    config = tmp / "view.toml"
    config.write_text(VIEW_TOML, encoding="utf-8")
    out = tmp / "build"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "hopforge.flows.commands.cli", "build",
                           str(config), "--out", str(out), "--no-prefect"],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"the viewer's test build failed:\n{proc.stderr[-3000:]}")
    return out
