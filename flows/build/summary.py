"""The closing summary of a build: what each stage made, and where it is."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.stats import problem_lines, site_lines
from hopforge.flows.build.markers import stage_outputs


def _headline(stats: Mapping[str, Any], limit: int = 6) -> str:
    items = [(k, v) for k, v in stats.items() if isinstance(v, int | float | str | bool)]
    return ", ".join(f"{k} {_fmt(v)}" for k, v in items[:limit])


def _fmt(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def summary_lines(build: BuildDir, rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(stage, status, where, headline statistics) for every stage row."""
    out = []
    for row in rows:
        stage = str(row["stage"])
        where = ", ".join(str(p.relative_to(build.root)) + "/" for p in stage_outputs(build, stage)
                          if p.exists())
        out.append((stage, f"{row.get('status')} {row.get('seconds', 0):.1f}s", where,
                    _headline(row.get("stats") or {})))
    return out


def summary_text(build: BuildDir, rows: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text closing summary for the terminal."""
    lines = [f"build {build.root}"]
    table = summary_lines(build, rows)
    w0 = max((len(r[0]) for r in table), default=5)
    w1 = max((len(r[1]) for r in table), default=6)
    w2 = max((len(r[2]) for r in table), default=5)
    for stage, status, where, headline in table:
        lines.append(f"  {stage:<{w0}}  {status:<{w1}}  {where:<{w2}}  {headline}")
    lines += ingest_lines(build)
    lines += question_lines(build)
    exported = export_counts(build)
    if exported:
        lines.append("exported (train / validation records):")
        lines += [f"  {build.export / kind}/  {splits}" for kind, splits in exported.items()]
        if (build.export / "README.md").exists():
            lines.append(f"  dataset card: {build.export / 'README.md'}")
    lines.append(f"settings: {build.config}\nreports and plots: {build.reports}/")
    return "\n".join(lines)


def ingest_lines(build: BuildDir, first: int = 5) -> list[str]:
    """Input problems of the ingest stage (counts, first locations) and pages a site set aside."""

    try:
        stats = json.loads((build.reports / "ingest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    lines = problem_lines(stats, first) + site_lines(stats)
    return ["ingest:"] + [f"  {line}" for line in lines] if lines else []


def question_lines(build: BuildDir) -> list[str]:
    """The question families asked for that the corpus gave none of, and why; and the targets
    (the mix, a ladder's rungs) the attempts ran out before."""
    try:
        report = json.loads((build.reports / "questions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    short = (report.get("run") or {}).get("shortfalls") or []
    if short:
        out.append(f"questions: short of the target: {'; '.join(short)} accepted before the "
                   "attempts ran out (raise [questions] attempts_per_question, or widen kinds, "
                   "hops or min_calls)")
    missing = report.get("families_missing") or []
    if missing:
        out += ["questions: families not made"] + [f"  {line}" for line in missing]
    return out


def export_counts(build: BuildDir) -> dict[str, str]:
    """Records per export kind and split, from BUILD/export/manifest.json."""
    path = build.export / "manifest.json"
    try:
        counts = json.loads(path.read_text(encoding="utf-8")).get("counts") or {}
    except (OSError, ValueError):
        return {}
    return {kind: " / ".join(str(splits.get(s, 0)) for s in ("train", "validation"))
            for kind, splits in sorted(counts.items()) if isinstance(splits, dict) and splits}


def summary_markdown(build: BuildDir, rows: Sequence[Mapping[str, Any]]) -> str:
    """The closing summary as a markdown artifact."""
    lines = [f"# build `{build.root}`", "", "| stage | status | output | statistics |",
             "|---|---|---|---|"]
    for stage, status, where, headline in summary_lines(build, rows):
        lines.append(f"| {stage} | {status} | `{where}` | {headline} |")
    notes = ingest_lines(build) + question_lines(build)
    if notes:
        lines += ["", "```", *notes, "```"]
    exported = export_counts(build)
    if exported:
        lines += ["", "| export | train / validation |", "|---|---|"]
        lines += [f"| `{build.export / kind}/` | {splits} |" for kind, splits in exported.items()]
    lines += ["", f"Settings: `{build.config}`. Reports: `{build.reports}/`."]
    return "\n".join(lines) + "\n"
