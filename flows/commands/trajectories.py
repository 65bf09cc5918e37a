"""`hopforge trajectories BUILD`: run the teacher on the accepted questions with the search tools."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any

from hopforge.flows.config.teacher import add_teacher_arguments

log = logging.getLogger(__name__)

DESCRIPTION = """\
Run the teacher on every accepted question of BUILD/questions with the tools search, open,
find and answer, and write BUILD/trajectories/part-*.jsonl (one Trajectory per line) and
BUILD/reports/trajectories.json. The scripted teacher (default) needs no model; --teacher openai
talks to `vllm serve` or any OpenAI-compatible server. A killed run, started again with the same
options, continues where it stopped; --force starts over."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = sub.add_parser(
        "trajectories",
        help="solve the accepted questions with the teacher and the search tools",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("build", type=Path, metavar="BUILD", help="the build directory")
    add_teacher_arguments(p)
    g = p.add_argument_group("trajectories")
    g.add_argument("--samples", type=int, default=1, metavar="N",
                   help="trajectories per question, each with its own seed (default 1)")
    g.add_argument("--max-turns", type=int, default=64, metavar="T",
                   help="stop a trajectory after T tool calls (default 64; 600+ is fine)")
    g.add_argument("--faults", type=float, default=0.0, metavar="RATE",
                   help="share of tool calls hit by an injected fault, split evenly over empty, "
                   "timeout, format and partial (default 0)")
    g.add_argument("--persistent-faults", type=float, default=0.25, metavar="SHARE",
                   help="share of injected faults that repeat on the same call (default 0.25)")
    g.add_argument("--checkpoint-every", type=int, default=16, metavar="K",
                   help="turns between checkpoints (the teacher's state summary); 0: none")
    g.add_argument("--keep-results", type=int, default=5, metavar="N",
                   help="tool results kept verbatim in the prompt; older ones are elided (5)")
    g.add_argument("--context-tokens", type=int, default=32768, metavar="N",
                   help="the teacher's context length (default 32768)")
    g.add_argument("--max-tokens", type=int, default=1024, metavar="N",
                   help="completion tokens per teacher call (default 1024)")
    g.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (0.7)")
    g.add_argument("--call-format", choices=("native", "text"), default="native",
                   help="native tool calls (vLLM --enable-auto-tool-choice), or <tool_call> "
                   "text for servers without tool calling (default native)")
    g.add_argument("--part-questions", type=int, default=32, metavar="N",
                   help="questions per output part (default 32)")
    g.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    g.add_argument("--force", action="store_true",
                   help="delete finished parts and start over")
    g.add_argument("--tools-url", metavar="URL",
                   help="use a running `hopforge serve-search` (e.g. http://search-host:8900) "
                   "instead of loading the index")
    p.set_defaults(func=_run)


def config_from_args(args: argparse.Namespace) -> Any:
    """The `TrajectoryConfig` the flags describe."""
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.stage import TrajectoryConfig

    return TrajectoryConfig(
        samples=args.samples,
        max_turns=args.max_turns,
        concurrency=args.concurrency,
        keep_results=args.keep_results,
        checkpoint_every=args.checkpoint_every,
        context_tokens=args.context_tokens,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        call_format=args.call_format,
        part_questions=args.part_questions,
        seed=args.seed,
        faults=FaultConfig.uniform(args.faults, persistent=args.persistent_faults),
    )


def _run(args: argparse.Namespace) -> int:
    from hopforge.corpus.layout import BuildDir
    from hopforge.flows.build.adapters import headline
    from hopforge.flows.build.engine import StageResult
    from hopforge.flows.commands.stage_command import begin_command, done_message, finish_command
    from hopforge.flows.config.teacher import open_settings, resolve_teacher
    from hopforge.flows.stages.trajectories import run_trajectories_build
    from tqdm import tqdm

    settings = resolve_teacher(args)
    config = dataclasses.replace(config_from_args(args), reasoning=settings.config.reasoning)
    begun = begin_command(args.build, "trajectories", config, force=args.force,
                          teacher=(settings.config.kind, settings.config.model))
    if isinstance(begun, StageResult):
        print(done_message(args.build, "trajectories"))
        return 0
    teacher = open_settings(settings)
    bar = tqdm(total=0, unit="traj", desc="trajectories", file=sys.stderr,
               disable=not sys.stderr.isatty())

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        searcher = None
        if args.tools_url:
            from hopforge.corpus.remote import RemoteSearcher

            searcher = RemoteSearcher(args.tools_url)
        report = run_trajectories_build(BuildDir.at(args.build), config, teacher=teacher,
                                        force=args.force, progress=progress,
                                        searcher=searcher)  # type: ignore[arg-type]
    finally:
        bar.close()
    finish_command(args.build, begun, headline("trajectories", report))
    terms = ", ".join(f"{k} {v}" for k, v in report["terminations"].items() if v)
    turns = report["turns"]
    print(
        f"{report['trajectories']} trajectories in {args.build / 'trajectories'} "
        f"({terms or 'none'}); turns mean {turns['mean']}, p90 {turns['p90']}, max {turns['max']}; "
        f"report: {args.build / 'reports' / 'trajectories.json'}"
    )
    return 0
