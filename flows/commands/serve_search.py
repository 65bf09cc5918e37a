"""`hopforge serve-search BUILD`: serve the index's search, open and find tools over HTTP."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hopforge.corpus.http_app import (
    DEFAULT_MAX_PENDING,
    DEFAULT_THREADS,
    make_app,
    serve,
    serve_workers,
)
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.search import open_searcher
from hopforge.corpus.service import DEFAULT_PORT, SearchService
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.teacher import positive_int

# The settings `--workers` hands each worker process (uvicorn's factory takes no arguments).
WORKER_SETTINGS = "HOPFORGE_SERVE_SEARCH_WORKER"

DESCRIPTION = """\
Load the index of BUILD once and serve the agent's tools over HTTP, so that the trajectories
stages of many workers share one index per node (`[tools] url = "http://HOST:PORT"` in the build
file, or `hopforge trajectories BUILD --tools-url URL`). Routes: GET /health, POST /search,
POST /tools/{search,open,find,answer}, POST /documents, Search-R1's POST /retrieve
{"queries": [...], "topk": k, "return_scores": true}, and GET /metrics (Prometheus). Runs on
uvicorn; at most --max-pending requests wait or run at once, and more are answered 503 with
Retry-After. --workers N runs N server processes on one port, each with the index
memory-mapped, for machines with cores to spare. Ctrl-C or SIGTERM stops it after the requests
in flight. Listens on 127.0.0.1 unless --host says
otherwise (--host 0.0.0.0 opens it to the network: the service has no authentication)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""

    p = add_command(sub, "serve-search", help="serve a build's search tools over HTTP",
                    description=DESCRIPTION)
    p.add_argument("build", type=Path, metavar="BUILD", help="build directory with an index")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--mode", choices=("bm25", "dense", "hybrid"),
                   help="retrieval mode of the search tool (default: hybrid with vectors)")
    p.add_argument("--threads", type=int, default=None,
                   help="worker threads that run requests; 0 runs them in the event loop's "
                        f"thread (default: 0 for a BM25-only index, {DEFAULT_THREADS} with vectors)")
    p.add_argument("--max-pending", type=positive_int, default=DEFAULT_MAX_PENDING,
                   help="requests waiting or running at once before the service answers 503 "
                        f"(default {DEFAULT_MAX_PENDING})")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="server processes accepting on the one port (default 1). Each loads the "
                        "index (BM25 postings memory-mapped, so shared through the page cache; "
                        "documents and passages in each worker's memory) and answers requests "
                        "on a core of its own; --max-pending applies to each")
    p.set_defaults(func=run_serve_search)


def run_serve_search(args: argparse.Namespace) -> int:
    """`hopforge serve-search BUILD --host H --port P`: serve until interrupted."""

    searcher = open_searcher(BuildDir.at(args.build))  # a broken build fails here, once
    service = SearchService(searcher, mode=args.mode or "")
    workers = f", {args.workers} workers" if args.workers > 1 else ""

    def ready(url: str) -> None:
        print(f"serving {args.build} ({len(searcher.passages)} passages, mode {service.mode}"
              f"{workers}) on {url}", flush=True)

    try:
        if args.workers > 1:
            os.environ[WORKER_SETTINGS] = json.dumps({
                "build": str(Path(args.build).resolve()), "mode": args.mode or "",
                "threads": args.threads, "max_pending": args.max_pending})
            serve_workers(f"{__name__}:worker_app", args.host, args.port, args.workers, ready)
        else:
            app = make_app(service, threads=args.threads, max_pending=args.max_pending)
            serve(app, args.host, args.port, ready)
    finally:
        service.close()
    return 0


def worker_app() -> Any:
    """One `--workers` process's app (uvicorn's factory): the build's index, opened in this
    process, served with the settings the command gave."""

    settings = json.loads(os.environ[WORKER_SETTINGS])
    service = SearchService(open_searcher(BuildDir.at(Path(settings["build"]))),
                            mode=settings["mode"])
    return make_app(service, threads=settings["threads"], max_pending=settings["max_pending"],
                    multiprocess=True)
