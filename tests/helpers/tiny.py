"""The tiny hand-written corpus (tests/data/tiny_corpus.jsonl) as documents."""

import json
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_part
from hopforge.corpus.records import Document
from hopforge.corpus.store import write_corpus

TINY_CORPUS = Path(__file__).resolve().parents[1] / "data" / "tiny_corpus.jsonl"


def load_tiny(path: Path = TINY_CORPUS) -> list[Document]:
    """22 documents whose doc_ids are the file's ids (e.g. "mount-fendle"), with their links."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [Document(doc_id=r["id"], title=r["title"], text=r["text"], source="tiny",
                     links=tuple(r.get("links", ()))) for r in rows]


_TINY_TABLES = """\
[corpus]
sources = ["{corpus}"]

[index]
dense = false

[questions]
# the tiny corpus is too small to blur phrases or to hide
# answers from one search
min_df = 1
shortcut_rank = 0

"""


def tiny_build_file(corpus: Path, build: str, later: str) -> str:
    """A build file the tiny corpus at `corpus` can run: BM25 only, question settings for so few
    documents; `build` is the lines of its [build] table, `later` the tables after [questions]."""
    return f"[build]\n{build}\n\n" + _TINY_TABLES.format(corpus=corpus) + later


def scored_build(root: Path, documents: list, questions: list, **settings: Any) -> BuildDir:
    """`questions` over `documents` solved by the scripted teacher, 4 samples each with 30% of
    tool calls faulted (more TrajectoryConfig `settings` on top), then scored: a build whose
    trajectories have failed, recovered and unfinished turns for the filter and export tests."""
    from hopforge.flows.stages.filters import score_build
    from hopforge.flows.stages.trajectories import run_trajectories_build
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.stage import TrajectoryConfig

    build = BuildDir.at(root)
    write_corpus(build, documents)
    write_part(build.questions, 0, [q.to_row() for q in questions])
    faults = FaultConfig.uniform(0.3, timeout_delay_s=0.0)
    run_trajectories_build(build, TrajectoryConfig(samples=4, faults=faults, **settings))
    score_build(build)
    return build


HOPFORGE = ["-m", "hopforge.flows.commands.cli"]  # the CLI, run by the test's interpreter


def tiny_cli_index(corpus: Path, build: Path) -> dict[str, str]:
    """Ingest `corpus` into `build` and index it BM25-only through the CLI, as a user does;
    returns the environment the commands ran with (offline)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for argv in (["ingest", str(corpus), "--out", str(build)], ["index", str(build), "--no-dense"]):
        subprocess.run([sys.executable, *HOPFORGE, *argv], check=True, env=env,
                       capture_output=True, timeout=300)
    return env
