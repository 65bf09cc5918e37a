"""A folder of .txt / .md / .html files (or one such file) as documents.

HTML pages give their main content (`hopforge.corpus.html_main`: no navigation, sidebars or
footers), their `<title>` without the site's name, and the links inside the main content with
their anchor text. A Markdown title is its first `# heading`; its `[text](target)` and
`[text][label]` links to other files are links. A text file's title is its file name. The
folder is then read as a site (`hopforge.corpus.site`): generated pages are skipped, copies
merged, long pages split into sections.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from hopforge.corpus.html_main import Link, extract_page
from hopforge.corpus.problems import Problems, where
from hopforge.corpus.rawdocs import RawDoc
from hopforge.corpus.site import SitePage, local_target, site_docs
from hopforge.corpus.site_rules import generated_reason
from hopforge.corpus.textio import read_text

__all__ = ["SUFFIXES", "local_target", "markdown_to_text", "read_folder"]

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
_MD_LINK = re.compile(r"(!?)\[([^\]]*)\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
_MD_REF_LINK = re.compile(r"(!?)\[([^\]]+)\]\[([^\]]*)\]")
_MD_REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+[\"'(].*)?$", re.MULTILINE)
_MD_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def markdown_to_text(md: str) -> tuple[str, str, list[Link]]:
    """(title, text, links) of a Markdown file; links keep their text, images drop."""
    md = _FRONT_MATTER.sub("", md)
    definitions = {label.casefold(): url for label, url in _MD_REF_DEF.findall(md)}
    md = _MD_REF_DEF.sub("", md)
    links: list[Link] = []

    def inline(m: re.Match[str]) -> str:
        if m.group(1):
            return ""
        links.append(Link(href=m.group(3), text=m.group(2)))
        return m.group(2)

    def by_label(m: re.Match[str]) -> str:
        if m.group(1):
            return ""
        url = definitions.get((m.group(3) or m.group(2)).casefold())
        if url:
            links.append(Link(href=url, text=m.group(2)))
        return m.group(2)

    text = _MD_REF_LINK.sub(by_label, _MD_LINK.sub(inline, md))
    heading = _MD_HEADING.search(text)
    return (heading.group(1).strip() if heading else ""), text.strip(), links


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def read_page(file: Path, key: str, problems: Problems) -> SitePage:
    """One file of the folder as a page: its title, main text and links."""
    if generated_reason(key):  # skipped by `site_docs` without being read
        return SitePage(key=key, at=where(file), title="", lead="")
    content = read_text(file, problems)
    suffix = file.suffix.lower()
    fallback = file.stem.replace("_", " ")
    if suffix in (".html", ".htm"):
        page = extract_page(content)
        return SitePage(
            key=key,
            at=where(file),
            title=page.title or fallback,
            lead=page.lead,
            links=page.lead_links,
            sections=page.sections,
            redirect=page.redirect,
            html=True,
        )
    if suffix in (".md", ".markdown"):
        title, text, links = markdown_to_text(content)
        return SitePage(
            key=key, at=where(file), title=title or fallback, lead=text, links=tuple(links)
        )
    return SitePage(key=key, at=where(file), title=fallback, lead=content.strip())


def read_folder(path: Path, *, source: str, problems: Problems) -> Iterator[RawDoc]:
    """Documents of the text, Markdown and HTML files under `path` (or of the one file `path`)."""
    root = path.parent if path.is_file() else path
    pages = [read_page(f, f.relative_to(root).as_posix(), problems) for f in _files(path)]
    yield from site_docs(pages, source=source, problems=problems)
