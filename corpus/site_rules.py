"""What documentation generators write besides pages: indexes, search pages, source copies.

Sphinx, MkDocs, Javadoc, rustdoc and Doxygen each write pages that are not documents a reader
would cite: the search page, general and module indexes, member and class lists, and copies of
the sources. `generated_reason` names them by path; `title_affixes` finds the site name that
every page's `<title>` carries ("... — Python 3.11.2 documentation", "JsonCpp: ...").
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Sequence

# (reason, pattern on the folder-relative path); the first match names the reason.
_GENERATED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern))
    for reason, pattern in (
        # copies of the sources: Sphinx _sources/ and _modules/ (viewcode), Javadoc src-html/,
        # rustdoc src/, Doxygen's highlighted *_source.html
        ("source_copy", r"(^|/)(_sources|_modules|src-html)/"),
        ("source_copy", r"(^|/)src/.*\.rs\.html$"),
        ("source_copy", r"_source\.html?$"),
        # notices of bundled scripts (Javadoc legal/)
        ("bundled_notice", r"(^|/)legal/"),
        # search pages
        ("search", r"(^|/)search(\.html?|/)"),
        ("search", r"(^|/)search-index\.js$"),
        # general, module and class indexes
        ("index", r"(^|/)(genindex|[a-z]+-modindex|modindex)(-[^/]*)?\.html?$"),
        (
            "index",
            r"(^|/)(index-all|allclasses(-index|-frame|-noframe)?|allpackages-index)\.html?$",
        ),
        ("index", r"(^|/)index-files/"),
        ("index", r"(^|/)(class-use|implementors)/"),
        ("index", r"(^|/)(overview|package)-(tree|use|frame)\.html?$"),
        ("index", r"(^|/)(deprecated-list|constant-values|help-doc|all)\.html?$"),
        # Doxygen's lists of files, classes and members
        (
            "index",
            r"(^|/)(files|annotated|classes|hierarchy|inherits|namespaces|pages|modules)\.html?$",
        ),
        ("index", r"(^|/)(globals|functions|namespacemembers)(_[^/]*)?\.html?$"),
        ("index", r"-members\.html?$"),
        ("index", r"(^|/)(dir_[0-9a-f]+|graph_legend)\.html?$"),
        # error pages
        ("error_page", r"(^|/)(404|50[0-9])\.html?$"),
    )
)
# Between a page's own title and the site's name.
_SEPARATORS = (" — ", " – ", " | ", " - ", " :: ", ": ", " · ", " » ")
_PAREN_SUFFIX = re.compile(r"\s*\([^()]*\)$")


def generated_reason(key: str) -> str:
    """Why the page at folder-relative path `key` is generated ('' when it is a page to keep)."""
    for reason, pattern in _GENERATED:
        if pattern.search(key):
            return reason
    return ""


def _affix_candidates(title: str) -> tuple[set[str], set[str]]:
    prefixes, suffixes = set(), set()
    for sep in _SEPARATORS:
        start = title.find(sep)
        while start > 0:
            prefixes.add(title[: start + len(sep)])
            suffixes.add(title[start:])
            start = title.find(sep, start + 1)
    m = _PAREN_SUFFIX.search(title)
    if m and m.start() > 0:
        suffixes.add(m.group(0))
    return prefixes, suffixes


def title_affixes(titles: Sequence[str]) -> tuple[str, str]:
    """(prefix, suffix) that more than half of the titles share, '' when none does.

    The longest one wins: "Json::Value Class Reference - JsonCpp docs" and the rest share
    " - JsonCpp docs"; a site of one page has no affix.
    """
    if len(titles) < 2:
        return "", ""
    prefix_count: Counter[str] = Counter()
    suffix_count: Counter[str] = Counter()
    for title in set(titles):
        prefixes, suffixes = _affix_candidates(title)
        prefix_count.update(prefixes)
        suffix_count.update(suffixes)
    need = len(set(titles)) / 2
    prefix = max((p for p, n in prefix_count.items() if n > need), key=len, default="")
    suffix = max((s for s, n in suffix_count.items() if n > need), key=len, default="")
    return prefix, suffix


def strip_affixes(title: str, prefix: str, suffix: str) -> str:
    """`title` without the site's prefix and suffix (kept whole when nothing would be left)."""
    out = title
    if prefix and out.startswith(prefix) and len(out) > len(prefix):
        out = out[len(prefix) :]
    if suffix and out.endswith(suffix) and len(out) > len(suffix):
        out = out[: -len(suffix)]
    return out.strip() or title


def context_label(key: str) -> str:
    """A short label for where a page sits, to tell same-title pages apart ('library/os')."""
    folder = posixpath.dirname(key)
    stem = posixpath.splitext(posixpath.basename(key))[0]
    if stem in ("index", "README", "readme"):
        return folder or stem
    return posixpath.join(folder, stem) if folder else stem


_NUMBERING = re.compile(r"^\d+(?:\.\d+)*\.\s+(?=\S)")  # "8.2. ", as a table of contents numbers
_OBJECT = re.compile(r"[A-Za-z_][\w.]*")


def unnumbered(title: str) -> str:
    """`title` without the section number a generated manual puts before it ("8.2. The while
    statement" -> "The while statement"): texts that refer to the section do not write it."""
    return _NUMBERING.sub("", title)


def names_page(anchor: str, title: str, fragment: str) -> bool:
    """Whether a link's text, pointing at `#fragment` inside a page (not a document of its own),
    names the page for any reader: the object the page documents there (Sphinx anchors an
    object by its full name: "attrs.define" at `#attrs.define`, `UnicodeDecodeError` at
    `#UnicodeDecodeError`, "PyObject_New()" at `#c.PyObject_New`), or one qualified by the
    page's own module ("os", "os.getcwd()" on "os — Miscellaneous operating system
    interfaces"). Other texts name something the page holds (a glossary's "CPython" at
    `#term-CPython`, a heading's words), which a reader cannot tell is that page."""
    found = _OBJECT.match(anchor.strip())
    if found is None or found.end() < len(anchor.strip().removesuffix("()")):
        return False
    name = found.group(0)
    if fragment == name or (fragment.endswith("." + name) and not name.islower()):
        return True  # (a bare lowercase "enable()" is in every module that has one)
    head = title.split(" — ")[0].split(" - ")[0].strip()
    return bool(head) and " " not in head and (name == head or name.startswith(head + "."))
