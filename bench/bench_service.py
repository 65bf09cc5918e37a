"""The search service: throughput and latency at 1, 16 and 64 clients against in-process search.

Index: BM25 over the real paragraphs of ../shared/data/wiki (2WikiMultihopQA and HotpotQA
corpora); queries: the HotpotQA questions, k=5. "in process" runs `Searcher.search` from N
threads sharing the searcher (what a worker that loads the index does); "service" runs the same
queries from N concurrent clients (an asyncio httpx client with N keep-alive connections, as
verl's async tools call it), against `hopforge serve-search`'s app on uvicorn in a child
process. Both sides see every query once before the timed runs (BM25's first look at a query's
terms costs several times a warm one). Batched rows send 8 queries per request
(`POST /search` takes a list). `same_hits` checks every result against the in-process one;
`p50_ms` / `p99_ms` are per request. Ratios are against in-process search at the same number
of threads, in the same run. The last row keeps 64 clients sending for 60 s (10 s with --quick)
and counts failed requests.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BATCH = 8  # queries per request in the batched rows
SOAK_CLIENTS = 64


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


def _pct(latencies: list[float], q: float) -> float:
    ordered = sorted(latencies)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _serve(ready: Any) -> None:
    """Child process: build the searcher, serve it with the command's defaults, report the URL."""
    from hopforge.corpus.http_app import make_app, serve
    from hopforge.corpus.search import Searcher
    from hopforge.corpus.service import SearchService

    service = SearchService(Searcher.from_documents(_documents(), dense=False))
    serve(make_app(service), "127.0.0.1", 0, ready.put)


async def _requests(url: str, bodies: list[dict[str, Any]], clients: int
                    ) -> tuple[float, list[Any], list[float], int]:
    """`clients` keep-alive connections sending `bodies` to POST /search one after another:
    requests per second, each answer's hits in input order, latencies (s), failed requests."""
    import httpx

    answers: list[Any] = [None] * len(bodies)
    latencies: list[float] = []
    failed = 0

    async def client(http: httpx.AsyncClient, start: int) -> None:
        nonlocal failed
        for i in range(start, len(bodies), clients):
            t = time.perf_counter()
            try:
                response = await http.post("/search", json=bodies[i])
                response.raise_for_status()
                answers[i] = response.json()["hits"]
            except httpx.HTTPError:
                failed += 1
            latencies.append(time.perf_counter() - t)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        t = time.perf_counter()
        await asyncio.gather(*(client(http, n) for n in range(clients)))
        seconds = time.perf_counter() - t
    return len(bodies) / seconds, answers, latencies, failed


async def _soak(url: str, queries: list[str], seconds: float) -> dict[str, Any]:
    """64 clients sending single queries for `seconds`; failed requests counted, not raised."""
    import httpx

    stop = time.monotonic() + seconds
    latencies: list[float] = []
    counts = {"ok": 0, "failed": 0}

    async def client(http: httpx.AsyncClient, i: int) -> None:
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                body = {"queries": [queries[i % len(queries)]], "k": 5, "mode": "bm25"}
                (await http.post("/search", json=body)).raise_for_status()
                counts["ok"] += 1
            except httpx.HTTPError:
                counts["failed"] += 1
            latencies.append(time.perf_counter() - t)
            i += SOAK_CLIENTS

    limits = httpx.Limits(max_connections=SOAK_CLIENTS, max_keepalive_connections=SOAK_CLIENTS)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        t = time.perf_counter()
        await asyncio.gather(*(client(http, n) for n in range(SOAK_CLIENTS)))
        elapsed = time.perf_counter() - t
    return {"queries_per_s": counts["ok"] / elapsed, "failed": counts["failed"],
            "requests": counts["ok"] + counts["failed"], "p50_ms": _pct(latencies, 0.5),
            "p99_ms": _pct(latencies, 0.99)}


def run(quick: bool = False) -> list[dict]:
    """One row per way of searching and number of clients."""
    import multiprocessing

    from hopforge.corpus.search import Searcher

    searcher = Searcher.from_documents(_documents(), dense=False)
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    queries = [r["question"] for r in rows] * (2 if quick else 6)
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Queue()
    child = ctx.Process(target=_serve, args=(ready,), daemon=True)
    child.start()
    url = ready.get(timeout=300)
    def in_process(q: str) -> Any:
        return searcher.search(q, k=5, mode="bm25")

    def rows_of(hits: Any) -> Any:
        return [[h.to_row() for h in row] for row in hits]

    groups = [queries[i : i + BATCH] for i in range(0, len(queries), BATCH)]
    single = [{"queries": [q], "k": 5, "mode": "bm25"} for q in queries]
    batched = [{"queries": g, "k": 5, "mode": "bm25"} for g in groups]
    common = {"passages": len(searcher.passages), "queries": len(queries)}
    out: list[dict] = []
    try:
        _run(in_process, queries, 4)  # both sides see every query once before timing
        asyncio.run(_requests(url, batched, 4))
        for clients in (1, 16, 64):
            ref, truth, ref_lat = _run(in_process, queries, clients)
            want = rows_of(truth)
            out.append({**common, "way": "in process", "clients": clients,
                        "queries_per_s": ref, "vs_in_process": 1.0, "same_hits": 1.0,
                        "p50_ms": _pct(ref_lat, 0.5), "p99_ms": _pct(ref_lat, 0.99),
                        "failed": 0})
            qps, got, lat, failed = asyncio.run(_requests(url, single, clients))
            out.append({**common, "way": "service, 1 query per request", "clients": clients,
                        "queries_per_s": qps, "vs_in_process": qps / ref,
                        "same_hits": sum(g == [w] for g, w in zip(got, want)) / len(want),
                        "p50_ms": _pct(lat, 0.5), "p99_ms": _pct(lat, 0.99), "failed": failed})
            rps, got_groups, blat, failed = asyncio.run(_requests(url, batched, clients))
            got_b = [hits for group in got_groups if group for hits in group]
            bqps = rps * len(queries) / len(groups)
            out.append({**common, "way": f"service, {BATCH} queries per request",
                        "clients": clients, "queries_per_s": bqps, "vs_in_process": bqps / ref,
                        "same_hits": sum(g == w for g, w in zip(got_b, want)) / len(want),
                        "p50_ms": _pct(blat, 0.5), "p99_ms": _pct(blat, 0.99), "failed": failed})
        soak = asyncio.run(_soak(url, queries, 10.0 if quick else 60.0))
        out.append({**common, "way": f"service, {SOAK_CLIENTS} clients for "
                    f"{10 if quick else 60} s ({soak['requests']} requests)",
                    "clients": SOAK_CLIENTS, "queries_per_s": soak["queries_per_s"],
                    "vs_in_process": soak["queries_per_s"] / out[-3]["queries_per_s"],
                    "same_hits": float("nan"), "p50_ms": soak["p50_ms"],
                    "p99_ms": soak["p99_ms"], "failed": soak["failed"]})
    finally:
        child.terminate()
        child.join()
    return out

