"""Each input is read once per build: a whole build of the tiny corpus, with every file read
counted per stage.

Reads are counted where they reach the disk (`open` for reading, `pyarrow.parquet.read_table`),
so a new reader anywhere below the engine is counted too. A read of a stage's own outputs to
hash them for its done-marker is counted apart from the reads that consume a file.
"""

from __future__ import annotations

import builtins
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hopforge.flows.build import engine, markers
from hopforge.flows.build.engine import run_build
from hopforge.flows.config.build_file import STAGES, load_config

from tests.flows.test_resume import write_config

# (stage or "prepare", path relative to the build, "read" | "hash") -> times
Reads = Counter[tuple[str, str, str]]


class ReadCounter:
    """Counts the reads of files under one build directory, by the stage running at the time."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.stage = "prepare"
        self.hashing = False
        self.reads: Reads = Counter()

    def note(self, file: Any, mode: str = "r") -> None:
        if not isinstance(file, str | Path) or any(c in mode for c in "wax+"):
            return
        path = Path(file).resolve()
        if path.is_relative_to(self.root):
            how = "hash" if self.hashing else "read"
            self.reads[(self.stage, str(path.relative_to(self.root)), how)] += 1

    def of(self, name: str, how: str = "read") -> dict[str, int]:
        """Reads of files whose name starts with `name`, as "STAGE FOLDER" -> most per file."""
        out: dict[str, int] = {}
        for (stage, rel, kind), n in self.reads.items():
            if kind == how and Path(rel).name.startswith(name):
                key = f"{stage} {Path(rel).parent}"
                out[key] = max(out.get(key, 0), n)
        return out

    def total(self, rel: str) -> int:
        return sum(n for (_, path, kind), n in self.reads.items() if path == rel and kind == "read")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ReadCounter]:
    counter = ReadCounter(tmp_path / "build")
    real_open, real_read_table = builtins.open, pq.read_table
    real_run_stage, real_digest = engine.run_stage, markers.output_digest

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        counter.note(file, mode)
        return real_open(file, mode, *args, **kwargs)

    def counting_read_table(source: Any, *args: Any, **kwargs: Any) -> Any:
        counter.note(source)
        return real_read_table(source, *args, **kwargs)

    def run_stage(build_root: Any, stage: str, **kwargs: Any) -> Any:
        counter.stage = stage
        try:
            return real_run_stage(build_root, stage, **kwargs)
        finally:
            counter.stage = "prepare"

    def output_digest(paths: Any) -> str:
        counter.hashing = True
        try:
            return real_digest(paths)
        finally:
            counter.hashing = False

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)  # what pathlib's read_text opens through
    monkeypatch.setattr(pq, "read_table", counting_read_table)
    monkeypatch.setattr(engine, "run_stage", run_stage)
    monkeypatch.setattr(engine, "output_digest", output_digest)
    yield counter


def test_a_build_reads_each_input_once(counted: ReadCounter, tmp_path: Path,
                                       tiny_corpus_path: Path) -> None:
    config = load_config(write_config(tmp_path, tiny_corpus_path), out=tmp_path / "build")
    _, rows = run_build(config)
    assert [r["status"] for r in rows] == ["ran"] * len(STAGES)
    parts = counted.of("part-")
    assert {"score trajectories", "filter scores", "export pairs"} <= set(parts)
    # the engine holds the config it was given: the frozen copy is written, never parsed back
    assert counted.total("build.toml") == 0
    assert all(n == 1 for n in parts.values()), f"a part was read more than once: {parts}"
    corpus = counted.of("docs-")
    assert corpus.get("questions corpus") == 1, "the searcher read the corpus again"
    assert all(n == 1 for n in corpus.values()), f"a corpus shard was read twice: {corpus}"
    assert all(n == 1 for n in counted.of("part-", "hash").values())
    # one searcher per process: the questions and trajectories stages share the loaded index
    # (a memory-mapped .npy is opened three times by one np.load, so stages are counted)
    loaded_by = {stage for (stage, rel, kind) in counted.reads
                 if kind == "read" and rel.startswith("index/") and not rel.endswith(".json")}
    assert loaded_by == {"questions"}, f"the index was loaded by {sorted(loaded_by)}"


def test_a_stage_run_on_its_own_reads_build_toml_once_per_process(
        counted: ReadCounter, tmp_path: Path, tiny_corpus_path: Path) -> None:
    config = load_config(write_config(tmp_path, tiny_corpus_path), out=tmp_path / "build")
    build, _ = run_build(config)
    for stage in STAGES:  # as a Prefect task or a worker runs them: by path, no context
        assert engine.run_stage(build.root, stage).status == "skipped"
    assert counted.total("build.toml") == 1
