"""Whole builds: `hopforge build`, `hopforge demo`, `hopforge dashboard` and `hopforge serve`."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.dashboard import run_dashboard
from hopforge.flows.build.engine import prepare_build, resolve_config, run_build
from hopforge.flows.build.markers import PREFECT_HOME
from hopforge.flows.build.registry import STAGES
from hopforge.flows.build.stops import (
    BuildStopped,
    quiet_console,
    stop_message,
    stop_on_sigterm,
    temporary_server,
)
from hopforge.flows.build.summary import summary_text
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.build_file import load_config, today_utc
from hopforge.flows.config.demo import DEMO_CONFIG_NAME

log = logging.getLogger(__name__)

STAGE_HELP = f"one of {', '.join(STAGES)}"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "build", wrap=True,
        help="run a whole build from a TOML build file",
        description="Run every stage of the build described by CONFIG.toml as a Prefect flow "
        "(one task run per stage). Finished stages and parts are kept on disk, so running the "
        "same command again continues a build that was stopped or killed.",
    )
    p.add_argument("config", metavar="CONFIG.toml", help="the build file")
    p.add_argument("--out", metavar="DIR", help="build directory (default: [build] out, "
                   "else builds/NAME)")
    _add_run_flags(p, cmd_build)

    p = add_command(sub, "demo", wrap=True,
        help="the built-in demo: Jargon File corpus, scripted teacher, whole build on a CPU",
        description="Build a small dataset from the Jargon File shipped with hopforge, with "
        "the scripted teacher (no model server), and print what was made and where.",
    )
    p.add_argument("--out", metavar="DIR", default="builds/demo",
                   help="build directory (default builds/demo)")
    _add_run_flags(p, cmd_demo)

    p = add_command(sub, "dashboard", wrap=True,
        help="start the Prefect server (dashboard) on 127.0.0.1",
        description="Start `prefect server start` on 127.0.0.1 with analytics off, wait until "
        "it answers, and print the dashboard URL and the PREFECT_API_URL to export so builds "
        "report to it. Stops with Ctrl-C.",
    )
    p.add_argument("--port", type=int, default=4200, help="port (default 4200)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.set_defaults(func=cmd_dashboard)

    p = add_command(sub, "serve", wrap=True,
        help="serve a build as a scheduled Prefect deployment",
        description="Serve the build as the Prefect deployment 'hopforge-build/NAME' (NAME from "
        "[build] name) on a cron schedule; `prefect deployment run 'hopforge-build/NAME'` "
        "triggers it by hand. Needs a Prefect server: run `hopforge dashboard` and export "
        "PREFECT_API_URL first. Runs until Ctrl-C.",
    )
    p.add_argument("config", metavar="CONFIG.toml", help="the build file")
    p.add_argument("--cron", required=True, metavar="EXPR",
                   help='cron schedule, e.g. "0 3 * * *" for 03:00 every day (UTC)')
    p.add_argument("--out", metavar="DIR",
                   help="build directory (default: [build] out, which may contain {date})")
    p.set_defaults(func=cmd_serve)


def _add_run_flags(p: argparse.ArgumentParser, func: Callable[[argparse.Namespace], int]) -> None:
    """The flags of a whole build (`build`, `demo`): what to redo, and the engine; runs `func`."""
    p.add_argument("--from", dest="from_stage", metavar="STAGE",
                   help=f"redo this stage and every later one ({STAGE_HELP})")
    p.add_argument("--force", action="append", default=[], metavar="STAGE",
                   help="redo this stage (repeatable); later stages rerun if its output changed")
    p.add_argument("--no-prefect", action="store_true",
                   help="run the stages in this process without Prefect (same results, no "
                   "dashboard)")
    p.set_defaults(func=func)


def _prefect_env() -> None:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "hopforge")


def _run(config: str, args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    out = getattr(args, "out", None)
    cfg = resolve_config(config, out)
    build = BuildDir.at(cfg.out_dir(today_utc()).resolve())
    try:
        with stop_on_sigterm():
            build, rows = _run_stages(config, cfg, args, out)
    except (KeyboardInterrupt, BuildStopped) as exc:
        signame = exc.signame if isinstance(exc, BuildStopped) else "Ctrl-C"
        print(stop_message(build, _rerun_command(config, args), signame), file=sys.stderr,
              flush=True)
        return 143 if isinstance(exc, BuildStopped) else 130
    print(summary_text(build, rows))
    print(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


def _rerun_command(config: str, args: argparse.Namespace) -> str:
    """The command line that continues this build (what a stop tells the user to run)."""

    words = ["hopforge", "demo"] if config == DEMO_CONFIG_NAME else ["hopforge", "build", config]
    if getattr(args, "out", None):
        words += ["--out", str(args.out)]
    if args.no_prefect:
        words.append("--no-prefect")
    return " ".join(words)


def _run_stages(config: str, cfg: Any, args: argparse.Namespace, out: str | None
                ) -> tuple[Any, list[dict[str, Any]]]:
    if args.no_prefect:

        return run_build(cfg, from_stage=args.from_stage, force=args.force)

    # settings and the build directory are checked here, so a mistake is one clear line
    # rather than a failed flow run
    prepare_build(cfg, from_stage=args.from_stage, force=args.force, check_only=True)
    _prefect_env()

    with contextlib.ExitStack() as stack:
        if not os.environ.get("PREFECT_API_URL"):
            print("No PREFECT_API_URL: starting a temporary Prefect server for this build "
                  "(start `hopforge dashboard` and export PREFECT_API_URL to watch builds).",
                  file=sys.stderr, flush=True)
            stack.enter_context(temporary_server(
                cfg.out_dir(today_utc()).resolve() / PREFECT_HOME))
        from hopforge.flows.build.flow import build_flow

        quiet_console()
        result: dict[str, Any] = build_flow(config, out=out, from_stage=args.from_stage,
                                            force=list(args.force) or None)
    return BuildDir.at(result["build"]), result["stages"]


def cmd_build(args: argparse.Namespace) -> int:
    return _run(args.config, args)


def cmd_demo(args: argparse.Namespace) -> int:
    return _run(DEMO_CONFIG_NAME, args)


def cmd_dashboard(args: argparse.Namespace) -> int:
    return run_dashboard(host=args.host, port=args.port)


def cmd_serve(args: argparse.Namespace) -> int:
    load_config(args.config, out=args.out)  # refuse a bad file before touching Prefect
    _prefect_env()
    if not os.environ.get("PREFECT_API_URL"):
        print("warning: PREFECT_API_URL is not set; `prefect deployment run` from another "
              "shell will not find this deployment. Start `hopforge dashboard` and export the "
              "URL it prints.", file=sys.stderr)
    from hopforge.flows.build.flow import serve_build

    serve_build(args.config, args.cron, out=args.out)
    return 0
