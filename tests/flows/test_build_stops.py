"""Ctrl-C and SIGTERM on a running `hopforge build` (with its temporary Prefect server): the
build ends within seconds with one line saying what is finished and how to resume, no process
is left behind, and running it again continues where it stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.view_build import VIEW_TOML

pytestmark = pytest.mark.slow

STOP_WITHIN_S = 60.0  # 6 s on this machine; seconds more when other jobs load its 2 cores


def _start(config: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    # A shell runs a foreground job with SIGINT at its default; a test runner started in the
    # background has it ignored, and an ignored signal stays ignored across exec. A handled one
    # is reset to the default, so the child gets Ctrl-C as it would from a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "hopforge.flows.commands.cli", "build", str(config), "--out",
             str(out), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "PREFECT_API_URL": ""})
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the build ended before {path.name}: {proc.stderr.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {path} after {timeout_s:.0f} s")
        time.sleep(0.2)


def _stop(proc: subprocess.Popen[str], sig: signal.Signals, *, group: bool) -> tuple[int, str]:
    t0 = time.monotonic()
    if group:  # Ctrl-C in a terminal: the whole foreground process group
        os.killpg(proc.pid, sig)
    else:  # `kill PID`, as a service manager stops a job
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=STOP_WITHIN_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        for pid in _servers(Path(proc.args[proc.args.index("--out") + 1])):
            os.killpg(pid, signal.SIGKILL)  # a build killed -9 cannot stop its server itself
        raise AssertionError(f"{sig.name}: still running after {STOP_WITHIN_S:.0f} s") from None
    assert time.monotonic() - t0 < STOP_WITHIN_S
    return proc.returncode, err


def _servers(build: Path) -> list[int]:
    """Processes whose Prefect database is the build's (its temporary server)."""
    home = f"PREFECT_HOME={build / '.prefect'}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if home in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _leftovers(proc: subprocess.Popen[str], build: Path) -> list[str]:
    """Processes of the build's group, or Prefect servers whose database is the build's."""
    found = []
    try:
        os.killpg(proc.pid, 0)
        found.append(f"process group {proc.pid}")
    except ProcessLookupError:
        pass
    return found + [f"server {pid}" for pid in _servers(build)]


def test_ctrl_c_and_sigterm_stop_cleanly_and_the_build_resumes(tmp_path: Path) -> None:
    config = tmp_path / "stops.toml"
    config.write_text(VIEW_TOML, encoding="utf-8")
    build = tmp_path / "build"
    stages = build / "stages"

    proc = _start(config, build)
    _wait_for(stages / "questions.start.json", proc)
    time.sleep(1.0)
    code, err = _stop(proc, signal.SIGINT, group=True)
    assert code == 130, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(r"stopped \(Ctrl-C\): ingest, index finished(; questions: \d+ parts? "
                        r"finished and kept)?\. Run `hopforge build \S*stops\.toml --out "
                        r"\S*build` again to continue from questions\.", last), last
    assert "Traceback" not in err and "ConnectError" not in err, err[-3000:]
    assert _leftovers(proc, build) == []

    proc = _start(config, build)
    _wait_for(stages / "trajectories.start.json", proc)
    questions = {p.name: p.stat().st_mtime_ns for p in (build / "questions").glob("part-*")}
    time.sleep(0.5)
    code, err = _stop(proc, signal.SIGTERM, group=False)
    assert code == 143, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("stopped (SIGTERM): ingest, index, questions finished"), last
    assert last.endswith("again to continue from trajectories."), last
    assert "Traceback" not in err, err[-3000:]
    assert _leftovers(proc, build) == []

    done = subprocess.run([sys.executable, "-m", "hopforge.flows.commands.cli", "build",
                           str(config), "--out", str(build), "--no-prefect"],
                          capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^\s+questions\s+skipped", done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^\s+trajectories\s+(ran|resumed)", done.stdout, re.MULTILINE), done.stdout
    # the questions finished before the stops were neither rewritten nor lost
    assert {p.name: p.stat().st_mtime_ns
            for p in (build / "questions").glob("part-*")} == questions
    assert (stages / "export.done.json").is_file()
