"""The search service over HTTP: a Starlette app on uvicorn, with a bounded queue and metrics.

`make_app(service)` routes the requests of `hopforge serve-search` to a `SearchService`
(corpus/service.py). BM25 searches are pure Python: on worker threads, every request would hand
the interpreter lock between the event loop and the workers, and on a busy machine each hand-over
waits for the scheduler (16 clients got 0.06x of in-process search that way). So by default an
index without vectors runs requests in the event loop's own thread, queued and run in order
between looks at the sockets; an index with vectors uses `threads` worker threads, where the
service's batcher gathers concurrent queries into one embedding batch. At most `max_pending`
requests may wait or run at once; one more is answered at once with 503 and `Retry-After`
instead of queueing without bound. Routes:

- `GET /health`: the index (documents, passages, vectors, modes) and the queue (`pending`,
  `max_pending`).
- `GET /metrics`: Prometheus text: requests by route and status, latency histograms by route,
  queries searched, requests refused as overloaded, requests in flight.
- `POST /search {"queries": [...], "k", "mode"}` (many queries in one request: one batch),
  `POST /tools/{search,open,find,answer}`, `POST /documents`, `POST /titles`, `GET /doc_ids`,
  `POST /retrieve` (Search-R1's shape): as in corpus/service.py.

`ServiceServer` runs the app on a uvicorn server in a background thread (tests, benchmarks);
`serve` runs it in the foreground until Ctrl-C or SIGTERM, which uvicorn turns into a graceful
shutdown (requests in flight finish); `serve_workers` runs several worker processes on one port
under uvicorn's supervisor (`hopforge serve-search --workers N`), one core each. Request and
response bodies are JSON read and written by orjson.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import orjson
import uvicorn
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.service import MAX_BODY, SearchService
from hopforge.corpus.tools import is_search
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

log = logging.getLogger(__name__)

DEFAULT_THREADS = 4
DEFAULT_MAX_PENDING = 256
RETRY_AFTER_S = 1
INLINE_BURST = 8  # requests run in the loop's thread between two looks at the sockets


class _Metrics:
    """The service's Prometheus metrics, in a registry of its own.

    Under `serve_workers` prometheus_client runs in its multiprocess mode (the supervisor sets
    PROMETHEUS_MULTIPROC_DIR before the workers start): each worker writes its values to files
    there, and `/metrics`, whichever worker answers it, sums them over all workers.
    """

    def __init__(self, *, multiprocess: bool = False) -> None:
        self.multiprocess = multiprocess
        self.registry = CollectorRegistry()
        self.requests = Counter("hopforge_search_requests", "Requests answered",
                                ["route", "status"], registry=self.registry)
        self.latency = Histogram("hopforge_search_request_seconds", "Time to answer a request",
                                 ["route"], registry=self.registry,
                                 buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5,
                                          5, 10))
        self.queries = Counter("hopforge_search_queries", "Queries searched",
                               registry=self.registry)
        self.overloaded = Counter("hopforge_search_overloaded", "Requests refused with 503",
                                  registry=self.registry)
        self.pending = Gauge("hopforge_search_pending", "Requests waiting or running",
                             registry=self.registry, multiprocess_mode="livesum")

    def text(self) -> bytes:
        """The metrics in Prometheus's text format (summed over workers in multiprocess mode)."""
        if not self.multiprocess:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return generate_latest(registry)


class _JSON(JSONResponse):
    """Starlette's JSONResponse encoded by orjson: the same compact UTF-8 JSON, several times
    faster than the standard library's encoder on hit lists. numpy scalars (a score may be a
    np.float64) are written as the equal Python number."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


def _error(status: int, message: str, **headers: str) -> JSONResponse:
    return _JSON({"error": message}, status_code=status, headers=headers or None)


def make_app(service: SearchService, *, threads: int | None = None,
             max_pending: int = DEFAULT_MAX_PENDING, multiprocess: bool = False) -> Starlette:
    """The Starlette app serving `service` (see the module docstring).

    `threads`: None picks 0 for an index without vectors and DEFAULT_THREADS with them.
    `multiprocess`: the app is one of `serve_workers`'s workers (metrics summed over them).
    """
    if threads is None:
        threads = DEFAULT_THREADS if service.searcher.has_dense else 0
    if threads < 0 or max_pending < 1:
        raise HopforgeError(f"threads={threads} must be 0 or more and max_pending={max_pending} "
                            "at least 1")
    metrics = _Metrics(multiprocess=multiprocess)
    limiter = anyio.CapacityLimiter(max(threads, 1))
    state = {"pending": 0}
    posts: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "search": service.search, "documents": service.documents, "titles": service.titles,
        "retrieve": service.retrieve,
    }

    inline: deque[tuple[Callable[[], dict[str, Any]], asyncio.Future[dict[str, Any]]]] = deque()
    wake = asyncio.Event()
    consumer: list[asyncio.Task[None]] = []

    async def drain() -> None:
        """Runs queued work in the event loop's thread, one request after another, yielding to
        the loop (reads, writes, health) every INLINE_BURST requests."""
        while True:
            await wake.wait()
            wake.clear()
            done = 0
            while inline:
                work, future = inline.popleft()
                try:
                    future.set_result(work())
                except Exception as exc:  # noqa: BLE001 - the request's handler reports it
                    future.set_exception(exc)
                done += 1
                if done % INLINE_BURST == 0:
                    await asyncio.sleep(0)

    async def execute(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if threads:
            return await anyio.to_thread.run_sync(work, limiter=limiter)
        if not consumer:
            consumer.append(asyncio.get_running_loop().create_task(drain()))
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        inline.append((work, future))
        wake.set()
        return await future

    async def run(route: str, work: Callable[[], dict[str, Any]]) -> Response:
        if state["pending"] >= max_pending:
            metrics.overloaded.inc()
            metrics.requests.labels(route, "503").inc()
            return _error(503, f"the search service has {state['pending']} requests in hand "
                          f"(max_pending={max_pending}); retry after {RETRY_AFTER_S} s, or start "
                          "another `hopforge serve-search` replica and spread clients over both",
                          **{"Retry-After": str(RETRY_AFTER_S)})
        state["pending"] += 1
        metrics.pending.set(state["pending"])
        start = time.perf_counter()
        status = 200
        try:
            return _JSON(await execute(work))
        except HopforgeError as exc:
            status = 400
            return _error(400, str(exc))
        except Exception as exc:
            status = 500
            log.exception("%s failed", route)
            return _error(500, f"{type(exc).__name__}: {exc} (see the service's log)")
        finally:
            state["pending"] -= 1
            metrics.pending.set(state["pending"])
            metrics.latency.labels(route).observe(time.perf_counter() - start)
            metrics.requests.labels(route, str(status)).inc()

    async def body_of(request: Request) -> dict[str, Any] | Response:
        length = int(request.headers.get("content-length") or 0)
        if length > MAX_BODY:
            return _error(413, f"request body of {length} bytes is over {MAX_BODY}: send fewer "
                               "queries per request")
        raw = await request.body()
        try:
            body = orjson.loads(raw or b"{}")
        except orjson.JSONDecodeError as exc:
            return _error(400, f"the body is not JSON: {exc}")
        if not isinstance(body, dict):
            return _error(400, "the request body must be a JSON object")
        return body

    async def post(request: Request) -> Response:
        name = request.path_params["name"]
        body = await body_of(request)
        if isinstance(body, Response):
            return body
        if name not in posts:
            return _error(404, f"no route POST /{name}")
        if name in ("search", "retrieve") and isinstance(body.get("queries"), list):
            metrics.queries.inc(len(body["queries"]))
        return await run(name, lambda: posts[name](body))

    async def tool(request: Request) -> Response:
        name = request.path_params["name"]
        body = await body_of(request)
        if isinstance(body, Response):
            return body
        if is_search(name):
            metrics.queries.inc()
        return await run(f"tools/{name}", lambda: service.tool(name, body))

    async def health(request: Request) -> Response:
        return _JSON({**service.health(), "pending": state["pending"],
                      "max_pending": max_pending, "threads": threads})

    async def doc_ids(request: Request) -> Response:
        return await run("doc_ids", service.doc_ids)

    async def prometheus(request: Request) -> Response:
        return Response(metrics.text(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")

    async def missing(request: Request, exc: Exception) -> Response:
        return _error(404, f"no route {request.method} {request.url.path}")

    routes = [Route("/health", health), Route("/metrics", prometheus),
              Route("/doc_ids", doc_ids), Route("/tools/{name}", tool, methods=["POST"]),
              Route("/{name}", post, methods=["POST"])]
    return Starlette(routes=routes, exception_handlers={404: missing, 405: missing})


def uvicorn_config(app: Starlette | str, host: str, port: int, **settings: Any) -> uvicorn.Config:
    """uvicorn's settings for the service: httptools and uvloop where installed, no access log."""
    return uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning",
                          timeout_keep_alive=60, backlog=2048, **settings)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: a free one), or a clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HopforgeError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another "
                            "--port, or stop the process that holds it") from exc
    sock.listen(2048)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class ServiceServer:
    """A uvicorn server for `app` on a background thread, listening once constructed."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        self._sock = bind(host, port)
        self.url = _url(self._sock)
        self.server = uvicorn.Server(uvicorn_config(app, host, port))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]},
                                        name="search-service", daemon=True)

    def start(self, timeout_s: float = 30.0) -> ServiceServer:
        """Start serving and wait until uvicorn accepts requests."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise HopforgeError(f"the search service at {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop accepting, let requests in flight finish, and join the thread."""
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()


def serve(app: Starlette, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve `app` in the foreground until Ctrl-C or SIGTERM (a graceful shutdown)."""
    sock = bind(host, port)
    on_ready(_url(sock))
    try:
        uvicorn.Server(uvicorn_config(app, host, port)).run(sockets=[sock])
    finally:
        sock.close()


def serve_workers(factory: str, host: str, port: int, workers: int,
                  on_ready: Callable[[str], None]) -> None:
    """Serve from `workers` processes that accept on one listening socket, until Ctrl-C or
    SIGTERM. `factory` is the import string of a function that returns a worker's app (each
    worker calls it once and loads the index itself: memory-mapped postings are shared through
    the page cache). uvicorn's supervisor starts the workers, restarts one that dies and stops
    them all gracefully."""
    import os
    import shutil
    import tempfile

    from uvicorn.supervisors import Multiprocess

    if workers < 2:
        raise HopforgeError(f"serve_workers needs 2 or more workers, got {workers}")
    metrics_dir = tempfile.mkdtemp(prefix="hopforge-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir  # read by the workers' prometheus_client
    sock = bind(host, port)
    try:
        config = uvicorn_config(factory, host, port, factory=True, workers=workers)
        on_ready(_url(sock))
        Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()
        shutil.rmtree(metrics_dir, ignore_errors=True)
