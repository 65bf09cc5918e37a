"""Comparable snapshots of build outputs: rows as sorted canonical JSON, wall-clock fields dropped."""

import json
from pathlib import Path
from typing import Any

# Fields that measure time, not data: they differ between any two runs.
VOLATILE = frozenset({"latency_s", "seconds", "built_at", "created", "created_at"})


def stable(obj: Any) -> Any:
    """`obj` without VOLATILE keys, at any depth."""
    if isinstance(obj, dict):
        return {k: stable(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [stable(v) for v in obj]
    return obj


def canonical_rows(*paths: Path) -> list[str]:
    """Every row of the JSONL files, as sorted canonical JSON without volatile fields."""
    rows = [json.loads(line) for p in paths for line in p.read_text("utf-8").splitlines() if line]
    return sorted(json.dumps(stable(r), sort_keys=True) for r in rows)
