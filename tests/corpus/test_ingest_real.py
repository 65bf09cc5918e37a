"""Ingestion of the real corpora in ../shared/data (dictd Jargon File and FOLDOC, HotpotQA, 2Wiki)."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest
from hopforge.corpus.builtin import builtin_corpus_path, builtin_license_path
from hopforge.corpus.ingest import detect_format, ingest_paths
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.records import make_doc_id
from hopforge.corpus.store import read_documents, write_corpus

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_jargon_file_entries_and_cross_references(shared_data: Path) -> None:
    result = ingest_paths([shared_data / "dictd" / "jargon"])
    docs = result.documents
    assert len(docs) == 2307  # 2,314 index lines less 7 00-database-* headwords
    assert result.stats["problems"] == {
        "malformed": 0, "non_utf8": 0, "empty": 0, "duplicate_id": 0, "chunked": 0,
    }  # fmt: skip
    refs = result.stats["references"]
    assert 5300 <= refs["references"] <= 5500  # ~5.4k {cross references}
    assert refs["resolved_share"] >= 0.98
    assert result.stats["links"] > 5000
    assert 190_000 <= result.stats["total_words"] <= 215_000  # ~203k words
    assert result.stats["largest_component_share"] > 0.8
    by_title = {d.title: d for d in docs}
    bit_bucket = by_title["bit bucket"]
    assert bit_bucket.doc_id == make_doc_id("jargon", "bit bucket")
    null = by_title["/dev/null"]
    assert "See bit bucket." in null.text and bit_bucket.doc_id in null.links
    assert result.stats["mention_links"]["links_added"] == 0  # it has links of its own


def test_jargon_ids_are_stable_and_the_store_round_trips(shared_data: Path, tmp_path: Path) -> None:
    first = ingest_paths([shared_data / "dictd" / "jargon.index"])
    second = ingest_paths([shared_data / "dictd" / "jargon.dict.dz"])
    assert first.documents == second.documents
    build = BuildDir.at(tmp_path)
    write_corpus(build, first.documents, first.stats)
    assert read_documents(build) == first.documents


def test_committed_builtin_corpus_matches_the_dictd_ingester(shared_data: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_builtin", REPO / "scripts" / "make_builtin_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus, notice, _ = module.build(shared_data)
    assert gzip.decompress(corpus) == gzip.decompress(builtin_corpus_path().read_bytes()), (
        "corpus/data/jargon.jsonl.gz is stale: run scripts/make_builtin_corpus.py"
    )
    assert notice == builtin_license_path().read_text(encoding="utf-8")


def test_foldoc_entries_aliases_and_links(shared_data: Path) -> None:
    result = ingest_paths([shared_data / "dictd" / "foldoc"])
    docs = result.documents
    # 12,014 entries; 4 headwords have two entries each, merged into one document.
    assert len(docs) == 12010
    assert sum(len(d.aliases) for d in docs) > 3000  # 15,247 headwords
    refs = result.stats["references"]
    assert refs["references"] > 55_000
    assert refs["resolved_share"] >= 0.72  # FOLDOC marks up terms that have no entry yet
    excl = next(d for d in docs if d.title == "exclamation mark")
    assert set(excl.aliases) >= {"!", "excl", "shriek"}


def test_hotpotqa_question_file_and_its_corpus_give_the_same_994_paragraphs(
    shared_data: Path,
) -> None:
    wiki = shared_data / "wiki"
    assert detect_format(wiki / "hotpotqa_train.json") == "hotpotqa"
    assert detect_format(wiki / "hotpotqa_train_corpus.json") == "title-sentences"
    questions = ingest_paths([wiki / "hotpotqa_train.json"], source_name="hotpotqa")
    corpus = ingest_paths([wiki / "hotpotqa_train_corpus.json"], source_name="hotpotqa")
    assert len(questions.documents) == len(corpus.documents) == 994
    assert {(d.doc_id, d.title, d.text) for d in questions.documents} == {
        (d.doc_id, d.title, d.text) for d in corpus.documents
    }
    assert questions.stats["paragraphs_merged"] == 0  # no paragraph repeats across these questions
    assert questions.stats["mention_links"]["links_added"] > 300


def test_2wikimultihopqa_paragraphs_get_mention_links(shared_data: Path) -> None:
    result = ingest_paths([shared_data / "wiki" / "2wikimultihopqa_corpus.json"])
    assert len(result.documents) == 6119
    mentions = result.stats["mention_links"]
    assert mentions["links_added"] == result.stats["links"] > 2000
    assert mentions["skipped"]["ambiguous"] > 0 and mentions["skipped"]["too_short"] > 0
    assert result.stats["problems"]["malformed"] == 0
