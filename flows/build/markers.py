"""Stage completion on disk: start and done markers, output digests, and rerun planning.

Every stage of a build writes `BUILD/stages/STAGE.json` when it finishes. The marker holds the
stage's key: a hash of its settings, of the previous stage's key and of that stage's output. A
stage whose marker matches its current key is skipped; anything else runs again. A stage that
was started but not finished keeps its finished parts when its key is unchanged (the stage's
own runner skips them), so a build killed at any moment continues where it stopped.
Correctness rests on these files only, never on Prefect's result cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import socket
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_text, write_json
from hopforge.flows.build.registry import STAGES, find_stage

log = logging.getLogger(__name__)

MARKERS = "stages"
LOCK = ".lock"
PREFECT_HOME = ".prefect"  # the database of the temporary Prefect server of the build
# Left out of output digests: temporary files (dot names) of an unfinished write, and manifests,
# which carry timestamps; the data files they describe are hashed.
DIGEST_SKIP = frozenset({"manifest.json"})


class BuildConflict(HopforgeError):
    """A build directory was made with other settings and no --from/--force says to redo them."""


def stage_outputs(build: BuildDir, stage: str) -> list[Path]:
    """The paths a stage writes (removed when the stage starts over)."""
    return [getattr(build, name) for name in find_stage(stage).outputs]


def check_stage(name: str, option: str = "--from") -> str:
    """`name` if it is a stage, else an error listing the stages."""
    if name not in STAGES:
        raise HopforgeError(f"{option} {name!r} is not a stage: use one of {', '.join(STAGES)}")
    return name


def _marker(build: BuildDir, stage: str, kind: str) -> Path:
    return build.root / MARKERS / f"{stage}.{kind}.json"


def read_marker(build: BuildDir, stage: str, kind: str = "done") -> dict[str, Any] | None:
    """The start or done marker of a stage, or None."""
    path = _marker(build, stage, kind)
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (OSError, json.JSONDecodeError):
        return None


def write_marker(build: BuildDir, stage: str, kind: str, data: Mapping[str, Any]) -> None:
    write_json(_marker(build, stage, kind), dict(data))


def drop_markers(build: BuildDir, stage: str) -> None:
    for kind in ("start", "done"):
        _marker(build, stage, kind).unlink(missing_ok=True)


def reset_outputs(build: BuildDir, stage: str) -> None:
    """Remove everything a stage wrote, so it starts over."""
    for path in stage_outputs(build, stage):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def remove_temporaries(paths: Iterable[Path]) -> int:
    """Remove temporary files that a killed write left under `paths` (never journals or parts)."""
    removed = 0
    for root in paths:
        if root.is_dir():
            for p in root.rglob(".*.tmp-*"):
                if p.is_file():
                    p.unlink()
                    removed += 1
    return removed


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Hold BUILD/.lock for the length of a build: two builds never write one directory."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK
    with open(path, "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise HopforgeError(
                f"another build is running in {root} ({holder}); wait for it to finish or stop "
                "it, or pick another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def output_digest(paths: Iterable[Path]) -> str:
    """A hash of the names and contents of every finished file under `paths`."""
    h = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else (
            [root] if root.is_file() else [])
        for p in files:
            rel = p.relative_to(root.parent)
            if any(part.startswith(".") for part in rel.parts) or p.name in DIGEST_SKIP:
                continue
            h.update(str(rel).encode() + b"\0")
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            h.update(b"\0")
    return h.hexdigest()[:16]


def stage_key(stage: str, config_hash: str, previous: Mapping[str, Any] | None, extra: str = "") -> str:
    """The key a finished stage must carry: its settings, and the stage before it."""
    prev = f"{previous['key']}:{previous['output']}" if previous else ""
    return hashlib.sha256(f"{stage}|{config_hash}|{prev}|{extra}".encode()).hexdigest()[:16]


def plan_rerun(
    build: BuildDir,
    stage_hashes: Mapping[str, str],
    *,
    from_stage: str | None = None,
    force: Sequence[str] = (),
    apply: bool = True,
) -> list[str]:
    """Check a build directory against the current settings and drop the markers to redo.

    Returns the stages that will start over. Raises BuildConflict when a stage was made with
    other settings and neither --from nor --force covers it. `apply=False` only checks.
    """
    redo = set(force)
    if from_stage:
        redo |= set(STAGES[STAGES.index(from_stage):])
    changed = []
    for stage in STAGES:
        old = read_marker(build, stage, "done") or read_marker(build, stage, "start")
        if old and old.get("config_hash") != stage_hashes[stage] and stage not in redo:
            changed.append(stage)
    if changed:
        first = changed[0]
        raise BuildConflict(
            f"{build.root} was made with other settings for "
            f"{', '.join(_section(s) for s in changed)}. Rerun with `--from {first}` to rebuild "
            f"from there (or `--force STAGE` for each changed stage), or pick a new --out."
        )
    for stage in STAGES:
        if stage in redo and apply:
            drop_markers(build, stage)
    return [s for s in STAGES if s in redo]


def _section(stage: str) -> str:
    return f"[{find_stage(stage).section}]"


def write_frozen_config(build: BuildDir, text: str) -> None:
    """Write the frozen copy of the build file (BUILD/build.toml)."""
    build.root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(build.config, text)
