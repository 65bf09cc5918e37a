"""Documentation sites from Debian's packages read as a user would point hopforge at them.

Sphinx (attrs), MkDocs (MkDocs' own manual), Doxygen (JsonCpp) and Javadoc (Commons Lang):
generated pages and source copies are skipped and counted, titles lose the site's name, the text
is the page's main content (no navigation or footers), links carry their anchor text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hopforge.corpus.ingest import IngestResult, ingest_paths
from hopforge.corpus.records import Document
from hopforge.corpus.stats import boilerplate_line_share

from tests.helpers.debian_docs import debian_site

pytestmark = pytest.mark.slow


def _ingest(package: str, sub: str = "") -> IngestResult:
    root = debian_site(package)
    return ingest_paths([root / sub if sub else root], fmt="folder", source_name=package)


def _titles(result: IngestResult) -> dict[str, Document]:
    return {d.title: d for d in result.documents}


def _linked(doc: Document, docs: list[Document]) -> set[str]:
    by_id = {d.doc_id: d.title for d in docs}
    return {by_id[x] for x in doc.links}


def _common_checks(result: IngestResult) -> None:
    docs = result.documents
    titles = [d.title for d in docs]
    assert len(set(titles)) == len(titles), "every document has its own display title"
    assert boilerplate_line_share(docs) <= 0.02
    assert result.stats["boilerplate_line_share"] <= 0.02


@pytest.fixture(scope="module")
def attrs() -> IngestResult:
    return _ingest("python-attr-doc")


def test_sphinx_site_skips_generated_pages_and_source_copies(attrs: IngestResult) -> None:
    site = attrs.stats["site"]
    assert site["skipped"] == {"index": 1, "search": 1, "source_copy": 15}
    first = site["first"]["skipped.source_copy"]
    assert all("/_sources/" in at for at in first) and len(first) == 5
    keys = " ".join(d.title for d in attrs.documents)
    assert "Index" not in keys and "Search" not in keys


def test_sphinx_titles_lose_the_site_suffix_and_text_is_main_content(attrs: IngestResult) -> None:
    _common_checks(attrs)
    docs = _titles(attrs)
    assert "attrs by Example" in docs and "Why not…" in docs
    assert not any("attrs 22.2.0 documentation" in t for t in docs)
    text = "\n".join(d.text for d in attrs.documents)
    for chrome in ("Quick search", "Show Source", "©", "Powered by", "Table of Contents"):
        assert chrome not in text
    examples = docs["attrs by Example"]
    # a long page becomes its sections, each a document the page links to
    assert {"Basics", "Slots", "Immutability"} <= _linked(examples, attrs.documents)
    assert "from attrs import define, field" in docs["Basics"].text


def test_sphinx_links_carry_anchor_text_as_aliases(attrs: IngestResult) -> None:
    docs = _titles(attrs)
    # why.html links to the overview page with "data classes"-like words; API objects are named
    api = docs["API Reference"]
    assert "attrs.define" in api.aliases  # links written `attrs.define` point to it
    glossary = docs["Glossary"]
    assert glossary.links, "the glossary's links inside its main text are kept"


def test_same_title_sections_get_distinct_display_titles(attrs: IngestResult) -> None:
    docs = _titles(attrs)
    assert {"Validators (API Reference)", "Validators (Initialization)"} <= set(docs)
    assert attrs.stats["site"]["retitled"]["same_title"] >= 2


def test_mkdocs_site_redirects_and_error_page_skipped() -> None:
    result = _ingest("mkdocs-doc")
    _common_checks(result)
    assert result.stats["site"]["skipped"] == {"error_page": 1, "redirect": 3}
    docs = _titles(result)
    assert "Deploying Your Docs" in docs and "MkDocs" in docs
    text = "\n".join(d.text for d in result.documents)
    for chrome in ("Edit on GitHub", "Search MkDocs", "Built with MkDocs", "Next »"):
        assert chrome not in text
    lines = {ln.strip() for ln in text.splitlines()}
    assert not lines & {"« Previous", "Previous", "Next", "Table of contents"}
    assert "GitHub Pages" in docs["Deploying Your Docs"].text
    assert _linked(docs["Getting Started"], result.documents) & {
        "User Guide", "Writing Your Docs", "Configuration"
    }  # fmt: skip


def test_doxygen_site_keeps_class_pages_and_drops_member_lists() -> None:
    result = _ingest("libjsoncpp-doc")
    _common_checks(result)
    skipped = result.stats["site"]["skipped"]
    assert skipped["index"] >= 90 and skipped["source_copy"] == 15
    docs = _titles(result)
    value = docs["Json::Value Class Reference"]
    assert "Represents a JSON value" in value.text
    assert not any(t.endswith("Members") or "_source" in t for t in docs)
    reader = docs["Json::Reader Class Reference"]
    assert "Json::Value Class Reference" in _linked(reader, result.documents)
    assert "Json::Reader" in reader.aliases


@pytest.fixture(scope="module")
def javadoc() -> IngestResult:
    return _ingest("libcommons-lang3-java-doc")


def test_javadoc_site_drops_class_use_trees_sources_and_the_api_suffix(
        javadoc: IngestResult) -> None:
    result = javadoc
    _common_checks(result)
    skipped = result.stats["site"]["skipped"]
    assert skipped["source_copy"] == 223  # src-html/
    assert skipped["index"] == 264  # class-use/, trees, index-all, allclasses, ...
    docs = _titles(result)
    assert not any(t.endswith("(Apache Commons Lang 3.12.0 API)") for t in docs)
    assert {"Pair", "ImmutablePair", "MutableTriple", "Triple"} <= set(docs)
    pair = docs["Pair"]
    assert "A pair consisting of two elements" in pair.text
    assert "Skip navigation links" not in pair.text and "Overview" not in pair.text.splitlines()
    assert {"ImmutablePair", "MutablePair"} <= _linked(pair, result.documents)
    ranged = docs["Range"].text  # inline code inside a sentence keeps its spaces, not its break
    assert "implementations of Comparable or you need to supply a Comparator." in ranged


_READ_SITE = """
import json, sys
from hopforge.corpus.ingest import ingest_paths
docs = ingest_paths([sys.argv[1]], fmt="folder", source_name=sys.argv[2]).documents
json.dump([[d.doc_id, d.title, d.text, list(d.links), list(d.aliases)] for d in docs], sys.stdout)
"""


def test_a_site_reads_the_same_in_another_process(javadoc: IngestResult) -> None:
    """Reading HTML is a function of the files: another interpreter, with another hash seed and
    other memory addresses, gives the same documents (Javadoc's inline code once came out with
    or without its line breaks run to run)."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    root = debian_site("libcommons-lang3-java-doc")
    out = subprocess.run([sys.executable, "-c", _READ_SITE, str(root), "libcommons-lang3-java-doc"],
                         capture_output=True, text=True, check=True, env=env).stdout
    here = [[d.doc_id, d.title, d.text, list(d.links), list(d.aliases)] for d in javadoc.documents]
    there = json.loads(out)
    assert len(there) == len(here) == 247
    differ = [a[1] for a, b in zip(here, there, strict=True) if a != b]
    assert differ == []


def test_markdown_repository_links_between_md_files(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "---\ntitle: ignored front matter\n---\n# Harbour tools\n\nSee the [crane guide]"
        "(docs/crane.md#safety) and the [tide tables][tides].\n\n[tides]: docs/tides.md\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "crane.md").write_text(
        "# Crane guide\n\nBack to [Harbour tools](../README.md).\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "tides.md").write_text(
        "# Tide tables\n\nLow water follows the [Crane Manual](crane.md).\n", encoding="utf-8"
    )
    result = ingest_paths([tmp_path], source_name="harbour")
    docs = _titles(result)
    assert set(docs) == {"Harbour tools", "Crane guide", "Tide tables"}
    assert _linked(docs["Harbour tools"], result.documents) == {"Crane guide", "Tide tables"}
    assert "title: ignored" not in docs["Harbour tools"].text
    assert docs["Crane guide"].aliases == ("Crane Manual",)  # anchor text naming it
    assert docs["Tide tables"].aliases == ()  # its anchor text is its title


def test_section_numbers_leave_titles_and_links_into_a_page_alias_only_its_objects(
        tmp_path: Path) -> None:
    """A manual's "8.2. " is not part of the name texts use; a link into a page names the page
    only as an object documented there ("gc.collect()" at `#gc.collect`), not as the term or
    bare call the link text says (a glossary's "CPython", "enable()")."""
    (tmp_path / "while.md").write_text(
        "# 8.2. The while statement\n\nThe loop repeats. See [CPython](glossary.md#term-cpython)"
        " and [enable()](gc.md#gc.enable), or [gc.collect()](gc.md#gc.collect).\n",
        encoding="utf-8")
    (tmp_path / "glossary.md").write_text(
        "# Glossary\n\nCPython: the reference implementation of [while loops](while.md).\n",
        encoding="utf-8")
    (tmp_path / "gc.md").write_text(
        "# gc — Garbage Collector interface\n\ngc.enable() turns collection on; gc.collect() "
        "runs it.\n", encoding="utf-8")
    docs = _titles(ingest_paths([tmp_path], source_name="manual"))
    assert set(docs) == {"The while statement", "Glossary", "gc — Garbage Collector interface"}
    assert docs["Glossary"].aliases == ()
    assert docs["gc — Garbage Collector interface"].aliases == ("gc.collect()",)
    assert docs["The while statement"].aliases == ("while loops",)
