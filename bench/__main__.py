"""Run the benchmark modules (`bench/bench_*.py`) and print one table per module.

Each module exposes `run(quick: bool) -> list[dict]`: rows of one table, the same keys in
every row. Speeds are reported as ratios against the reference library run in the same process.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import time
from pathlib import Path

import bench


def format_table(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    cells = [[_fmt(r.get(k, "")) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    line = " | ".join(k.ljust(w) for k, w in zip(keys, widths))
    sep = "-+-".join("-" * w for w in widths)
    body = "\n".join(" | ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells)
    return f"{line}\n{sep}\n{body}"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    names = sorted(m.name[len("bench_") :] for m in pkgutil.iter_modules(bench.__path__)
                   if m.name.startswith("bench_"))
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", choices=[[], *names], metavar="NAME",
                        help=f"benchmarks to run (default all): {', '.join(names)}")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--json", type=Path, help="also write all tables to this JSON file")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, object]]] = {}
    for name in args.names or names:
        mod = importlib.import_module(f"bench.bench_{name}")
        t0 = time.perf_counter()
        rows = mod.run(quick=args.quick)
        results[name] = rows
        print(f"\n## {name}  ({time.perf_counter() - t0:.1f} s)\n{format_table(rows)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
