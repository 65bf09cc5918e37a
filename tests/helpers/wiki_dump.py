"""A MediaWiki XML export written from dictd entries (FOLDOC from Debian's dict-foldoc).

Each entry becomes an article whose cross references are `[[wikilinks]]` (a reference whose
words differ from the target's title is written `[[target|words]]`); each extra headword becomes
a redirect page to its entry. The result is a dump of thousands of real pages with real links to
check the `mediawiki` reader against the `dictd` reader of the same entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from hopforge.corpus.rawdocs import RawDoc

_HEAD = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>FOLDOC</sitename>
    <dbname>foldoc</dbname>
    <base>https://foldoc.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.39</generator>
    <case>case-sensitive</case>
    <namespaces>
      <namespace key="0" case="case-sensitive" />
      <namespace key="14" case="case-sensitive">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def _page(page_id: int, title: str, wikitext: str, redirect: str = "") -> str:
    red = f"\n    <redirect title={quoteattr(redirect)} />" if redirect else ""
    return f"""  <page>
    <title>{escape(title)}</title>
    <ns>0</ns>
    <id>{page_id}</id>{red}
    <revision>
      <id>{page_id}</id>
      <timestamp>2023-01-19T00:00:00Z</timestamp>
      <contributor><username>foldoc</username><id>1</id></contributor>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text xml:space="preserve">{escape(wikitext)}</text>
    </revision>
  </page>
"""


def wikitext(raw: RawDoc) -> str:
    """The entry's text with each of its references turned into a wikilink where it is written."""
    text, done = raw.text, set()
    for ref in raw.refs:
        if ref in done or any(c in ref for c in "[]|{}<>#"):
            continue
        at = text.find(ref)
        if at < 0:
            continue
        done.add(ref)
        text = f"{text[:at]}[[{ref}]]{text[at + len(ref) :]}"
    return text


def write_dump(raws: Sequence[RawDoc], path: Path) -> tuple[int, int]:
    """Write the export; returns (articles, redirects)."""
    page_id = 0
    redirects = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(_HEAD)
        for raw in raws:
            page_id += 1
            out.write(_page(page_id, raw.title, wikitext(raw)))
        for raw in raws:
            for alias in raw.aliases:
                page_id += 1
                redirects += 1
                out.write(_page(page_id, alias, f"#REDIRECT [[{raw.title}]]", redirect=raw.title))
        out.write("</mediawiki>\n")
    return len(raws), redirects
