"""Statistics of a trajectories stage: terminations, turns, calls, faults, context and usage.

`calls.justified_rate` is the share of tool calls whose every word and doc_id the teacher had
been shown (synth/trajectories/fairness.py); `annotations.choices_with_skips` counts the choices
among a page's names where the run never ruled out some candidate (`fairness.choices`), and
`runs_answering_with_skips` the runs among them that still answered (one that gave up, saying
which page or search never came through, answers "not found": wrong, and never trained; one
that ran out of turns answers nothing);
`thoughts.top30_share` is the share of thoughts that the 30 most common masked thoughts cover
(synth/trajectories/variety.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from hopforge.synth.records import NOT_FOUND, TERMINATIONS, Trajectory
from hopforge.synth.trajectories.fairness import Choice
from hopforge.synth.trajectories.variety import masked_thoughts


def _norm(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def _percentile(sorted_values: list[int], q: float) -> int:
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def trajectory_report(rows: Iterable[dict[str, Any]],
                      answers: dict[str, tuple[str, ...]] | None = None,
                      check: Callable[[Trajectory], list[Choice]] | None = None
                      ) -> dict[str, Any]:
    """Stage statistics over trajectory rows: terminations, turns, faults, annotations, usage;
    with `check`, the choices each run made among what its pages showed (fairness.choices)."""
    terminations: Counter[str] = Counter({t: 0 for t in TERMINATIONS})
    faults: Counter[str] = Counter()
    turns: list[int] = []
    teachers: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    peaks: list[int] = []
    thoughts: Counter[str] = Counter()
    for row in rows:
        peaks.append(int(row.get("peak_context_tokens") or 0))
        traj = Trajectory.from_row(row)
        thoughts.update(masked_thoughts([traj]))
        if check is not None:
            made = check(traj)
            skips = [c for c in made if c.skipped]
            counts["choices"] += len(made)
            counts["choices_with_skips"] += len(skips)
            counts["choices_skipped_candidates"] += sum(len(c.skipped) for c in skips)
            counts["runs_with_skipped_choices"] += bool(skips)
            counts["runs_answering_with_skips"] += bool(skips) and bool(
                _norm(traj.final_answer)) and _norm(traj.final_answer) != _norm(NOT_FOUND)
        terminations[row["termination"]] += 1
        teachers[row["teacher"]] += 1
        turns.append(len(row["turns"]))
        counts["checkpoints"] += len(row.get("checkpoints") or ())
        counts["answered"] += bool(row.get("final_answer"))
        gold = (answers or {}).get(row["qid"])
        if gold and row.get("final_answer"):
            counts["answer_matches"] += _norm(row["final_answer"]) in {_norm(a) for a in gold}
        for key in ("prompt_tokens", "completion_tokens"):
            usage[key] += row["usage"][key]
        usage["seconds"] += row["usage"]["seconds"]
        for t in row["turns"]:
            if t.get("call"):
                tools[t["call"]["name"]] += 1
                counts["calls_unjustified"] += not t.get("justified", True)
            counts["schema_invalid"] += not t["schema_valid"]
            counts["args_invalid"] += t["schema_valid"] and not t["args_valid"]
            counts["repeats"] += t["repeat_of"] is not None
            counts["new_evidence_turns"] += bool(t["new_evidence"])
            counts["recovered"] += bool(t["recovered"])
            if t["fault"]:
                f = t["fault"]
                faults[f"{f['kind']}:{'persistent' if f['persistent'] else 'transient'}"] += 1
    turns.sort()
    peaks.sort()
    n_calls = sum(tools.values())
    n_thoughts = sum(thoughts.values())
    edges = (1, 5, 10, 20, 50, 100, 200, 600)
    histogram: list[dict[str, Any]] = []  # a list: bins keep their order in the JSON file
    lo = 0
    for hi in (*edges, None):
        label = f"{lo + 1}-{hi}" if hi is not None else f">{lo}"
        count = sum(1 for n in turns if n > lo and (hi is None or n <= hi))
        histogram.append({"turns": label, "trajectories": count})
        lo = hi if hi is not None else lo
    return {
        "trajectories": len(turns),
        "teachers": dict(teachers),
        "terminations": dict(terminations),
        "turns": {
            "total": sum(turns),
            "mean": round(sum(turns) / len(turns), 2) if turns else 0.0,
            "min": turns[0] if turns else 0,
            "p50": _percentile(turns, 0.5),
            "p90": _percentile(turns, 0.9),
            "max": turns[-1] if turns else 0,
            "histogram": histogram,
        },
        "calls": {
            "total": n_calls,
            "by_tool": dict(sorted(tools.items())),
            "justified_rate": round(1 - counts["calls_unjustified"] / n_calls, 4) if n_calls else 1.0,
            "share_of_trajectories_with_50_or_more": round(
                sum(n >= 50 for n in turns) / len(turns), 4) if turns else 0.0,
        },
        "peak_context_tokens": {"min": peaks[0] if peaks else 0, "p50": _percentile(peaks, 0.5),
                                "max": peaks[-1] if peaks else 0},
        "thoughts": {
            "total": n_thoughts,
            "distinct_masked": len(thoughts),
            "top30_share": round(sum(c for _, c in thoughts.most_common(30)) / n_thoughts, 4)
            if n_thoughts else 0.0,
        },
        "faults": dict(sorted(faults.items())),
        "annotations": dict(sorted(counts.items())),
        "usage": {k: round(v, 3) if isinstance(v, float) else v for k, v in usage.items()},
    }
