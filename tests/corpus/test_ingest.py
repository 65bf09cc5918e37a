"""Every ingest format on small hand-written fixtures (tests/data/ingest/)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hopforge.corpus.ingest import detect_format, ingest_paths
from hopforge.corpus.records import Document, make_doc_id

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


def by_title(docs: list[Document]) -> dict[str, Document]:
    return {d.title: d for d in docs}


def link_titles(doc: Document, docs: list[Document]) -> set[str]:
    titles = {d.doc_id: d.title for d in docs}
    return {titles[i] for i in doc.links}


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("calden", "dictd"),
        ("calden.index", "dictd"),
        ("calden.dict.dz", "dictd"),
        ("docs.jsonl", "jsonl"),
        ("paragraphs.json", "jsonl"),
        ("hotpot_original.json", "hotpotqa"),
        ("hotpot_hf.jsonl", "hotpotqa"),
        ("title_sentences.json", "title-sentences"),
        ("musique.jsonl", "musique"),
        ("site", "folder"),
        ("site/notes/lake.md", "folder"),
        ("wiki_dump.xml", "mediawiki"),
    ],
)
def test_format_is_detected_from_the_file(name: str, fmt: str) -> None:
    assert detect_format(DATA / name) == fmt


def test_jsonl_documents_keep_ids_and_resolve_links_by_id_and_title() -> None:
    result = ingest_paths([DATA / "docs.jsonl"])
    docs = by_title(result.documents)
    fendle = docs["Mount Fendle"]
    assert fendle.doc_id == make_doc_id("docs", "fendle")
    assert fendle.url == "https://example.org/fendle"
    assert link_titles(fendle, result.documents) == {"Tessel Hills", "Ilse Varro"}
    assert docs["Ilse Varro"].aliases == ("Varro",)
    assert docs["Lake Orvin"].doc_id == make_doc_id("docs", "7")  # integer ids are keys too
    refs = result.stats["references"]
    assert (refs["references"], refs["resolved"]) == (4, 3)  # "nowhere" does not resolve
    assert refs["unresolved_top"] == [["nowhere", 1]]


def test_parquet_documents_read_like_jsonl(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "title": ["Alpha", "Beta", "Gamma"],
            "text": ["Alpha points at Beta.", "Beta stands alone.", ""],
            "links": [["b"], [], []],
        }
    )
    path = tmp_path / "docs.parquet"
    pq.write_table(table, path)
    assert detect_format(path) == "parquet"
    result = ingest_paths([path])
    docs = by_title(result.documents)
    assert set(docs) == {"Alpha", "Beta"}
    assert link_titles(docs["Alpha"], result.documents) == {"Beta"}
    assert result.stats["problems"]["empty"] == 1
    assert any(":row 3:" in p for p in result.problems)


def test_dictd_entries_headwords_aliases_and_brace_links() -> None:
    result = ingest_paths([DATA / "calden"])
    docs = by_title(result.documents)
    assert set(docs) == {"beacon", "Mount Fendle", "cairn", "Tessel Hills"}  # 00-database-* skipped
    fendle = docs["Mount Fendle"]
    assert fendle.source == "calden"
    assert fendle.aliases == ("fendle", "the fendle")
    assert fendle.text.startswith("<place> The highest summit of the Tessel Hills, first surveyed")
    assert "{" not in fendle.text
    # {Mount\n Fendle} spans a line break; {FENDLE} resolves case-insensitively via an alias;
    # {cairns} resolves to "cairn" as a plural.
    assert link_titles(docs["beacon"], result.documents) == {"Mount Fendle", "cairn"}
    assert link_titles(docs["Tessel Hills"], result.documents) == {"Mount Fendle"}
    # An external {Title (http://...)} reference is text, not a link; code braces stay.
    assert "Lost Cairn (http://calden.example.org/lost)" in docs["cairn"].text
    assert "if (x) { y = 1; }" in docs["cairn"].text
    refs = result.stats["references"]
    assert (refs["references"], refs["resolved"]) == (8, 6)
    assert {name for name, _ in refs["unresolved_top"]} == {"ilse varro", "grey needle"}


def test_hotpotqa_both_layouts_and_title_sentences_give_the_same_paragraphs() -> None:
    layouts = ["hotpot_original.json", "hotpot_hf.jsonl", "title_sentences.json"]
    results = [ingest_paths([DATA / name], source_name="hotpot") for name in layouts]
    expected = {
        "Brackwater": "Brackwater is a town on the Marrow River. It has a harbour.",
        "Marrow River": "The Marrow River flows into Lake Orvin. It rises in the Tessel Hills.",
        "Mount Fendle": "Mount Fendle was surveyed by Ilse Varro.",
    }
    for result in results:
        assert {d.title: d.text for d in result.documents} == expected
    assert results[0].documents == results[1].documents == results[2].documents
    assert results[0].stats["paragraphs_merged"] == 1  # Brackwater appears in both questions
    # The malformed HF record (line 2) and the non-list value are reported, not fatal.
    assert results[1].stats["problems"]["malformed"] == 1
    assert "hotpot_hf.jsonl:2:" in results[1].problems[0]
    assert "title_sentences.json:13:" in results[2].problems[0]


def test_hotpotqa_and_musique_as_parquet_tables(tmp_path: Path) -> None:
    lines = (DATA / "hotpot_hf.jsonl").read_text().splitlines()
    rows = [
        {"id": r["_id"], "context": r["context"]}
        for r in map(json.loads, lines)
        if r["_id"] != "bad"
    ]
    path = tmp_path / "hotpot.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)  # the Hugging Face layout
    assert detect_format(path) == "hotpotqa"
    expected = ingest_paths([DATA / "hotpot_hf.jsonl"], source_name="h").documents
    assert ingest_paths([path], source_name="h").documents == expected
    mus = [json.loads(line) for line in (DATA / "musique.jsonl").read_text().splitlines()]
    path = tmp_path / "musique.parquet"
    pq.write_table(pa.Table.from_pylist(mus), path)
    assert detect_format(path) == "musique"
    assert [d.title for d in ingest_paths([path]).documents] == ["Marrow River", "Tessel Hills"]


def test_paragraph_lists_deduplicate_by_title_and_text() -> None:
    result = ingest_paths([DATA / "paragraphs.json"])
    titles = [d.title for d in result.documents]
    assert titles == ["Brackwater", "Marrow River", "Brackwater", "Lake Orvin"]
    assert result.stats["paragraphs_merged"] == 1
    first, second = (d for d in result.documents if d.title == "Brackwater")
    assert first.doc_id == make_doc_id("paragraphs", "Brackwater")
    assert second.doc_id != first.doc_id


def test_musique_paragraphs() -> None:
    result = ingest_paths([DATA / "musique.jsonl"])
    assert [d.title for d in result.documents] == ["Marrow River", "Tessel Hills"]
    assert result.stats["paragraphs_merged"] == 1


def test_paragraph_corpora_get_links_by_title_mention() -> None:
    result = ingest_paths([DATA / "paragraphs.json"])
    docs = result.documents
    marrow = next(d for d in docs if d.title == "Marrow River")
    assert link_titles(marrow, docs) == {"Lake Orvin"}  # "Brackwater" is ambiguous: two docs
    assert result.stats["mention_links"]["skipped"]["ambiguous"] == 1
    assert result.stats["mention_links"]["links_added"] == result.stats["links"]
    unlinked = ingest_paths([DATA / "paragraphs.json"], mention_links="never")
    assert unlinked.stats["links"] == 0


def test_folder_of_text_markdown_and_html() -> None:
    result = ingest_paths([DATA / "site"])
    docs = by_title(result.documents)
    assert set(docs) == {"Calden Handbook", "Mount Fendle", "Lake Orvin", "hills and valleys"}
    home = docs["Calden Handbook"]
    assert "var hidden" not in home.text and "color: red" not in home.text
    assert "First item & more" in home.text
    assert link_titles(home, result.documents) == {"Mount Fendle", "Lake Orvin"}  # not the external
    assert link_titles(docs["Mount Fendle"], result.documents) == {"Calden Handbook"}
    assert link_titles(docs["Lake Orvin"], result.documents) == {
        "Calden Handbook",
        "hills and valleys",
    }
    assert home.doc_id == make_doc_id("site", "index.html")
    refs = result.stats["references"]
    assert refs["unresolved_top"] == [["guide/missing.html", 1]]


def test_mediawiki_dump_links_redirects_and_namespaces() -> None:
    result = ingest_paths([DATA / "wiki_dump.xml"])
    docs = by_title(result.documents)
    assert set(docs) == {"Mount Fendle", "Tessel Hills", "Ilse Varro"}  # no talk page, no redirects
    fendle = docs["Mount Fendle"]
    assert fendle.url == "https://calden.example.org/wiki/Mount_Fendle"
    assert "Infobox" not in fendle.text and "Category" not in fendle.text
    assert "Survey of Calden" not in fendle.text  # <ref> dropped
    assert "cartographer Varro" in fendle.text
    assert docs["Ilse Varro"].text.startswith("Ilse Varro (1810–1871) was a cartographer")
    assert docs["Tessel Hills"].aliases == ("Fendle Range",)
    assert docs["Ilse Varro"].aliases == ("Varro",)
    assert link_titles(fendle, result.documents) == {"Tessel Hills", "Ilse Varro"}
    # [[Fendle Range]] is a redirect: it resolves through the alias to Tessel Hills.
    assert link_titles(docs["Ilse Varro"], result.documents) == {"Tessel Hills"}
    assert result.stats["problems"]["empty"] == 1  # the {{stub}}-only page


def test_several_sources_in_one_run_keep_their_own_ids() -> None:
    result = ingest_paths([DATA / "calden", DATA / "docs.jsonl"])
    sources = {d.source for d in result.documents}
    assert sources == {"calden", "docs"}
    assert result.stats["sources"] == {"calden": 4, "docs": 5}
    # Mount Fendle exists in both; ids differ because the source is part of the id.
    fendles = [d for d in result.documents if d.title == "Mount Fendle"]
    assert len({d.doc_id for d in fendles}) == 2


def test_doc_ids_are_stable_across_runs() -> None:
    paths = [DATA / "calden", DATA / "docs.jsonl", DATA / "paragraphs.json", DATA / "site"]
    first = ingest_paths(paths).documents
    second = ingest_paths(paths).documents
    assert first == second
    assert [d.doc_id for d in first] == [d.doc_id for d in second]


def test_explicit_format_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "corpus.data"
    path.write_text('{"title": "Alpha", "text": "First."}\n', encoding="utf-8")
    assert [d.title for d in ingest_paths([path], fmt="jsonl").documents] == ["Alpha"]
    assert [d.title for d in ingest_paths([path], fmt="paragraphs").documents] == ["Alpha"]
