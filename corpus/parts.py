"""The part-file protocol of a build directory.

A stage writes its output as numbered parts (`part-00000.jsonl`). Each part is written under a
temporary name, renamed when complete, and then marked with `part-00000.done`. Readers only see
marked parts, so a build killed at any moment leaves either a whole part or none, and a rerun
skips the parts that are done.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

PART_PREFIX = "part-"


def part_name(index: int, suffix: str = ".jsonl") -> str:
    return f"{PART_PREFIX}{index:05d}{suffix}"


def done_marker(part: Path) -> Path:
    return part.with_name(part.name.split(".", 1)[0] + ".done")


def is_done(part: Path) -> bool:
    return part.exists() and done_marker(part).exists()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    """Write pretty JSON atomically (reports, manifests)."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def write_part(directory: Path, index: int, rows: Iterable[dict[str, Any]]) -> Path:
    """Write one JSONL part atomically and mark it done; returns the part's path."""
    part = directory / part_name(index)
    body = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    atomic_write_text(part, body)
    atomic_write_text(done_marker(part), "")
    return part


def done_parts(directory: Path, suffix: str = ".jsonl") -> list[Path]:
    """Parts of `directory` that are complete, in order."""
    if not directory.is_dir():
        return []
    parts = sorted(directory.glob(f"{PART_PREFIX}*{suffix}"))
    return [p for p in parts if is_done(p)]


def done_indexes(directory: Path) -> set[int]:
    return {int(p.name[len(PART_PREFIX) :].split(".", 1)[0]) for p in done_parts(directory)}


def read_parts(directory: Path) -> Iterator[dict[str, Any]]:
    """Rows of every complete JSONL part of `directory`, in part order."""
    for part in done_parts(directory):
        with open(part, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)


def clear_parts(directory: Path) -> None:
    """Remove every part, marker and temporary file of a stage (for --force)."""
    if not directory.is_dir():
        return
    for p in directory.iterdir():
        if p.name.startswith(PART_PREFIX) or p.name.startswith(f".{PART_PREFIX}"):
            p.unlink()
