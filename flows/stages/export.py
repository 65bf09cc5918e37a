"""The export stage over a build directory: read every stage's parts, write BUILD/export/.

The choice of what to export is `hopforge.export.selection.select` (a plain function);
`export_build` reads the build, validates every row and streams it into shards.
The export is rebuilt whole in a staging folder and swapped in, so a rerun gives the same files
and a killed run leaves the previous export in place.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_text, done_parts, read_parts, write_json
from hopforge.corpus.tools import DEFAULT_K, MAX_K, PAGE_CHARS, SEARCH_MODE
from hopforge.export.card import corpus_licences, plot_distributions, render_card
from hopforge.export.decontam import load_eval_sets
from hopforge.export.layouts.base import Context
from hopforge.export.layouts.registry import layout_named, layouts_of, schemas_for
from hopforge.export.layouts.rl_verl import tool_config_text
from hopforge.export.manifest import (
    MANIFEST,
    build_manifest,
    config_hash,
    corpus_fingerprint,
    parse_build_config,
    read_build_toml,
    style_on_rows,
    summarize,
    training_lengths,
)
from hopforge.export.messages import resolve_tools
from hopforge.export.records import (
    SPLITS,
    Distributions,
    Example,
    ExportConfig,
    ExportResult,
    Rejected,
    ShardInfo,
)
from hopforge.export.rl import VERL_TOOL_CONFIG
from hopforge.export.row_check import RowCheck
from hopforge.export.schemas import RecordValidator
from hopforge.export.selection import BuildInputs, select
from hopforge.export.shards import ShardWriter, shard_suffix
from hopforge.export.windows import Counter as TokenCounter
from hopforge.export.windows import WindowSettings, estimate_tokens, tokenizer_counter
from hopforge.filters.records import Decision, PreferencePair, Score
from hopforge.filters.style import StyleConfig
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.trajectories.loop import system_prompt
from hopforge.synth.trajectories.stage import TrajectoryConfig

log = logging.getLogger(__name__)


def read_inputs(build: BuildDir) -> BuildInputs:
    """Read the finished parts of every stage the export uses."""
    if not done_parts(build.questions):
        raise HopforgeError(
            f"{build.questions} has no finished parts: run the questions stage of this build first"
        )
    decisions = None
    if done_parts(build.filtered):
        decisions = {r["tid"]: Decision.from_row(r) for r in read_parts(build.filtered)}
    return BuildInputs(
        questions=tuple(Question.from_row(r) for r in read_parts(build.questions)),
        trajectories=tuple(Trajectory.from_row(r) for r in read_parts(build.trajectories)),
        scores={r["tid"]: Score.from_row(r) for r in read_parts(build.scores)},
        pairs=tuple(PreferencePair.from_row(r) for r in read_parts(build.pairs)),
        decisions=decisions,
    )


def tool_settings(fingerprint: str | None) -> dict[str, Any]:
    """The settings of the toolbox trajectories ran with, and the corpus it searched.

    No build-file table changes the toolbox (`[tools]` only says where it runs), so these are
    the defaults of `hopforge.corpus.tools`.
    """
    return {"page_chars": PAGE_CHARS, "default_k": DEFAULT_K, "max_k": MAX_K,
            "mode": SEARCH_MODE, "corpus_fingerprint": fingerprint or ""}


def write_verl_tool_config(staging: Path, tools: Sequence[dict[str, Any]],
                           build_config: dict[str, Any]) -> None:
    """BUILD/export/rl/verl/tool_config.yaml: the tools for verl's tool agent loop, calling the
    search service of build.toml's `[tools] url` (default: serve-search on this machine)."""
    atomic_write_text(staging / VERL_TOOL_CONFIG, tool_config_text(tools, build_config))


def window_settings(build_config: dict[str, Any], config: ExportConfig) -> WindowSettings:
    """How the build's teacher context was managed, from build.toml's [trajectories] table."""
    section = build_config.get("trajectories")
    table = section if isinstance(section, dict) else {}

    defaults = TrajectoryConfig()
    return WindowSettings(
        keep_results=int(table.get("keep_results", defaults.keep_results)),
        context_tokens=int(table.get("context_tokens", defaults.context_tokens)),
        reserve_tokens=int(table.get("max_tokens", defaults.max_tokens)),
        max_seq_tokens=config.max_seq_tokens,
        reasoning=config.reasoning,
    )


def token_counter(tokenizer: str) -> TokenCounter:
    """Counts row tokens with the named tokenizer (offline), or without one an estimate that lies
    above Qwen2.5's and Llama 3's counts (hopforge.export.token_estimate)."""
    loaded = load_tokenizer(tokenizer)
    return estimate_tokens if loaded is None else tokenizer_counter(loaded)


def load_tokenizer(tokenizer: str) -> Any:
    """`[export] tokenizer`, loaded offline; None when it is empty."""
    if not tokenizer:
        return None
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
    except OSError as exc:
        raise HopforgeError(
            f"[export] tokenizer = {tokenizer!r} could not be loaded offline ({exc}); give a "
            "local tokenizer folder or a model already in the Hugging Face cache, or leave it "
            "empty to count with the export's upper-bound estimate"
        ) from None
    return tok


def _distributions(examples: Sequence[Example]) -> Distributions:
    scored = [e.score for e in examples if e.score is not None]
    return Distributions(
        hops=tuple(e.question.n_hops for e in examples),
        kinds=tuple((e.question.spec.family if e.question.spec else e.question.kind)
                    for e in examples),
        min_calls=tuple(e.question.min_calls for e in examples),
        turns=tuple(len(e.trajectory.turns) for e in examples),
        terminations=tuple(e.trajectory.termination for e in examples),
        rewards={
            "combined": tuple(s.combined for s in scored),
            "pointwise": tuple(s.pointwise for s in scored),
        },
    )


def _swap_in(staging: Path, target: Path) -> None:
    old = target.with_name(".export.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)


def write_kind(
    staging: Path,
    kind: str,
    made: Iterable[tuple[str, str, dict[str, Any]]],
    *,
    schema: dict[str, Any],
    config: ExportConfig,
) -> tuple[list[ShardInfo], list[Rejected]]:
    """Validate and write the rows of one kind; a row that fails its schema is reported."""
    validator = RecordValidator(schema)
    always_parquet = layout_named(kind).parquet  # e.g. rl/verl: verl reads Parquet (and .json)
    writers = {
        split: ShardWriter(
            staging,
            kind,
            split,
            schema=schema,
            max_records=config.shard_records,
            max_bytes=config.shard_bytes,
            parquet=config.parquet or always_parquet,
            zstd=config.zstd and not always_parquet,
        )
        for split in SPLITS
    }
    rejected = []
    for split, record_id, row in made:
        problem = validator.problem(row)
        if problem:
            log.warning("%s record %s left out: %s", kind, record_id, problem)
            rejected.append(Rejected(kind=kind, record_id=record_id, reason=problem))
        else:
            writers[split].add(row)
    return [s for w in writers.values() for s in w.close()], rejected


def export_build(build: BuildDir | str | Path, config: ExportConfig | None = None, *,
                 build_toml: str | None = None) -> ExportResult:
    """Export a build to BUILD/export/ (shards, schemas, manifest, dataset card); idempotent.

    `build_toml`: the text of BUILD/build.toml when the caller holds it (read here if None).
    """
    build = build if isinstance(build, BuildDir) else BuildDir.at(build)
    if build_toml is None:
        build_toml = read_build_toml(build)
    config = config or ExportConfig()
    inputs = read_inputs(build)
    if inputs.decisions is None and not config.allow_unfiltered:
        raise HopforgeError(
            f"{build.filtered} has no finished parts: run the filters stage first, or export every "
            "trajectory unfiltered with --allow-unfiltered"
        )
    eval_items = load_eval_sets(config.decontaminate)
    build_config = parse_build_config(build_toml)
    fingerprint = corpus_fingerprint(build)
    settings = tool_settings(fingerprint)
    tools, tools_source = resolve_tools(
        config.tools,
        [t.system_prompt for t in inputs.trajectories],
        default_k=settings["default_k"],
        max_k=settings["max_k"],
    )
    tokenizer = load_tokenizer(config.tokenizer)
    chosen = select(
        inputs,
        config,
        eval_items,
        default_prompt=system_prompt(tools, text_calls=False),
        tools=tools,
        window_settings=window_settings(build_config, config),
        count=estimate_tokens if tokenizer is None else tokenizer_counter(tokenizer),
    )
    schemas = schemas_for([t["function"]["name"] for t in tools])
    ctx = Context(config=config, tools=tools, settings=settings, build_config=build_config,
                  tokenizer=tokenizer)
    staging = build.root / ".export.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shards: list[ShardInfo] = []
    rejected = list(chosen.rejected)
    check = RowCheck()
    chosen_layouts = layouts_of(config.formats)
    for layout in chosen_layouts:
        made = check.watch(layout.name, layout.rows(chosen, ctx))
        schema = schemas[layout.name]
        written, failed = write_kind(staging, layout.name, made, schema=schema, config=config)
        shards += written
        rejected += failed
        write_json(staging / "schemas" / f"{layout.config_name}.schema.json", schema)
    write_json(staging / "tools.json", tools)
    for layout in chosen_layouts:
        for path, content in layout.files(ctx, shards).items():
            if isinstance(content, str):
                atomic_write_text(staging / path, content)
            else:
                write_json(staging / path, content)
    stats = summarize(
        chosen.examples,
        questions=len(chosen.tasks),
        trajectories=len(inputs.trajectories),
        dropped=chosen.dropped,
    )
    filter_report = build.reports / "filter.json"
    fingerprints = (json.loads(filter_report.read_text()).get("fingerprints") or []
                    if filter_report.is_file() else [])
    stats["style_on_rows"] = style_on_rows(chosen.examples, fingerprints, StyleConfig())
    stats["untrained_windows"] = chosen.untrained_windows
    stats["training"] = training_lengths(chosen.examples, config.tokenizer)
    stats["rows_checked"] = check.rows  # every SFT and ShareGPT row, read back as written
    stats["unjustified_trained"] = check.unjustified  # trained turns their row does not justify
    if check.unjustified:
        log.warning("%d trained turns are not justified by their rows, e.g. %s",
                    check.unjustified, "; ".join(check.examples))
    provenance = {
        "config_hash": config_hash(build_toml, build_config),
        "corpus_fingerprint": fingerprint,
        "teachers": sorted({e.trajectory.teacher for e in chosen.examples}),
        "composers": sorted({q.composer for q in inputs.questions if not q.rejected}),
    }
    manifest = build_manifest(
        config=config,
        shards=shards,
        rejected=rejected,
        contaminated=chosen.contaminated,
        eval_items=len(eval_items),
        tools=tools,
        tools_source=tools_source,
        provenance=provenance,
        stats=stats,
    )
    write_json(staging / MANIFEST, manifest)
    licences = corpus_licences(build, build_config, override=config.licence)
    plots = plot_distributions(_distributions(chosen.examples), staging / "plots")
    card = render_card(
        manifest,
        name=config.dataset_name,
        licences=licences,
        plots=plots,
        suffix=shard_suffix(parquet=config.parquet, zstd=config.zstd),
        build_toml=build_toml or "",
    )
    atomic_write_text(staging / "README.md", card)
    _swap_in(staging, build.export)
    report = {k: manifest[k] for k in ("counts", "rejected", "decontamination", "stats")}
    report["rows_checked"], report["unjustified_trained"] = check.rows, check.unjustified
    write_json(build.reports / "export.json", report)
    log.info("exported %d records to %s", sum(s.records for s in shards), build.export)
    return ExportResult(
        root=str(build.export),
        shards=tuple(shards),
        rejected=tuple(rejected),
        contaminated=chosen.contaminated,
        counts=manifest["counts"],
    )
