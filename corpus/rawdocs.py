"""From what format readers yield (`RawDoc`) to `Document` records.

Readers know titles, texts and references as written (ids, titles, headwords). `assemble` drops
empty documents, keeps the first of duplicate ids, resolves references to doc_ids within each
source (by key, then by title or alias, case-insensitively) and splits very large documents.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hopforge.corpus.problems import CHUNKED, DUPLICATE_ID, EMPTY, Problems
from hopforge.corpus.records import Document, make_doc_id

DEFAULT_MAX_DOC_CHARS = 200_000


@dataclass(frozen=True, slots=True, kw_only=True)
class RawDoc:
    """A document as a reader found it; `refs` are link targets as written (keys or titles)."""

    source: str
    key: str
    title: str
    text: str
    at: str  # file:line, for messages
    url: str = ""
    aliases: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()  # the anchor text of each of `refs`, where the reader knows it
    doc_id: str = ""  # set only when the input already carries hopforge doc_ids


def name_key(name: str) -> str:
    """The case- and space-insensitive form titles, aliases and references are matched by."""
    return " ".join(name.split()).casefold()


@dataclass
class ParagraphKeys:
    """Keys for keyless paragraphs: the title, or title#hash when a title has several texts.

    Identical (title, text) pairs are duplicates of one paragraph and get `None`.
    """

    seen: dict[tuple[str, str], str] = field(default_factory=dict)
    titles: set[str] = field(default_factory=set)
    merged: int = 0  # repeats of a paragraph already seen

    def key(self, title: str, text: str) -> str | None:
        """The key of a new paragraph, or None when this title+text was seen before."""
        digest = hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:10]
        if (title, digest) in self.seen:
            self.merged += 1
            return None
        key = title if title not in self.titles else f"{title}#{digest}"
        self.titles.add(title)
        self.seen[(title, digest)] = key
        return key


@dataclass
class LinkStats:
    """How many references were written, resolved, and which were not."""

    refs: int = 0
    resolved: int = 0
    unresolved: Counter[str] = field(default_factory=Counter)

    def as_dict(self, top: int = 20) -> dict[str, object]:
        share = self.resolved / self.refs if self.refs else None
        return {
            "references": self.refs,
            "resolved": self.resolved,
            "resolved_share": share,
            "unresolved_top": [[name, n] for name, n in self.unresolved.most_common(top)],
        }


class _Resolver:
    """Reference -> doc_id within one source: by key, then by title/alias (plural forms too)."""

    def __init__(self) -> None:
        self.by_key: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.alias_names: dict[str, str] = {}

    def add(self, raw: RawDoc, doc_id: str) -> None:
        self.by_key.setdefault(raw.key, doc_id)
        if raw.doc_id:
            self.by_key.setdefault(raw.doc_id, doc_id)
        self.by_name.setdefault(name_key(raw.title), doc_id)
        for alias in raw.aliases:
            self.alias_names.setdefault(name_key(alias), doc_id)

    def resolve(self, ref: str) -> str | None:
        if ref in self.by_key:
            return self.by_key[ref]
        name = name_key(ref)
        for candidate in (
            name,
            name[:-2] if name.endswith("es") else "",
            name[:-1] if name.endswith("s") else "",
        ):
            if not candidate:
                continue
            hit = self.by_name.get(candidate) or self.alias_names.get(candidate)
            if hit:
                return hit
        return None


# Anchor texts that say where a link goes, not what it names.
_PLACE_WORDS = frozenset(
    ("here", "this", "link", "more", "next", "previous", "prev", "back", "up", "top", "home")
    + ("source", "docs", "documentation", "page", "see", "details", "read more", "click")
)
MAX_ANCHOR_ALIASES = 12


class AnchorNames:
    """Anchor texts of links that name their target: each becomes an alias of that target.

    Kept when it has letters, is 3 to 80 characters, is not a word like "here" or "next" nor a
    single lowercase word of running text, names one target only within its source (an anchor
    text used for two targets is ambiguous), and reads as a name of that target wherever it
    appears: it shares a word with the target's title ("Crane Manual" for "Crane guide") or is
    code (`attrs.define`, `PyConfig.isolated`). An alias names its target in every text, so an
    anchor that only says what the link is about in its own sentence ("This section", "in place",
    "True") is left out.
    """

    def __init__(self) -> None:
        self.targets: dict[tuple[str, str], dict[str, None]] = {}
        self.text: dict[tuple[str, str], str] = {}

    def add(self, source: str, text: str, target: str) -> None:
        name = " ".join(text.split())
        key = name_key(name)
        if not 3 <= len(name) <= 80 or not any(c.isalpha() for c in name):
            return
        if key in _PLACE_WORDS or key.rstrip(".…") in _PLACE_WORDS:
            return
        if " " not in name and name.removesuffix("()").replace("_", "").isalpha() and (
                name.islower()):
            return  # a plain lowercase word ("installed", "section") is running text, not a
            # name, and a bare lowercase call ("enable()") is one in every module that has it
        self.targets.setdefault((source, key), {})[target] = None
        self.text.setdefault((source, key), name)

    def aliases(self, titles: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
        """doc_id -> anchor texts that name it alone and read as its name (at most
        MAX_ANCHOR_ALIASES, first seen); `titles`: doc_id -> title."""
        out: dict[str, list[str]] = {}
        for k, targets in self.targets.items():
            if len(targets) == 1:
                target = next(iter(targets))
                if not names_target(self.text[k], titles.get(target, "")):
                    continue
                names = out.setdefault(target, [])
                if len(names) < MAX_ANCHOR_ALIASES:
                    names.append(self.text[k])
        return {d: tuple(n) for d, n in out.items()}


_CODE = re.compile(r"[._()\[\]<>:/]|[a-z][A-Z]|[A-Z]{2}[a-z]")  # attrs.define, PyConfig, IStream
_WORD = re.compile(r"[^\W_]{3,}")
_GLUE = frozenset(("the", "and", "for", "with", "from", "this", "that", "how", "what"))


def names_target(anchor: str, title: str) -> bool:
    """Whether an anchor text reads as a name of the page titled `title`: code, or a word of
    three or more letters in common with the title (not "the", "and" ...)."""
    if _CODE.search(anchor):
        return True
    words = {w.lower() for w in _WORD.findall(anchor)} - _GLUE
    return bool(words & {w.lower() for w in _WORD.findall(title)})


def split_text(text: str, max_chars: int) -> list[str]:
    """Split `text` into pieces of at most `max_chars`, at paragraph, line or sentence breaks."""
    pieces: list[str] = []
    rest = text
    while len(rest) > max_chars:
        window = rest[:max_chars]
        cut = -1
        for sep in ("\n\n", "\n", ". ", " "):
            cut = window.rfind(sep)
            if cut > max_chars // 2:
                cut += len(sep)
                break
        else:
            cut = max_chars
        pieces.append(rest[:cut].strip())
        rest = rest[cut:]
    if rest.strip():
        pieces.append(rest.strip())
    return [p for p in pieces if p]


def _chunk(doc: Document, max_chars: int, problems: Problems, at: str) -> list[Document]:
    pieces = split_text(doc.text, max_chars)
    if len(pieces) <= 1:
        return [doc]
    problems.note(
        CHUNKED,
        at,
        f"'{doc.title}' has {len(doc.text):,} characters; split into "
        f"{len(pieces)} documents of at most {max_chars:,} (raise --max-doc-chars to keep it whole)",
    )
    ids = [doc.doc_id] + [
        make_doc_id(doc.source, f"{doc.doc_id}#part{i}") for i in range(2, len(pieces) + 1)
    ]
    parts = []
    for i, (doc_id, piece) in enumerate(zip(ids, pieces, strict=True)):
        nxt = (ids[i + 1],) if i + 1 < len(ids) else ()
        parts.append(
            Document(
                doc_id=doc_id,
                title=doc.title if i == 0 else f"{doc.title} (part {i + 1})",
                text=piece,
                source=doc.source,
                url=doc.url,
                aliases=doc.aliases if i == 0 else (),
                links=(doc.links if i == 0 else ()) + tuple(x for x in nxt if x not in doc.links),
            )
        )
    return parts


def assemble(
    raws: Iterable[RawDoc], problems: Problems, *, max_doc_chars: int = DEFAULT_MAX_DOC_CHARS
) -> tuple[list[Document], LinkStats]:
    """Documents from raw documents: empties and duplicate ids counted, links resolved, big ones split."""
    kept: list[tuple[RawDoc, str]] = []
    first_at: dict[str, str] = {}
    resolvers: dict[str, _Resolver] = {}
    for raw in raws:
        if not raw.text.strip():
            problems.note(EMPTY, raw.at, f"'{raw.title}' has no text; skipped")
            continue
        doc_id = raw.doc_id or make_doc_id(raw.source, raw.key)
        if doc_id in first_at:
            problems.note(
                DUPLICATE_ID,
                raw.at,
                f"duplicate id '{raw.doc_id or raw.key}' (first at "
                f"{first_at[doc_id]}); kept the first, skipped this one",
            )
            continue
        first_at[doc_id] = raw.at
        kept.append((raw, doc_id))
        resolvers.setdefault(raw.source, _Resolver()).add(raw, doc_id)

    stats = LinkStats()
    resolved: list[dict[str, None]] = []
    anchors = AnchorNames()
    for raw, doc_id in kept:
        resolver = resolvers[raw.source]
        links: dict[str, None] = {}
        for i, ref in enumerate(raw.refs):
            stats.refs += 1
            target = resolver.resolve(ref)
            if target is None:
                stats.unresolved[name_key(ref)] += 1
                continue
            stats.resolved += 1
            if target != doc_id:
                links.setdefault(target, None)
                if i < len(raw.anchors):
                    anchors.add(raw.source, raw.anchors[i], target)
        resolved.append(links)
    extra = anchors.aliases({doc_id: raw.title for raw, doc_id in kept})
    docs: list[Document] = []
    for (raw, doc_id), links in zip(kept, resolved, strict=True):
        doc = Document(
            doc_id=doc_id,
            title=raw.title.strip(),
            text=raw.text.strip(),
            source=raw.source,
            url=raw.url,
            aliases=tuple(
                dict.fromkeys(
                    a
                    for a in (*raw.aliases, *extra.get(doc_id, ()))
                    if name_key(a) != name_key(raw.title)
                )
            ),
            links=tuple(links),
        )
        docs.extend(
            _chunk(doc, max_doc_chars, problems, raw.at) if len(doc.text) > max_doc_chars else [doc]
        )
    return docs, stats
