"""The summary of an eval (summary.json's `runs`) and its report (report.md)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from hopforge.synth.evaluation.metrics import ONSET_KINDS, TaskResult
from hopforge.synth.records import TERMINATIONS


def _share(num: float, den: float, digits: int = 3) -> float | None:
    return round(num / den, digits) if den else None


def _median(values: Sequence[float]) -> float | None:
    return round(float(statistics.median(values)), 1) if values else None


def min_calls_range(values: Sequence[int]) -> str:
    """"lo-hi" of a ladder's min_calls ("lo" when all are the same, "-" when it has no tasks)."""
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def summarize_run(budget: int, faults: str, results: Sequence[TaskResult],
                  **extra: Any) -> dict[str, Any]:
    """One row of summary.json's `runs`: the measures of one (budget, fault mix) cell."""
    n = len(results)
    turns = sum(r.turns for r in results)
    onsets = {k: [r.onset[k] for r in results if r.onset.get(k) is not None] for k in ONSET_KINDS}
    shares = [r.item_check_share for r in results if r.item_check_share is not None]
    faults_seen = sum(r.faults for r in results)
    terminations = Counter(r.termination for r in results)
    return {
        "budget": budget,
        "faults": faults,
        "tasks": n,
        "success": _share(sum(r.success for r in results), n),
        "valid_call_rate": _share(sum(r.valid_calls for r in results), turns),
        "argument_error_rate": _share(sum(r.argument_errors for r in results), turns),
        "schema_error_rate": _share(sum(r.schema_errors for r in results), turns),
        "repeated_calls": _share(sum(r.repeated_calls for r in results), n, 2),
        "recovery_rate": _share(sum(r.recovered_faults for r in results), faults_seen),
        "faults_injected": faults_seen,
        "ignored_faults": sum(r.ignored_faults for r in results),
        "onset": {k: _median(v) for k, v in onsets.items()},  # type: ignore[arg-type]
        "onset_tasks": {k: len(v) for k, v in onsets.items()},
        "onset_turns": {k: sorted(v) for k, v in onsets.items()},  # type: ignore[type-var]
        "item_check_share": round(statistics.fmean(shares), 3) if shares else None,
        "handoffs": sum(r.handoff for r in results),
        "terminations": {t: terminations.get(t, 0) for t in TERMINATIONS},
        "turns": {"mean": _share(turns, n, 1), "max": max((r.turns for r in results), default=0)},
        "min_calls": {"mean": _share(sum(r.min_calls for r in results), n, 1),
                      "max": max((r.min_calls for r in results), default=0)},
        "tokens": _share(sum(r.tokens for r in results), n, 1),
        "seconds": _share(sum(r.seconds for r in results), n, 4),
        "cost": _share(sum(r.cost for r in results), n, 6),
        **extra,
    }


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


COLUMNS: tuple[tuple[str, str], ...] = (
    ("budget", "budget"), ("faults", "faults"), ("tasks", "tasks"), ("success", "success"),
    ("valid_call_rate", "valid calls"), ("argument_error_rate", "arg errors"),
    ("repeated_calls", "repeats/task"), ("recovery_rate", "recovery"),
    ("item_check_share", "items checked"), ("handoffs", "handoffs"),
)


def report_table(runs: Sequence[Mapping[str, Any]]) -> str:
    """The main table of report.md: one row per (budget, fault mix)."""
    head = [label for _, label in COLUMNS] + [f"onset {k}" for k in ONSET_KINDS] + [
        "turns", "tokens/task", "s/task"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        cells = [_cell(r.get(key)) for key, _ in COLUMNS]
        cells += [_cell(r["onset"].get(k)) for k in ONSET_KINDS]
        cells += [_cell(r["turns"]["mean"]), _cell(r["tokens"]), _cell(r["seconds"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_report(summary: Mapping[str, Any]) -> str:
    """report.md: what ran, the table, terminations, ladder notes and the files beside it."""
    runs = summary["runs"]
    info = summary.get("eval", {})
    out = ["# hopforge eval", ""]
    if info:
        out += [f"- build: `{info.get('build', '')}`",
                f"- teacher: `{info.get('teacher', '')}`",
                (f"- budgets: {', '.join(map(str, info.get('budgets', [])))}; fault mixes: "
                 f"{', '.join(info.get('faults', []))}"),
                f"- injections: {', '.join(info.get('injections', [])) or 'none'}",
                f"- tasks: {info.get('tasks_source', '')}", ""]
    out += [("Success is the share of tasks answered correctly; onsets are the median turn "
             "(from 1) of the first error of each kind over the tasks where it happened ('-': "
             "never). Handoffs (repetition or plan changes without new evidence past the limit) "
             "never count as successes."), "", report_table(runs), "", "## Terminations", ""]
    names = list(runs[0]["terminations"]) if runs else []
    out += ["| budget | faults | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names)]
    for r in runs:
        out.append(f"| {r['budget']} | {r['faults']} | "
                   + " | ".join(str(r["terminations"][t]) for t in names) + " |")
    notes = summary.get("ladders", [])
    if notes:
        out += ["", "## Tasks per budget", ""]
        for ladder in notes:
            line = (f"- budget {ladder['budget']}: {ladder['tasks']} tasks, min_calls "
                    f"{ladder['min_calls_range']}")
            out.append(line + (f" ({ladder['note']})" if ladder.get("note") else ""))
    out += ["", "## Files", "", "- `summary.json`: these figures, per task onsets included",
            "- `success.png`: success against budget, one line per fault mix",
            "- `onset.png`: median error onset against budget, per error kind",
            "- `trajectories/`: the raw trajectories of every cell (JSONL)",
            "- `handoffs.jsonl`: the state of every handed-off run when it stopped", ""]
    return "\n".join(out)
