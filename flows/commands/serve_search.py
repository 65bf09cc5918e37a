"""`hopforge serve-search BUILD`: serve the index's search, open and find tools over HTTP."""

from __future__ import annotations

import argparse
from pathlib import Path

DESCRIPTION = """\
Load the index of BUILD once and serve the agent's tools over HTTP, so that the trajectories
stages of many workers share one index per node (`[tools] url = "http://HOST:PORT"` in the build
file, or `hopforge trajectories BUILD --tools-url URL`). Routes: GET /health, POST /search,
POST /tools/{search,open,find,answer}, POST /documents, and Search-R1's POST /retrieve
{"queries": [...], "topk": k, "return_scores": true}. Listens on 127.0.0.1 unless --host says
otherwise (--host 0.0.0.0 opens it to the network: the service has no authentication)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    from hopforge.corpus.service import DEFAULT_PORT

    p = sub.add_parser("serve-search", help="serve a build's search tools over HTTP",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", type=Path, metavar="BUILD", help="build directory with an index")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--mode", choices=("bm25", "dense", "hybrid"),
                   help="retrieval mode of the search tool (default: hybrid with vectors)")
    p.set_defaults(func=run_serve_search)


def run_serve_search(args: argparse.Namespace) -> int:
    """`hopforge serve-search BUILD --host H --port P`: serve until interrupted."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.search import open_searcher
    from hopforge.corpus.service import SearchService, make_server

    searcher = open_searcher(BuildDir.at(args.build))
    service = SearchService(searcher, mode=args.mode or "")
    server = make_server(service, args.host, args.port)
    host, port = server.server_address[:2]
    print(f"serving {args.build} ({len(searcher.passages)} passages, mode {service.mode}) on "
          f"http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        service.close()
    return 0
