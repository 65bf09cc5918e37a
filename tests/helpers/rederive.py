"""Gold answers re-derived from the raw documents, by code that shares nothing with the
question stage (no hopforge.corpus.names, matching or synth.questions import).

The rules are the ones a careful reader applies to the text `open` shows:
- a text names a document when one of its names (title, alias, title without a trailing
  parenthesis unless that leaves one word) appears as whole words (a plural or possessive
  ending allowed, "es" only after s, x, z, ch, sh, o), capitalized where the name is; the
  longest name wins where names overlap; a name two documents share names neither; a name of
  one capitalized word, or a title without its parenthesis, does not count when a capitalized
  word follows it or one precedes it that does not open a sentence ("Colonel Tom Parker");
  a title without its parenthesis counts only in a text that has a word of the parenthesis
  ("Nemai Ghosh (photographer)" is not named by "Nemai Ghosh, a Bengali director"); no name
  counts inside a word joined by a hyphen or a dot ("spell-checker", "alt.flame"), and a
  capitalized name of several words counts only with the capitals it is written with ("For
  More Information", not "For more information");
- walkable names leave out common ones: in over 5% of texts, capitalized names written in
  lower case in 3 texts, and one-word lower-case names in over 1% of texts (at least 10);
  where documents carry links, a one-word lower-case name is walkable (and an entity clue
  holds by it) only in a document that links to the name's document;
- a date clue (key K, years [low, high]) holds when a year in range (or a full date whose year
  is) has the word K among the four words right before it, with no punctuation between, and
  the date is the subject's own: its sentence does not open with a possessive ("His father
  died in", "Big Boi's debut"), its clause holds no relative word ("which was released in"), no capitalized word
  stands between the sentence's opening name and K ("starred in Heat released in", "the film
  “Chandralekha” released in"), and a
  clause that opens with K after a comma or dash follows at most three words; the sentence
  opens with the document (he/she/it/they, a capitalized name sharing a word with its title,
  or "The"/"This" and a word of its title, of its first sentence, or "term", "word" ...); a K that a
  work undergoes ("directed", "released") counts only after "was"/"were"/... or opening its
  clause ("He directed ... in 1930" dates the film);
- a number clue (unit U, bounds) holds when a number in range stands right before the word U,
  not after "over", "at least", "fewer than" ... (a bound);
- a category clue holds when the text tags the document with it: a `<tag>` (one of its
  comma-separated tags) or a `[tag]` that opens a line or a numbered sense;
- an entity clue holds when the text names the clue's document by the name the clue quotes
  (its `key`, or that without a trailing parenthesis); a phrase clue when the words appear as
  whole words.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

# "sample_var" is one word, and so is a pronunciation's "dump'·ster" (syllables joined by dots)
_WORDS = re.compile(r"\w+(?:(?:['’]·?|·)\w+)*|[^\w\s]", re.UNICODE)
_MONTH = ("(?:January|February|March|April|May|June|July|August|September|October|November|"
          "December)")
_DATE = re.compile(rf"(?<![\w.,-])(?:(?:\d{{1,2}} )?{_MONTH} (?:\d{{1,2}}, )?(?:1[5-9]\d\d|20[0-4]\d)"
                   r"|1[5-9]\d\d|20[0-4]\d)(?!\w|[,.]\d)")
_PUNCT = re.compile(r"[.;:!?()\[\]{},—–]")  # quotes wrap names, they end no clause


# a name made only of these is no name ("down", "its")
STOPWORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "one", "two", "three", "first", "second", "new", "old", "see", "also", "part"])


def _variants(title: str, aliases: Iterable[str]) -> list[tuple[str, bool]]:
    """(name, whether it is only the title cut before its parenthesis)."""
    out: list[tuple[str, bool]] = []
    full = [" ".join(f.split()).strip(" ,") for f in (title, *aliases)]
    cut = " ".join(re.sub(r"\s*\([^()]*\)\s*$", "", title).split()).strip(" ,")
    for form in full:
        if form and form not in [f for f, _ in out]:
            out.append((form, False))
    if cut and cut not in full and len(cut.split()) > 1:
        out.append((cut, True))
    return out


# how a text says a parenthesis's role: "starring X" for "X (actor)"
_ROLES = {"actor": "starring starred stars role roles cast played",
          "actress": "starring starred stars role roles cast played",
          "singer": "song songs album recorded sang single",
          "rapper": "song songs album recorded single",
          "musician": "song songs album recorded band",
          "band": "song songs album recorded single",
          "writer": "novel book wrote written story", "author": "novel book wrote written story",
          "novelist": "novel book wrote written", "director": "film films",
          "filmmaker": "film films directed"}


def _fathers(spans: list[tuple[int, int, str]], i: int) -> bool:
    """Whether word i follows "<Name> bin" (ibn, bint, binti): the father's name inside a
    longer name ("Salman bin Hamad bin Isa Al Khalifa" is not "Hamad bin Isa Al Khalifa")."""
    return i >= 2 and spans[i - 1][2] in ("bin", "ibn", "bint", "binti") and spans[i - 2][2][:1].isupper()


def _says(word: str, vocabulary: set[str]) -> bool:
    """Whether a text of these words says `word`: it, a word with the same first five letters
    ("directed": "director"), a word of four or more letters it starts with, or its role."""
    for w in vocabulary:
        if w in (word, word + "s") or (len(w) >= 5 and len(word) >= 5 and w[:5] == word[:5]) or (
                4 <= len(w) < len(word) and word.startswith(w)):
            return True
    return any(w in vocabulary for w in _ROLES.get(word, "").split())


class Reader:
    """Names and clue tests over one corpus of rows {doc_id, title, text, aliases}."""

    def __init__(self, docs: Iterable[Mapping[str, Any]], *, common_share: float = 0.05,
                 min_common_docs: int = 20, lower_docs: int = 3) -> None:
        self.docs = {d["doc_id"]: d for d in docs}
        self.links = {k: set(d.get("links") or ()) for k, d in self.docs.items() if d.get("links")}
        self.title_count = Counter(" ".join(d["title"].split()).lower()
                                   for d in self.docs.values())
        table: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.forms: dict[tuple[str, ...], set[str]] = defaultdict(set)
        caps: dict[tuple[str, ...], set[int]] = {}  # words (after the first) every form capitalizes
        lower: set[tuple[str, ...]] = set()
        whole: set[tuple[str, ...]] = set()  # names some document has as written
        for d in self.docs.values():
            for form, cut in _variants(d["title"], d.get("aliases") or ()):
                words = tuple(w.lower() for w in _WORDS.findall(form))
                if (len(form) < 3 or not any(c.isalpha() for c in form) or not words
                        or all(w in STOPWORDS for w in re.findall(r"\w+", form.lower()))):
                    continue
                table[words].add(d["doc_id"])
                self.forms[words].add(form.lower())
                tokens = _WORDS.findall(form)
                upper = {i for i, w in enumerate(tokens) if i and w[:1].isupper()}
                caps[words] = caps[words] & upper if words in caps else upper
                if not cut:
                    whole.add(words)
                if not form[0].isupper():
                    lower.add(words)
        self.table = {k: sorted(v) for k, v in table.items()}
        # a title cut before its parenthesis names its document only in a text that also says
        # a word of the parenthesis ("photographer", "1865"): otherwise it may be a namesake
        self.tells: dict[tuple[str, ...], set[str]] = {}
        for d in self.docs.values():
            paren = re.search(r"\(([^()]*)\)\s*$", d["title"])
            for form, cut in _variants(d["title"], d.get("aliases") or ()):
                words = tuple(w.lower() for w in _WORDS.findall(form))
                if cut and paren and words in self.table and words not in whole:
                    said = re.split(r"[\W_]+", paren.group(1).lower())
                    years = {w for w in said if re.fullmatch(r"1\d{3}|20\d{2}", w)}
                    self.tells[words] = years or {  # a year alone tells namesakes apart
                        w for w in said
                        if w and (w.isdigit() or len(w) > 2) and w not in STOPWORDS
                        and w not in ("born", "died", "active")}
        self.tells = {k: v for k, v in self.tells.items() if v}
        # a title cut to one word ("Functions" of "Functions (cgi ...)"): no name, but read
        # loosely on the page its parenthesis names (the cgi page's list of sections)
        self.loose_table: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.parent: dict[str, str] = {}
        self.loose_capital: set[tuple[str, ...]] = set()
        for d in self.docs.values():
            paren = re.search(r"\(([^()]*)\)\s*$", d["title"])
            cut = " ".join(re.sub(r"\s*\([^()]*\)\s*$", "", d["title"]).split()).strip(" ,")
            words = tuple(w.lower() for w in _WORDS.findall(cut))
            if not paren or len(cut.split()) != 1 or len(cut) < 3 or not words or any(
                    " ".join(f.split()).lower() == cut.lower()
                    for f in (d["title"], *(d.get("aliases") or ()))):
                continue
            if all(w in STOPWORDS for w in words) or not any(c.isalpha() for c in cut):
                continue
            self.loose_table[words].add(d["doc_id"])
            self.forms[words].add(cut.lower())
            self.parent[d["doc_id"]] = " ".join(paren.group(1).split()).lower()
            if cut[:1].isupper():
                self.loose_capital.add(words)
        self.capital = {k for k in self.table if k not in lower}
        self.caps = {k: v for k, v in caps.items() if k in self.capital and v}
        self.alone = {k for k in self.table if k not in whole or (k in self.capital and len(k) == 1)}
        self.longest = max((len(k) for k in self.table), default=1)
        self.reach: dict[str, int] = {}  # first word -> the most words of a name it starts
        for k in self.table:
            self.reach[k[0]] = max(self.reach.get(k[0], 1), len(k))
        df: dict[tuple[str, ...], int] = defaultdict(int)
        low_df: dict[tuple[str, ...], int] = defaultdict(int)
        for d in self.docs.values():
            for key in {k for k, _ in self._scan(d["text"])}:
                df[key] += 1
            for key in {k for k, surf in self._scan(d["text"], any_case=True)
                        if len(k) == 1 and not surf[:1].isupper()}:
                low_df[key] += 1
        limit = max(min_common_docs, common_share * len(self.docs))
        everyday = max(10, 0.01 * len(self.docs))
        self.common = {k for k, n in df.items() if n > limit} | {
            k for k in self.capital if low_df[k] >= lower_docs} | {
            k for k, n in df.items() if n > everyday and len(k) == 1 and k not in self.capital}

    def _scan(self, text: str, *, any_case: bool = False, loose: bool = False
              ) -> list[tuple[tuple[str, ...], str]]:
        """(name words, surface) of the names in `text`, longest first at each place;
        `loose`: also inside longer capitalized names, namesakes, and titles cut to one
        word where the text says a word of their parenthesis."""
        spans = [(m.start(), m.end(), m.group(0)) for m in _WORDS.finditer(text)]
        vocabulary = {w.lower() for _, _, w in spans}
        out = []
        i = 0
        while i < len(spans):
            hit = None
            # only names that start with this word can start here (one word: any ending)
            for n in range(min(self.reach.get(spans[i][2].lower(), 1), len(spans) - i), 0, -1):
                words = [s[2] for s in spans[i:i + n]]
                low = tuple(w.lower() for w in words)
                last = low[-1]
                es = last.endswith("es") and last[:-2].endswith(("s", "x", "z", "ch", "sh", "o"))
                for key in (low, low[:-1] + (last[:-2],) if last.endswith(("'s", "’s")) else (),
                            low[:-1] + (last[:-1],) if last.endswith("s") else (),
                            low[:-1] + (last[:-2],) if es else ()):
                    surface = text[spans[i][0]:spans[i + n - 1][1]]
                    begin, end = spans[i][0], spans[i + n - 1][1]
                    joined = (begin > 0 and text[begin - 1] == "·") or (  # "go's@·tee"
                        begin > 1 and text[begin - 1] in "-." and text[begin - 2].isalnum()) or (
                        text[end:end + 1] in ("-", ".") and re.match(r"\w", text[end + 1:end + 2])
                        is not None and bool(key) and key[-1][-1:].isalnum()
                        and not (loose and text[end] == ".")) or (
                        bool(key) and not key[-1][-1:].isalnum()  # "macro-" in "macro-based"
                        and re.match(r"\w", text[end:end + 1]) is not None)
                    if key and key in self.caps and not any_case and not all(
                            words[j][:1].isupper() for j in self.caps[key]):
                        continue  # "For more information" is not "For More Information"
                    only_loose = loose and key not in self.table and key in self.loose_table
                    if only_loose and key in self.loose_capital and not words[0][:1].isupper():
                        continue
                    if key and not joined and (key in self.table or only_loose) and (
                            any_case or key not in self.capital or words[0][:1].isupper()
                    ) and self._written(surface, key) and (loose or not _fathers(spans, i)) and (
                            loose or not (
                            key in self.alone and self._in_longer(text, spans, i, i + n))) and (
                            loose or key not in self.tells or any(
                                _says(w, vocabulary) for w in self.tells[key])):
                        hit = (key, surface, n)
                        break
                if hit:
                    break
            if hit:
                out.append(hit[:2])
                i += hit[2]
            else:
                i += 1
        return out

    @staticmethod
    def _in_longer(text: str, spans: list[tuple[int, int, str]], i: int, j: int) -> bool:
        """Whether words i..j-1 sit inside a longer capitalized name."""
        if (j < len(spans) and text[spans[j - 1][1]:spans[j][0]] == " "
                and spans[j][2][:1].isupper() and not spans[j - 1][2].endswith(("'s", "’s"))):
            return True
        between = text[spans[i - 1][1]:spans[i][0]]
        if i == 0 or between.strip() != "" or "\n" in between:
            return False  # punctuation or a line break before it
        prev = spans[i - 1][2]
        if not prev[:1].isupper() or not re.fullmatch(r"[^\W\d_]+(?:['’][^\W\d_]+)*", prev):
            return False
        if i - 1 == 0:
            return False  # the text opens with it
        gap = text[spans[i - 2][1]:spans[i - 1][0]]
        before = spans[i - 2][2]
        return not (gap.strip() or before in (".", "!", "?", ":", ";", '"', "“", "(")) and "\n" not in gap

    def _written(self, surface: str, key: tuple[str, ...]) -> bool:
        """Whether `surface` writes the name itself (spacing aside), or it with an ending."""
        said = " ".join(surface.split()).lower()
        return any(said == f or said in (f + "s", f + "es", f + "'s", f + "’s")
                   for f in self.forms[key])

    def named(self, doc_id: str, *, walkable: bool = False) -> list[str]:
        """The documents `doc_id`'s text names unambiguously, in order; `walkable`: not common
        names, nor a document whose title another has too (by an alias: "assembly code" for
        one of two "assembly language" entries), which no set lists."""
        out: dict[str, None] = {}
        for key, _ in self._scan(self.docs[doc_id]["text"]):
            owners = self.table[key]
            if doc_id in owners or len(owners) != 1 or (walkable and key in self.common):
                continue
            if walkable and self.title_count[" ".join(
                    self.docs[owners[0]]["title"].split()).lower()] > 1:
                continue
            if walkable and not self.referenced(doc_id, key, owners[0]):
                continue
            out[owners[0]] = None
        return list(out)

    def shown(self, doc_id: str) -> list[str]:
        """Every document a name in `doc_id`'s text may be taken for (a name two documents
        share: both), in order."""
        out: dict[str, None] = {}
        for key, _ in self._scan(self.docs[doc_id]["text"], loose=True):
            owners = {*self.table.get(key, ()), *self._sections(key, doc_id)}
            if doc_id in owners:
                continue
            for d in sorted(owners):
                out[d] = None
        return list(out)

    def _sections(self, key: tuple[str, ...], doc_id: str) -> set[str]:
        """The documents titled `key` and a parenthesis that is `doc_id`'s title."""
        title = " ".join(self.docs[doc_id]["title"].split()).lower()
        return {d for d in self.loose_table.get(key, ()) if self.parent[d] == title}

    def referenced(self, doc_id: str, key: tuple[str, ...], target: str) -> bool:
        """Where documents link (a glossary's cross-references), a one-word lower-case name
        refers to its document only when `doc_id` links to it."""
        return not (self.links and len(key) == 1 and key not in self.capital
                    and target not in self.links.get(doc_id, ()))

    def holds(self, clue: Mapping[str, Any], doc_id: str, *, loose: bool = False) -> bool:
        """Whether `doc_id` meets `clue` (a `fact` or `condition` row) by the reader's rules;
        `loose`: an entity clue by any name its text writes, as a reader may take it."""
        text = self.docs[doc_id]["text"]
        kind, key = clue["kind"], (clue.get("key") or "").lower()
        low, high = clue.get("low"), clue.get("high")

        def inside(x: float) -> bool:
            return (low is None or x >= low) and (high is None or x <= high)

        life = _life(text, self.docs[doc_id]["title"]) if kind == "date" else {}
        if key in life and inside(life[key]):
            return True  # "Name (22 February 1944 – 26 April 2017) was ..."
        if kind == "date":  # a date whose four words before it (no punctuation) hold `key`
            for m in _DATE.finditer(text):
                year = int(re.findall(r"1[5-9]\d\d|20[0-4]\d", m.group(0))[-1])
                head = text[max(0, m.start() - 200):m.start()]
                head = _PUNCT.split(head)[-1]
                words = re.findall(r"[A-Za-z][A-Za-z'-]*", head)[-4:]
                if key in (w.lower() for w in words) and inside(year) and _own(
                        text, m.start(), key, self.docs[doc_id]["title"]):
                    return True
            return False
        if kind == "number":  # in a sentence about the document (as for dates), not a bound
            for m in re.finditer(rf"(\d[\d,]*(?:\.\d+)?)\s?{re.escape(key)}\b", text,
                                 re.IGNORECASE):
                before = text[max(0, m.start() - 20):m.start()].lower()
                if re.search(r"\b(?:over|more than|at least|nearly|almost|about|around|some|"
                             r"approximately|roughly|up to|fewer than|less than|under|"
                             r"upwards of)\s*$", before):
                    continue
                if inside(float(m.group(1).replace(",", ""))) and _about(
                        text, m.start(), self.docs[doc_id]["title"]):
                    return True
            return False
        if kind == "category":  # FOLDOC's <a, b> and the Jargon File's [tag] opening a sense
            tags = [t for m in re.finditer(r"(?m)^\s*(?:\d+\.\s*)?<([^<>]+)>", text)
                    for t in m.group(1).split(",")]
            tags += re.findall(r"(?m)^\s*(?:\d+\.\s*)?\[([^\]]+)\]", text)
            return key in {" ".join(t.split()).lower() for t in tags}
        if kind == "entity":  # named by the name the clue quotes (`key`), or it without a
            quoted = clue.get("key") or ""  # trailing parenthesis
            forms = {tuple(w.lower() for w in _WORDS.findall(f)) for f in (
                quoted, re.sub(r"\s*\([^()]*\)\s*$", "", quoted))}
            if loose:
                seen = self._scan(text, loose=True) + [  # several words: in any case
                    (k, w) for k, w in self._scan(text, loose=True, any_case=True) if len(k) > 1]
                return any(words in forms for words, _ in seen
                           if (set(self.table.get(words, ())) | self._sections(words, doc_id))
                           and doc_id not in self.table.get(words, ()))
            return any(words in forms and self.table[words] == [clue["target"]]
                       and self.referenced(doc_id, words, clue["target"])
                       for words, _ in self._scan(text) if doc_id not in self.table[words])
        words = clue.get("value") or key
        return bool(re.search(rf"(?<!\w){re.escape(words)}(?:s|es|'s|’s)?(?!\w)", text,
                              re.IGNORECASE))


_OPENING = ("his", "her", "its", "their", "our", "my", "whose")
_RELATIVE = ("which", "who", "whom", "whose", "that", "where", "when", "while", "whereas")
_WORK = ("directed", "produced", "written", "recorded", "released", "published", "developed",
         "designed", "built", "constructed", "completed", "launched", "introduced", "created",
         "issued", "broadcast", "founded", "established", "formed", "discovered", "invented",
         "patented", "acquired", "commissioned", "adopted")


def _life(text: str, title: str) -> dict[str, int]:
    """{"born": year, "died": year} from the first parenthesis of the first sentence, when it
    follows the subject's name (twelve words at most, no sentence mark; the document's own, or
    a birth name in capitals with the title written after the parenthesis) and holds two sides of
    a dash, each an exact date (no "c.", "ca.", "circa", "fl.", "floruit", "before", "after",
    "or", "?", and no "born"/"died" written), or "born", a name and a date."""
    body = text.lstrip()
    first = re.split(r"[.!?](?=\s|$)|\n", body, maxsplit=1)[0]
    i = first.find("(")
    j = first.find(")", i + 1)
    if i < 0 or j < 0 or "(" in first[i + 1:j] or not 4 <= j - i - 1 <= 120:
        return {}
    names = re.findall(r"[A-Za-z][A-Za-z'-]*", first[:i])
    if not names or len(names) > 12 or re.search(r"[.!?;:]\s", first[:i]):
        return {}
    known = title.split(" (")[0]  # a birth name, the known one written after the parenthesis
    if not _about(body, 0, title) and not (all(w[:1].isupper() for w in names)
                                           and known and known in first[j:]):
        return {}
    for part in first[i + 1:j].split(";"):
        cut = re.search(r"\s*[–—]\s*|\s+-\s+|(?<=\d)-(?=\d)|\s+to\s+", part)
        if cut is None:
            said = part.strip()
            if said.startswith("born ") and "?" not in said:  # "born Rahul Kumar Johar, 25
                date = _DATE.search(said)  # May 1972": the birth name, then the date
                if date:
                    return {"born": int(re.findall(r"1[5-9]\d\d|20[0-4]\d", date.group(0))[-1])}
            continue
        if re.search(r"\b(?:reign(?:ed)?|r\.|ruled|office|term|served|active|fl)\b",
                     part, re.IGNORECASE):
            return {}  # a reign or a term of office, not a life
        out = {}
        for key, side in (("born", part[:cut.start()]), ("died", part[cut.end():])):
            vague = "?" in side or re.search(r"\bborn\b|\bdied\b", side) or any(
                re.search(rf"\b{re.escape(w)}\s", side) for w in (
                    "c.", "ca.", "circa", "fl.", "floruit", "before", "after", "or"))
            date = _DATE.search(side)
            if date and not vague:
                out[key] = int(re.findall(r"1[5-9]\d\d|20[0-4]\d", date.group(0))[-1])
        return out
    return {}


def _own(text: str, at: int, key: str, title: str = "") -> bool:
    """Whether the date at `at`, dated by the word `key`, is the sentence subject's own, in a
    sentence about the document titled `title` (when given)."""
    start = max(text.rfind(c, 0, at) for c in ".!?\n") + 1
    if title and not _about(text, at, title):
        return False
    return _own_clause(text, start, at, key)


def _about(text: str, at: int, title: str) -> bool:
    """Whether the sentence holding position `at` opens with the document titled `title`: a
    pronoun, a capitalized name sharing a word with the title, or "The"/"This" and a word of
    its title, of its first sentence, or "term", "word" ..."""
    start = max(text.rfind(c, 0, at) for c in ".!?\n") + 1
    word = r"[A-Za-z][A-Za-z'-]*"
    opening_words = re.findall(word, text[start:].lstrip()[:80])
    first_sentence = re.split(r"[.!?](?=\s|$)|\n", text.lstrip(), maxsplit=1)[0]
    head = opening_words[0].lower() if opening_words else ""
    opening = text[start:].lstrip()[:80].replace("’", "'")
    said = re.findall(word, opening)
    owner = next((w for i, w in enumerate(said[:6]) if w.endswith(("'s", "s'"))
                  and all(v[:1].isupper() for v in said[:i])), "")
    if head not in ("he", "she", "it", "they") and owner and not title.replace(
            "’", "'").startswith(opening[:opening.find(owner) + len(owner)]):
        return False  # "Big Boi's debut", "The film's sequel": something of the subject's
    if head in ("the", "this"):
        if len(opening_words) < 2 or opening_words[1].lower() not in {
                w.lower() for w in re.findall(word, first_sentence)} | {
                "term", "word", "phrase", "expression", "usage", "abbreviation", "acronym"} | {
                w.lower() for w in re.findall(word, title)}:
            return False
    elif head not in ("he", "she", "it", "they"):
        caps = []
        for w in opening_words:
            if not w[:1].isupper():
                break
            caps.append(w.lower())
        if not set(caps) & {w.lower() for w in re.findall(word, title)}:
            return False
    return True


def _own_clause(text: str, start: int, at: int, key: str) -> bool:
    """Whether the clause before the date at `at` dates the sentence subject's own event."""
    sentence = re.sub(r'^\s*["“][^"“”]+["”]', lambda m: " " * len(m.group(0)), text[start:at])
    word = r"[A-Za-z][A-Za-z'-]*"  # (a quoted name opening the sentence is its subject)
    opening = re.findall(word, sentence)[:1]
    if opening and opening[0].lower() in _OPENING:
        return False
    pieces = _PUNCT.split(sentence)
    clause = re.findall(word, pieces[-1])
    if any(w.lower() in _RELATIVE for w in clause):
        return False
    k = max(i for i, w in enumerate(clause) if w.lower() == key)
    i = 0
    if not any(re.search(word, p) for p in pieces[:-1]):  # the clause opens the sentence:
        # skip its subject's capitalized name
        while i < k and clause[i][:1].isupper():
            i += 1
    if any(w[:1].isupper() for w in clause[i:k]):
        return False
    if key in _WORK and k > 0 and clause[k - 1].lower() not in ("was", "were", "is", "are",
                                                                  "been", "be", "being"):
        return False
    last_mark = [c for c in sentence if _PUNCT.match(c)][-1:]
    if last_mark and last_mark[0] in ",—–" and clause[0].lower() == key:
        return len(re.findall(word, sentence[:sentence.rfind(last_mark[0])])) <= 3
    return True


def rederive(q: Mapping[str, Any], reader: Reader) -> tuple[str, str]:
    """(the answer the raw documents give for question row `q`, what disagrees or "")."""
    spec = q["spec"]
    family, steps = spec["family"], spec["steps"]
    title = {d: r["title"] for d, r in reader.docs.items()}
    for s in steps:
        if s["relation"] in ("link", "compare") and s.get("fact"):
            rivals = reader.shown(s["via"])  # the step's own strictly, the rest as read loosely
            picked = [d for d in rivals if reader.holds(s["fact"], d, loose=d != s["doc"])]
            if picked != ([s["doc"]] if s["doc"] else []):
                return "", f"step to {s['doc'] or 'nothing'} picks {picked}"
    if family == "aggregation":  # a reader who counts every name the pages show agrees
        cond = spec.get("condition") or {"kind": "phrase", "value": spec["pattern"]}
        if spec.get("operation") in ("max", "min"):
            cond = {"kind": "date", "key": cond["key"]}
        met = [d for d in _unlisted(spec, reader) if reader.holds(cond, d, loose=True)]
        if met:
            return "", f"{title[met[0]]}, named but not listed, meets the condition"
        either = [i for i in _items(spec, reader)
                  if reader.holds(cond, i) != reader.holds(cond, i, loose=True)]
        if either:
            return "", f"{title[either[0]]} meets the condition only as read loosely"
    if q["kind"] == "unanswerable" or spec.get("answer_type") == "not_found":
        if family == "aggregation":
            items = _items(spec, reader)
            if any(reader.holds(spec["condition"], i) for i in items):
                return "", "an item meets the premise"
            if spec.get("operation") == "list":
                return "none", ""  # a list no item belongs to
        return "not found", ""
    if family == "chain":
        last = steps[-1]["doc"]
        if spec.get("answer_type") == "year":
            cond = spec["condition"]
            years = set()
            for y in range(1500, 2050):
                if reader.holds({"kind": "date", "key": cond["key"], "low": y, "high": y}, last):
                    years.add(y)
            return (str(years.pop()), "") if len(years) == 1 else ("", f"years {sorted(years)}")
        return title[last], ""
    if any(s["relation"] == "compare" for s in steps):  # two or more sides compared
        cond = spec["condition"]
        sides = [s["doc"] for s in steps if s["relation"] == "compare"]
        year = {}
        for d in sides:
            found = [y for y in range(1500, 2050) if reader.holds(
                {"kind": "date", "key": cond["key"], "low": y, "high": y}, d)]
            if len(found) != 1:
                return "", f"{title[d]} states {found} for {cond['key']}"
            year[d] = found[0]
        pick = max if spec["operation"] == "later" else min
        return title[pick(sides, key=year.__getitem__)], ""
    if family == "intersection":
        sides = [s["via"] for s in steps if s["relation"] == "constraint"]
        rings = [set(reader.named(v, walkable=True)) for v in sides]
        common = set.intersection(*rings) if rings else set()
        loose = set.intersection(*[set(reader.shown(v)) | r
                                   for v, r in zip(sides, rings, strict=True)]) if rings else set()
        if len(common) == 1 and loose - common:  # "hacker", "Internet": named by every side
            return "", f"{title[min(loose - common)]} is named by every side too"
        return (title[common.pop()], "") if len(common) == 1 else ("", f"{len(common)} in common")
    items = _items(spec, reader)
    if items != list(spec["items"]):
        return "", f"{len(items)} items named, the spec has {len(spec['items'])}"
    cond = spec.get("condition") or {"kind": "phrase", "value": spec["pattern"]}
    matching = [i for i in items if reader.holds(cond, i)]
    op = spec["operation"]
    if op == "count":
        return str(len(matching)), ""
    if op == "list":
        return "; ".join(title[m] for m in matching), ""
    years = {}
    for m in matching:
        found = [y for y in range(1500, 2050) if reader.holds(
            {"kind": "date", "key": cond["key"], "low": y, "high": y}, m)]
        if found:
            years[m] = max(found) if op == "max" else min(found)
    ranked = sorted(years, key=years.__getitem__, reverse=op == "max")
    return (title[ranked[0]], "") if ranked else ("", "no dated item")


def _items(spec: Mapping[str, Any], reader: Reader) -> list[str]:
    ring = reader.named(spec["start"], walkable=True)  # a set lists what `open` lists
    if spec["scope"] == "links":
        return ring
    skip = {spec["start"], *ring}
    out: dict[str, None] = {}
    for r in ring:
        for d in reader.named(r, walkable=True):
            if d not in skip:
                out[d] = None
    return list(out)


def _unlisted(spec: Mapping[str, Any], reader: Reader) -> list[str]:
    """What the set's pages name but `open` does not list (everyday words, unlinked one-word
    names, shared titles): documents a reader may count in the set too. For two rings, such a
    name on the start's page may be read as one of the first ring: its names count, and it
    leaves the set."""
    ring = reader.named(spec["start"], walkable=True)
    unsure = ([] if spec["scope"] == "links" else
              [d for d in reader.shown(spec["start"]) if d not in ring])
    pages = [spec["start"]] if spec["scope"] == "links" else ring + unsure
    certain = set(_items(spec, reader)) - set(unsure)
    skip = {spec["start"], *ring, *certain}
    return list(dict.fromkeys([d for p in pages for d in reader.shown(p) if d not in skip]
                              + [d for d in unsure if d not in skip]))
