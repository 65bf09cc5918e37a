"""Subcommands for the export stage: `hopforge export BUILD`."""

from __future__ import annotations

import argparse

from hopforge.corpus.errors import HopforgeError
from hopforge.export.layouts.registry import DEFAULT_FORMATS, FORMATS, layouts
from hopforge.export.records import ExportConfig
from hopforge.flows.build.engine import StageResult
from hopforge.flows.build.registry import Export
from hopforge.flows.commands.stage_command import (
    begin_command,
    done_message,
    finish_command,
    with_flags,
)
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.flags import add_setting, given
from hopforge.flows.stages.export import export_build


def _formats(text: str) -> tuple[str, ...]:
    return tuple(f.strip() for f in text.split(",") if f.strip())


def _size(text: str) -> int:
    """A byte count, optionally with a K/M/G suffix (powers of 1024)."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    text = text.strip().lower().removesuffix("b") or "x"
    scale = units.get(text[-1], 1)
    number = text[:-1] if text[-1] in units else text
    try:
        return int(float(number) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: use e.g. 134217728 or 128M"
        ) from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "export", wrap=True,
        help="write SFT, RL, preference and ShareGPT shards, a manifest and a dataset card",
        description=(
            "Export the kept trajectories of a build to BUILD/export/: a folder of shards per "
            f"layout ({', '.join(lay.name for lay in layouts())}) split into train/validation by "
            "evidence chain, JSON Schemas, manifest.json (counts, sha256 per shard) and README.md "
            "(dataset card with plots). Rerunning rewrites the same files."
        ),
    )
    p.add_argument("build", help="the build directory, e.g. builds/demo")
    p.add_argument(
        "--formats",
        type=_formats,
        help=f"comma-separated formats to write, of {', '.join(FORMATS)} "
        f"[{','.join(DEFAULT_FORMATS)}]",
    )
    add_setting(p, ExportConfig, "shard_records")
    add_setting(p, ExportConfig, "shard_bytes", kind=_size, metavar="B")
    add_setting(p, ExportConfig, "parquet")
    add_setting(p, ExportConfig, "zstd")
    p.add_argument(
        "--decontaminate",
        nargs="+",
        metavar="FILE",
        help="evaluation sets (JSONL, JSON, Parquet or one question per line); overlapping "
        "questions are removed and counted",
    )
    add_setting(p, ExportConfig, "validation_fraction", metavar="F")
    add_setting(p, ExportConfig, "seed")
    p.add_argument("--name", help="dataset name for the card and dataset_info [hopforge]")
    p.add_argument("--licence", help="licence of the corpus, for the dataset card")
    p.add_argument(
        "--allow-unfiltered",
        action="store_true",
        default=None,
        help="export every trajectory when the filters stage has not run",
    )
    p.add_argument("--force", action="store_true",
                   help="export again even when the build's export is done with these settings")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Run the export and print what it wrote."""

    if not args.build or args.build.startswith("-"):
        raise HopforgeError("give the build directory first: hopforge export BUILD [options]")
    config = with_flags(args.build, "export", ExportConfig(), {
        "formats": args.formats,
        **given(args, ("shard_records", "shard_bytes", "parquet", "zstd",
                       "validation_fraction", "seed")),
        "decontaminate": tuple(args.decontaminate) if args.decontaminate else None,
        "dataset_name": args.name,
        "licence": args.licence,
        "allow_unfiltered": args.allow_unfiltered,
    })
    begun = begin_command(args.build, "export", config, force=args.force)
    if isinstance(begun, StageResult):
        print(done_message(args.build, "export"))
        return 0
    result = export_build(args.build, config)
    finish_command(args.build, begun, Export.result_figures(result))
    for kind, splits in result.counts.items():
        parts = ", ".join(f"{split} {n}" for split, n in sorted(splits.items())) or "nothing"
        print(f"{kind}: {parts}")
    if result.contaminated:
        print(f"decontamination removed {len(result.contaminated)} questions")
    if result.rejected:
        print(f"{len(result.rejected)} records failed their schema and were not written")
    print(f"manifest: {result.root}/manifest.json")
    return 0
