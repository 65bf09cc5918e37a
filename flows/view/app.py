"""The viewer's web app: Starlette on uvicorn, every page rendered on request.

The server binds 127.0.0.1 by default and stops on Ctrl-C or SIGTERM (uvicorn's own handlers).
"""

from __future__ import annotations

import logging
import socket

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.view.catalog import Catalog
from hopforge.flows.view.pages import PageNotFound
from hopforge.flows.view.site import resolve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

log = logging.getLogger(__name__)


def make_app(cat: Catalog) -> Starlette:
    """The ASGI app that serves the site of `cat` (see hopforge.flows.view.site)."""

    async def page(request: Request) -> Response:
        path = request.path_params.get("path", "")
        try:
            body, media = resolve(cat, path)
        except PageNotFound:
            return PlainTextResponse(f"no page {request.url.path} in this build\n",
                                     status_code=404)
        return Response(body, media_type=media)

    return Starlette(routes=[Route("/", page), Route("/{path:path}", page)])


def serve(cat: Catalog, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve `cat` until Ctrl-C or SIGTERM."""
    import uvicorn

    _check_port(host, port)
    config = uvicorn.Config(make_app(cat), host=host, port=port, log_level="warning",
                            access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    print(f"hopforge view: {cat.build.root} at http://{host}:{server.config.port}/ "
          "(Ctrl-C stops)", flush=True)
    server.run()


def _check_port(host: str, port: int) -> None:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise HopforgeError(f"cannot listen on {host}:{port} ({exc.strerror}): pass another "
                                "--port, or stop what uses it") from None
