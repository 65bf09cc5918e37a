"""The mediawiki reader on a dump of 15,243 pages: FOLDOC (Debian's dict-foldoc) as a wiki.

tests/helpers/wiki_dump.py writes each of FOLDOC's 12,010 entries as an article with its cross
references as [[wikilinks]] and each of its 3,233 extra headwords as a redirect page. Read back
by the mediawiki reader, the articles, their aliases and their links must be the dictd reader's.
"""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest
from hopforge.corpus.dictd import read_dictd
from hopforge.corpus.ingest import detect_format, ingest_paths
from hopforge.corpus.problems import Problems

from tests.helpers.wiki_dump import write_dump

pytestmark = pytest.mark.slow


def test_foldoc_as_a_mediawiki_dump_reads_like_the_dictd_entries(
    shared_data: Path, tmp_path: Path
) -> None:
    foldoc = shared_data / "dictd" / "foldoc"
    raws = list(read_dictd(foldoc, source="foldoc", problems=Problems()))
    dump = tmp_path / "foldoc-pages-articles.xml.bz2"
    plain = tmp_path / "foldoc.xml"
    assert write_dump(raws, plain) == (12010, 3233)
    dump.write_bytes(bz2.compress(plain.read_bytes()))
    assert detect_format(dump) == "mediawiki"
    wiki = ingest_paths([dump], source_name="foldoc")
    entries = ingest_paths([foldoc], source_name="foldoc")
    assert wiki.stats["problems"]["malformed"] == 0
    assert len(wiki.documents) == len(entries.documents) == 12010
    by_title = {d.title: d for d in wiki.documents}
    expected = {d.title: d for d in entries.documents}
    # MediaWiki titles read underscores as spaces: "Shape_VC" is the page "Shape VC"
    missing = set(expected) - set(by_title)
    assert {t.replace("_", " ") for t in missing} <= set(by_title) and len(missing) == 8
    titles_w = {d.doc_id: d.title for d in wiki.documents}
    titles_d = {d.doc_id: d.title for d in entries.documents}
    shared = [t for t in by_title if t in expected]
    same_aliases = sum(set(by_title[t].aliases) == set(expected[t].aliases) for t in shared)
    assert same_aliases / len(shared) >= 0.99  # redirects became aliases
    links_kept = sum(
        {titles_w[x] for x in by_title[t].links} <= {titles_d[x] for x in expected[t].links}
        for t in shared
    )
    assert links_kept / len(shared) >= 0.99  # no link the entry does not make
    assert wiki.stats["links"] >= 0.95 * entries.stats["links"]
    fortran = by_title["Fortran"]
    assert "See also: Fortrash." in fortran.text and "[[" not in fortran.text
    assert "Fortrash" in {titles_w[x] for x in fortran.links}
    assert fortran.url == "https://foldoc.org/wiki/Fortran"
