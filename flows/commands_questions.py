"""`hopforge questions BUILD -n N`: sample multi-hop questions from a built corpus."""

from __future__ import annotations

import argparse
import re
import sys

from hopforge.corpus.errors import HopforgeError

EPILOG = """Reads BUILD/corpus (run `hopforge ingest` first) and BUILD/index when present (else an
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
    if not 1 <= low <= high <= 8:
        raise argparse.ArgumentTypeError(f"hops must satisfy 1 <= min <= max <= 8, got {text!r}")
    return low, high


def kind_list(text: str) -> tuple[str, ...]:
    """'chain,comparison' -> ('chain', 'comparison'), checked against the known kinds."""
    from hopforge.synth.plans import KINDS

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in KINDS]
    if not kinds or bad:
        raise argparse.ArgumentTypeError(
            f"unknown question kind(s) {', '.join(bad) or text!r}: use {','.join(KINDS)}"
        )
    return kinds


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    from hopforge.flows.teacher_options import add_teacher_arguments

    p = sub.add_parser(
        "questions",
        help="sample multi-hop questions (chain, comparison, intersection) with checks",
        description="Sample multi-hop questions from the link graph of a build's corpus, "
        "compose them with the scripted teacher or a model, and check each one for leaked "
        "answers, one-search shortcuts, uniqueness, form and near-duplicates.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("build", metavar="BUILD", help="build directory (holds corpus/ and index/)")
    p.add_argument("-n", type=int, default=100, metavar="N",
                   help="accepted questions wanted (default 100)")
    p.add_argument("--hops", type=hop_range, default=(2, 4), metavar="MIN-MAX",
                   help="hops per chain question, e.g. 2-4 (default) or 3; at most 8")
    p.add_argument("--kinds", type=kind_list, default=None, metavar="LIST",
                   help="comma-separated kinds (default chain,comparison,intersection)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--part-size", type=int, default=50, metavar="N",
                   help="accepted questions per output part (default 50)")
    p.add_argument("--shortcut-rank", type=int, default=3, metavar="R",
                   help="reject a question when one search with its text ranks the answer "
                   "document within the top R (default 3; 0 turns the check off)")
    p.add_argument("--closed-book", action="store_true",
                   help="with a model teacher: reject questions it answers without searching")
    p.add_argument("--force", action="store_true",
                   help="delete the questions of an earlier run and start over")
    add_teacher_arguments(p)
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the question stage on BUILD and print a summary."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.flows.run_questions import run_questions_build
    from hopforge.flows.teacher_options import open_teacher
    from hopforge.synth.questions import QuestionConfig

    try:
        config = QuestionConfig(
            n=args.n,
            seed=args.seed,
            part_size=args.part_size,
            min_hops=args.hops[0],
            max_hops=args.hops[1],
            shortcut_rank=args.shortcut_rank,
            closed_book=args.closed_book,
            concurrency=getattr(args, "concurrency", 16),
            **({"kinds": args.kinds} if args.kinds else {}),
        )
    except ValueError as exc:
        raise HopforgeError(f"{exc}; see `hopforge questions --help`") from None
    teacher = open_teacher(args)
    if config.closed_book and teacher is None:
        raise HopforgeError("--closed-book needs a model teacher: add --teacher openai ...")
    report = run_questions_build(BuildDir.at(args.build), config, teacher=teacher,
                                 force=args.force)
    reasons = ", ".join(f"{k} {v}" for k, v in report["rejection_reasons"].items()) or "none"
    print(
        f"{report['accepted']} accepted of {report['attempted']} tried "
        f"({report['acceptance_rate']:.0%}); rejected: {reasons}",
        file=sys.stdout,
    )
    if report["run"]["exhausted"]:
        print(f"warning: the corpus ran out of new questions before {args.n}", file=sys.stderr)
    return 0
