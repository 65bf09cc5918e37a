"""`hopforge serve-search --workers N`: N uvicorn worker processes on one port, each with the
build's index opened itself, answering as the searcher does in process, with /metrics summed
over the workers and a graceful stop of them all on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.remote import RemoteSearcher
from hopforge.corpus.search import Searcher

from tests.helpers.tiny import HOPFORGE, tiny_cli_index

QUERIES = ["volcano in the north", "who founded the harbour town", "river", "Mount Fendle"]


def _workers_of(pid: int) -> list[int]:
    """The processes uvicorn's supervisor `pid` spawned (multiprocessing's spawn_main)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def test_workers_share_the_port_and_answer_as_in_process(tiny_corpus_path: Path,
                                                         tmp_path: Path) -> None:
    hopforge = [sys.executable, *HOPFORGE]
    build = tmp_path / "b"
    env = tiny_cli_index(tiny_corpus_path, build)
    in_process = Searcher.load(BuildDir.at(build))
    with subprocess.Popen([*hopforge, "serve-search", str(build), "--port", "0", "--workers",
                           "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            assert line.startswith("serving ") and "2 workers" in line, line
            url = line.rsplit(" on ", 1)[1].strip()
            deadline = time.monotonic() + 120
            while len(_workers_of(proc.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            workers = _workers_of(proc.pid)
            assert len(workers) == 2, workers

            def search(i: int) -> list:
                query = QUERIES[i % len(QUERIES)]
                with httpx.Client(base_url=url, timeout=60) as client:  # a connection each
                    answer = client.post("/search", json={"queries": [query], "k": 3})
                assert answer.status_code == 200, answer.text
                return answer.json()["hits"][0]

            sent = 24
            with ThreadPoolExecutor(6) as pool:
                got = list(pool.map(search, range(sent)))
            for i, hits in enumerate(got):
                want = in_process.search(QUERIES[i % len(QUERIES)], k=3)
                assert hits == [h.to_row() for h in want]
            metrics = httpx.get(f"{url}/metrics").text  # one worker answers, for all of them
            assert f'hopforge_search_requests_total{{route="search",status="200"}} {sent}.0' in (
                metrics)
            assert f"hopforge_search_queries_total {sent}.0" in metrics
            with RemoteSearcher(url) as remote:
                assert remote.search_batch(QUERIES, k=5) == in_process.search_batch(QUERIES, k=5)
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
            assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
        finally:
            if proc.poll() is None:
                proc.kill()
