"""Clean stops of `hopforge build`: Ctrl-C and SIGTERM, the temporary Prefect server, one line.

- SIGTERM is turned into `BuildStopped` in the main thread, so it unwinds the build the way
  Ctrl-C's KeyboardInterrupt does: finished parts stay on disk, partial ones are temporaries.
- Without PREFECT_API_URL the build starts its own temporary Prefect server in its own session
  (Ctrl-C sent to the terminal's process group does not reach it) with its own database (its
  dashboard shows this build's runs only), and stops it, with its process group, on the way out.
- `stop_message` is the one line printed on a stop: what is finished and how to resume.
- `quiet_console` keeps the tracebacks of a stop or of a bad-input error (a HopforgeError)
  off the terminal; Prefect still records them in its own logs and UI.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.dashboard import api_url, prefect_command, server_env, wait_healthy
from hopforge.flows.build.markers import read_marker
from hopforge.flows.build.registry import STAGES, find_stage

log = logging.getLogger(__name__)


class BuildStopped(BaseException):
    """The build was asked to stop by a signal (BaseException: nothing catches it by mistake)."""

    def __init__(self, signame: str) -> None:
        super().__init__(signame)
        self.signame = signame


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While inside, SIGTERM raises BuildStopped in the main thread."""

    def handler(signum: int, frame: object) -> None:
        raise BuildStopped("SIGTERM")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVER_STARTUP_S = 240.0  # a first start creates the database; slow on a loaded machine


@contextlib.contextmanager
def temporary_server(home: Path) -> Iterator[str]:
    """A Prefect server for one build, its database under `home` (BUILD/.prefect): its API
    URL is in PREFECT_API_URL while inside, and its dashboard shows that build's runs only."""

    home.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = server_env("127.0.0.1", port)
    env["PREFECT_HOME"] = str(home)
    env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
    cmd = [*prefect_command(), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = api_url("127.0.0.1", port)
    try:
        wait_healthy(url, proc, timeout_s=SERVER_STARTUP_S)
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        _drain_to_api()
        os.environ.pop("PREFECT_API_URL", None)
        _stop_group(proc)


def _drain_to_api(timeout_s: float = 5.0) -> None:
    """Send the logs and events Prefect still holds to the server before it stops."""
    with contextlib.suppress(Exception):
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=timeout_s)
        EventsWorker.drain_all(timeout=timeout_s)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            # the server may leave children in its group; they go with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            break
        except subprocess.TimeoutExpired:
            continue


def stop_message(build: BuildDir, rerun: str, signame: str) -> str:
    """One line: which stages are done, how far the running one got, and `rerun`, the command
    that resumes."""
    done = [s for s in STAGES if read_marker(build, s, "done") is not None]
    pending = [s for s in STAGES if s not in done]
    if not pending:
        return f"stopped ({signame}) after every stage finished; nothing to resume"
    running = pending[0]
    where = ""
    folder = build.root / find_stage(running).outputs[0] if find_stage(running).outputs else None
    if folder is not None and find_stage(running).resumable and folder.is_dir():
        parts = len(list(folder.glob("part-*.done")))
        where = f"; {running}: {parts} part{'s' if parts != 1 else ''} finished and kept"
    finished = ", ".join(done) if done else "no stage"
    return (f"stopped ({signame}): {finished} finished{where}. "
            f"Run `{rerun}` again to continue from {running}.")


# What Prefect writes about a run ended by a stop (its own words), or by our errors.
_STOP_TEXTS = ("KeyboardInterrupt", "BuildStopped", "aborted by an interrupt signal",
               "aborted by a termination signal", "TerminationSignal",
               "HopforgeError", "ConfigError")


class _DropTracebacks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, KeyboardInterrupt | BuildStopped | HopforgeError):
            return False
        text = record.getMessage()
        if "encountered an exception" in text and any(
                f"exception {name}:" in text or f"exception: {name}:" in text
                for name in _error_names()):
            return False  # the command prints that error's message as its last line
        return not any(n in text for n in _STOP_TEXTS)


def _error_names() -> set[str]:
    names, todo = set(), [HopforgeError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo += cls.__subclasses__()
    return names


def quiet_console() -> None:
    """Drop, on the terminal only, Prefect's log records of a stop or a bad-input error (the
    build prints its own one line for those)."""
    for name in ("prefect", "prefect.flow_runs", "prefect.task_runs", "prefect.engine", ""):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler) and not any(
                    isinstance(f, _DropTracebacks) for f in handler.filters):
                handler.addFilter(_DropTracebacks())
