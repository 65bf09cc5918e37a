"""The main content of an HTML page: its text, title, headings and the links inside it.

trafilatura finds the main content (navigation, breadcrumbs, sidebars, footers, "previous /
next" and "edit this page" are left out) and gives it as XML; this module turns that XML into
blocks of text, the links with their anchor text, and the second-level headings a long page can
be split at. The title is the page's `<title>` (the site's shared prefix or suffix is removed
later, by `hopforge.corpus.site`), else its first main heading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import lxml.etree
import lxml.html

# Marks that documentation generators put on headings and definitions as permalinks.
_PERMALINK = frozenset(("¶", "#", "§", "🔗", "∞", "◆", "link", "permalink"))
_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\";]+)", re.IGNORECASE)
_BLOCKS = frozenset(("p", "head", "item", "quote", "row", "list", "table", "lb"))
_SPACES = re.compile(r"[ \t\r\f\v]+")
_CODE = "\x02"  # marks the start and the end of a code block in the walker's text
# Line breaks and spaces of <pre> blocks, kept through trafilatura's whitespace trimming
_NL, _SP = "\u2424", "\u2423"  # ␤ and ␣: printable, so trafilatura keeps them


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """A link inside the main content: its target as written and its anchor text."""

    href: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """Text under one second-level heading; `anchor` is the heading's in-page id ('' if none)."""

    heading: str
    anchor: str
    text: str
    links: tuple[Link, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """The main content of one page; `lead` is the text before the first section heading."""

    title: str
    heading: str  # the first main heading, '' when there is none
    lead: str
    lead_links: tuple[Link, ...] = ()
    sections: tuple[Section, ...] = ()
    redirect: str = ""  # the target of a meta-refresh page, '' otherwise

    @property
    def text(self) -> str:
        """The whole main text, sections included."""
        return main_text(self.lead, self.sections)

    @property
    def links(self) -> tuple[Link, ...]:
        """Every link of the main content, in page order."""
        return main_links(self.lead_links, self.sections)


def main_text(lead: str, sections: Sequence[Section]) -> str:
    """A page's whole main text: its lead, then each section's heading over its text."""
    parts = [lead] + [f"{s.heading}\n{s.text}".strip() for s in sections]
    return "\n\n".join(p for p in parts if p)


def main_links(lead_links: tuple[Link, ...], sections: Sequence[Section]) -> tuple[Link, ...]:
    """Every link of a page's main content in page order: the lead's, then each section's."""
    return lead_links + tuple(x for s in sections for x in s.links)


@lru_cache(maxsize=1)
def _config() -> Any:
    from trafilatura.settings import use_config  # loaded only when HTML is read

    config = use_config()
    # Documentation pages are often short; keep what little main text they have. Below 50 the
    # extractor drops the first words of some Javadoc descriptions; at 250 (its default) a short
    # page falls back to a plain-text baseline without links. 100 keeps both (tests on Debian's
    # documentation sets).
    config["DEFAULT"]["MIN_EXTRACTED_SIZE"] = "100"
    config["DEFAULT"]["MIN_OUTPUT_SIZE"] = "1"
    config["DEFAULT"]["EXTRACTION_TIMEOUT"] = "0"
    return config


def _clean(text: str) -> str:
    """Spaces collapsed and lines trimmed, except in code blocks (between _CODE marks)."""
    out = []
    for i, part in enumerate(text.split(_CODE)):
        if i % 2:  # a code block keeps its indentation
            out.append("\n".join(ln.rstrip() for ln in part.strip("\n").split("\n")))
        else:
            part = _unmark(part)
            out.append("\n".join(_SPACES.sub(" ", ln).strip() for ln in part.split("\n")))
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


def _head_info(root: lxml.html.HtmlElement) -> tuple[str, str]:
    """(<title> text, meta-refresh target) of a parsed page."""
    title = _first_text(root, "(//*[local-name()='title'])[1]")
    for meta in root.xpath("//*[local-name()='meta'][@http-equiv]"):
        if str(meta.get("http-equiv", "")).lower() == "refresh":
            m = _REFRESH.search(meta.get("content") or "")
            if m:
                return title, m.group(1).strip()
    return title, ""


def _first_text(root: lxml.html.HtmlElement, xpath: str) -> str:
    return " ".join(" ".join(root.xpath(f"{xpath}//text()")).split())


def _body_heading(root: lxml.html.HtmlElement) -> str:
    """The page's first <h1>, or Doxygen's title block, for pages without a <title>."""
    return _first_text(root, "(//*[local-name()='h1'])[1]") or _first_text(
        root, "(//*[local-name()='div'][contains(concat(' ', @class, ' '), ' title ')])[1]"
    )


def _is_permalink(elem: Any) -> bool:
    text = _unmark("".join(elem.itertext())).strip()
    return not text or text.lower() in _PERMALINK


class _Walker:
    """Turns trafilatura's XML into text blocks and links, cut at second-level headings."""

    def __init__(self) -> None:
        self.heading = ""
        self.chunks: list[tuple[str, str, list[str], list[Link]]] = [("", "", [], [])]

    def walk(self, elem: Any, depth: int = 0) -> None:
        tag = elem.tag
        if tag == "head":
            text = _head_text(elem)
            in_page = [r for r in elem.iter("ref") if r.get("target", "").startswith("#")]
            own = [r for r in in_page if _is_permalink(r)] or in_page
            anchor = own[0].get("target", "")[1:] if own else ""
            rend = elem.get("rend", "")
            if rend == "h1" and not self.heading:
                self.heading = text
                return
            if rend == "h2" and text and depth == 0:
                self.chunks.append((text, anchor, [], []))
                return
            if not text:
                return
            self.chunks[-1][2].append(f"\n{text}\n")
            if elem.tail:
                self.chunks[-1][2].append(_unmark(elem.tail))
            return
        if tag == "ref" and not _is_permalink(elem) and elem.get("target"):
            self.chunks[-1][3].append(
                Link(
                    href=elem.get("target", ""),
                    text=" ".join(_unmark("".join(elem.itertext())).split()),
                )
            )
        if _NL in (elem.text or "") or (
            tag in ("code", "quote") and _NL in "".join(elem.itertext())
        ):
            self._code_block(elem)
            return
        block = tag in _BLOCKS
        if block:
            self.chunks[-1][2].append("\n")
        elif tag == "cell":
            self.chunks[-1][2].append(" ")
        if elem.text and not (tag == "ref" and _is_permalink(elem)):
            self.chunks[-1][2].append(_unmark(elem.text))
        for child in elem:
            self.walk(child, depth + 1)
        if block:
            self.chunks[-1][2].append("\n")
        if elem.tail:
            self.chunks[-1][2].append(_unmark(elem.tail))

    def _code_block(self, elem: Any) -> None:
        for ref in elem.iter("ref"):
            if not _is_permalink(ref) and ref.get("target"):
                text = " ".join(_unmark("".join(ref.itertext())).split())
                self.chunks[-1][3].append(Link(href=ref.get("target", ""), text=text))
        code = _unmark("".join(elem.itertext()).replace(_CODE, ""))
        self.chunks[-1][2].append(f"\n{_CODE}{code}{_CODE}\n")
        if elem.tail:
            self.chunks[-1][2].append(_unmark(elem.tail))


def _unmark(text: str) -> str:
    return text.replace(_NL, "\n").replace(_SP, " ")


def _prepare(root: lxml.html.HtmlElement) -> None:
    """Mark spaces that extraction would trim: the line breaks and spaces of <pre> blocks, the
    space after each cell-like block (Javadoc's summary tables are rows of <div>s) and the
    spaces around inline elements ("by <code>operand</code>")."""
    for cell in root.iter("div", "td", "th", "dt", "dd", "li"):
        cell.tail = _SP + (cell.tail or "")
    # Membership by ancestry, not by id(): lxml makes element proxies on demand and frees
    # them, so an id taken from one proxy may later belong to another element.
    for inline in root.iter("code", "a", "em", "strong", "span", "tt", "var", "b", "i"):
        if next(inline.iterancestors("pre"), None) is not None:
            continue
        if inline.tail and inline.tail[0] in " \n\t":
            inline.tail = _SP + inline.tail.lstrip()
        before = inline.getprevious()
        if before is not None and before.tail and before.tail[-1] in " \n\t":
            before.tail = before.tail.rstrip() + _SP
        elif before is None and inline.getparent() is not None:
            parent = inline.getparent()
            if parent.text and parent.text[-1] in " \n\t":
                parent.text = parent.text.rstrip() + _SP
    for pre in root.iter("pre"):
        for node in pre.iter():
            if node is not pre and node.tail:
                node.tail = node.tail.replace("\n", _NL).replace(" ", _SP)
            if isinstance(node.tag, str) and node.text:
                node.text = node.text.replace("\n", _NL).replace(" ", _SP)


def _head_text(elem: Any) -> str:
    parts = [elem.text or ""]
    for child in elem:
        if not (child.tag == "ref" and _is_permalink(child)):
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return " ".join(_unmark("".join(parts)).split())


def extract_page(html: str) -> Page:
    """The main content of an HTML page (see the module docstring)."""
    try:
        root = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return Page(title="", heading="", lead="")
    title, redirect = _head_info(root)
    _prepare(root)
    import trafilatura

    xml = trafilatura.extract(
        root,
        output_format="xml",
        include_links=True,
        include_tables=True,
        include_comments=False,
        include_images=False,
        favor_recall=True,
        with_metadata=False,
        deduplicate=False,
        config=_config(),
    )
    if not xml:
        return Page(title=title or _body_heading(root), heading="", lead="", redirect=redirect)
    main = lxml.etree.fromstring(xml.encode("utf-8")).find("main")
    walker = _Walker()
    for child in main if main is not None else ():
        walker.walk(child)
    lead_text, lead_links = _clean("".join(walker.chunks[0][2])), walker.chunks[0][3]
    sections = tuple(
        Section(heading=h, anchor=a, text=_clean("".join(parts)), links=tuple(links))
        for h, a, parts, links in walker.chunks[1:]
    )
    return Page(
        title=title or walker.heading or _body_heading(root),
        heading=walker.heading,
        lead=lead_text,
        lead_links=tuple(lead_links),
        sections=sections,
        redirect=redirect,
    )
