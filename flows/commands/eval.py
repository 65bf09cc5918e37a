"""`hopforge eval BUILD`: success and error onset of a teacher at set turn budgets and fault mixes."""

from __future__ import annotations

import argparse
from pathlib import Path

from hopforge.flows.commands.subcommand import add_command, progress_bar
from hopforge.flows.config.teacher import add_teacher_arguments, open_teacher, positive_int
from hopforge.synth.evaluation.config import (
    EvalConfig,
    parse_budgets,
    parse_faults,
    parse_injection,
)
from hopforge.synth.evaluation.evaluate import EvalRequest, run_eval

DESCRIPTION = """\
Run a teacher on tasks of BUILD at each turn budget (--budgets, in tool calls) under each fault
mix (--faults: none, light, heavy), through the same agent loop, tools and fault layer as the
trajectories stage, and write DIR/summary.json, DIR/report.md, DIR/success.png, DIR/onset.png
and the raw trajectories in DIR/trajectories/. Tasks: for budget B, up to N accepted questions
of BUILD (or questions of --tasks FILE) whose min_calls lies in [B/2, B], filled from the
nearest below when too few (the report says so). --inject breaks the teacher on purpose
(repeat@N, bad-args@N, forget@N, ignore-faults) to check that the harness sees it."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "eval", description=DESCRIPTION,
                    help="measure a teacher: success and error onset per turn budget and fault mix")
    p.add_argument("build", type=Path, metavar="BUILD", help="the build directory")
    add_teacher_arguments(p)
    g = p.add_argument_group("eval")
    g.add_argument("--budgets", default="10,50,100,600", metavar="B,B,...",
                   help="turn budgets in tool calls (default 10,50,100,600)")
    g.add_argument("--faults", default="none,light,heavy", metavar="MIX,MIX,...",
                   help="fault mixes: none, light, heavy (default all three)")
    g.add_argument("--tasks", type=Path, default=None, metavar="FILE",
                   help="a JSONL file of questions (Question rows) instead of the build's")
    g.add_argument("-n", type=positive_int, default=None, metavar="N",
                   help="tasks per budget (default 20)")
    g.add_argument("--out", type=Path, required=True, metavar="DIR", help="where results go")
    g.add_argument("--inject", action="append", default=[], metavar="MODE",
                   help="a failure mode: repeat@N, bad-args@N, forget@N or ignore-faults "
                   "(repeatable)")
    g.add_argument("--repeat-limit", type=positive_int, default=3, metavar="K",
                   help="handoff when one call is repeated more than K times in 20 (default 3)")
    g.add_argument("--plan-change-limit", type=positive_int, default=10, metavar="K",
                   help="handoff after more than K plan changes in a row without new evidence "
                   "(default 10)")
    g.add_argument("--max-tokens", type=positive_int, default=1024, metavar="N",
                   help="completion tokens per teacher call (default 1024)")
    g.add_argument("--context-tokens", type=positive_int, default=32768, metavar="N",
                   help="the teacher's context length (default 32768)")
    g.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (0.7)")
    g.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    config = EvalConfig(
        budgets=parse_budgets(args.budgets), faults=parse_faults(args.faults),
        injections=tuple(parse_injection(i) for i in args.inject), seed=args.seed,
        concurrency=args.concurrency, repeat_limit=args.repeat_limit,
        plan_change_limit=args.plan_change_limit, max_tokens=args.max_tokens,
        context_tokens=args.context_tokens, temperature=args.temperature,
    )
    request = EvalRequest(build=args.build, out=args.out, n=args.n, tasks=args.tasks)
    teacher = open_teacher(args)
    with progress_bar("task", "eval") as progress:
        summary = run_eval(request, config, model=teacher, progress=progress)
    for run in summary["runs"]:
        print(f"budget {run['budget']:>5}  faults {run['faults']:<6} tasks {run['tasks']:>3}  "
              f"success {run['success']}  valid calls {run['valid_call_rate']}  "
              f"recovery {run['recovery_rate']}  handoffs {run['handoffs']}")
    print(f"report: {args.out / 'report.md'}; summary: {args.out / 'summary.json'}")
    return 0
