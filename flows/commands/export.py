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
    p = sub.add_parser(
        "export",
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
    p.add_argument(
        "--shard-records", type=int, metavar="N", help="most records per shard [10000]"
    )
    p.add_argument(
        "--shard-bytes",
        type=_size,
        metavar="B",
        help="most bytes of JSON per shard, e.g. 134217728 or 128M [128M]",
    )
    p.add_argument("--parquet", action="store_true", default=None,
                   help="write Parquet shards instead of JSONL")
    p.add_argument("--zstd", action="store_true", default=None,
                   help="compress JSONL shards with zstd")
    p.add_argument(
        "--decontaminate",
        nargs="+",
        metavar="FILE",
        help="evaluation sets (JSONL, JSON, Parquet or one question per line); overlapping "
        "questions are removed and counted",
    )
    p.add_argument(
        "--validation-fraction",
        type=float,
        metavar="F",
        help="share of evidence chains held out for validation [0.05]",
    )
    p.add_argument("--seed", type=int, help="seed of the train/validation split [0]")
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
        "shard_records": args.shard_records,
        "shard_bytes": args.shard_bytes,
        "parquet": args.parquet,
        "zstd": args.zstd,
        "decontaminate": tuple(args.decontaminate) if args.decontaminate else None,
        "validation_fraction": args.validation_fraction,
        "seed": args.seed,
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
