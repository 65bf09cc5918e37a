"""The search service: throughput and latency at 1, 16 and 64 clients against in-process search.

Index: BM25 over the real paragraphs of ../shared/data/wiki (2WikiMultihopQA and HotpotQA
corpora); queries: the HotpotQA questions, k=5. "in process" runs `Searcher.search` from N
threads sharing the searcher (what a worker that loads the index does); "service" runs the same
queries from N concurrent clients (an asyncio aiohttp session with N keep-alive connections),
against `hopforge serve-search`'s app on uvicorn in a child process. Both sides see every query
once before the timed runs (BM25's first look at a query's terms costs several times a warm
one). Batched rows send 8 queries per request (`POST /search` takes a list). `same_hits` checks
every result against the in-process one; `p50_ms` / `p99_ms` are per request. Ratios are against
in-process search at the same number of threads, in the same run. The last row keeps 64 clients
sending for 60 s (10 s with --quick) and counts failed requests.

Client and server share the machine's cores, so the CPU each side spends per query is reported
beside the throughput: `server_cpu_ms` (the service process; for "in process", the searching
process) and `client_cpu_ms` (the benchmark process sending the requests). The client is
aiohttp because httpx's asyncio client costs 3-5 ms of CPU per request here, several times what
the service spends answering it, and on a 2-core machine that cost is taken from the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BATCH = 8  # queries per request in the batched rows
SOAK_CLIENTS = 64
WORKERS = (1, 2)  # `serve-search --workers`: the default, and one process per core here


def _documents() -> list[Any]:
    from hopforge.corpus.records import Document

    docs = []
    wiki = json.loads((SHARED / "wiki" / "2wikimultihopqa_corpus.json").read_text("utf-8"))
    for i, p in enumerate(wiki):
        docs.append(Document(doc_id=f"2w{i}", title=p["title"], text=p["text"], source="2wiki"))
    hotpot = json.loads((SHARED / "wiki" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for i, (title, sents) in enumerate(hotpot.items()):
        docs.append(Document(doc_id=f"hp{i}", title=title, text=" ".join(sents), source="hp"))
    return docs


def _run(call: Callable[[Any], Any], items: list[Any], clients: int
         ) -> tuple[float, list[Any], list[float]]:
    """Items per second, results in input order, and each call's latency in seconds."""
    def work(chunk: list[Any]) -> list[tuple[Any, float]]:
        out = []
        for item in chunk:
            t = time.perf_counter()
            result = call(item)
            out.append((result, time.perf_counter() - t))
        return out

    chunks = [items[i::clients] for i in range(clients)]
    t = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        parts = list(pool.map(work, chunks))
    seconds = time.perf_counter() - t
    results: list[Any] = [None] * len(items)
    latencies: list[float] = []
    for i, part in enumerate(parts):
        results[i::clients] = [r for r, _ in part]
        latencies += [s for _, s in part]
    return len(items) / seconds, results, latencies


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far (Linux /proc; 0 once gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(latencies: list[float], q: float) -> float:
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _build(root: Path) -> Path:
    """A build of the benchmark's documents with a BM25 index (what `hopforge index --no-dense`
    writes), for `hopforge serve-search` to load."""
    from hopforge.corpus.index import IndexConfig, build_index
    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.store import write_corpus

    build = BuildDir.at(root / "build")
    write_corpus(build, _documents())
    build_index(build, IndexConfig(dense=False))
    return root / "build"


class _Command:
    """`hopforge serve-search BUILD --port 0 --workers N` in a child process."""

    def __init__(self, build: Path, workers: int) -> None:
        import subprocess
        import sys

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hopforge.flows.commands.cli", "serve-search", str(build),
             "--port", "0", "--workers", str(workers)],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line.startswith("serving "):
            self.proc.kill()
            raise RuntimeError(f"serve-search did not start: {line!r}")
        self.url = line.rsplit(" on ", 1)[1].strip()
        deadline = time.monotonic() + 300
        while len(_tree(self.proc.pid)) < 1 + (workers if workers > 1 else 0):
            if time.monotonic() > deadline:
                raise RuntimeError("serve-search's workers did not start")
            time.sleep(0.2)
        time.sleep(2.0 if workers > 1 else 0.0)  # the workers load the index

    def cpu_s(self) -> float:
        """CPU seconds the command and its workers have used so far."""
        return sum(_cpu_s(pid) for pid in _tree(self.proc.pid))

    def stop(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


def _tree(pid: int) -> list[int]:
    """`pid` and the processes it started (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


async def _requests(url: str, bodies: list[dict[str, Any]], clients: int
                    ) -> tuple[float, list[Any], list[float], int]:
    """`clients` keep-alive connections sending `bodies` to POST /search one after another:
    requests per second, each answer's hits in input order, latencies (s), failed requests."""
    import aiohttp

    answers: list[Any] = [None] * len(bodies)
    latencies: list[float] = []
    failed = 0

    async def client(http: aiohttp.ClientSession, start: int) -> None:
        nonlocal failed
        for i in range(start, len(bodies), clients):
            t = time.perf_counter()
            try:
                async with http.post("/search", json=bodies[i]) as response:
                    response.raise_for_status()
                    answers[i] = (await response.json())["hits"]
            except (TimeoutError, aiohttp.ClientError):
                failed += 1
            latencies.append(time.perf_counter() - t)

    async with _session(url, clients) as http:
        t = time.perf_counter()
        await asyncio.gather(*(client(http, n) for n in range(clients)))
        seconds = time.perf_counter() - t
    return len(bodies) / seconds, answers, latencies, failed


def _session(url: str, clients: int) -> Any:
    import aiohttp

    return aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=clients),
                                 timeout=aiohttp.ClientTimeout(total=120))


async def _soak(url: str, queries: list[str], seconds: float) -> dict[str, Any]:
    """64 clients sending single queries for `seconds`; failed requests counted, not raised."""
    import aiohttp

    stop = time.monotonic() + seconds
    latencies: list[float] = []
    counts = {"ok": 0, "failed": 0}

    async def client(http: aiohttp.ClientSession, i: int) -> None:
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                body = {"queries": [queries[i % len(queries)]], "k": 5, "mode": "bm25"}
                async with http.post("/search", json=body) as response:
                    response.raise_for_status()
                    await response.read()
                counts["ok"] += 1
            except (TimeoutError, aiohttp.ClientError):
                counts["failed"] += 1
            latencies.append(time.perf_counter() - t)
            i += SOAK_CLIENTS

    async with _session(url, SOAK_CLIENTS) as http:
        t = time.perf_counter()
        await asyncio.gather(*(client(http, n) for n in range(SOAK_CLIENTS)))
        elapsed = time.perf_counter() - t
    return {"queries_per_s": counts["ok"] / elapsed, "failed": counts["failed"],
            "requests": counts["ok"] + counts["failed"], "p50_ms": _pct(latencies, 0.5),
            "p99_ms": _pct(latencies, 0.99)}


def run(quick: bool = False) -> list[dict]:
    """One row per number of service workers, way of searching and number of clients."""
    import tempfile

    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.search import Searcher

    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    queries = [r["question"] for r in rows] * (2 if quick else 6)
    groups = [queries[i : i + BATCH] for i in range(0, len(queries), BATCH)]
    single = [{"queries": [q], "k": 5, "mode": "bm25"} for q in queries]
    batched = [{"queries": g, "k": 5, "mode": "bm25"} for g in groups]
    n = len(queries)
    out: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        build = _build(Path(tmp))
        searcher = Searcher.load(BuildDir.at(build))  # what a worker that loads the index has
        _run(lambda q: searcher.search(q, k=5, mode="bm25"), queries, 4)
        common = {"passages": len(searcher.passages), "queries": n}
        for workers in WORKERS:
            command = _Command(build, workers)
            try:
                out += _rows(command, searcher, queries, single, batched, groups, quick,
                             {**common, "workers": workers})
            finally:
                command.stop()
    return out


def _rows(command: _Command, searcher: Any, queries: list[str], single: list[dict[str, Any]],
          batched: list[dict[str, Any]], groups: list[list[str]], quick: bool,
          common: dict[str, Any]) -> list[dict]:
    """In-process and service rows at 1, 16 and 64 clients, then the soak, for one command."""
    n, url = len(queries), command.url

    def row(way: str, clients: int, qps: float, ref: float, same: float, lat: list[float],
            failed: int, server_s: float, client_s: float) -> dict[str, Any]:
        return {**common, "way": way, "clients": clients, "queries_per_s": qps,
                "vs_in_process": qps / ref, "same_hits": same, "p50_ms": _pct(lat, 0.5),
                "p99_ms": _pct(lat, 0.99), "server_cpu_ms": 1000 * server_s / n,
                "client_cpu_ms": 1000 * client_s / n, "failed": failed}

    def service(bodies: list[dict[str, Any]], clients: int) -> tuple[Any, float, float]:
        server0, client0 = command.cpu_s(), time.process_time()
        result = asyncio.run(_requests(url, bodies, clients))
        return result, command.cpu_s() - server0, time.process_time() - client0

    for _ in range(2):  # every worker sees the queries before timing, as the in-process searcher
        asyncio.run(_requests(url, single, 16))
    out: list[dict] = []
    for clients in (1, 16, 64):
        t = time.process_time()
        ref, truth, ref_lat = _run(lambda q: searcher.search(q, k=5, mode="bm25"), queries,
                                   clients)
        want = [[h.to_row() for h in hits] for hits in truth]
        out.append(row("in process", clients, ref, ref, 1.0, ref_lat, 0,
                       time.process_time() - t, float("nan")))
        (qps, got, lat, failed), server_s, client_s = service(single, clients)
        out.append(row("service, 1 query per request", clients, qps, ref,
                       sum(g == [w] for g, w in zip(got, want)) / n, lat, failed, server_s,
                       client_s))
        (rps, got_groups, blat, failed), server_s, client_s = service(batched, clients)
        got_b = [hits for group in got_groups if group for hits in group]
        out.append(row(f"service, {BATCH} queries per request", clients, rps * n / len(groups),
                       ref, sum(g == w for g, w in zip(got_b, want)) / n, blat, failed,
                       server_s, client_s))
    seconds = 10.0 if quick else 60.0
    server0, client0 = command.cpu_s(), time.process_time()
    soak = asyncio.run(_soak(url, queries, seconds))
    served = max(soak["requests"] - soak["failed"], 1)  # CPU per query answered
    out.append({**row(f"service, {SOAK_CLIENTS} clients for {seconds:.0f} s "
                      f"({soak['requests']} requests)", SOAK_CLIENTS, soak["queries_per_s"],
                      out[-3]["queries_per_s"], float("nan"), [], soak["failed"], 0.0, 0.0),
                "p50_ms": soak["p50_ms"], "p99_ms": soak["p99_ms"],
                "server_cpu_ms": 1000 * (command.cpu_s() - server0) / served,
                "client_cpu_ms": 1000 * (time.process_time() - client0) / served})
    return out
