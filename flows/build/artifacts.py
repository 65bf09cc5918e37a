"""Prefect artifacts of a build: progress of long stages, each stage's statistics and drop reasons.

Only the flow calls these (Prefect stays at the edge); the tables come from the stage's
done-marker and its BUILD/reports/*.json files.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.registry import find_stage

REASON_WORDS = ("reason", "reject", "drop", "termination", "fault", "problem", "skip", "merged")
MAX_ROWS = 200
FIRST_PROBLEMS = 5  # input problems listed by location on a stage's report


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", "-".join(parts).lower())).strip("-")


def stage_reports(build: BuildDir, stage: str) -> dict[str, Any]:
    """The JSON reports a stage wrote, by file name."""
    out: dict[str, Any] = {}
    paths = sorted(build.reports.glob("*.json")) if build.reports.is_dir() else []
    if stage == "export":
        paths.append(build.export / "manifest.json")
    for path in paths:
        if path.stem.startswith(find_stage(stage).reports) or path.parent == build.export:
            try:
                out[path.name] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
    return out


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys; lists of scalars joined; longer lists as their length."""
    out: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        if len(obj) <= 8 and all(not isinstance(v, dict | list) for v in obj):
            out[prefix] = ", ".join(map(str, obj))
        else:
            out[prefix] = f"{len(obj)} items"
    else:
        out[prefix] = round(obj, 4) if isinstance(obj, float) else obj
    return out


def reason_counts(obj: Any, prefix: str = "") -> dict[str, dict[str, int]]:
    """Every table of counts under a key that speaks of reasons, rejections, drops or faults."""
    found: dict[str, dict[str, int]] = {}
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            counts = isinstance(v, Mapping) and v and all(
                isinstance(c, int) and not isinstance(c, bool) for c in v.values())
            if counts and any(w in str(k).lower() for w in REASON_WORDS):
                found[name] = {str(r): int(c) for r, c in v.items()}
            else:
                found.update(reason_counts(v, name))
    return found


def stage_table(stats: Mapping[str, Any], reports: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows (statistic, value) for a table artifact."""
    rows = [{"statistic": k, "value": str(v)} for k, v in flatten(dict(stats)).items()]
    for name, report in reports.items():
        rows.extend({"statistic": f"{name}: {k}", "value": str(v)}
                    for k, v in flatten(report).items())
    return rows[:MAX_ROWS]


def stage_markdown(stage: str, row: Mapping[str, Any], reports: Mapping[str, Any]) -> str:
    """A markdown report of one stage: status, statistics and drop reasons."""
    lines = [f"# {stage}", "", f"status: **{row.get('status')}** in {row.get('seconds', 0):.1f} s", ""]
    stats = flatten(dict(row.get("stats") or {}))
    if stats:
        lines += ["| statistic | value |", "|---|---|"]
        lines += [f"| {k} | {_cell(v)} |" for k, v in list(stats.items())[:MAX_ROWS]]
    reasons: dict[str, dict[str, int]] = {}
    for name, report in {"stats": row.get("stats") or {}, **reports}.items():
        reasons.update({f"{name}: {k}": v for k, v in reason_counts(report).items()})
    for name, counts in reasons.items():
        lines += ["", f"## {name}", "", "| reason | count |", "|---|---|"]
        lines += [f"| {_cell(r)} | {c} |"
                  for r, c in sorted(counts.items(), key=lambda kv: -kv[1])[:50]]
    for name, report in reports.items():
        first = report.get("problem_examples") if isinstance(report, Mapping) else None
        if first:
            lines += ["", f"## {name}: first problems", ""]
            lines += [f"- `{_cell(message)}`" for message in first[:FIRST_PROBLEMS]]
    return "\n".join(lines) + "\n"


def _cell(v: Any) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")[:200]


def publish_stage(build: BuildDir, build_name: str, row: Mapping[str, Any]) -> None:
    """Table and markdown artifacts of one finished stage (call inside a flow run)."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    stage = str(row["stage"])
    reports = stage_reports(build, stage)
    create_table_artifact(
        table=stage_table(row.get("stats") or {}, reports) or [{"statistic": "-", "value": "-"}],
        key=artifact_key(build_name, stage, "stats"),
        description=f"{stage} statistics of build {build_name} ({build.root})",
    )
    create_markdown_artifact(
        markdown=stage_markdown(stage, row, reports),
        key=artifact_key(build_name, stage, "report"),
        description=f"{stage} report of build {build_name}",
    )


class ProgressArtifact:
    """A Prefect progress artifact fed by `(done, total)` calls, updated at most once a second."""

    def __init__(self, build_name: str, stage: str, interval_s: float = 1.0) -> None:
        from prefect.artifacts import create_progress_artifact

        self._lock = threading.Lock()
        self._interval = interval_s
        self._last = 0.0
        self._shown = -1.0
        self.id: UUID = create_progress_artifact(  # type: ignore[assignment]
            progress=0.0, key=artifact_key(build_name, stage, "progress"),
            description=f"{stage} progress of build {build_name}",
        )

    def __call__(self, done: int, total: int) -> None:
        from prefect.artifacts import update_progress_artifact

        pct = 100.0 if total <= 0 else min(100.0, 100.0 * done / total)
        now = time.monotonic()
        with self._lock:
            if pct == self._shown or (pct < 100.0 and now - self._last < self._interval):
                return
            self._last, self._shown = now, pct
        # _sync: the stage may call this from inside its event loop; the update is a short POST
        update_progress_artifact(self.id, pct, description=f"{done} of {total}",
                                 _sync=True)  # type: ignore[call-arg]
