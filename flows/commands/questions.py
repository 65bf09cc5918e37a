"""`hopforge questions BUILD -n N`: sample multi-hop questions from a built corpus."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.engine import StageResult
from hopforge.flows.build.registry import find_stage
from hopforge.flows.commands.stage_command import (
    begin_command,
    done_message,
    finish_command,
    with_flags,
)
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.flags import add_setting, given
from hopforge.flows.config.teacher import add_teacher_arguments, open_settings, resolve_teacher
from hopforge.flows.stages.questions import run_questions_build
from hopforge.synth.questions.config import QuestionConfig, Rung
from hopforge.synth.questions.families import DEFAULT_KINDS, KINDS

EPILOG = """Every setting defaults to the build's [questions] table when BUILD has a build.toml,
else to the value in brackets; a flag overrides it and says so.

Reads BUILD/corpus (run `hopforge ingest` first) and BUILD/index when present (else an
in-memory BM25 index). Writes BUILD/questions/part-*.jsonl (accepted and rejected questions,
each with its checks) and BUILD/reports/questions.json. Rerunning continues where a run stopped;
a larger -n adds questions; other changed options need --force.

examples:
  hopforge questions builds/demo -n 200
  hopforge questions builds/demo -n 500 --hops 2-3 --kinds chain,intersection --seed 7
  hopforge questions builds/demo -n 100 --teacher openai \\
      --teacher-url http://127.0.0.1:8000/v1 --teacher-model Qwen/Qwen2.5-7B-Instruct
"""


def hop_range(text: str) -> tuple[int, int]:
    """'2-4' -> (2, 4); '3' -> (3, 3)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if m is None:
        raise argparse.ArgumentTypeError(f"expected hops like 2-4 or 3, got {text!r}")
    low, high = int(m.group(1)), int(m.group(2) or m.group(1))
    if not 1 <= low <= high <= 12:
        raise argparse.ArgumentTypeError(f"hops must satisfy 1 <= min <= max <= 12, got {text!r}")
    return low, high


def calls_range(text: str) -> tuple[int, int]:
    """'50-120' -> (50, 120); '50-' or '50' -> (50, 0), no upper bound."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d*)\s*)?", text)
    if m is None:
        raise argparse.ArgumentTypeError(f"expected a range like 50-120 or 50-, got {text!r}")
    low, high = int(m.group(1)), int(m.group(2) or 0)
    if high and high < low:
        raise argparse.ArgumentTypeError(f"min-calls range {text!r} has its end below its start")
    return low, high


def ladder_list(text: str) -> tuple[tuple[int, int, int], ...]:
    """'50-150:4,300-:2' -> ((50, 150, 4), (300, 0, 2)): rungs of min_calls range and count."""
    rungs = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        calls, sep, count = item.rpartition(":")
        if not sep or not count.strip().isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(
                f"ladder rung {item!r} is not A-B:N (e.g. 50-150:4, N accepted questions)")
        rungs.append((*calls_range(calls), int(count)))
    if not rungs:
        raise argparse.ArgumentTypeError(f"expected rungs like 50-150:4,300-:2, got {text!r}")
    return tuple(rungs)


def kind_list(text: str) -> tuple[str, ...]:
    """'chain,comparison' -> ('chain', 'comparison'), checked against the known kinds."""

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in KINDS]
    if not kinds or bad:
        raise argparse.ArgumentTypeError(
            f"unknown question kind(s) {', '.join(bad) or text!r}: use {','.join(KINDS)}"
        )
    return kinds


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""

    p = add_command(
        sub, "questions",
        help="sample hard multi-hop questions (chain, comparison, intersection, aggregation, "
        "unanswerable) with checks",
        description="Sample task specs from a build's corpus (mention chains, comparisons, "
        "phrase intersections, aggregations over sets of documents, unanswerable variants), "
        "put them into words with the scripted teacher or a model, and check each question: "
        "no single search finds the answer, no leaked names, the answer's type, uniqueness on "
        "the corpus, grounding in the spec, answerability, near-duplicates.",
        epilog=EPILOG,
    )
    p.add_argument("build", metavar="BUILD", help="build directory (holds corpus/ and index/)")
    add_setting(p, QuestionConfig, "n", "-n", metavar="N")
    p.add_argument("--hops", type=hop_range, metavar="MIN-MAX",
                   help="depth of chain questions, e.g. 2-4 or 3; at most 12 [2-4]")
    p.add_argument("--kinds", type=kind_list, default=None, metavar="LIST",
                   help=f"comma-separated kinds, of {','.join(KINDS)} "
                   f"[{','.join(DEFAULT_KINDS)}]")
    p.add_argument("--min-calls", type=calls_range, metavar="A-B",
                   help="keep only tasks whose fewest tool calls lie in A-B, e.g. 50-120 "
                   "(aggregation ladders); 'A-' has no upper bound")
    p.add_argument("--ladder", type=ladder_list, metavar="A-B:N,...",
                   help="besides the -n questions, N for each min_calls range A-B, e.g. "
                   "50-150:4,300-900:2 (the long tasks of a build, drafted first)")
    add_setting(p, QuestionConfig, "max_probe_pass", metavar="R")
    add_setting(p, QuestionConfig, "seed")
    add_setting(p, QuestionConfig, "part_size", metavar="N")
    add_setting(p, QuestionConfig, "shortcut_rank", metavar="R")
    add_setting(p, QuestionConfig, "closed_book")
    add_setting(p, QuestionConfig, "round_trip")
    p.add_argument("--force", action="store_true",
                   help="delete the questions of an earlier run and start over")
    add_teacher_arguments(p)
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the question stage on BUILD and print a summary."""

    closed_book = args.closed_book or (True if args.max_probe_pass is not None else None)
    try:
        config = with_flags(args.build, "questions", QuestionConfig(), {
            **given(args, ("n", "seed", "part_size", "shortcut_rank")),
            "min_hops": args.hops[0] if args.hops else None,
            "max_hops": args.hops[1] if args.hops else None,
            "min_calls": args.min_calls[0] if args.min_calls else None,
            "max_calls": args.min_calls[1] if args.min_calls else None,
            "ladder": (tuple(Rung(min_calls=a, max_calls=b, n=k) for a, b, k in args.ladder)
                       if args.ladder is not None else None),
            "closed_book": closed_book, "round_trip": getattr(args, "round_trip", None),
            "max_probe_pass": args.max_probe_pass, "kinds": args.kinds or None,
        })
        config = dataclasses.replace(config, concurrency=getattr(args, "concurrency", 16))
    except ValueError as exc:
        raise HopforgeError(f"{exc}; see `hopforge questions --help`") from None
    settings = resolve_teacher(args)
    if config.closed_book and settings.config.kind == "scripted":
        raise HopforgeError("--closed-book and --max-probe-pass need a model teacher: add "
                            "--teacher openai ...")
    begun = begin_command(args.build, "questions", config, force=args.force,
                          teacher=(settings.config.kind, settings.config.model))
    if isinstance(begun, StageResult):
        print(done_message(args.build, "questions"), file=sys.stdout)
        return 0
    report = run_questions_build(BuildDir.at(args.build), config,
                                 teacher=open_settings(settings), force=args.force)
    finish_command(args.build, begun, find_stage("questions").figures(report))
    reasons = ", ".join(f"{k} {v}" for k, v in report["rejection_reasons"].items()) or "none"
    print(
        f"{report['accepted']} accepted of {report['attempted']} tried "
        f"({report['acceptance_rate']:.0%}); rejected: {reasons}",
        file=sys.stdout,
    )
    for line in report.get("families_missing", []):
        print(f"not made: {line}", file=sys.stdout)
    if report["run"]["exhausted"]:
        print(f"warning: short of the target: {'; '.join(report['run']['shortfalls'])} "
              f"accepted before the attempts ran out ({config.attempts_per_question} per "
              "question): widen --kinds, --hops or --min-calls, or use a larger corpus",
              file=sys.stderr)
    return 0
