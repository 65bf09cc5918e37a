"""Subcommands for the filters stage: `hopforge score BUILD` and `hopforge filter BUILD`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import tomllib
from pathlib import Path
from typing import Any

import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import explain
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.report import filter_summary, score_summary
from hopforge.filters.select import FilterConfig
from hopforge.flows.build.engine import StageResult
from hopforge.flows.build.registry import find_stage
from hopforge.flows.commands.stage_command import begin_command, done_message, finish_command
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.flags import add_setting
from hopforge.flows.config.sections import table_to_dataclass
from hopforge.flows.stages.filters import filter_build, score_build

SCORE_HELP = """Score every trajectory of BUILD: answer correctness (exact match / token F1 against
the answer and its aliases, optionally a model judge), evidence, format, efficiency and recovery,
turn rewards, pair-wise Bradley-Terry strengths and a combined reward normalized per question
(length-controlled when it correlates with length). Writes BUILD/scores, BUILD/pairs and
BUILD/reports/scores.{json,png}. Settings come from the [score] table of BUILD/build.toml, then
--set. The judge's key is read from HOPFORGE_JUDGE_API_KEY (or HOPFORGE_API_KEY / OPENAI_API_KEY)."""

FILTER_HELP = """Filter the scored trajectories of BUILD: measure the teacher's fingerprints (phrases
over-represented against a reference text, repeated openers, query habits, action patterns),
drop near-duplicates, drop or down-weight trajectories with a high style score, cap how often
one pattern may occur and balance hop counts, question kinds and teachers. Every drop has a
reason. Writes BUILD/filtered (one decision per trajectory) and BUILD/reports/filter.{json,png}.
Settings come from the [filter] table of BUILD/build.toml, then the flags."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "score", wrap=True, help="point-wise and pair-wise rewards of every trajectory",
                       description=SCORE_HELP)
    p.add_argument("build", type=Path, help="the build directory")
    p.add_argument("--judge-url", action="append", default=None, metavar="URL",
                   help="OpenAI-compatible judge server (repeat for replicas; default "
                        "HOPFORGE_JUDGE_URL, commas between replicas). Without it: rules only")
    p.add_argument("--judge-model", default=None,
                   help="the judge model name (default HOPFORGE_JUDGE_MODEL); prefer another "
                        "model family than the teacher")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one [score] setting, e.g. --set weight_correctness=0.6")
    p.add_argument("--force", action="store_true", help="recompute even when up to date")
    p.set_defaults(func=run_score)

    f = add_command(sub, "filter", wrap=True, help="style-bias and duplicate filter over scored trajectories",
                       description=FILTER_HELP)
    f.add_argument("build", type=Path, help="the build directory")
    add_setting(f, FilterConfig, "threshold")
    f.add_argument("--reference", type=Path, default=None, metavar="FILE",
                   help="human-written reference text (.txt, .jsonl or .json); default: the "
                        "build's corpus")
    add_setting(f, FilterConfig, "require_correct")
    f.add_argument("--no-question-dedup", action="store_true",
                   help="skip embedding near-duplicate questions (no embedding model needed)")
    f.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one [filter] setting, e.g. --set pattern_cap=0.2")
    f.add_argument("--force", action="store_true", help="recompute even when up to date")
    f.set_defaults(func=run_filter)


def _table(build: Path, section: str, sets: list[str]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    toml = build / "build.toml"
    if toml.is_file():
        with open(toml, "rb") as fh:
            table = dict(tomllib.load(fh).get(section, {}))
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise HopforgeError(f"--set {item!r}: write KEY=VALUE, e.g. --set pattern_cap=0.2")
        try:
            table[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            table[key.strip()] = value
    return table


def _config(cls: type, section: str, table: dict[str, Any]) -> Any:
    return table_to_dataclass(section, table, cls)


def _check_build(build: Path) -> None:
    if not build.is_dir():
        raise HopforgeError(f"build directory {build} does not exist; give the directory a "
                            "`hopforge build` or `hopforge trajectories` run wrote")


def run_score(args: argparse.Namespace) -> int:
    """`hopforge score`."""

    _check_build(args.build)
    table = _table(args.build, "score", args.set)
    urls = args.judge_url or [u for u in os.environ.get("HOPFORGE_JUDGE_URL", "").split(",") if u]
    if urls:
        table["judge_urls"] = urls
        table.setdefault("judge_model", os.environ.get("HOPFORGE_JUDGE_MODEL", ""))
    if args.judge_model:
        table["judge_model"] = args.judge_model
    config = _config(ScoreConfig, "score", table)
    begun = begin_command(args.build, "score", config, force=args.force)
    if isinstance(begun, StageResult):
        print(done_message(args.build, "score"))
        return 0
    report = score_build(args.build, config, force=args.force)
    finish_command(args.build, begun, find_stage("score").figures(report))
    state = "up to date" if report.get("up_to_date") else "written"
    print(f"scores {state}: {args.build / 'scores'}, pairs: {args.build / 'pairs'}")
    print(score_summary(report))
    return 0


def run_filter(args: argparse.Namespace) -> int:
    """`hopforge filter`."""

    _check_build(args.build)
    table = _table(args.build, "filter", args.set)
    config = _config(FilterConfig, "filter", table)
    changes: dict[str, Any] = {}
    if args.threshold is not None:
        changes["threshold"] = args.threshold
        changes["downweight_from"] = min(config.downweight_from, args.threshold)
    if args.require_correct is not None:
        changes["require_correct"] = args.require_correct
    if args.no_question_dedup:
        changes["dedup_questions"] = 0.0
    if changes:
        try:
            config = dataclasses.replace(config, **changes)
        except pydantic.ValidationError as exc:
            raise HopforgeError(explain(exc, "--threshold")) from None
    begun = begin_command(args.build, "filter", config, force=args.force,
                          other_inputs=args.reference is not None)
    if isinstance(begun, StageResult):
        print(done_message(args.build, "filter"))
        return 0
    report = filter_build(args.build, config, reference=args.reference, force=args.force)
    finish_command(args.build, begun, find_stage("filter").figures(report))
    state = "up to date" if report.get("up_to_date") else "written"
    d = report["decisions"]
    print(f"filter decisions {state}: {args.build / 'filtered'} "
          f"(kept {d['kept']} of {d['total']}); report: {args.build / 'reports' / 'filter.json'}")
    print(filter_summary(report))
    return 0
