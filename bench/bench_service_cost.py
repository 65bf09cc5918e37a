"""Where a search service request's CPU time goes, layer by layer, per query (k=5, BM25).

Each row runs the same HotpotQA questions over the bench_service index in one process, one
after another (no concurrency, so the figures are CPU time, not waiting):

- `BM25 top_k`: the index alone (tokenize, score, select), no hits built;
- `Searcher.search`: plus the hits (titles, snippets), what in-process search costs;
- `Searcher.search_batch of 16`: 16 queries per call (what gathering concurrent requests into one
  batch would cost per query);
- `SearchService.search`: plus the request body check and the rows a response carries;
- `ASGI app, 1 query per request` / `8 queries per request`: the Starlette app called directly
  with the request's bytes (routing, JSON parsing and encoding by orjson, metrics, the queue),
  no sockets;
- the `serve-search` rows of bench_service add uvicorn (HTTP parsing, sockets) and give the CPU
  the service process used per query (`server_cpu_ms`).

`vs_search` is each row's time per query over `Searcher.search`'s, in the same run.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from bench.bench_service import SHARED, _documents


def _per_query(fn: Callable[[], Any], n: int, repeat: int) -> float:
    """Best of `repeat` runs of `fn` (which handles `n` queries): CPU ms per query."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return 1000 * best / n


def _asgi_call(app: Any, body: bytes) -> Any:
    """One POST /search through the ASGI app: a coroutine that returns the response body."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/search", "raw_path": b"/search", "query_string": b"",
             "root_path": "", "server": ("127.0.0.1", 8900), "client": ("127.0.0.1", 1),
             "headers": [(b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode())]}

    async def call() -> bytes:
        sent = False
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] != 200:
                raise RuntimeError(f"status {message['status']}")
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await app(scope, receive, send)
        return b"".join(chunks)

    return call()


def run(quick: bool = False) -> list[dict]:
    """One row per layer of a search request."""
    from hopforge.corpus.http_app import make_app
    from hopforge.corpus.search import Searcher
    from hopforge.corpus.service import SearchService

    searcher = Searcher.from_documents(_documents(), dense=False)
    service = SearchService(searcher)
    app = make_app(service)
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    queries = [r["question"] for r in rows]
    n, repeat = len(queries), 2 if quick else 5
    tokenize = searcher.tokenizer
    singles = [json.dumps({"queries": [q], "k": 5, "mode": "bm25"}).encode() for q in queries]
    eights = [json.dumps({"queries": queries[i:i + 8], "k": 5, "mode": "bm25"}).encode()
              for i in range(0, n, 8)]

    loop = asyncio.new_event_loop()  # the app's request queue lives on one loop, as in uvicorn

    def through_app(bodies: list[bytes]) -> None:
        async def all_of() -> None:
            for body in bodies:
                await _asgi_call(app, body)

        loop.run_until_complete(all_of())

    layers: list[tuple[str, Callable[[], Any]]] = [
        ("BM25 top_k", lambda: [searcher.bm25.top_k(tokenize(q), 5) for q in queries]),
        ("Searcher.search", lambda: [searcher.search(q, k=5, mode="bm25") for q in queries]),
        ("Searcher.search_batch of 16", lambda: [
            searcher.search_batch(queries[i:i + 16], k=5, mode="bm25") for i in range(0, n, 16)]),
        ("SearchService.search", lambda: [
            service.search({"queries": [q], "k": 5, "mode": "bm25"}) for q in queries]),
        ("ASGI app, 1 query per request", lambda: through_app(singles)),
        ("ASGI app, 8 queries per request", lambda: through_app(eights)),
    ]
    for _, fn in layers:  # every layer sees every query once before timing
        fn()
    times = [(name, _per_query(fn, n, repeat)) for name, fn in layers]
    service.close()
    pending = asyncio.all_tasks(loop)  # the app's queue consumer
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.close()
    base = times[1][1]
    return [{"passages": len(searcher.passages), "queries": n, "layer": name,
             "cpu_ms_per_query": ms, "vs_search": ms / base} for name, ms in times]
