"""A folder read as a site: generated pages skipped, copies merged, long pages split, titles told apart.

`site_docs` takes every page of a folder (HTML main content, Markdown, text) and yields the
documents a reader would cite. It skips generated pages (search, indexes, source copies, error
pages), redirects and navigation-only pages; merges pages whose text is a copy of another's;
removes lines that repeat on more than half of the pages (footers the extractor kept);
splits long pages into one document per section (titled by its heading, the page linking to
each section); removes the site's name from titles; and gives documents that share a title
distinct display titles. Each of these is counted by reason on `Problems.site_note`.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote, urlsplit

from hopforge.corpus.html_main import Link, Section, main_links, main_text
from hopforge.corpus.problems import Problems
from hopforge.corpus.rawdocs import RawDoc, name_key
from hopforge.corpus.site_rules import (
    context_label,
    generated_reason,
    names_page,
    strip_affixes,
    title_affixes,
    unnumbered,
)

SPLIT_CHARS = 12_000  # pages longer than this are split at their second-level headings
MIN_SECTION_CHARS = 200  # shorter sections stay in the page's lead
NAV_LINK_SHARE = 0.6  # a page whose main text is at least this share link text is navigation
NAV_MIN_LINKS = 8
MIN_PAGES_FOR_REPEATS = 8  # a site this large has lines on most pages only as boilerplate


@dataclass(frozen=True, slots=True, kw_only=True)
class SitePage:
    """One file of the folder as read: title as written, main text, links as written."""

    key: str
    at: str
    title: str
    lead: str
    links: tuple[Link, ...] = ()
    sections: tuple[Section, ...] = ()
    redirect: str = ""
    html: bool = False

    @property
    def text(self) -> str:
        return main_text(self.lead, self.sections)

    @property
    def all_links(self) -> tuple[Link, ...]:
        return main_links(self.links, self.sections)


def local_target(href: str, key: str) -> str | None:
    """The folder-relative path (with '#fragment' if any) `href` points to from `key`, or None."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or parts.path.startswith("/"):
        return None
    if not parts.path:
        return f"{key}#{unquote(parts.fragment)}" if parts.fragment else None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(key), unquote(parts.path)))
    if joined.startswith(".."):
        return None
    return f"{joined}#{unquote(parts.fragment)}" if parts.fragment else joined


def _link_share(page: SitePage) -> float:
    text = page.text
    if not text:
        return 0.0
    return min(1.0, sum(len(x.text) for x in page.all_links) / len(text))


def _navigation_only(page: SitePage) -> bool:
    return (
        page.html and len(page.all_links) >= NAV_MIN_LINKS and _link_share(page) >= NAV_LINK_SHARE
    )


def _fingerprint(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()


def _sort_pages(
    pages: Sequence[SitePage], problems: Problems
) -> tuple[list[SitePage], dict[str, str]]:
    """Pages kept, and key -> key of the page that stands for a skipped or merged one."""
    kept: list[SitePage] = []
    stands_for: dict[str, str] = {}
    first_with: dict[str, str] = {}
    for page in pages:
        reason = generated_reason(page.key)
        if reason:
            problems.site_note("skipped", reason, page.at)
            continue
        if page.redirect:
            target = local_target(page.redirect, page.key)
            if target:
                stands_for[page.key] = target.partition("#")[0]
            problems.site_note("skipped", "redirect", page.at)
            continue
        if _navigation_only(page):
            problems.site_note("skipped", "navigation", page.at)
            continue
        if page.text.strip():
            digest = _fingerprint(page.text)
            if digest in first_with:
                stands_for[page.key] = first_with[digest]
                problems.site_note(
                    "merged", "copy", f"{page.at} (same text as {first_with[digest]})"
                )
                continue
            first_with[digest] = page.key
        kept.append(page)
    return kept, stands_for


def _strip_repeated(pages: list[SitePage], problems: Problems) -> list[SitePage]:
    """Pages without the lines that repeat on more than half of the site's HTML pages.

    Footers the main-content extractor kept ("Generated on ... by doxygen") are such lines.
    """
    html = [p for p in pages if p.html]
    if len(html) < MIN_PAGES_FOR_REPEATS:
        return pages
    seen: Counter[str] = Counter()
    for page in html:
        seen.update({ln.strip() for ln in page.text.splitlines() if ln.strip()})
    common = {ln for ln, n in seen.items() if n > len(html) / 2}
    if not common:
        return pages
    for line in sorted(common):
        problems.site_note("stripped", "repeated_line", f"{line[:80]!r} on {seen[line]} pages")

    def keep(text: str) -> str:
        return "\n".join(ln for ln in text.splitlines() if ln.strip() not in common)

    return [
        replace(
            p,
            lead=keep(p.lead),
            sections=tuple(replace(s, text=keep(s.text)) for s in p.sections),
        )
        if p.html
        else p
        for p in pages
    ]


def _split(page: SitePage) -> list[tuple[str, str, str, tuple[Link, ...]]]:
    """(key, title, text, links) of the documents a page becomes."""
    whole = [(page.key, page.title, page.text, page.all_links)]
    if len(page.text) <= SPLIT_CHARS or len(page.sections) < 2:
        return whole
    lead, lead_links = page.lead, list(page.links)
    parts: list[tuple[str, str, str, tuple[Link, ...]]] = []
    for i, section in enumerate(page.sections, 1):
        if len(section.text) < MIN_SECTION_CHARS:
            lead += f"\n\n{section.heading}\n{section.text}"
            lead_links += section.links
            continue
        key = f"{page.key}#{section.anchor or f'section-{i}'}"
        parts.append((key, section.heading, section.text, section.links))
    if len(parts) < 2:
        return whole
    contents = "\n".join(f"- {title}" for _, title, _, _ in parts)
    lead = f"{lead.strip()}\n\nSections:\n{contents}".strip()
    own = tuple(Link(href="#" + k.partition("#")[2], text=t) for k, t, _, _ in parts)
    return [(page.key, page.title, lead, tuple(lead_links) + own), *parts]


def _resolve(ref: str, stands_for: dict[str, str], keys: set[str]) -> str | None:
    path, _, fragment = ref.partition("#")
    path = stands_for.get(path, path)
    if fragment and f"{path}#{fragment}" in keys:
        return f"{path}#{fragment}"
    return path if path in keys else None


def site_docs(pages: Sequence[SitePage], *, source: str, problems: Problems) -> Iterator[RawDoc]:
    """The documents of a folder's pages (see the module docstring)."""
    kept, stands_for = _sort_pages(pages, problems)
    kept = _strip_repeated(kept, problems)
    prefix, suffix = title_affixes([p.title for p in kept if p.html])
    docs: list[tuple[SitePage, str, str, str, tuple[Link, ...]]] = []
    for page in kept:
        if page.html:
            page = replace(page, title=strip_affixes(page.title, prefix, suffix))
        parts = _split(page)
        if len(parts) > 1:
            problems.site_note("split", "sections", f"{page.at} ({len(parts) - 1} sections)")
        docs.extend((page, k, unnumbered(t), x, links) for k, t, x, links in parts)
    keys = {k for _, k, _, _, _ in docs}
    skipped_keys = {p.key for p in pages} - keys - set(stands_for)
    titles = _display_titles([(page, key, title) for page, key, title, _, _ in docs], problems)
    for page, key, _, text, links in docs:
        refs: dict[str, str] = {}
        for link in links:
            target = local_target(link.href, page.key)
            if target is None:
                continue
            if target.partition("#")[0] in skipped_keys:
                problems.site_note("dropped_link", "to_skipped_page", page.at)
                continue
            resolved = _resolve(target, stands_for, keys) or target.partition("#")[0]
            if resolved == key:
                continue
            # a link into a page names the page only as its own object ("os.getcwd()")
            into = "#" in target and "#" not in resolved and resolved in titles
            anchor = link.text
            if into and not names_page(anchor, titles[resolved], target.partition("#")[2]):
                anchor = ""
            if not refs.get(resolved):
                refs[resolved] = anchor
        yield RawDoc(
            source=source,
            key=key,
            title=titles[key],
            text=text,
            at=page.at if "#" not in key else f"{page.at}#{key.partition('#')[2]}",
            refs=tuple(refs),
            anchors=tuple(refs.values()),
        )


def _display_titles(
    docs: Sequence[tuple[SitePage, str, str]], problems: Problems
) -> dict[str, str]:
    """key -> title, made distinct where several documents share one ("Index (c-api)")."""
    by_name: dict[str, list[tuple[SitePage, str, str]]] = defaultdict(list)
    for page, key, title in docs:
        by_name[name_key(title)].append((page, key, title))
    out: dict[str, str] = {}
    for group in by_name.values():
        if len(group) == 1:
            page, key, title = group[0]
            out[key] = title
            continue
        for page, key, title in group:
            label = page.title if "#" in key else context_label(page.key)
            out[key] = f"{title} ({label})"
            problems.site_note("retitled", "same_title", f"{page.at}: {out[key]}")
        labels = [out[k] for _, k, _ in group]
        if len(set(map(name_key, labels))) < len(labels):
            for _, key, title in group:
                out[key] = f"{title} ({key})"
    return out
