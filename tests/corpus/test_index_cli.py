"""`hopforge index` and `hopforge search` end to end on a small build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.search import Searcher
from hopforge.corpus.store import write_corpus
from hopforge.flows.commands.cli import main

from tests.helpers.tiny import load_tiny


@pytest.fixture()
def build(tmp_path: Path, tiny_corpus_path: Path) -> BuildDir:
    b = BuildDir.at(tmp_path / "b")
    write_corpus(b, load_tiny(tiny_corpus_path))
    return b


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.slow
def test_index_search_and_reindex_with_dense(build: BuildDir, tiny_corpus_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(build.root), "--no-progress", "--max-seq-length", "128"]) == 0
    manifest = json.loads((build.index / "manifest.json").read_text())
    assert manifest["documents"] == 22 and manifest["passages"] == 22
    assert manifest["dense"]["embedded"] == 22 and manifest["dense"]["kind"] == "flat"
    assert manifest["tokenizer"]["stem"] is True and manifest["config"]["max_seq_length"] == 128
    assert {"bm25_s", "embed_s", "faiss_s", "total_s"} <= set(manifest["times"])
    assert len(manifest["corpus_fingerprint"]) == 64
    for part in ("bm25/data.npy", "bm25/vocab.json", "dense/vectors.faiss", "passages.parquet"):
        assert (build.index / part).is_file()
    capsys.readouterr()

    assert main(["search", str(build.root), "the man who built the lighthouse", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "hybrid" and out["hits"][0]["doc_id"] in {"dorran-pell", "grey-needle"}
    assert main(["search", str(build.root), "Mount Fendle", "-k", "3"]) == 0
    assert "[mount-fendle]" in capsys.readouterr().out.splitlines()[0]
    # a fresh process loads faiss; its loader's INFO lines are not the user's business
    proc = subprocess.run([sys.executable, "-m", "hopforge.flows.commands.cli", "search",
                           str(build.root), "Mount Fendle", "-k", "1"],
                          capture_output=True, text=True, check=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert "[mount-fendle]" in proc.stdout
    assert "faiss" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr, proc.stderr

    docs = load_tiny(tiny_corpus_path)
    docs[0] = replace(docs[0], text=docs[0].text + " It is rich in trout.")
    write_corpus(build, docs)
    with pytest.raises(HopforgeError, match="changed after it was indexed"):
        Searcher.load(build)
    assert main(["index", str(build.root), "--no-dense"]) == 0  # keeps the embedding cache
    assert main(["index", str(build.root), "--no-progress", "--max-seq-length", "128"]) == 0
    manifest = json.loads((build.index / "manifest.json").read_text())
    assert manifest["dense"]["embedded"] == 1 and manifest["dense"]["reused"] == 21
    assert not (build.root / "index.new").exists() and not (build.root / "index.old").exists()
    hits = Searcher.load(build).search("trout", k=3, mode="bm25")
    assert [h.doc_id for h in hits] == ["marrow-river"]


def test_queries_file_contract_bm25_only(build: BuildDir, tmp_path: Path) -> None:
    assert main(["index", str(build.root), "--no-dense"]) == 0
    manifest = json.loads((build.index / "manifest.json").read_text())
    assert manifest["dense"] is None
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "Who first surveyed Mount Fendle?"}\n\n'
                       '{"id": 2, "query": "lighthouse at the entrance of Quillon harbour"}\n'
                       '{"id": "q3", "query": "zzzz"}\n')
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "hopforge.flows.commands.cli", "search", str(build.root), "--queries",
         str(queries), "-k", "4"], capture_output=True, text=True, env=env, check=True)
    rows = _json_lines(proc.stdout)
    assert [r["id"] for r in rows] == ["q1", 2, "q3"]
    assert rows[0]["hits"][0]["doc_id"] == "mount-fendle" and len(rows[0]["hits"]) == 4
    assert rows[1]["hits"][0] == {"doc_id": "grey-needle", "title": "Grey Needle",
                                  "score": rows[1]["hits"][0]["score"]}
    assert rows[2]["hits"] == []
    assert all(set(h) == {"doc_id", "title", "score"} for r in rows for h in r["hits"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "{b}", "x", "--mode", "dense"], "--no-dense"),
        (["search", "{b}"], "either a QUERY or --queries"),
        (["search", "{b}", "x", "-k", "0"], "-k 0 is out of range"),
        (["search", "{b}", "--queries", "{b}/bad.jsonl"], "bad.jsonl:2: not valid JSON"),
        (["search", "{b}", "--queries", "{b}/nope.jsonl"], "does not exist"),
        (["index", "{b}", "--no-dense", "--passage-words", "4"], "passage_words = 4 is out of range: expected at least 8"),
    ],
)
def test_cli_errors_say_what_to_do(build: BuildDir, capsys: pytest.CaptureFixture[str],
                                   argv: list[str], message: str) -> None:
    assert main(["index", str(build.root), "--no-dense"]) == 0
    (build.root / "bad.jsonl").write_text('{"id": 1, "query": "a"}\n{oops\n')
    capsys.readouterr()
    assert main([a.replace("{b}", str(build.root)) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_search_without_index_and_build_toml(build: BuildDir,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(build.root), "x"]) == 2
    assert "run `hopforge index" in capsys.readouterr().err
    build.config.write_text("[index]\ndense = false\npassage_words = 50\nstem = false\n")
    assert main(["index", str(build.root)]) == 0
    manifest = json.loads((build.index / "manifest.json").read_text())
    assert manifest["config"]["passage_words"] == 50 and manifest["tokenizer"]["stem"] is False
    build.config.write_text("[index]\nwords = 50\n")
    assert main(["index", str(build.root)]) == 2
    assert "unknown index config key(s) words" in capsys.readouterr().err
