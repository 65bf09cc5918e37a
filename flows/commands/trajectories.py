"""`hopforge trajectories BUILD`: run the teacher on the accepted questions with the search tools."""

from __future__ import annotations

import argparse
import dataclasses
import logging
from pathlib import Path
from typing import Any

import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.remote import RemoteSearcher
from hopforge.corpus.settings import explain
from hopforge.flows.build.engine import StageResult
from hopforge.flows.build.registry import find_stage
from hopforge.flows.commands.stage_command import (
    begin_command,
    build_settings,
    done_message,
    finish_command,
    with_flags,
)
from hopforge.flows.commands.subcommand import add_command, progress_bar
from hopforge.flows.config.flags import add_setting, given
from hopforge.flows.config.teacher import add_teacher_arguments, open_settings, resolve_teacher
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.stage import TrajectoryConfig

log = logging.getLogger(__name__)
# the TrajectoryConfig fields whose flags (`add_setting`) set them as they are
FIELDS = ("samples", "max_turns", "keep_results", "checkpoint_every", "context_tokens",
          "max_tokens", "temperature", "call_format", "part_questions", "seed")

DESCRIPTION = """\
Run the teacher on every accepted question of BUILD/questions with the agent's tools (search,
open, find, grep, answer: one class each in hopforge.corpus.tools), and write BUILD/trajectories/part-*.jsonl (one Trajectory per line) and
BUILD/reports/trajectories.json. The scripted teacher (default) needs no model; --teacher openai
talks to `vllm serve` or any OpenAI-compatible server. A killed run, started again with the same
options, continues where it stopped; --force starts over."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "trajectories", description=DESCRIPTION,
                    help="solve the accepted questions with the teacher and the search tools")
    p.add_argument("build", type=Path, metavar="BUILD", help="the build directory")
    add_teacher_arguments(p)
    g = p.add_argument_group(
        "trajectories", "each setting defaults to the build's [trajectories] table when BUILD "
        "has a build.toml, else to the value in brackets; a flag overrides it and says so")
    for name in FIELDS:
        add_setting(g, TrajectoryConfig, name)
    g.add_argument("--faults", type=float, metavar="RATE",
                   help="share of tool calls hit by an injected fault, split evenly over empty, "
                   "timeout, format and partial [0]")
    g.add_argument("--persistent-faults", type=float, metavar="SHARE",
                   help="share of injected faults that repeat on the same call [0.25]")
    g.add_argument("--force", action="store_true",
                   help="delete finished parts and start over")
    g.add_argument("--tools-url", metavar="URL",
                   help="use a running `hopforge serve-search` (e.g. http://search-host:8900) "
                   "instead of loading the index")
    p.set_defaults(func=_run)




def config_from_args(args: argparse.Namespace) -> Any:
    """The `TrajectoryConfig` to run: the build's settings (or the defaults), then the flags."""
    default = TrajectoryConfig()
    flags: dict[str, Any] = given(args, FIELDS)
    if args.faults is not None or args.persistent_faults is not None:
        faults = (build_settings(args.build, "trajectories") or default).faults
        persistent = (args.persistent_faults if args.persistent_faults is not None
                      else faults.persistent)
        try:
            flags["faults"] = (FaultConfig.uniform(args.faults, persistent=persistent,
                                                   timeout_delay_s=faults.timeout_delay_s)
                               if args.faults is not None
                               else dataclasses.replace(faults, persistent=persistent))
        except pydantic.ValidationError as exc:
            raise HopforgeError(f"{explain(exc, '--persistent-faults')}; see "
                                "`hopforge trajectories --help`") from None
    config = with_flags(args.build, "trajectories", default, flags)
    if getattr(args, "concurrency", None) is not None:  # operational: never in the settings
        config = dataclasses.replace(config, concurrency=args.concurrency)
    return config


def _run(args: argparse.Namespace) -> int:
    settings = resolve_teacher(args)
    config = dataclasses.replace(config_from_args(args), reasoning=settings.config.reasoning)
    begun = begin_command(args.build, "trajectories", config, force=args.force,
                          teacher=(settings.config.kind, settings.config.model))
    if isinstance(begun, StageResult):
        print(done_message(args.build, "trajectories"))
        return 0
    teacher = open_settings(settings)
    with progress_bar("traj", "trajectories") as progress:
        searcher = None
        if args.tools_url:

            searcher = RemoteSearcher(args.tools_url)
        report = run_trajectories_build(BuildDir.at(args.build), config, teacher=teacher,
                                        force=args.force, progress=progress,
                                        searcher=searcher)  # type: ignore[arg-type]
    finish_command(args.build, begun, find_stage("trajectories").figures(report))
    terms = ", ".join(f"{k} {v}" for k, v in report["terminations"].items() if v)
    turns = report["turns"]
    print(
        f"{report['trajectories']} trajectories in {args.build / 'trajectories'} "
        f"({terms or 'none'}); turns mean {turns['mean']}, p90 {turns['p90']}, max {turns['max']}; "
        f"report: {args.build / 'reports' / 'trajectories.json'}"
    )
    return 0
