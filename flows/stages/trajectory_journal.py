"""Journals and part writing of the trajectories stage.

Each finished trajectory is appended to the hidden journal of its part
(`.part-00003.journal.jsonl`) and flushed; once every trajectory of a part is in, the part is
written atomically, marked done, and its journal removed. A line cut short by a kill is
ignored when the journal is read back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from hopforge.corpus.parts import write_part
from hopforge.synth.records import Trajectory


def journal_path(directory: Path, index: int) -> Path:
    """The hidden journal of part `index`: its finished trajectories, one JSON line each."""
    return directory / f".part-{index:05d}.journal.jsonl"


def read_journal(path: Path, expected: set[str]) -> dict[str, str]:
    """Complete, expected lines of a journal (a line cut by a kill is ignored)."""
    rows: dict[str, str] = {}
    if not path.is_file():
        return rows
    for line in path.read_text("utf-8").splitlines():
        try:
            tid = json.loads(line)["tid"]
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
        if tid in expected:
            rows[tid] = line
    return rows


class PartWriter:
    """Collects finished trajectories per part, journals them, writes each part when full."""

    def __init__(self, directory: Path, expected: dict[int, list[str]],
                 journaled: dict[int, dict[str, str]]) -> None:
        self.directory = directory
        self.expected = expected
        self.part_of = {tid: i for i, tids in expected.items() for tid in tids}
        self.rows = journaled
        self.handles: dict[int, IO[str]] = {}
        self.parts_written = 0

    def add(self, trajectory: Trajectory) -> None:
        index = self.part_of[trajectory.tid]
        line = json.dumps(trajectory.to_row(), ensure_ascii=False, sort_keys=True)
        handle = self.handles.get(index)
        if handle is None:
            path = journal_path(self.directory, index)
            handle = self.handles[index] = path.open("a", encoding="utf-8")
        handle.write(line + "\n")
        handle.flush()
        self.rows.setdefault(index, {})[trajectory.tid] = line
        self.finish(index)

    def finish(self, index: int) -> None:
        """Write part `index` if all its trajectories are in."""
        rows = self.rows.get(index, {})
        if len(rows) < len(self.expected[index]):
            return
        write_part(self.directory, index, (json.loads(rows[t]) for t in self.expected[index]))
        self.parts_written += 1
        handle = self.handles.pop(index, None)
        if handle is not None:
            handle.close()
        journal_path(self.directory, index).unlink(missing_ok=True)
        del self.rows[index]

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()
