"""The names a reader sees in a text: titles and aliases of corpus documents, as whole words.

"A mentions B" holds when a name of B appears in A's text as `open` shows it. One
`NameIndex` per corpus finds them (one Aho-Corasick automaton over every usable name) for the
question stage, the scripted teacher and the checks alike, so all three see the same mentions.

- usable names: titles, aliases and titles without a trailing parenthesis, at least
  `min_chars` long, not only stopwords or digits; a title stripped of its parenthesis to one
  word is no name ("Atlanta (album)": a text's "Atlanta" is the city);
- a name that is one capitalized word, or a title stripped of its parenthesis, is not found
  inside a longer capitalized name: "Colonel Tom Parker" does not name "Tom Parker (singer)",
  nor "Paris Hilton" "Paris" (a capitalized word before it counts unless it opens a sentence);
- a title stripped of its parenthesis names its document only in a text that also has a word
  of the parenthesis: "Nemai Ghosh (photographer)" is not the "Nemai Ghosh, a Bengali
  director" of another text (the parenthesis says there are namesakes);
- ambiguous names (shared by several documents) are found but resolve to no document: a text
  naming one cannot be read as naming either;
- a name written with a capital ("Rose", "Unix") is found only where the text capitalizes it
  too, so the verb "rose" names nothing;
- common names are words of the language more than names: in more than `common_share` of the
  documents (and more than `min_common_docs` of them), or, for a capitalized one-word name,
  also written in lower case in at least `lower_docs` documents ("Princess", "Movie"), and,
  for a name that is one lower-case word ("include", "source"; not an identifier such as
  "urllib.request"), in more than `lower_share` of the documents (and more than
  `min_lower_docs`): a glossary's everyday words. They are found and marked; the question
  families use them neither as steps nor as facts, and `open` does not list them.
Matching follows corpus/matching.py: whole words, plural and possessive accepted ("-es"
only after s, x, z, ch, sh or o: "hopes" does not name "hop").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import ahocorasick
from hopforge.corpus.mentions import STOPWORDS
from hopforge.corpus.rawdocs import name_key
from hopforge.corpus.records import Document

_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_SUFFIXES = ("", "s", "es", "'s", "’s")
_ES_AFTER = ("s", "x", "z", "ch", "sh", "o")
_OPENERS = frozenset(".!?:;\"“(\n")  # a word after one of these opens a sentence or a quote
_RUN = re.compile(r"\S+")
_ONE_WORD = re.compile(r"\w+(?:['’]\w+)*")


@dataclass(frozen=True, slots=True)
class NameHit:
    """A name found at `start` of a text, written there as `surface`.

    `doc` is the document it names ("" when the name is ambiguous); `docs` all documents that
    carry the name; `common` marks a name found in many documents."""

    doc: str
    surface: str
    start: int
    docs: tuple[str, ...]
    key: str = ""  # the name as the index holds it (case- and space-folded, no inflection)
    common: bool = False


def fold(text: str) -> str:
    """`text` lower-cased character by character, so positions stay those of `text`."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def without_parenthesis(title: str) -> str:
    """`title` without a trailing parenthesis ("Edsel Ford (poet)" -> "Edsel Ford")."""
    return _PARENTHETICAL.sub("", title)


_QUALIFIER = re.compile(r"[^\W_]+")
_NOT_QUALIFIERS = frozenset(["born", "died", "active", "fl", "c", "ca"])
_YEAR = re.compile(r"1[0-9]{3}|20[0-9]{2}")


def qualifier_words(title: str) -> frozenset[str]:
    """The words of a title's trailing parenthesis that tell its subject from namesakes
    ("photographer", "film", "1865", "1906"), lower-cased: not stopwords, "born" or "died".
    A parenthesis with a year gives only its years: "(American football, born 1956)" says
    that more than one Steve Johnson played football, and only the year tells them apart."""
    found = _PARENTHETICAL.search(title)
    if not found:
        return frozenset()
    words = _QUALIFIER.findall(found.group(0).lower())
    years = frozenset(w for w in words if _YEAR.fullmatch(w))
    return years or frozenset(w for w in words if w not in STOPWORDS
                              and w not in _NOT_QUALIFIERS and (len(w) >= 3 or w.isdigit()))


# how texts say what a parenthesis's role word says: "starring Philippe Chevallier" for
# "(actor)"; words sharing their first five letters need no entry ("directed", "director")
ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "actor": ("starring", "starred", "stars", "role", "roles", "cast", "played"),
    "actress": ("starring", "starred", "stars", "role", "roles", "cast", "played"),
    "singer": ("song", "songs", "album", "recorded", "sang", "single"),
    "rapper": ("song", "songs", "album", "recorded", "single"),
    "musician": ("song", "songs", "album", "recorded", "band"),
    "band": ("song", "songs", "album", "recorded", "single"),
    "writer": ("novel", "book", "wrote", "written", "story"),
    "author": ("novel", "book", "wrote", "written", "story"),
    "novelist": ("novel", "book", "wrote", "written"),
    "director": ("film", "films"),
    "filmmaker": ("film", "films", "directed"),
}


def tells(word: str, said: set[str]) -> bool:
    """Whether a text whose words (and their first five letters) are `said` says the
    parenthesis word `word`: the word itself or its plural, one sharing its first five
    letters, a word of four letters or more that begins it ("film" for "filmmaker"), or a
    word of its role."""
    return (word in said or word + "s" in said or word[:5] in said
            or any(word[:n] in said for n in range(4, len(word)))
            or any(w in said for w in ROLE_WORDS.get(word, ())))


def doc_names(doc: Document) -> list[str]:
    """A document's title, aliases and title without a trailing parenthesis, as written."""
    out: list[str] = []
    for form in (doc.title, *doc.aliases, without_parenthesis(doc.title)):
        form = " ".join(form.split()).strip(" ,")
        if form and form not in out:
            out.append(form)
    return out


class NameIndex:
    """Every usable name of a corpus, found in any text as whole words."""

    def __init__(self, docs: Sequence[Document], *, min_chars: int = 3,
                 common_share: float = 0.05, min_common_docs: int = 20,
                 lower_docs: int = 3, lower_share: float = 0.01,
                 min_lower_docs: int = 10) -> None:
        owners: dict[str, set[str]] = {}
        lower: set[str] = set()  # names some document writes without a capital
        written: set[str] = set()  # names some document has as its title or an alias
        # a title cut before its parenthesis -> the words of the parenthesis
        self.qualifiers: dict[str, frozenset[str]] = {}
        capitals: dict[str, frozenset[int]] = {}  # a name -> its words every form capitalizes
        # a title stripped of its parenthesis to one word ("Functions (cgi — ...)"): no name,
        # but a reader of the page the parenthesis names (the section list of "cgi — ...")
        # may take the word for it
        loose: dict[str, set[str]] = {}
        self.parent: dict[str, str] = {}  # doc_id -> the title its parenthesis gives, as a key
        self.title_key = {d.doc_id: name_key(d.title) for d in docs}
        loose_lower: set[str] = set()
        for d in docs:
            stripped = _PARENTHETICAL.sub("", " ".join(d.title.split())).strip(" ,")
            for form in doc_names(d):
                key = name_key(form)
                as_written = form != stripped or stripped == " ".join(d.title.split()) or (
                    form in d.aliases)
                if not self._usable(key, min_chars):
                    continue
                if not as_written and " " not in key:
                    loose.setdefault(key, set()).add(d.doc_id)
                    paren = _PARENTHETICAL.search(" ".join(d.title.split()))
                    self.parent[d.doc_id] = name_key(paren.group(0).strip(" ()")) if paren else ""
                    if not form[:1].isupper():
                        loose_lower.add(key)
                    continue
                owners.setdefault(key, set()).add(d.doc_id)
                upper = frozenset(i for i, w in enumerate(_ONE_WORD.findall(form))
                                  if w[:1].isupper())
                capitals[key] = capitals.get(key, upper) & upper
                if as_written:
                    written.add(key)
                else:
                    self.qualifiers[key] = qualifier_words(d.title)
                if not form[:1].isupper():
                    lower.add(key)
        self.qualifiers = {k: v for k, v in self.qualifiers.items() if k not in written and v}
        self.owners = {k: tuple(sorted(v)) for k, v in owners.items()}
        self.loose_owners = {k: tuple(sorted(v)) for k, v in loose.items()}
        self.loose_capitalized = frozenset(k for k in loose if k not in loose_lower)
        self.capitalized = frozenset(k for k in self.owners if k not in lower)
        # words after the first that a capitalized name of several words capitalizes: "For
        # More Information" is not the running text's "For more information", nor the class
        # "LockingVisitors.StampedLockVisitor" the method "LockingVisitors.stampedLockVisitor"
        self.capital_words = {k: v - {0} for k, v in capitals.items()
                              if k in self.capitalized and v - {0}}
        # names that stand alone only: one capitalized word, or a stripped title
        self.bare = frozenset(k for k in self.owners if k not in written
                              or (k in self.capitalized and _ONE_WORD.fullmatch(k) is not None))
        self._auto = ahocorasick.Automaton(ahocorasick.STORE_ANY)
        for key in {*self.owners, *self.loose_owners}:
            self._auto.add_word(key, key)
        self.common: frozenset[str] = frozenset()
        if self.owners or self.loose_owners:
            self._auto.make_automaton()
            df: Counter[str] = Counter()
            lower_df: Counter[str] = Counter()
            for d in docs:
                df.update({h.key for h in self._scan(d.text)})
                lower_df.update({h.key for h in self._scan(d.text, any_case=True)
                                 if _ONE_WORD.fullmatch(h.key) and not h.surface[:1].isupper()})
            limit = max(min_common_docs, common_share * len(docs))
            words = max(min_lower_docs, lower_share * len(docs))
            self.common = frozenset(
                [k for k, n in df.items() if n > limit]
                + [k for k, n in df.items() if n > words and _ONE_WORD.fullmatch(k)
                   and k not in self.capitalized]
                + [k for k in self.capitalized if lower_df[k] >= lower_docs])
        self.titles: Counter[str] = Counter(self.title_key.values())
        # documents whose title another document has too: no step, answer or listed entry
        self.shared = frozenset(d.doc_id for d in docs if self.titles[name_key(d.title)] > 1)
        # where the corpus's authors link (a glossary's cross-references, a site's anchors), a
        # name that is one lower-case word names its document only where they linked it:
        # "long chains of causes" is no reference to the entry "chain"
        self.links = {d.doc_id: frozenset(d.links) for d in docs if d.links}

    @staticmethod
    def _usable(key: str, min_chars: int) -> bool:
        if len(key) < min_chars or not any(ch.isalpha() for ch in key):
            return False
        return not all(w in STOPWORDS for w in re.findall(r"\w+", key))

    def shared_title(self, doc: Document) -> bool:
        """Whether another document has the same title (its title alone does not pick it)."""
        return self.titles[name_key(doc.title)] > 1

    def _scan(self, text: str, *, any_case: bool = False, loose: bool = False, src: str = ""
              ) -> list[NameHit]:
        """Names in `text` (of document `src`); `loose`: also as a reader may take them (see
        `find`)."""
        if not self.owners and not self.loose_owners:
            return []
        low, where = _spaced(fold(text))
        found: list[tuple[int, int, int, str]] = []
        said: set[str] | None = None  # the text's words, read once a qualified name is hit
        for end, key in self._auto.iter(low):
            start = end - len(key) + 1
            if key not in self.owners and not loose:
                continue  # a one-word title without its parenthesis: read loosely only
            if start > 0 and (key[0].isalnum() or key[0] == "_") and _word_at(low, start - 1):
                continue
            if not any_case and (key in self.capitalized or (
                    key not in self.owners and key in self.loose_capitalized)) and (
                    not text[where(start)].isupper()):
                continue
            if start > 1 and low[start - 1] in "-." and low[start - 2].isalnum():
                continue  # "spell-checker" has no "checker", "alt.flame" no "flame"
            stop = end + 1
            for suffix in _SUFFIXES if key[-1].isalnum() else ("",):
                if suffix == "es" and not key.endswith(_ES_AFTER):
                    continue
                if low.startswith(suffix, stop) and not (
                        key[-1].isalnum() and _word_at(low, stop + len(suffix))):
                    stop += len(suffix)
                    break
            else:
                continue
            if low[stop:stop + 1] in ("-", ".") and _word_at(low, stop + 1) and (
                    key[-1].isalnum()) and not (loose and low[stop] == "."):
                continue  # "spell" in "spell-checker", "os" in "os.path" (loosely: a name)
            if not key[-1].isalnum() and _word_at(low, stop):
                continue  # the prefix "macro-" in "macro-based"
            if not any_case and key in self.capital_words:
                said_words = _ONE_WORD.findall(text[where(start):where(stop - 1) + 1])
                if len(said_words) >= len(_ONE_WORD.findall(key)) and not all(
                        said_words[i][:1].isupper() for i in self.capital_words[key]):
                    continue
            if not loose and _PATRONYMIC.search(text, max(0, where(start) - 60), where(start)):
                continue  # "Salman bin Hamad bin Isa Al Khalifa" is not "Hamad bin Isa ..."
            if not loose and key in self.bare and _inside_longer(
                    text, where(start), where(stop - 1) + 1,
                    possessive="'" in suffix or "’" in suffix):
                continue
            qualifiers = None if loose else self.qualifiers.get(key)
            if qualifiers:
                if said is None:
                    said = set(_QUALIFIER.findall(low))
                    said |= {w[:5] for w in said if len(w) >= 5}
                if not any(tells(w, said) for w in qualifiers):
                    continue  # "Nemai Ghosh, a Bengali director" is not the photographer
            found.append((start, stop, len(suffix), key))
        # the longest at each place; of two as long, the name as written over an inflected one
        found.sort(key=lambda m: (m[0], -(m[1] - m[0]), m[2]))
        hits: list[NameHit] = []
        reach = -1
        for start, stop, _, key in found:
            if start < reach:
                continue  # inside a longer name
            docs = self.owners.get(key, ())
            if loose and key in self.loose_owners:  # sections of `src`, named on its page
                parent = self.title_key.get(src, "")
                docs = tuple(sorted({*docs, *(d for d in self.loose_owners[key]
                                              if parent and self.parent[d] == parent)}))
                if not docs:
                    continue
            at = where(start)
            hits.append(NameHit(doc=docs[0] if len(docs) == 1 else "",
                                surface=" ".join(text[at:where(stop - 1) + 1].split()),
                                start=at, docs=docs,
                                key=key))
            reach = stop
        return hits

    def find(self, text: str, *, exclude: str = "", loose: bool = False,
             any_case: bool = False) -> list[NameHit]:
        """The names in `text`, in text order, longest first where they overlap; a name of
        `exclude` (the text's own document) is left out. `loose`: every document a reader
        may take a name for, for the checks that an answer holds either way: a name inside a
        longer capitalized one ("VAX" in "DEC VAX"), a title stripped of its parenthesis
        without a word of it nearby (a namesake), or stripped to one word on the page its
        parenthesis names ("Functions" on the cgi page for "Functions (cgi — ...)").
        `any_case`: in whatever case the text writes a name ("command line" for the section
        "Command line")."""
        out = []
        for hit in self._scan(text, loose=loose, src=exclude, any_case=any_case):
            if exclude and exclude in hit.docs:
                continue
            out.append(NameHit(doc=hit.doc, surface=hit.surface, start=hit.start,
                               docs=hit.docs, key=hit.key, common=hit.key in self.common))
        return out

    def entries(self, text: str, *, exclude: str = "") -> list[NameHit]:
        """The documents `text` names that a reader can follow (`follows`), each at its first
        name, in text order. `open` lists them under a page ("Entries named here"), the
        question families walk them and the scripted teacher enumerates them."""
        found: dict[str, NameHit] = {}
        for hit in self.find(text, exclude=exclude):
            if self.follows(hit, exclude):
                found.setdefault(hit.doc, hit)
        return list(found.values())

    def follows(self, hit: NameHit, src: str) -> bool:
        """Whether `hit`, in the text of document `src`, names a document a reader can follow:
        named unambiguously, not as an everyday word (`common`), not one of the documents
        sharing a title, and, in a corpus whose documents link, a one-word lower-case name
        only where `src` links to it."""
        if not hit.doc or hit.common or hit.doc in self.shared:
            return False
        return not (self.links and hit.key not in self.capitalized
                    and _ONE_WORD.fullmatch(hit.key)
                    and hit.doc not in self.links.get(src, frozenset()))

    def mentioned(self, text: str, *, exclude: str = "") -> list[str]:
        """The doc_ids `text` names unambiguously, first mention first (common names too)."""
        return list(dict.fromkeys(h.doc for h in self.find(text, exclude=exclude) if h.doc))


def _spaced(text: str) -> tuple[str, Callable[[int], int]]:
    """`text` with every run of white space as one space, and the map from a position in it
    back to the same character of `text` (a name wrapped over two lines is still the name)."""
    starts: list[int] = []  # of each word in the spaced text
    origin: list[int] = []  # of the same word in `text`
    parts: list[str] = []
    at = 0
    for m in _RUN.finditer(text):
        starts.append(at)
        origin.append(m.start())
        parts.append(m.group(0))
        at += len(m.group(0)) + 1
    spaced = " ".join(parts)
    if spaced == text:
        return text, lambda i: i

    def where(i: int) -> int:
        k = bisect_right(starts, i) - 1
        return origin[k] + (i - starts[k]) if k >= 0 else i

    return spaced, where


def _inside_longer(text: str, start: int, end: int, *, possessive: bool = False) -> bool:
    """Whether the name at text[start:end] is part of a longer capitalized name: a capitalized
    word right after it (not after a possessive: "DEC's Western"), or one right before it that
    does not open a sentence."""
    after = text[end:end + 2]
    if not possessive and after[:1] == " " and after[1:2].isupper():
        return True
    i = start - 1
    while i >= 0 and text[i].isspace() and text[i] != "\n":  # a no-break space is a space
        i -= 1
    if i < 0 or i == start - 1 or not text[i].isalpha():
        return False  # nothing, or punctuation, right before it
    j = i
    while j > 0 and (text[j - 1].isalpha() or (  # an apostrophe inside the word, not a quote
            text[j - 1] in "'’" and j > 1 and text[j - 2].isalpha())):
        j -= 1
    if not text[j].isupper() or (j > 0 and text[j - 1].isalnum()):
        return False  # a word of letters with a capital ("V6 Unix" is not a longer name)
    k = j - 1
    while k >= 0 and text[k].isspace() and text[k] != "\n":
        k -= 1
    return k >= 0 and text[k] not in _OPENERS


# a name right after "son of" / "daughter of" inside a longer Arabic or Malay name: the father's
_PATRONYMIC = re.compile(r"\b[A-Z][\w'’-]*\s+(?:bin|bint|binti|ibn)\s+$")


def _word_at(text: str, i: int) -> bool:
    """Whether character `i` belongs to a word: a letter, digit or underscore, a syllable dot
    of a pronunciation ("dump'·ster"), or an apostrophe inside a word ("bit'ee")."""
    if not 0 <= i < len(text):
        return False
    c = text[i]
    if c in "'’":
        return (0 < i < len(text) - 1 and text[i - 1].isalnum()
                and (text[i + 1].isalnum() or text[i + 1] == "·"))
    return c.isalnum() or c in "_·"


_INDEXES: dict[int, tuple[Mapping[str, Document], NameIndex]] = {}


def index_for(docs: Mapping[str, Document]) -> NameIndex:
    """The `NameIndex` of a corpus mapping, built once per process per mapping."""
    held = _INDEXES.get(id(docs))
    if held is None or held[0] is not docs:
        if len(_INDEXES) >= 4:
            _INDEXES.clear()
        held = (docs, NameIndex(list(docs.values())))
        _INDEXES[id(docs)] = held
    return held[1]
