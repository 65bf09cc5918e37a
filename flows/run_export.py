"""The export stage over a build directory: read every stage's parts, write BUILD/export/.

`assemble` is the plain function (records in, validated rows out); `export_build` does the I/O.
The export is rebuilt whole in a staging folder and swapped in, so a rerun gives the same files
and a killed run leaves the previous export in place.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_text, done_parts, read_parts, write_json
from hopforge.export.card import corpus_licences, plot_distributions, render_card
from hopforge.export.decontam import find_contaminated, load_eval_sets
from hopforge.export.manifest import (
    MANIFEST,
    build_manifest,
    config_hash,
    corpus_fingerprint,
    read_build_config,
    summarize,
)
from hopforge.export.messages import resolve_tools
from hopforge.export.preference import preference_record
from hopforge.export.records import (
    SPLITS,
    Contamination,
    Distributions,
    EvalItem,
    Example,
    ExportConfig,
    ExportResult,
    Rejected,
)
from hopforge.export.rl import Task, plain_record, verl_record
from hopforge.export.schemas import RecordValidator, schemas_for
from hopforge.export.sft import sft_record
from hopforge.export.shards import shard_suffix, write_shards
from hopforge.export.sharegpt import dataset_info, sharegpt_record
from hopforge.export.splits import chain_key, split_questions
from hopforge.filters.records import Decision, PreferencePair, Score
from hopforge.synth.records import Question, Trajectory

log = logging.getLogger(__name__)
TOOL_DEFAULTS: dict[str, Any] = {"page_chars": 1200, "default_k": 5, "max_k": 20, "mode": "hybrid"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildInputs:
    """Everything the export reads from a build."""

    questions: tuple[Question, ...] = ()
    trajectories: tuple[Trajectory, ...] = ()
    scores: dict[str, Score] = field(default_factory=dict)  # by tid
    pairs: tuple[PreferencePair, ...] = ()
    decisions: dict[str, Decision] | None = None  # by tid; None when the filters did not run


@dataclass(frozen=True, slots=True, kw_only=True)
class Assembled:
    """Validated rows per kind and split, and what was left out."""

    rows: dict[str, dict[str, list[dict[str, Any]]]]
    rejected: tuple[Rejected, ...]
    contaminated: tuple[Contamination, ...]
    examples: tuple[Example, ...]
    dropped: tuple[str, ...]  # a reason per trajectory not exported
    questions: int


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


def tool_settings(build_config: dict[str, Any], fingerprint: str | None) -> dict[str, Any]:
    """The tool settings trajectories ran with (from build.toml when it has them; else defaults)."""
    settings = dict(TOOL_DEFAULTS)
    for table in ("trajectories", "toolbox", "tools"):
        section = build_config.get(table)
        if isinstance(section, dict):
            settings.update(
                {k: type(TOOL_DEFAULTS[k])(section[k]) for k in TOOL_DEFAULTS if k in section}
            )
    settings["corpus_fingerprint"] = fingerprint or ""
    return settings


def _system_prompt(trajs: Sequence[Trajectory], fallback: str) -> str:
    prompts = Counter(t.system_prompt for t in trajs if t.system_prompt)
    return min(prompts, key=lambda p: (-prompts[p], p)) if prompts else fallback


def assemble(
    inputs: BuildInputs,
    config: ExportConfig,
    *,
    tools: Sequence[dict[str, Any]],
    settings: dict[str, Any],
    eval_items: Sequence[EvalItem] = (),
) -> Assembled:
    """Turn a build's records into validated rows for every requested kind."""
    names = [t["function"]["name"] for t in tools]
    validators = {k: RecordValidator(s) for k, s in schemas_for(names).items() if k in config.kinds}
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {
        k: {s: [] for s in SPLITS} for k in validators
    }
    rejected: list[Rejected] = []

    def add(kind: str, split: str, record_id: str, row: dict[str, Any]) -> None:
        problem = validators[kind].problem(row)
        if problem:
            log.warning("%s record %s left out: %s", kind, record_id, problem)
            rejected.append(Rejected(kind=kind, record_id=record_id, reason=problem))
        else:
            rows[kind][split].append(row)

    accepted = {q.qid: q for q in sorted(inputs.questions, key=lambda q: q.qid) if not q.rejected}
    contaminated = find_contaminated(
        accepted.values(), eval_items, n=config.decontam_n, answer_context_n=config.answer_context_n
    )
    for hit in contaminated:
        del accepted[hit.qid]
    splits = split_questions(
        accepted.values(), validation_fraction=config.validation_fraction, seed=config.seed
    )
    chains = {qid: chain_key(q) for qid, q in accepted.items()}
    by_tid = {t.tid: t for t in inputs.trajectories}
    by_qid: dict[str, list[Trajectory]] = {}
    for t in inputs.trajectories:
        by_qid.setdefault(t.qid, []).append(t)
    fallback_prompt = _system_prompt(inputs.trajectories, "")
    removed = {h.qid for h in contaminated}

    examples, dropped = [], []
    for t in sorted(inputs.trajectories, key=lambda t: (t.qid, t.sample, t.tid)):
        decision = inputs.decisions.get(t.tid) if inputs.decisions is not None else None
        if t.qid in removed:
            dropped.append("contaminated")
        elif t.qid not in accepted:
            dropped.append("question missing or rejected")
        elif inputs.decisions is not None and decision is None:
            dropped.append("no filter decision")
        elif decision is not None and not decision.kept:
            dropped.append(decision.reason or "dropped by the filters")
        else:
            examples.append(
                Example(
                    trajectory=t,
                    question=accepted[t.qid],
                    split=splits[t.qid],
                    chain=chains[t.qid],
                    score=inputs.scores.get(t.tid),
                    decision=decision,
                )
            )
    for ex in examples:
        tid = ex.trajectory.tid
        if "sft/openai" in rows:
            add("sft/openai", ex.split, tid, sft_record(ex, tools, "openai"))
            add("sft/hf", ex.split, tid, sft_record(ex, tools, "hf"))
        if "sharegpt" in rows:
            add("sharegpt", ex.split, tid, sharegpt_record(ex, tools))

    if "rl/verl" in rows:
        index = Counter[str]()
        for qid, q in accepted.items():
            trajs = by_qid.get(qid, [])
            task = Task(
                question=q,
                split=splits[qid],
                chain=chains[qid],
                system_prompt=_system_prompt(trajs, fallback_prompt),
                scores=tuple(inputs.scores[t.tid] for t in trajs if t.tid in inputs.scores),
                n_trajectories=len(trajs),
            )
            row = verl_record(
                task,
                index=index[task.split],
                tool_names=names,
                tool_settings=settings,
                data_source=config.data_source,
                ability=config.ability,
            )
            index[task.split] += 1
            add("rl/verl", task.split, qid, row)
            add("rl/plain", task.split, qid, plain_record(task))

    if "preference" in rows:
        for pair in sorted(inputs.pairs, key=lambda p: (p.qid, p.chosen, p.rejected)):
            pid = f"{pair.chosen}>{pair.rejected}"
            chosen, worse = by_tid.get(pair.chosen), by_tid.get(pair.rejected)
            if pair.qid in removed:
                continue
            if pair.qid not in accepted or chosen is None or worse is None:
                rejected.append(
                    Rejected(
                        kind="preference",
                        record_id=pid,
                        reason="its question or a trajectory is missing",
                    )
                )
                continue
            row = preference_record(
                pair,
                question=accepted[pair.qid],
                chosen=chosen,
                rejected=worse,
                split=splits[pair.qid],
                chain=chains[pair.qid],
                tools=tools,
                chosen_score=inputs.scores.get(chosen.tid),
                rejected_score=inputs.scores.get(worse.tid),
            )
            add("preference", splits[pair.qid], pid, row)
    return Assembled(
        rows=rows,
        rejected=tuple(rejected),
        contaminated=tuple(contaminated),
        examples=tuple(examples),
        dropped=tuple(dropped),
        questions=len(accepted),
    )


def _distributions(examples: Sequence[Example]) -> Distributions:
    scored = [e.score for e in examples if e.score is not None]
    return Distributions(
        hops=tuple(e.question.n_hops for e in examples),
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


def export_build(build: BuildDir | str | Path, config: ExportConfig | None = None) -> ExportResult:
    """Export a build to BUILD/export/ (shards, schemas, manifest, dataset card); idempotent."""
    build = build if isinstance(build, BuildDir) else BuildDir.at(build)
    config = config or ExportConfig()
    inputs = read_inputs(build)
    if inputs.decisions is None and not config.allow_unfiltered:
        raise HopforgeError(
            f"{build.filtered} has no finished parts: run the filters stage first, or export every "
            "trajectory unfiltered with --allow-unfiltered"
        )
    eval_items = load_eval_sets(config.decontaminate)
    build_config = read_build_config(build)
    fingerprint = corpus_fingerprint(build)
    tools, tools_source = resolve_tools(
        config.tools, [t.system_prompt for t in inputs.trajectories]
    )
    settings = tool_settings(build_config, fingerprint)
    done = assemble(inputs, config, tools=tools, settings=settings, eval_items=eval_items)
    staging = build.root / ".export.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    schemas = schemas_for([t["function"]["name"] for t in tools])
    shards = []
    for kind, by_split in done.rows.items():
        for split, records in by_split.items():
            shards += write_shards(
                staging,
                kind,
                split,
                records,
                schema=schemas[kind],
                max_records=config.shard_records,
                max_bytes=config.shard_bytes,
                parquet=config.parquet,
                zstd=config.zstd,
            )
        write_json(staging / "schemas" / f"{kind.replace('/', '_')}.schema.json", schemas[kind])
    write_json(staging / "tools.json", tools)
    if "sharegpt" in done.rows:
        present = [s for s in SPLITS if done.rows["sharegpt"][s]]
        write_json(
            staging / "sharegpt" / "dataset_info.json", dataset_info(config.dataset_name, present)
        )
    stats = summarize(
        done.examples,
        questions=done.questions,
        trajectories=len(inputs.trajectories),
        dropped=done.dropped,
    )
    provenance = {
        "config_hash": config_hash(build),
        "corpus_fingerprint": fingerprint,
        "teachers": sorted({e.trajectory.teacher for e in done.examples}),
        "composers": sorted({q.composer for q in inputs.questions if not q.rejected}),
    }
    manifest = build_manifest(
        config=config,
        shards=shards,
        rejected=done.rejected,
        contaminated=done.contaminated,
        eval_items=len(eval_items),
        tools=tools,
        tools_source=tools_source,
        provenance=provenance,
        stats=stats,
    )
    write_json(staging / MANIFEST, manifest)
    licences = corpus_licences(build, build_config, override=config.licence)
    plots = plot_distributions(_distributions(done.examples), staging / "plots")
    toml_text = build.config.read_text(encoding="utf-8") if build.config.is_file() else ""
    card = render_card(
        manifest,
        name=config.dataset_name,
        licences=licences,
        plots=plots,
        suffix=shard_suffix(parquet=config.parquet, zstd=config.zstd),
        build_toml=toml_text,
    )
    atomic_write_text(staging / "README.md", card)
    _swap_in(staging, build.export)
    write_json(
        build.reports / "export.json",
        {k: manifest[k] for k in ("counts", "rejected", "decontamination", "stats")},
    )
    log.info("exported %d records to %s", sum(s.records for s in shards), build.export)
    counts = {k: v for k, v in manifest["counts"].items()}
    return ExportResult(
        root=str(build.export),
        shards=tuple(shards),
        rejected=done.rejected,
        contaminated=done.contaminated,
        counts=counts,
    )
