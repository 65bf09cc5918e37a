"""`hopforge view BUILD`: read a build in a browser, served locally or written as a static site."""

from __future__ import annotations

import argparse
from pathlib import Path

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.view.app import serve
from hopforge.flows.view.catalog import open_catalog
from hopforge.flows.view.site import write_static


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `hopforge view` to the `hopforge` parser."""
    p = add_command(sub, "view", wrap=True,
        help="read a build in a browser: funnel, questions, trajectories, exported rows",
        description="Serve a build as web pages on 127.0.0.1 (the funnel, a searchable table "
        "of questions, each question's spec and evidence, its trajectories turn by turn, their "
        "exported rows with the trained turns marked, and the eval summary), or with --static "
        "write the same pages as a folder to share. Nothing is fetched from the network.",
    )
    p.add_argument("build", type=Path, metavar="BUILD", help="the build directory")
    p.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1)")
    p.add_argument("--static", type=Path, metavar="DIR",
                   help="write the pages as a static site to DIR instead of serving them")
    p.add_argument("--eval", type=Path, metavar="DIR", dest="eval_dir",
                   help="a `hopforge eval --out DIR` folder to show (default BUILD/eval when "
                   "it has a summary.json)")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    if args.eval_dir is not None and not (args.eval_dir / "summary.json").is_file():
        raise HopforgeError(f"--eval {args.eval_dir}: no summary.json there; pass the folder "
                            "`hopforge eval --out DIR` wrote")
    cat = open_catalog(args.build, args.eval_dir)
    if args.static is not None:
        from tqdm import tqdm

        with tqdm(desc="pages", unit="page", disable=None) as bar:
            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            n = write_static(cat, args.static, progress)
        print(f"wrote {n} files to {args.static.resolve()}; open "
              f"{args.static.resolve() / 'index.html'}")
        return 0

    serve(cat, host=args.host, port=args.port)
    return 0
