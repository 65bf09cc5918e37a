"""MediaWiki XML dumps (mwxml + mwparserfromhell) as documents.

Article pages (namespace 0, latest revision) become documents with wikitext turned into plain
text; `[[wikilinks]]` become links and redirect pages become aliases of their targets.
References, categories, files and interwiki links are left out of the text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import mwparserfromhell
import mwxml
from hopforge.corpus.problems import IngestError, Problems, where
from hopforge.corpus.rawdocs import RawDoc, name_key
from hopforge.corpus.textio import open_binary
from mwparserfromhell.parser import ParserError

_REDIRECT = re.compile(r"^\s*#REDIRECT\s*:?\s*\[\[([^\]|#]+)", re.IGNORECASE)
_DROP_TAGS = frozenset(("ref", "references", "gallery", "math", "timeline", "score"))
_NON_ARTICLE = frozenset(("file", "image", "media", "category"))
_MAX_REDIRECT_HOPS = 5


def link_target(title: str) -> str:
    """A wikilink's target page title: section dropped, underscores as spaces."""
    return " ".join(title.split("#", 1)[0].replace("_", " ").split())


def wikitext_to_text(wikitext: str, skip_prefixes: frozenset[str]) -> tuple[str, list[str]]:
    """(plain text, link targets) of a page's wikitext."""
    code = mwparserfromhell.parse(wikitext)
    for tag in code.filter_tags():
        if str(tag.tag).strip().lower() in _DROP_TAGS:
            try:
                code.remove(tag)
            except ValueError:
                pass  # already gone with an enclosing node
    targets = []
    for link in code.filter_wikilinks():
        target = link_target(str(link.title))
        prefix = target.split(":", 1)[0].strip().lower() if ":" in target else ""
        if prefix in skip_prefixes or target.startswith(":"):
            try:
                code.remove(link)
            except ValueError:
                pass
        elif target:
            targets.append(target)
    text = code.strip_code(normalize=True, collapse=True)
    lines = (" ".join(ln.split()) for ln in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip(), targets


def _page_url(base: str | None, title: str) -> str:
    if not base or "/" not in base:
        return ""
    return base.rsplit("/", 1)[0] + "/" + quote(title.replace(" ", "_"))


def read_mediawiki(path: Path, *, source: str, problems: Problems) -> Iterator[RawDoc]:
    """Article pages of a MediaWiki XML dump (plain, .gz, .bz2, .xz or .zst)."""
    pages: list[tuple[str, str, list[str], str]] = []
    redirects: dict[str, str] = {}
    with open_binary(path) as fh:
        try:
            dump = mwxml.Dump.from_file(fh)
        except (ET.ParseError, mwxml.errors.MalformedXML, AssertionError) as exc:
            raise IngestError(
                f"{path}: not a MediaWiki XML dump ({exc or 'no <mediawiki> root'}). "
                "Export one with Special:Export or use a pages-articles dump."
            ) from exc
        skip = _NON_ARTICLE | {
            ns.name.lower() for ns in (dump.site_info.namespaces or []) if ns.id != 0 and ns.name
        }
        base = dump.site_info.base
        try:
            for page in dump:
                at = f"{where(path)}: page {page.id} '{page.title}'"
                wikitext = ""
                for revision in page:
                    wikitext = revision.text or ""
                if page.namespace != 0:
                    continue
                m = _REDIRECT.match(wikitext)
                target = page.redirect or (m.group(1) if m else None)
                if target:
                    redirects[page.title] = link_target(target)
                    continue
                try:
                    text, links = wikitext_to_text(wikitext, skip)
                except ParserError as exc:
                    problems.malformed(at, f"wikitext could not be parsed ({exc})")
                    continue
                pages.append((page.title, text, links, at))
        except (ET.ParseError, mwxml.errors.MalformedXML) as exc:
            line = getattr(exc, "position", (None,))[0]
            problems.malformed(
                where(path, line),
                f"invalid dump XML ({exc}); pages after this point could not be read",
                "Check that the dump is complete (an interrupted download ends mid-page).",
            )
    aliases: dict[str, list[str]] = {}
    titles = {name_key(t) for t, *_ in pages}
    for alias, target in redirects.items():
        for _ in range(_MAX_REDIRECT_HOPS):  # follow double redirects
            if name_key(target) in titles or target not in redirects:
                break
            target = redirects[target]
        aliases.setdefault(name_key(target), []).append(alias)
    for title, text, links, at in pages:
        yield RawDoc(
            source=source,
            key=title,
            title=title,
            text=text,
            at=at,
            url=_page_url(base, title),
            aliases=tuple(aliases.get(name_key(title), ())),
            refs=tuple(links),
        )
