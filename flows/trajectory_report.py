"""Statistics of a trajectories stage: terminations, turns, faults, annotations and usage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from hopforge.synth.records import TERMINATIONS


def _norm(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def _percentile(sorted_values: list[int], q: float) -> int:
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def trajectory_report(rows: Iterable[dict[str, Any]],
                      answers: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """Stage statistics over trajectory rows: terminations, turns, faults, annotations, usage."""
    terminations: Counter[str] = Counter({t: 0 for t in TERMINATIONS})
    faults: Counter[str] = Counter()
    turns: list[int] = []
    teachers: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    usage: Counter[str] = Counter()
    for row in rows:
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
            counts["schema_invalid"] += not t["schema_valid"]
            counts["args_invalid"] += t["schema_valid"] and not t["args_valid"]
            counts["repeats"] += t["repeat_of"] is not None
            counts["new_evidence_turns"] += bool(t["new_evidence"])
            counts["recovered"] += bool(t["recovered"])
            if t["fault"]:
                f = t["fault"]
                faults[f"{f['kind']}:{'persistent' if f['persistent'] else 'transient'}"] += 1
    turns.sort()
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
        "faults": dict(sorted(faults.items())),
        "annotations": dict(sorted(counts.items())),
        "usage": {k: round(v, 3) if isinstance(v, float) else v for k, v in usage.items()},
    }
