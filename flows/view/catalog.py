"""What `hopforge view` reads from a build directory, read once and kept by id.

Questions, scores and filter decisions are small and read whole. Trajectories can be long
(hundreds of turns, megabytes each), so only their position in the part file and a few summary
fields are kept; a trajectory is read from its offset when a page asks for it. Exported rows are
indexed by trajectory id (file and offset), and read when a rows page asks for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.store import read_document_column
from hopforge.export.layouts.registry import layouts

# Export layouts whose rows are one trajectory's turns (they carry metadata.tid).
ROW_LAYOUTS: tuple[str, ...] = tuple(lay.name for lay in layouts() if lay.trained_note)
_META = b'"metadata":'


@dataclass(frozen=True, slots=True, kw_only=True)
class TrajectoryEntry:
    """Where one trajectory is stored, and what its list rows show."""

    tid: str
    qid: str
    path: Path
    offset: int
    sample: int
    teacher: str
    termination: str
    turns: int
    final_answer: str
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RowRef:
    """One exported row of a trajectory: its layout, split, file and byte offset."""

    layout: str
    split: str
    path: Path
    offset: int
    meta: dict[str, Any] = field(default_factory=dict)  # the row's metadata


@dataclass(slots=True)
class Catalog:
    """A build directory read for viewing (see module docstring)."""

    build: BuildDir
    eval_dir: Path | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    trajectories: dict[str, TrajectoryEntry] = field(default_factory=dict)
    by_question: dict[str, list[str]] = field(default_factory=dict)
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    _rows: dict[str, list[RowRef]] | None = None

    def report(self, name: str) -> dict[str, Any]:
        """BUILD/reports/NAME.json, or {} when the stage has not written it."""
        path = self.build.reports / f"{name}.json"
        return json.loads(path.read_text()) if path.is_file() else {}

    def marker(self, stage: str) -> dict[str, Any]:
        """The done-marker of `stage` (its seconds and headline stats), or {}."""
        path = self.build.root / "stages" / f"{stage}.done.json"
        return json.loads(path.read_text()) if path.is_file() else {}

    def trajectory_row(self, tid: str) -> dict[str, Any]:
        """The stored row of trajectory `tid`, read from its offset."""
        entry = self.trajectories[tid]
        with entry.path.open("rb") as f:
            f.seek(entry.offset)
            return json.loads(f.readline())  # type: ignore[no-any-return]

    def pass_rate(self, qid: str) -> float | None:
        """Share of the question's trajectories scored correct (None before scoring)."""
        scored = [self.scores[t] for t in self.by_question.get(qid, ()) if t in self.scores]
        if not scored:
            return None
        return sum(1 for s in scored if s.get("correct")) / len(scored)

    def rows_of(self, tid: str) -> list[RowRef]:
        """The exported rows of trajectory `tid` in every turn layout, in file order."""
        if self._rows is None:
            self._rows = _index_rows(self.build)
        return self._rows.get(tid, [])

    def read_row(self, ref: RowRef) -> dict[str, Any]:
        """One exported row."""
        with ref.path.open("rb") as f:
            f.seek(ref.offset)
            return json.loads(f.readline())  # type: ignore[no-any-return]

    def document_text(self, doc_id: str) -> str:
        """The text of one document of the corpus ("" when it is not there)."""
        return _document_texts(self.build.corpus).get(doc_id, "")


def open_catalog(root: str | Path, eval_dir: str | Path | None = None) -> Catalog:
    """Read the build at `root` for viewing; `eval_dir` is a `hopforge eval --out` folder."""
    build = BuildDir.at(Path(root).resolve())
    if not build.root.is_dir():
        raise HopforgeError(f"no build directory at {build.root}: pass the folder that "
                            "`hopforge build` or `hopforge demo` wrote (e.g. builds/demo)")
    if not (build.config.is_file() or build.questions.is_dir() or build.corpus.is_dir()):
        raise HopforgeError(f"{build.root} is not a build directory (no build.toml, corpus/ or "
                            "questions/): pass the folder that `hopforge build` wrote")
    if eval_dir is None and (build.root / "eval" / "summary.json").is_file():
        eval_dir = build.root / "eval"
    cat = Catalog(build=build, eval_dir=Path(eval_dir).resolve() if eval_dir else None)
    for row in _rows(build.questions):
        cat.questions[row["qid"]] = row
    for path in _parts(build.trajectories):
        for offset, line in _lines(path):
            row = json.loads(line)
            usage = row.get("usage") or {}
            entry = TrajectoryEntry(
                tid=row["tid"], qid=row["qid"], path=path, offset=offset,
                sample=int(row.get("sample", 0)), teacher=str(row.get("teacher", "")),
                termination=str(row.get("termination", "")), turns=len(row.get("turns") or ()),
                final_answer=str(row.get("final_answer", "")),
                seconds=float(usage.get("seconds", 0.0)))
            cat.trajectories[entry.tid] = entry
            cat.by_question.setdefault(entry.qid, []).append(entry.tid)
    cat.scores = {r["tid"]: r for r in _rows(build.scores)}
    cat.decisions = {r["tid"]: r for r in _rows(build.filtered)}
    cat.titles = read_document_column(build.corpus, "title")
    cat._rows = _index_rows(build)  # read now, so no page waits for it
    return cat


def _parts(folder: Path) -> list[Path]:
    return sorted(folder.glob("part-*.jsonl")) if folder.is_dir() else []


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    offset = 0
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                yield offset, line
            offset += len(line)


def _rows(folder: Path) -> Iterator[dict[str, Any]]:
    for path in _parts(folder):
        for _, line in _lines(path):
            yield json.loads(line)


@lru_cache(maxsize=4)
def _document_texts(corpus: Path) -> dict[str, str]:
    return read_document_column(corpus, "text")


def _index_rows(build: BuildDir) -> dict[str, list[RowRef]]:
    """tid -> its rows in the turn layouts, with each row's metadata (the last key of a row,
    read without parsing the messages before it)."""
    index: dict[str, list[RowRef]] = {}
    decoder = json.JSONDecoder()
    for layout in ROW_LAYOUTS:
        folder = build.export / layout
        for split_dir in sorted(p for p in folder.glob("*") if p.is_dir()):
            for path in sorted(split_dir.glob("part-*.jsonl")):
                for offset, line in _lines(path):
                    at = line.rfind(_META)
                    if at < 0:
                        continue
                    meta, _ = decoder.raw_decode(line[at + len(_META):].decode("utf-8").lstrip())
                    if isinstance(meta, dict) and meta.get("tid"):
                        index.setdefault(str(meta["tid"]), []).append(RowRef(
                            layout=layout, split=split_dir.name, path=path, offset=offset,
                            meta=meta))
    return index
