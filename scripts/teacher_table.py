"""The table `make check-teacher` prints: what a build against a real model server gave."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts
from hopforge.synth.teacher.recording import prefix_reuse, read_recording


def _report(build: BuildDir, name: str) -> dict[str, Any]:
    path = build.reports / f"{name}.json"
    return json.loads(path.read_text("utf-8")) if path.is_file() else {}


def _rows(directory: Path) -> list[dict[str, Any]]:
    return list(read_parts(directory)) if directory.is_dir() else []


def _questions(build: BuildDir) -> dict[str, Any]:
    rows = _rows(build.questions)
    report = _report(build, "questions")
    reasons = report.get("rejection_reasons")
    if not isinstance(reasons, dict):
        counted: Counter[str] = Counter()
        for row in rows:
            if row.get("rejected"):
                counted[str(row["rejected"]).split("(", 1)[0].split(":", 1)[0].strip()] += 1
        reasons = dict(counted.most_common())
    accepted = sum(1 for r in rows if not r.get("rejected"))
    return {"accepted": accepted, "rejected": len(rows) - accepted, "reasons": reasons}


def _trajectories(build: BuildDir) -> dict[str, Any]:
    rows = _rows(build.trajectories)
    terminations = Counter(r["termination"] for r in rows)
    turns = [t for r in rows for t in r["turns"]]
    by_format: dict[str, list[int]] = {}
    for t in turns:
        fmt = t.get("call_format") or "none"
        valid = bool(t["schema_valid"] and t["args_valid"])
        entry = by_format.setdefault(fmt, [0, 0])
        entry[0] += valid
        entry[1] += 1
    per = [len(r["turns"]) for r in rows]
    latencies = [float(t.get("latency_s") or 0) for t in turns]
    return {
        "trajectories": len(rows),
        "terminations": dict(terminations.most_common()),
        "answered": sum(1 for r in rows if r.get("final_answer")),
        "turns": len(turns),
        "turns_per_trajectory": round(sum(per) / len(per), 2) if per else 0.0,
        "turns_min_max": [min(per), max(per)] if per else [0, 0],
        "turn_seconds": round(sum(latencies) / len(latencies), 1) if latencies else 0.0,
        "turn_seconds_max": round(max(latencies), 1) if latencies else 0.0,
        "valid_calls": sum(v for v, _ in by_format.values()),
        "calls_by_format": {k: {"valid": v, "turns": n} for k, (v, n) in sorted(by_format.items())},
    }


def _requests(record: Path) -> dict[str, Any]:
    rows = list(read_recording(record)) if record.is_file() else []
    ok = [r for r in rows if r.get("status") == 200 and r.get("response")]
    usage = [r["response"].get("usage") or {} for r in ok]
    tokens_in = sum(int(u.get("prompt_tokens") or 0) for u in usage)
    tokens_out = sum(int(u.get("completion_tokens") or 0) for u in usage)
    seconds = sum(float(r.get("latency_s") or 0) for r in ok)
    failures = Counter(
        "timeout" if "Timeout" in str(r.get("failure", "")) else f"HTTP {r['status']}"
        if r.get("status") else "other"
        for r in rows if r not in ok
    )
    shares = prefix_reuse(rows)
    return {
        "requests": len(rows),
        "answered": len(ok),
        "failed": dict(failures.most_common()),
        "streamed": sum(1 for r in rows if r.get("stream")),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "request_seconds": round(seconds, 1),
        "tokens_out_per_s": round(tokens_out / seconds, 2) if seconds else 0.0,
        "prefix_reuse_mean": round(sum(shares) / len(shares), 3) if shares else None,
        "prefix_reuse_min": round(min(shares), 3) if shares else None,
    }


def summarize(
    out: Path, record: Path, *, wall_s: float, solved: Path | None = None
) -> dict[str, Any]:
    """Everything the table shows, from the build directories and the request recording.

    Questions are read from `out`; trajectories, filter and export from `solved` (default
    `out`), the build whose questions the model solved.
    """
    build = BuildDir.at(out)
    solved_build = BuildDir.at(solved or out)
    trajectories = _trajectories(solved_build)
    filtered = _report(solved_build, "filter")
    export = _report(solved_build, "export")
    return {
        "wall_s": round(wall_s, 1),
        "questions": _questions(build),
        "trajectories": trajectories,
        "requests": _requests(record),
        "filter": {k: filtered[k] for k in ("kept", "dropped", "drop_reasons") if k in filtered},
        "export": export.get("counts", {}),
        "seconds_per_turn": round(wall_s / trajectories["turns"], 1)
        if trajectories["turns"] else None,
    }


def _pairs(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items()) or "-"


def print_table(s: dict[str, Any], *, title: str) -> None:
    """Print the summary as one two-column table."""
    q, t, r = s["questions"], s["trajectories"], s["requests"]
    valid_rate = t["valid_calls"] / t["turns"] if t["turns"] else 0.0
    formats = ", ".join(
        f"{k} {v['valid']}/{v['turns']}" for k, v in t["calls_by_format"].items()
    ) or "-"
    reuse = (f"{r['prefix_reuse_mean']:.0%} mean, {r['prefix_reuse_min']:.0%} min"
             if r["prefix_reuse_mean"] is not None else "-")
    rows = [
        ("questions accepted", str(q["accepted"])),
        ("questions rejected", f"{q['rejected']} ({_pairs(q['reasons'])})"),
        ("trajectories", f"{t['trajectories']} ({_pairs(t['terminations'])})"),
        ("  on questions of the", s.get("solved_questions_from", "model composer")),
        ("final answers", str(t["answered"])),
        ("valid tool calls", f"{t['valid_calls']}/{t['turns']} turns ({valid_rate:.0%})"),
        ("  by parsed format (valid/turns)", formats),
        ("turns per trajectory", f"{t['turns_per_trajectory']} (min-max {t['turns_min_max']})"),
        ("requests", f"{r['requests']} ({r['streamed']} streamed), failed: {_pairs(r['failed'])}"),
        ("tokens in / out", f"{r['tokens_in']} / {r['tokens_out']}"),
        ("tokens out per second", f"{r['tokens_out_per_s']} (per request, summed)"),
        ("prompt repeating the previous one", reuse),
        ("filter", _pairs(s["filter"]) if s["filter"] else "-"),
        ("export rows", _pairs({k: sum(v.values()) for k, v in s["export"].items()})),
        ("turn latency (model + tools)", f"{t['turn_seconds']} s mean, {t['turn_seconds_max']} s max"),
        ("wall time", f"{s['wall_s']} s ({s['seconds_per_turn']} s per turn)"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"\n{title}")
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
