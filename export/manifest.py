"""BUILD/export/manifest.json: what was exported, from what, with checksums and statistics."""

from __future__ import annotations

import hashlib
import json
import statistics
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.store import corpus_fingerprint as store_fingerprint
from hopforge.export.records import (
    SCHEMA_VERSION,
    Contamination,
    Example,
    ExportConfig,
    Rejected,
    ShardInfo,
)
from hopforge.export.sft import example_weights
from hopforge.export.shards import sha256_file
from hopforge.filters.style import StyleConfig, turn_patterns

MANIFEST = "manifest.json"


def hopforge_version() -> str:
    try:
        return metadata.version("hopforge")
    except metadata.PackageNotFoundError:
        return "unknown"


def read_build_toml(build: BuildDir) -> str | None:
    """The text of the build's frozen config, None when build.toml is absent."""
    return build.config.read_text(encoding="utf-8") if build.config.is_file() else None


def parse_build_config(text: str | None) -> dict[str, Any]:
    """The tables of a frozen config's text (empty without one)."""
    return tomllib.loads(text) if text is not None else {}


def config_hash(text: str | None, config: Mapping[str, Any]) -> str | None:
    """The hash recorded in build.toml (`text`, parsed as `config`), else the sha256 of the
    file; None without one."""
    if text is None:
        return None
    for table in (config, config.get("build") or {}, config.get("meta") or {}):
        for key in ("config_hash", "hash"):
            if isinstance(table.get(key), str):
                return str(table[key])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_fingerprint(build: BuildDir) -> str | None:
    """The corpus fingerprint of the index manifest (or of the corpus store)."""
    path = build.index / "manifest.json"
    if path.is_file():
        manifest = json.loads(path.read_text(encoding="utf-8"))
        for key in ("corpus_fingerprint", "fingerprint"):
            if isinstance(manifest.get(key), str):
                return str(manifest[key])
    if not build.corpus.is_dir():
        return None
    return store_fingerprint(build)


def _quantiles(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)

    def at(q: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])

    return {
        "count": len(ordered),
        "mean": float(statistics.fmean(ordered)),
        "min": float(ordered[0]),
        "p10": at(0.1),
        "median": float(statistics.median(ordered)),
        "p90": at(0.9),
        "max": float(ordered[-1]),
    }


def summarize(
    examples: Sequence[Example], *, questions: int, trajectories: int, dropped: Iterable[str]
) -> dict[str, Any]:
    """Summary statistics of the exported trajectories."""
    turns = [len(e.trajectory.turns) for e in examples]
    assistant = sum(turns)
    supervised = sum(sum(example_weights(e)) for e in examples)
    scored = [e.score for e in examples if e.score is not None]
    return {
        "questions": questions,
        "trajectories": trajectories,
        "exported_trajectories": len(examples),
        "dropped_by_reason": dict(sorted(Counter(dropped).items())),
        "teachers": dict(sorted(Counter(e.trajectory.teacher for e in examples).items())),
        "hops": {
            str(k): v for k, v in sorted(Counter(e.question.n_hops for e in examples).items())
        },
        "kinds": dict(sorted(Counter(e.question.kind for e in examples).items())),
        "terminations": dict(sorted(Counter(e.trajectory.termination for e in examples).items())),
        "turns_per_trajectory": _quantiles(turns),
        "supervised_turn_share": supervised / assistant if assistant else None,
        "reward_combined": _quantiles([s.combined for s in scored]),
        "exact_match_mean": statistics.fmean(s.exact_match for s in scored) if scored else None,
        "tokens": {
            "prompt": sum(e.trajectory.usage.prompt_tokens for e in examples),
            "completion": sum(e.trajectory.usage.completion_tokens for e in examples),
        },
        "windows": window_stats(examples),
        "turn_labels": dict(sorted(Counter(
            t.label for e in examples for t in e.trajectory.turns).items())),
    }


def window_stats(examples: Sequence[Example]) -> dict[str, Any]:
    """How the exported trajectories were cut into SFT windows, and how long the rows are."""
    per = [len(e.windows) for e in examples]
    tokens = [w.tokens for e in examples for w in e.windows]
    return {
        "rows": sum(per),
        "trajectories_split": sum(1 for n in per if n > 1),
        "per_trajectory": _quantiles(per),
        "row_tokens": _quantiles(tokens),
        "from_checkpoint": sum(1 for e in examples for w in e.windows if w.checkpoint >= 0),
    }


FIT_LENGTHS = (2048, 4096, 8192, 16384, 32768)
LENGTH_STEP = 256  # the recommended max_length is the longest row rounded up to this


def _round_up(tokens: int) -> int:
    return -(-tokens // LENGTH_STEP) * LENGTH_STEP


def training_lengths(examples: Sequence[Example], tokenizer: str) -> dict[str, Any]:
    """Row lengths in tokens and the trainer settings that keep every row.

    `sft/trl` rows are the one-turn windows, `sft/hf` / `sft/openai` / `sharegpt` rows the
    multi-turn windows; counts come from `[export] tokenizer` (its chat template, tools
    included) or, without one, characters / 4.
    """
    turn = [w.tokens for e in examples for w in e.turn_windows]
    multi = [w.tokens for e in examples for w in e.windows]
    return {
        "tokens_counted_with": tokenizer or "characters / 4",
        "trl_row_tokens": _quantiles(turn),
        "trl_max_length": _round_up(max(turn)) if turn else None,
        "trl_rows_within": {str(n): sum(t <= n for t in turn) for n in FIT_LENGTHS},
        "window_row_tokens": _quantiles(multi),
        "window_max_length": _round_up(max(multi)) if multi else None,
    }


def style_on_rows(examples: Sequence[Example], fingerprints: Sequence[dict[str, Any]],
                  style: StyleConfig) -> list[dict[str, Any]]:
    """Per fingerprint: its share of trajectories before filtering (from the filter report) and
    its share of the exported SFT rows whose trained turns carry it (unweighted)."""
    patterns = [f["pattern"] for f in fingerprints]
    carried: Counter[str] = Counter()
    rows = 0
    for e in examples:
        by_index = {t.index: t for t in e.trajectory.turns}
        for w in e.windows:
            rows += 1
            found: set[str] = set()
            assistants = [m for m in w.messages if m["role"] == "assistant"]
            for m, turn in zip(assistants, w.turns, strict=True):
                if m.get("weight"):
                    found |= turn_patterns(by_index[turn], e.question.question, patterns, style)
            carried.update(found)
    return [{"pattern": f["pattern"], "share_of_trajectories_before": f.get("share_before"),
             "share_of_trajectories_kept": f.get("share_after"),
             "share_of_rows_trained": round(carried[f["pattern"]] / max(1, rows), 4)}
            for f in fingerprints]


def build_manifest(
    *,
    config: ExportConfig,
    shards: Sequence[ShardInfo],
    rejected: Sequence[Rejected],
    contaminated: Sequence[Contamination],
    eval_items: int,
    tools: Sequence[dict[str, Any]],
    tools_source: str,
    provenance: dict[str, Any],
    stats: dict[str, Any],
) -> dict[str, Any]:
    """The manifest as a JSON-ready dict (no timestamps, so reruns give the same bytes)."""
    counts: dict[str, dict[str, int]] = {kind: {} for kind in config.kinds}
    for s in shards:
        counts[s.kind][s.split] = counts[s.kind].get(s.split, 0) + s.records
    return {
        "schema_version": SCHEMA_VERSION,
        "hopforge_version": hopforge_version(),
        **provenance,
        "export_config": {k: v for k, v in config.to_row().items() if k != "tools"},
        "counts": counts,
        "shards": [s.to_row() for s in shards],
        "rejected": {
            "count": len(rejected),
            "by_kind": dict(sorted(Counter(r.kind for r in rejected).items())),
            "records": [r.to_row() for r in rejected],
        },
        "decontamination": {
            "eval_items": eval_items,
            "removed_questions": len(contaminated),
            "by_reason": dict(sorted(Counter(c.reason for c in contaminated).items())),
            "questions": [c.to_row() for c in contaminated],
        },
        "tools": {"source": tools_source, "names": [t["function"]["name"] for t in tools]},
        "stats": stats,
    }


def verify_manifest(export_dir: Path) -> list[str]:
    """Problems with the shards a manifest lists (missing, wrong size or checksum)."""
    manifest = json.loads((export_dir / MANIFEST).read_text(encoding="utf-8"))
    problems = []
    for row in manifest["shards"]:
        path = export_dir / row["path"]
        if not path.is_file():
            problems.append(f"{row['path']}: missing")
        elif path.stat().st_size != row["bytes"]:
            problems.append(
                f"{row['path']}: {path.stat().st_size} bytes, manifest says {row['bytes']}"
            )
        elif sha256_file(path) != row["sha256"]:
            problems.append(f"{row['path']}: sha256 differs from the manifest")
    return problems
