"""What the question families read of a corpus: mentions in text order, facts, pages.

A document *mentions* another when the other's name appears in its text as `open` shows it
(corpus/names.py): what a reader sees, never a hidden link. `mentions` keeps the names a walk
may take (unambiguous, not common words, not a title two documents share); `rivals` every
document a reader of the text could take a name for. The surface form is the words as the text
writes them, which is what a solver reads and may search for. Phrase tests follow
corpus/matching.py (whole words), exactly as the `find` tool matches.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any

from hopforge.corpus.matching import first_match, matches
from hopforge.corpus.names import NameIndex
from hopforge.corpus.rawdocs import name_key
from hopforge.corpus.records import Document
from hopforge.corpus.tools import paginate
from hopforge.synth.questions.clues import FactBook
from hopforge.synth.records import Fact

_PAREN_SUFFIX = re.compile(r"\s*\([^)]*\)\s*$")
_YEAR = re.compile(r"(?<![\d.,])(1[5-9]\d\d|20[0-4]\d)(?![\d,]|\.\d)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Mention:
    """`doc` is mentioned at character `pos` of the source text as `surface`."""

    doc: str
    surface: str
    pos: int


def names(doc: Document) -> tuple[str, ...]:
    """Surface forms a text may use for `doc`: its title, the title without a parenthesis,
    and its aliases."""
    out: list[str] = []
    for name in (doc.title, *doc.aliases):
        name = " ".join(name.split())
        for form in (name, _PAREN_SUFFIX.sub("", name)):
            form = form.strip(" ,")
            if len(form) >= 2 and form not in out:
                out.append(form)
    return tuple(out)


def years(text: str) -> list[str]:
    """The distinct years (1500-2049) a text states, in order of first appearance."""
    return list(dict.fromkeys(_YEAR.findall(text)))


class CorpusGraph:
    """Documents with their mentions, inbound mentions, pages and phrase frequencies."""

    def __init__(self, docs: Sequence[Document], *, page_chars: int = 1200,
                 facts: dict[str, list[Fact]] | None = None) -> None:
        self.docs = {d.doc_id: d for d in docs}
        self.order = [d.doc_id for d in docs]
        self.page_chars = page_chars
        self.lower = {d.doc_id: d.text.lower() for d in docs}
        self.names = NameIndex(docs)
        self.shared = self.names.shared
        self.rivals: dict[str, list[str]] = {}
        self.unclear: set[str] = set()  # documents whose text names something ambiguously
        self.mentions = {d.doc_id: self._find_mentions(d) for d in docs}
        # a table of contents or a navigation page: its names stay what a reader sees, but a
        # walk does not start, pass or end there (a reader learns nothing there but names)
        self.listings = {d.doc_id for d in docs if self.lists_names(d)}
        self.facts = FactBook(docs, self.names, facts)
        self.inbound: dict[str, list[str]] = {d: [] for d in self.order}
        for src, found in self.mentions.items():
            for m in found:
                self.inbound[m.doc].append(src)
        self.memo: dict[str, Any] = {}  # what the stage builds once per graph
        self._df: dict[str, int] = {}
        self._page_starts: dict[str, list[int]] = {}
        self.word_df: Counter[str] = Counter()  # documents holding each word as a token
        for d in self.order:
            self.word_df.update({w.lower() for w in _WORD.findall(self.docs[d].text)})
        self._all = "\x00".join(self.lower[d] for d in self.order)
        self._starts = list(accumulate((len(self.lower[d]) + 1 for d in self.order), initial=0))

    def _find_mentions(self, doc: Document) -> list[Mention]:
        """The documents a walk may take from `doc`; `rivals[doc]` gets every one a reader
        could take a name of its text for."""
        hits = self.names.find(doc.text, exclude=doc.doc_id)
        seen = self.names.find(doc.text, exclude=doc.doc_id, loose=True)
        self.rivals[doc.doc_id] = list(dict.fromkeys(d for h in seen for d in h.docs
                                                     if d != doc.doc_id))
        if any(not h.doc or h.doc in self.shared for h in hits):
            self.unclear.add(doc.doc_id)
        return [Mention(doc=h.doc, surface=h.surface, pos=h.start)
                for h in self.names.entries(doc.text, exclude=doc.doc_id)]

    def lists_names(self, doc: Document) -> bool:
        """Whether half or more of `doc`'s lines (at least three) are other documents' names."""
        lines = [name_key(ln.strip(" \t*-•·|:")) for ln in doc.text.splitlines()]
        lines = [ln for ln in lines if ln]
        named = sum(1 for ln in lines if set(self.names.owners.get(ln, ())) - {doc.doc_id})
        return named >= 3 and named >= len(lines) / 2

    def ambiguous(self, doc_id: str) -> bool:
        """Whether `doc_id`'s text names something a reader cannot resolve to one document."""
        return doc_id in self.unclear

    @cached_property
    def noun(self) -> str:
        """What the questions call a document: "entry" in a dictionary (a dictd source, or
        short texts under mostly lower-case headwords), else "article"."""
        sample = list(self.docs.values())[:200]
        sources = {d.source.split(":")[0].lower() for d in sample}
        headwords = sum(d.title[:1].islower() for d in sample) >= 0.5 * len(sample)
        dictionary = sources & {"jargon", "foldoc", "dictd"} or (
            headwords and all(len(d.text) < 4000 for d in sample))
        return "entry" if dictionary else "article"

    @cached_property
    def nouns(self) -> str:
        """The plural of `noun`."""
        return "entries" if self.noun == "entry" else f"{self.noun}s"

    def title(self, doc_id: str) -> str:
        return self.docs[doc_id].title

    def contains(self, doc_id: str, phrase: str) -> bool:
        """Whether `find(doc_id, phrase)` would match (whole words)."""
        return matches(self.docs[doc_id].text, phrase)

    def doc_freq(self, phrase: str) -> int:
        """How many documents contain `phrase` (cached)."""
        key = phrase.lower()
        if key not in self._df:
            self._df[key] = len(self.having(key))
        return self._df[key]

    def could_have_df(self, phrase: str, low: int, high: int) -> bool:
        """A cheap test before `doc_freq`: False when the phrase's words show that its document
        frequency cannot lie in [low, high] (a word as a token is rarer than as a substring)."""
        words = phrase.lower().split()
        token = [self.word_df.get(w, 0) for w in words]
        if max(token) < low:
            return False
        return not (len(words) == 1 and token[0] > high)

    def having(self, phrase: str) -> list[str]:
        """The documents that contain `phrase` as whole words, in corpus order (one scan of all
        the text for candidates, then the word test on each)."""
        key, found, at = phrase.lower(), [], 0
        while key and (at := self._all.find(key, at)) >= 0:
            i = bisect_right(self._starts, at) - 1
            if self.contains(self.order[i], phrase):
                found.append(self.order[i])
            at = self._starts[i + 1]  # the next document
        return found

    def page_of(self, doc_id: str, pos: int) -> int:
        """The page (as `open` numbers them) that holds character `pos`."""
        starts = self._page_starts.get(doc_id)
        if starts is None:
            starts, offset = [], 0
            for page in paginate(self.docs[doc_id].text, self.page_chars):
                starts.append(offset)
                offset += len(page)
            self._page_starts[doc_id] = starts
        page = 0
        for i, start in enumerate(starts):
            if start <= pos:
                page = i
        return page

    def pages(self, doc_id: str) -> int:
        """How many pages `open` shows of the document."""
        return self.page_of(doc_id, len(self.docs[doc_id].text)) + 1

    def pages_to(self, doc_id: str, phrase: str) -> int:
        """Pages to open (from page 0) until `phrase` has been shown."""
        pos = self.lower[doc_id].find(phrase.lower())
        if pos < 0:
            pos = first_match(self.docs[doc_id].text, phrase)
        return self.page_of(doc_id, max(pos, 0)) + 1

    def words(self, doc_id: str) -> list[str]:
        """The words of a document's text, in order, as written."""
        return _WORD.findall(self.docs[doc_id].text)
