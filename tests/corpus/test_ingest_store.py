"""The corpus store, the built-in corpus, mention links and the `hopforge ingest` command."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hopforge.corpus.builtin import builtin_license_path, load_builtin_documents
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.mentions import MentionConfig, add_mention_links
from hopforge.corpus.records import Document
from hopforge.corpus.store import (
    CorpusMissingError,
    corpus_fingerprint,
    read_documents,
    read_links,
    write_corpus,
)
from hopforge.flows.commands.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


def doc(i: int, text: str = "", links: tuple[str, ...] = (), title: str = "") -> Document:
    return Document(
        doc_id=f"d{i}",
        title=title or f"Title {i}",
        text=text or f"Text of document {i} — ünïcode.",
        source="test",
        aliases=(f"alias {i}",) if i % 2 else (),
        links=links,
    )


def test_store_round_trip_with_links_and_shards(tmp_path: Path) -> None:
    docs = [doc(i, links=(f"d{(i + 1) % 7}", f"d{(i + 3) % 7}")) for i in range(7)]
    build = BuildDir.at(tmp_path)
    write_corpus(build, docs, {"documents": 7}, docs_per_shard=3)
    assert sorted(p.name for p in build.corpus.glob("docs-*.parquet")) == [
        "docs-00000.parquet",
        "docs-00001.parquet",
        "docs-00002.parquet",
    ]
    assert read_documents(build) == docs
    assert read_links(build) == [(d.doc_id, t) for d in docs for t in d.links]
    links = pq.read_table(build.links)
    assert links.schema.names == ["src", "dst"]
    schema = pq.read_schema(build.corpus / "docs-00000.parquet")
    assert schema.field("aliases").type == pa.list_(pa.string())
    assert schema.field("text").type == pa.large_string()
    assert json.loads((build.reports / "ingest.json").read_text()) == {"documents": 7}
    # A smaller rewrite removes the shards it no longer needs.
    write_corpus(build, docs[:2])
    assert [p.name for p in build.corpus.glob("docs-*.parquet")] == ["docs-00000.parquet"]
    assert read_documents(build) == docs[:2]


def test_fingerprint_is_stable_and_follows_content(tmp_path: Path) -> None:
    docs = [doc(i) for i in range(4)]
    a, b = BuildDir.at(tmp_path / "a"), BuildDir.at(tmp_path / "b")
    write_corpus(a, docs)
    write_corpus(b, docs)
    assert corpus_fingerprint(a) == corpus_fingerprint(b)
    write_corpus(b, docs[:3] + [doc(3, text="changed")])
    assert corpus_fingerprint(a) != corpus_fingerprint(b)


def test_reading_a_missing_or_interrupted_corpus_says_what_to_run(tmp_path: Path) -> None:
    build = BuildDir.at(tmp_path)
    with pytest.raises(CorpusMissingError, match="hopforge ingest"):
        read_documents(build)
    write_corpus(build, [doc(1)])
    (build.corpus / "manifest.json").unlink()  # as if killed before the manifest was written
    with pytest.raises(CorpusMissingError, match="interrupted"):
        corpus_fingerprint(build)


def test_duplicate_doc_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(HopforgeError, match="share doc_id 'd1'"):
        write_corpus(BuildDir.at(tmp_path), [doc(1), doc(1)])


def test_builtin_corpus_is_the_linked_jargon_file() -> None:
    docs = load_builtin_documents()
    assert len(docs) == 2307
    assert {d.source for d in docs} == {"jargon"}
    ids = {d.doc_id for d in docs}
    assert len(ids) == len(docs)
    assert all(t in ids for d in docs for t in d.links)
    assert sum(len(d.links) for d in docs) > 5000
    hack = next(d for d in docs if d.title == "hacker")
    assert "{" not in hack.text and hack.links
    notice = builtin_license_path().read_text(encoding="utf-8")
    assert "in the public domain" in notice and "Jargon File 4.4.7" in notice


def test_cli_ingest_writes_the_corpus_and_prints_stats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "build"
    args = ["ingest", str(DATA / "calden"), str(DATA / "paragraphs.json"), "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "documents: 8 (calden: 4, paragraphs: 4)" in printed
    assert "connected components" in printed and "length (words)" in printed
    assert "malformed records skipped: 0" in printed
    build = BuildDir.at(out)
    assert len(read_documents(build)) == 8
    stats = json.loads((build.reports / "ingest.json").read_text())
    assert stats["documents"] == 8 and stats["references"]["resolved"] == 6
    assert stats["mention_links"]["sources"] == ["paragraphs"]


def test_cli_ingest_builtin_and_source_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", "builtin", "--out", str(tmp_path / "j")]) == 0
    assert read_documents(BuildDir.at(tmp_path / "j")) == load_builtin_documents()
    # the name a build file uses works on the command line too
    assert main(["ingest", "builtin:jargon", "--out", str(tmp_path / "k")]) == 0
    assert read_documents(BuildDir.at(tmp_path / "k")) == load_builtin_documents()
    assert main(["ingest", str(DATA / "musique.jsonl"), "--out", str(tmp_path / "m"),
                 "--source-name", "mq"]) == 0  # fmt: skip
    assert {d.source for d in read_documents(BuildDir.at(tmp_path / "m"))} == {"mq"}
    capsys.readouterr()


def test_cli_ingest_help_lists_formats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["ingest", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for word in (
        "--out",
        "--format",
        "--strict",
        "--source-name",
        "dictd",
        "mediawiki",
        "hotpotqa",
    ):
        assert word in text


def _mention_docs() -> list[Document]:
    texts = {
        "Marrow River": "The Marrow River flows past Brackwater into Lake Orvin.",
        "Lake Orvin": "Lake Orvin lies below the Tessel Hills; the Marrow River feeds it.",
        "Tessel Hills": "The Tessel Hills rise above Lake Orvinshire and Brackwater.",
        "Brackwater": "Brackwater is a harbour town. The Who played there once.",
        "The Who": "The Who are a band that played Brackwater.",
        "Lake": "A lake is a body of water.",
        "Brackwater (band)": "A band named after the town.",
        "Orvin (river)": "Orvin is a short river.",
        "Orvin (town)": "Orvin is a town.",
    }
    return [
        Document(doc_id=f"d{i}", title=t, text=x, source="m")
        for i, (t, x) in enumerate(texts.items())
    ]


def test_mention_links_respect_words_length_ambiguity_and_frequency() -> None:
    docs = _mention_docs()
    linked, stats = add_mention_links(docs, scan={d.doc_id for d in docs})
    titles = {d.doc_id: d.title for d in docs}
    got = {d.title: [titles[t] for t in d.links] for d in linked}
    # Longest match wins ("Lake Orvin", not "Lake" + "Orvin"); order of first mention.
    assert got["Marrow River"] == ["Brackwater", "Lake Orvin"]
    assert got["Lake Orvin"] == ["Tessel Hills", "Marrow River"]
    # "Lake Orvinshire" is not a whole-word mention of "Lake Orvin"; "Lake" alone is.
    assert got["Tessel Hills"] == ["Lake", "Brackwater"]
    # "The Who" is only stopwords; no self links.
    assert got["Brackwater"] == [] and got["The Who"] == ["Brackwater"]
    skipped = stats.as_dict()["skipped_examples"]
    assert "the who" in skipped["stopword_or_number"]
    # Two "Orvin (...)" titles make "Orvin" ambiguous; a full title beats a stripped one, so
    # "Brackwater" still means the town, not "Brackwater (band)".
    assert skipped["ambiguous"] == ["orvin"]
    tight = MentionConfig(max_doc_share=0.1, min_common_docs=1)
    _, common = add_mention_links(docs, scan={d.doc_id for d in docs}, config=tight)
    assert "brackwater" in common.skipped_examples["too_common"]
    short = MentionConfig(min_chars=11)
    _, st = add_mention_links(docs, scan={d.doc_id for d in docs}, config=short)
    assert "lake orvin" in st.skipped_examples["too_short"]


def test_mention_links_only_touch_scanned_documents() -> None:
    docs = _mention_docs()
    linked, stats = add_mention_links(docs, scan={"d0"})
    assert [d.links for d in linked[1:]] == [d.links for d in docs[1:]]
    assert linked[0].links and stats.docs_scanned == 1
