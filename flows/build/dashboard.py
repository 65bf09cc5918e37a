"""Start the Prefect server (the dashboard) on 127.0.0.1 with analytics off, and wait until healthy."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping

import httpx
from hopforge.corpus.errors import HopforgeError

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 90.0


def server_env(host: str, port: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the server process: analytics off, nothing leaves the machine."""
    env = dict(os.environ if base is None else base)
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    env.setdefault("PREFECT_UI_ENABLED", "true")
    env.pop("PREFECT_API_URL", None)  # the server is the API; it must not point elsewhere
    # the browser UI asks this URL for data (its default assumes port 4200)
    env.setdefault("PREFECT_UI_API_URL", api_url(host, port))
    return env


def prefect_command() -> list[str]:
    """The `prefect` executable next to this Python (the venv's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "prefect")
    if os.access(here, os.X_OK):
        return [here]
    found = shutil.which("prefect")
    if found:
        return [found]
    return [sys.executable, "-m", "prefect"]


def api_url(host: str, port: int) -> str:
    return f"http://{host}:{port}/api"


def wait_healthy(url: str, proc: subprocess.Popen[bytes] | None = None,
                 timeout_s: float = STARTUP_TIMEOUT_S) -> None:
    """Poll `URL/health` until it answers 200; raise if the server exits or never answers."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise HopforgeError(
                f"`prefect server start` exited with status {proc.returncode}; is the port "
                "already in use? Pick another with --port"
            )
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise HopforgeError(f"the Prefect server did not answer at {url}/health within "
                        f"{timeout_s:.0f} s; run `prefect server start` by hand to see why")


def start_server(host: str = "127.0.0.1", port: int = 4200) -> subprocess.Popen[bytes]:
    """Start `prefect server start` in the background and return once it is healthy."""
    url = api_url(host, port)
    try:
        if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
            raise HopforgeError(f"a server already answers at {url}; use it (export "
                                f"PREFECT_API_URL={url}) or pick another --port")
    except httpx.HTTPError:
        pass
    cmd = [*prefect_command(), "server", "start", "--host", host, "--port", str(port)]
    log.info("starting %s", " ".join(cmd))
    proc = subprocess.Popen(cmd, env=server_env(host, port), start_new_session=True)
    try:
        wait_healthy(url, proc)
    except BaseException:
        stop_server(proc)
        raise
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started by `start_server` (its whole process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def run_dashboard(host: str = "127.0.0.1", port: int = 4200) -> int:
    """Start the server, print where it is and how to report builds to it, wait for Ctrl-C."""
    proc = start_server(host, port)
    # a plain `kill` of this command stops the server too (it runs in its own session)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    url = api_url(host, port)
    print(f"Prefect dashboard: http://{host}:{port}\n"
          f"To report builds to it, in the shell that runs them:\n"
          f"  export PREFECT_API_URL={url}\n"
          f"Analytics are off. Ctrl-C stops the server.", flush=True)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop_server(proc)
