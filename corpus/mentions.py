"""Links by title mention, for corpora that carry no links of their own.

One Aho-Corasick automaton (pyahocorasick) holds every usable title and alias, plus Wikipedia
titles without their "(disambiguation)" part. A document links to each document whose name it
mentions as whole words. Names are skipped when too short, made only of stopwords or digits,
shared by several documents (ambiguous), or mentioned in too many documents (too common).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import ahocorasick
from hopforge.corpus.rawdocs import name_key
from hopforge.corpus.records import Document

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
out over own same she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours one two three first second new old see also part
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class MentionConfig:
    """When a name is usable for mention links."""

    min_chars: int = 4  # shorter names are skipped
    max_doc_share: float = 0.02  # a name in more than this share of documents is too common ...
    min_common_docs: int = 20  # ... once it is in at least this many documents
    max_links: int = 50  # per document, in order of first mention

    def __post_init__(self) -> None:
        if self.min_chars < 1:
            raise ValueError(f"MentionConfig.min_chars must be >= 1, got {self.min_chars}")
        if not 0 < self.max_doc_share <= 1:
            raise ValueError(
                f"MentionConfig.max_doc_share must be in (0, 1], got {self.max_doc_share}"
            )
        if self.max_links < 1:
            raise ValueError(f"MentionConfig.max_links must be >= 1, got {self.max_links}")


@dataclass
class MentionStats:
    """What the mention linker used, skipped and added."""

    names: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    docs_scanned: int = 0
    links_added: int = 0
    docs_given_links: int = 0

    def skip(self, reason: str, name: str) -> None:
        self.skipped[reason] += 1
        examples = self.skipped_examples.setdefault(reason, [])
        if len(examples) < 10:
            examples.append(name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "names": self.names,
            "skipped": dict(self.skipped),
            "skipped_examples": self.skipped_examples,
            "docs_scanned": self.docs_scanned,
            "links_added": self.links_added,
            "docs_given_links": self.docs_given_links,
        }


def _skip_reason(name: str, config: MentionConfig) -> str:
    if len(name) < config.min_chars:
        return "too_short"
    words = re.findall(r"\w+", name)
    if not any(ch.isalpha() for ch in name) or all(w in STOPWORDS for w in words):
        return "stopword_or_number"
    return ""


def mention_names(
    docs: Sequence[Document], config: MentionConfig, stats: MentionStats
) -> dict[str, str]:
    """Usable name -> doc_id over titles (best), aliases, and titles without a parenthetical."""
    best: dict[str, tuple[int, set[str]]] = {}
    for d in docs:
        stripped = _PARENTHETICAL.sub("", d.title)
        forms = (
            [(0, d.title)]
            + [(1, a) for a in d.aliases]
            + ([(2, stripped)] if stripped != d.title else [])
        )
        for level, form in forms:
            name = name_key(form)
            if not name:
                continue
            have = best.get(name)
            if have is None or level < have[0]:
                best[name] = (level, {d.doc_id})
            elif level == have[0]:
                have[1].add(d.doc_id)
    names: dict[str, str] = {}
    for name, (_, ids) in sorted(best.items()):
        reason = _skip_reason(name, config) or ("ambiguous" if len(ids) > 1 else "")
        if reason:
            stats.skip(reason, name)
        else:
            names[name] = next(iter(ids))
    stats.names = len(names)
    return names


def _mentions(automaton: Any, text: str) -> list[str]:
    """Names mentioned as whole words in `text` (already case-folded), longest match wins."""
    found = []
    for end, name in automaton.iter(text):
        start = end - len(name) + 1
        if start > 0 and text[start - 1].isalnum():
            continue
        if end + 1 < len(text) and text[end + 1].isalnum():
            continue
        found.append((start, end, name))
    found.sort(key=lambda m: (m[0], -(m[1] - m[0])))
    kept: list[str] = []
    reach = -1
    for start, end, name in found:
        if end <= reach:
            continue  # inside a longer mention
        kept.append(name)
        reach = max(reach, end)
    return kept


def add_mention_links(
    docs: Sequence[Document], *, scan: Collection[str], config: MentionConfig | None = None
) -> tuple[list[Document], MentionStats]:
    """Add links by title mention to the documents whose ids are in `scan`; targets are all docs."""
    config = config or MentionConfig()
    stats = MentionStats()
    if not scan:
        return list(docs), stats
    names = mention_names(docs, config, stats)
    automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY)
    for name in names:
        automaton.add_word(name, name)
    if not names:
        return list(docs), stats
    automaton.make_automaton()
    found: dict[str, list[str]] = {}
    df: Counter[str] = Counter()
    for d in docs:
        if d.doc_id in scan:
            mentioned = _mentions(automaton, " ".join(d.text.split()).casefold())
            found[d.doc_id] = mentioned
            df.update(set(mentioned))
    stats.docs_scanned = len(found)
    limit = max(config.min_common_docs, config.max_doc_share * len(found))
    common = {name for name, n in df.items() if n > limit}
    for name in sorted(common):
        stats.skip("too_common", name)
    out = []
    for d in docs:
        if d.doc_id not in found:
            out.append(d)
            continue
        targets = dict.fromkeys(d.links)
        before = len(targets)
        for name in found[d.doc_id]:
            target = names[name]
            if name in common or target == d.doc_id or target in targets:
                continue
            if len(targets) - before >= config.max_links:
                break
            targets[target] = None
        added = len(targets) - before
        stats.links_added += added
        stats.docs_given_links += 1 if added else 0
        out.append(replace(d, links=tuple(targets)) if added else d)
    return out, stats
