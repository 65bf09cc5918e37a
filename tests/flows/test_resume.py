"""Killed builds: a real build process killed with SIGKILL at several points, then rerun, gives
the same records as an uninterrupted build, with nothing twice and nothing lost. Also the
refusal of changed settings and the --from / --force reruns.

The killed runs use the plain engine (`--no-prefect`): the same stage functions and on-disk
markers as the Prefect flow, without its seconds of start-up per process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_parts
from hopforge.flows.build.engine import run_build
from hopforge.flows.build.markers import BuildConflict
from hopforge.flows.config.build_file import STAGES, load_config

from tests.helpers.snapshots import canonical_rows
from tests.helpers.tiny import tiny_build_file

# Settings small enough for a few seconds per build: BM25 only, several parts per stage.
TINY_TABLES = """\
[trajectories]
samples = 2
part_questions = 2
max_turns = 24
faults = { empty = 0.1, timeout = 0.05, format = 0.05, timeout_delay_s = 0.0 }

[score]
rows_per_part = 4

[filter]
dedup_questions = 0.0
rows_per_part = 4

[export]
shard_records = 3
validation_fraction = 0.2
"""

# Runs `hopforge build CONFIG --no-prefect` and kills itself with SIGKILL at the point named by
# argv[1]: "none"; "done:STAGE" (right after the stage's done-marker); "progress:STAGE:N" (after
# N records of the stage are finished); "write:DIR:N:after|mid" (after, or half-way through,
# the N-th file written under BUILD/DIR through the atomic writers).
DRIVER = r"""
import os, signal, sys
from pathlib import Path
import hopforge.corpus.parts as parts
import hopforge.corpus.store, hopforge.export.shards, hopforge.flows.build.engine as engine
from hopforge.flows.build.registry import find_stage

point, config, out = sys.argv[1], sys.argv[2], sys.argv[3]
kind, _, rest = point.partition(":")

def die():
    os.kill(os.getpid(), signal.SIGKILL)

if kind == "done":
    write_marker = engine.write_marker
    def marker(build, stage, which, data):
        write_marker(build, stage, which, data)
        if which == "done" and stage == rest:
            die()
    engine.write_marker = marker
elif kind == "progress":
    stage_name, n = rest.split(":")
    watched = find_stage(stage_name)
    run = watched.run
    def run_watched(context, progress=None):
        def watch(done, total):
            if progress is not None:
                progress(done, total)
            if done >= int(n):
                die()
        return run(context, watch)
    watched.run = run_watched
elif kind == "write":
    dirname, n, how = rest.split(":")
    original = parts.atomic_write_bytes
    seen = [0]
    def write(path, data):
        path = Path(path)
        if dirname in path.parts and not path.name.endswith(".done"):
            seen[0] += 1
            if seen[0] == int(n) and how == "mid":
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path.with_name(f".{path.name}.tmp-{os.getpid()}"), "wb") as fh:
                    fh.write(data[: len(data) // 2])
                die()
        original(path, data)
        if dirname in path.parts and seen[0] == int(n) and how == "after":
            die()
    for module in list(sys.modules.values()):
        if getattr(module, "atomic_write_bytes", None) is original:
            module.atomic_write_bytes = write

from hopforge.flows.commands.cli import main
sys.exit(main(["build", config, "--out", out, "--no-prefect"]))
"""


def tiny_build(corpus: Path) -> str:
    return tiny_build_file(corpus, 'name = "tiny"\nseed = 3', TINY_TABLES)


def write_config(tmp_path: Path, corpus: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_build(corpus), encoding="utf-8")
    return path


def build_process(point: str, config: Path, out: Path, timeout: float = 300) -> int:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run([sys.executable, "-c", DRIVER, point, str(config), str(out)],
                          check=False, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"build failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.returncode


def stage_records(build: BuildDir) -> dict[str, list[str]]:
    """Every record of every part stage, as sorted canonical JSON (wall-clock fields dropped)."""
    names = ("questions", "trajectories", "scores", "pairs", "filtered")
    return {name: canonical_rows(*done_parts(build.root / name)) for name in names}


def export_records(build: BuildDir) -> dict[str, Any]:
    """Export shard rows (sorted, per shard file) and the manifest's counts."""
    shards = {str(path.relative_to(build.export)): canonical_rows(path)
              for path in sorted(build.export.rglob("*.jsonl"))}
    manifest = json.loads((build.export / "manifest.json").read_text("utf-8"))
    return {"shards": shards, "counts": manifest.get("counts")}


def assert_same_dataset(a: BuildDir, b: BuildDir) -> None:
    ra, rb = stage_records(a), stage_records(b)
    for name in ra:
        assert ra[name] == rb[name], f"{name} differ"
    assert ra["questions"] and ra["trajectories"] and ra["scores"] and ra["filtered"]
    ids = [json.loads(r)["tid"] for r in rb["trajectories"]]
    assert len(ids) == len(set(ids)), "a trajectory was written twice"
    qids = [json.loads(r)["qid"] for r in rb["questions"]]
    assert len(qids) == len(set(qids)), "a question was written twice"
    assert export_records(a) == export_records(b)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, tiny_corpus_path: Path) -> BuildDir:
    """An uninterrupted build of the tiny corpus, in a separate process."""
    tmp = tmp_path_factory.mktemp("reference")
    config = write_config(tmp, tiny_corpus_path)
    assert build_process("none", config, tmp / "build") == 0
    return BuildDir.at(tmp / "build")


def test_killed_build_resumes_to_the_same_dataset(tmp_path, tiny_corpus_path, reference):
    config = write_config(tmp_path, tiny_corpus_path)
    out = tmp_path / "build"
    points = [
        "write:corpus:1:mid",  # half a corpus shard on disk
        "done:questions",  # right after the questions stage finished
        "progress:trajectories:3",  # mid-stage: one part done, another half journaled
        "write:trajectories:3:mid",  # half-written trajectory part
        "write:scores:1:after",  # score parts written, no manifest yet
        "write:.export.tmp:2:mid",  # half-way through the export shards
    ]
    for point in points:
        code = build_process(point, config, out)
        assert code == -signal.SIGKILL, f"the build was not killed at {point}"
    assert build_process("none", config, out) == 0
    build = BuildDir.at(out)
    assert all((build.root / "stages" / f"{s}.done.json").exists() for s in STAGES)
    assert_same_dataset(reference, build)
    left = [p.name for p in build.root.rglob(".*") if ".tmp-" in p.name or "journal" in p.name]
    assert not left, f"temporary files or journals were left: {left}"


def test_changed_settings_are_refused_then_redone_with_from(tmp_path, tiny_corpus_path, reference):
    out = tmp_path / "copy"
    config = write_config(tmp_path, tiny_corpus_path)
    _, rows = run_build(load_config(config, out=out))
    assert [r["status"] for r in rows] == ["ran"] * len(STAGES)
    _, rows = run_build(load_config(config, out=out))
    assert [r["status"] for r in rows] == ["skipped"] * len(STAGES)

    changed = config.read_text().replace("dedup_questions = 0.0", "dedup_questions = 0.0\n"
                                         "threshold = 0.5")
    config.write_text(changed)
    with pytest.raises(BuildConflict) as info:
        run_build(load_config(config, out=out))
    assert "[filter]" in str(info.value) and "--from filter" in str(info.value)
    with pytest.raises(BuildConflict):  # --force of another stage does not cover [filter]
        run_build(load_config(config, out=out), force=["export"])
    _, rows = run_build(load_config(config, out=out), from_stage="filter")
    status = {r["stage"]: r["status"] for r in rows}
    assert status == {**{s: "skipped" for s in STAGES[:5]}, "filter": "ran", "export": "ran"}


def test_force_reruns_one_stage_and_keeps_later_ones_when_output_is_unchanged(
    tmp_path, tiny_corpus_path, reference
):
    config = write_config(tmp_path, tiny_corpus_path)
    out = tmp_path / "forced"
    run_build(load_config(config, out=out))
    _, rows = run_build(load_config(config, out=out), force=["score"])
    status = {r["stage"]: r["status"] for r in rows}
    # scoring is deterministic: the same output, so filter and export stay as they are
    assert status["score"] == "ran"
    assert status["filter"] == status["export"] == "skipped"
    assert_same_dataset(reference, BuildDir.at(out))


@pytest.mark.slow
def test_dense_builds_give_the_same_rows_twice_and_after_kills(tmp_path, tiny_corpus_path):
    """With the dense index on (hybrid search, batched queries): two uninterrupted builds and
    one killed twice and resumed export identical rows, wall-clock fields aside."""
    text = tiny_build(tiny_corpus_path).replace(
        "dense = false", "dense = true\nmax_seq_length = 96")
    config = tmp_path / "dense.toml"
    config.write_text(text, encoding="utf-8")
    first, second, killed = (tmp_path / name for name in ("first", "second", "killed"))
    wait = 1200  # each process loads the embedding model and embeds the corpus
    assert build_process("none", config, first, wait) == 0
    assert build_process("none", config, second, wait) == 0
    for point in ("progress:trajectories:3", "write:.export.tmp:2:mid"):
        assert build_process(point, config, killed, wait) == -signal.SIGKILL, point
    assert build_process("none", config, killed, wait) == 0
    a = BuildDir.at(first)
    assert json.loads((a.root / "index" / "manifest.json").read_text())["dense"]
    assert_same_dataset(a, BuildDir.at(second))
    assert_same_dataset(a, BuildDir.at(killed))
