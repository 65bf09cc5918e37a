"""The tiny hand-written corpus (tests/data/tiny_corpus.jsonl) as documents."""

import json
from pathlib import Path

from hopforge.corpus.records import Document

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
