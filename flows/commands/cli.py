"""The `hopforge` command line: one subcommand per stage, plus whole builds."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from hopforge.corpus.errors import HopforgeError

# Each module registers its subcommands with `register(subparsers)`; heavy imports
# (torch, faiss, prefect) happen inside the command functions so `--help` stays fast.
COMMAND_MODULES = (
    "hopforge.flows.commands.corpus",
    "hopforge.flows.commands.index",
    "hopforge.flows.commands.serve_search",
    "hopforge.flows.commands.questions",
    "hopforge.flows.commands.trajectories",
    "hopforge.flows.commands.filters",
    "hopforge.flows.commands.export",
    "hopforge.flows.commands.build",
    "hopforge.flows.commands.eval",
    "hopforge.flows.commands.view",
)

QUIET_LOGGERS = ("faiss.loader", "faiss", "matplotlib", "httpx", "distributed")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hopforge",
        description="Build training data for deep-search agents from a document corpus.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.verbose:
        # Libraries that log routine start-up details at INFO: faiss's loader (six lines per
        # process, one a ModuleNotFoundError for the AVX512 build it tries first), matplotlib;
        # httpx logs one line per request, thousands per stage against a model server.
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except HopforgeError as exc:
        print(f"hopforge {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished parts are kept, rerun to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
