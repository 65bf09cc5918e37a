"""A folder of .txt / .md / .html files (or one such file) as documents.

HTML becomes text (scripts and styles dropped, blocks on their own lines); its title is the
`<title>` or first `<h1>`. A Markdown title is its first `# heading`; a text file's title is its
file name. Links (`<a href>`, Markdown `[text](target)`) to another file of the folder become links.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hopforge.corpus.problems import Problems, where
from hopforge.corpus.rawdocs import RawDoc
from hopforge.corpus.textio import read_text

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
_BLOCK_TAGS = """address article aside blockquote br dd div dl dt figcaption figure footer form
h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul"""
_BLOCKS = frozenset(_BLOCK_TAGS.split())
_SKIP = frozenset(("script", "style", "noscript", "template", "svg"))
_MD_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_MD_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SPACES = re.compile(r"[ \t\r\f\v]+")


class _HtmlText(HTMLParser):
    """Collects visible text, the title, the first h1 and hrefs of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hrefs: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skip = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)
        if tag in ("title", "h1"):
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self._skip:
            self._skip -= 1
        elif tag in _BLOCKS:
            self.parts.append("\n")
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if "title" in self._in:
            self.title += data
            return
        if "h1" in self._in and not self.h1.endswith("\n"):
            self.h1 += data
        self.parts.append(data)

    def text(self) -> str:
        lines = (_SPACES.sub(" ", ln).strip() for ln in "".join(self.parts).split("\n"))
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(html: str) -> tuple[str, str, list[str]]:
    """(title, text, hrefs) of an HTML page; the title is <title> or the first <h1>."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    title = " ".join((parser.title or parser.h1).split())
    return title, parser.text(), parser.hrefs


def markdown_to_text(md: str) -> tuple[str, str, list[str]]:
    """(title, text, link targets) of a Markdown file; links keep their text, images drop."""
    m = _MD_HEADING.search(md)
    targets = [t for bang, _, t in _MD_LINK.findall(md) if not bang]
    text = _MD_LINK.sub(lambda m: "" if m.group(1) else m.group(2), md)
    return (m.group(1).strip() if m else ""), text.strip(), targets


def local_target(href: str, key: str) -> str | None:
    """The folder-relative path `href` points to from the file `key`, or None if external."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(key), unquote(parts.path)))
    return None if joined.startswith("..") else joined


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


def read_folder(path: Path, *, source: str, problems: Problems) -> Iterator[RawDoc]:
    """Documents of the text, Markdown and HTML files under `path` (or of the one file `path`)."""
    root = path.parent if path.is_file() else path
    for file in _files(path):
        key = file.relative_to(root).as_posix()
        content = read_text(file, problems)
        suffix = file.suffix.lower()
        if suffix in (".html", ".htm"):
            title, text, hrefs = html_to_text(content)
        elif suffix in (".md", ".markdown"):
            title, text, hrefs = markdown_to_text(content)
        else:
            title, text, hrefs = "", content.strip(), []
        targets = [t for t in (local_target(h, key) for h in hrefs) if t and t != key]
        yield RawDoc(
            source=source,
            key=key,
            title=title or file.stem.replace("_", " "),
            text=text,
            at=where(file),
            refs=tuple(dict.fromkeys(targets)),
        )
