"""Facts a reader can check, read from a document's text without grammar rules.

- entity: a name of another document (corpus/names.py) in a sentence;
- date: a year (1500-2049) or a full date in a sentence; `value` is the year;
- number: a quantity other than a year, with the word after it as its unit, in a sentence about
  the document (`about_subject`), not an age or a span of time ("for 15 years") and not a
  bound ("over 200 titles", "at least 25 albums");
- category: what the corpus marks as the subject's kind: FOLDOC's `<tag>` and the Jargon
  File's `[tag]` where a sense opens (a line's start, after its number);
- phrase: the fallback, made by the question families from a document's words (phrases.py).

A fact's `relation` is the words of its sentence right before the value (at most four, after
the last punctuation); its `key` (`relation_key`) is the last of those that is a lower-case
word of three letters or more and no stopword or month: "was founded in" gives "founded". Date
and number facts without a key say nothing a question can ask about ("(1997-04-12)") and are
not kept.

A date fact is kept only where it dates something the document's subject did or underwent
(`own_event`): a relation word that names an event (EVENTS: born, died, founded, released ...;
not "used", "called", "located"), in a clause whose subject is the document's: not a relative clause
("which was released in"), not a sentence about someone's ("His father died in"), a
sentence that opens with the document (a pronoun, a name sharing a word with its title, or
"The" and a noun of its first sentence: "The film was released in" on a film's page), no other
capitalized name before the event word ("starred in Heat released in"), and a clause that
opens with the participle after a comma only behind a short subject ("The film, released in");
what a work undergoes (WORKS) only in the passive ("was directed in", not "He directed").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from hopforge.corpus.mentions import STOPWORDS
from hopforge.corpus.names import NameIndex
from hopforge.corpus.records import Document
from hopforge.synth.records import Fact

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
YEAR = r"(?:1[5-9]\d\d|20[0-4]\d)"  # a year a text may date something by
DATE = re.compile(
    rf"(?<![\w.,-])(?:(?:\d{{1,2}} )?{_MONTH} (?:\d{{1,2}}, )?{YEAR}|{YEAR})(?!\w|[,.]\d)")
NUMBER = re.compile(r"(?<![\w.,$£€-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w,]|\.\d)"
                    r"(?:(%)|\s([a-z]{3,12})\b)?")
_BOUND = re.compile(r"\b(?:over|more than|at least|nearly|almost|about|around|approximately|"
                    r"roughly|some|up to|fewer than|less than|under|upwards of)\s*$",
                    re.IGNORECASE)
_AFTER_MONTH = re.compile(rf"{_MONTH}\s*$")
_SENTENCE = re.compile(r"[^\n.!?]*(?:[.!?](?=\s|$)|\n|$)")
_REL_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_FIRST = re.compile(r"[.!?](?=\s|$)|\n")
_OPENING_QUOTE = re.compile(r'^\s*["“][^"“”]{1,120}["”]')
_BOUNDARY = re.compile(r"[.;:!?()\[\]{},—–]")  # not quotes: a quoted name before the word is its subject
# FOLDOC's <tag> where a sense opens (an HTML <kbd> inside a line is no category)
_FOLDOC_TAG = re.compile(r"(?:^|\n)\s*(?:\d+\.\s*)?<([a-z][a-z ,/-]{1,40})>")
_JARGON_TAG = re.compile(r"(?:^|\n)\s*(?:\d+\.\s*)?\[([A-Za-z][\w .'-]{1,30})\]")
MAX_FACTS_PER_KIND = 40
# past forms: the subject did it ("He won", "She died")
PAST = frozenset(["won", "began", "wrote", "sold", "died", "married", "retired", "moved", "returned", "arrived", "debuted", "graduated", "resigned", "emigrated", "immigrated", "joined", "toured", "competed", "starred", "appeared", "performed", "originated", "emerged", "occurred", "collapsed", "started", "ended", "closed", "opened", "premiered", "aired", "ruled", "reigned", "abdicated", "sank", "enlisted"])
# the events a date may be asked about: what a reader recognises as something that happened
EVENTS = PAST | frozenset(["born", "founded", "established", "released", "published", "formed", "married", "elected", "appointed", "crowned", "completed", "built", "constructed", "launched", "created", "introduced", "discovered", "invented", "designed", "developed", "written", "recorded", "produced", "directed", "signed", "awarded", "acquired", "merged", "dissolved", "abolished", "renamed", "inaugurated", "issued", "broadcast", "killed", "executed", "assassinated", "buried", "baptized", "baptised", "ordained", "canonized", "knighted", "demolished", "destroyed", "restored", "incorporated", "patented", "adopted", "ratified", "enacted", "opened", "closed", "discontinued", "standardized", "standardised", "commissioned", "decommissioned", "exiled", "imprisoned", "arrested", "defeated", "captured", "nominated", "inducted", "promoted", "drafted", "traded", "hired", "fired", "succeeded", "named", "coined"])
# what a work undergoes: its date is the subject's only when the subject is the work ("The
# film was directed in", "The film, directed in"), not when the subject did it ("He directed")
WORKS = frozenset(["directed", "produced", "written", "recorded", "released", "published", "developed", "designed", "built", "constructed", "completed", "launched", "introduced", "created", "issued", "broadcast", "founded", "established", "formed", "discovered", "invented", "patented", "acquired", "commissioned", "adopted", "coined"])
_AUXILIARIES = frozenset(["was", "were", "is", "are", "been", "be", "being"])
_RELATIVE = frozenset(["which", "who", "whom", "whose", "that", "where", "when", "while", "whereas"])
_POSSESSIVE = frozenset(["his", "her", "its", "their", "our", "my", "whose"])
# words that stand before a date without naming what happened then
_NOT_KEYS = frozenset(["since", "until", "from", "during", "around", "early", "late", "about", "after", "before", "following", "between", "circa", "through", "till", "last", "next", "each", "every", "year", "years", "age", "aged", "mid"])


def sentences(text: str) -> Iterator[tuple[int, str]]:
    """(start, sentence) for the sentences and lines of `text`, verbatim and stripped."""
    for m in _SENTENCE.finditer(text):
        chunk = m.group(0)
        stripped = chunk.strip()
        if len(stripped) >= 8:
            yield m.start() + chunk.index(stripped[0]), stripped


def relation_before(sentence: str, pos: int, *, words: int = 4) -> str:
    """The words of `sentence` right before character `pos`, after its last punctuation."""
    head = sentence[:pos]
    cut = max((m.end() for m in _BOUNDARY.finditer(head)), default=0)
    found = _REL_WORD.findall(head[cut:])
    return " ".join(found[-words:])


def relation_keys(relation: str) -> list[str]:
    """The words a relation may be known by: its lower-case content words, last first."""
    out = []
    for word in reversed(relation.split()):
        low = word.lower()
        if (word[:1].islower() and len(low) >= 3 and low not in STOPWORDS and low not in MONTHS
                and low not in _NOT_KEYS and low.isalpha()):
            out.append(low)
    return out


def relation_key(relation: str) -> str:
    """The word a relation is known by: its last lower-case content word, or ""."""
    keys = relation_keys(relation)
    return keys[0] if keys else ""


def event(key: str) -> bool:
    """Whether a relation word names something that happened, of the kinds in EVENTS."""
    return key in EVENTS


_PRONOUNS = frozenset(["he", "she", "it", "they"])
_ARTICLES = frozenset(["a", "an", "the"])
# a sentence's opening name (or "The" and a noun) in the possessive: "Big Boi's", "The film's"
_OWNER = re.compile(r"\s*(?:The\s+)?(?:[A-Z][\w.-]*\s+)*?[\w.-]+(?:['’]s|s['’])(?=\s)")
# units that measure a stretch of time or a repetition: ages and spans, not the subject's size
_SPANS = frozenset(["years", "months", "weeks", "days", "hours", "minutes", "seconds", "times", "decades", "centuries"])
# how a glossary's entry speaks of itself ("The term was coined in 1970")
_SELF = frozenset(["term", "word", "phrase", "expression", "usage", "abbreviation", "acronym"])


def about_subject(sentence: str, title: str, lead: str) -> bool:
    """Whether `sentence` is about the document titled `title` whose first sentence is
    `lead`: it opens with a pronoun ("He", "It"), with a capitalized name sharing a word with
    the title, or with "The"/"This" and a noun of the lead sentence ("The film" in a film's
    page), a word of its title ("The geek code") or one a glossary uses for its entry
    ("The term"); anything else ("John Lennon died", "In 1990 ...") is about something else,
    and so is a sentence that opens with something of the subject's ("Big Boi's debut was
    released", "The film's sequel"), unless the title itself opens so ("Schindler's List")."""
    words = _REL_WORD.findall(sentence[:80])
    if not words:
        return False
    first = words[0].lower()
    if first in _PRONOUNS:
        return True
    owner = _OWNER.match(sentence)
    if owner and not title.startswith(owner.group(0).strip()):
        return False
    named = {w.lower() for w in _REL_WORD.findall(title)}
    if first in ("the", "this") and len(words) > 1:
        noun = words[1].lower()
        return noun in _SELF or noun in named or noun in {
            w.lower() for w in _REL_WORD.findall(lead)}
    run = []
    for w in words:
        if not w[:1].isupper():
            break
        run.append(w.lower())
    return bool((named - _ARTICLES) & set(run))  # "A sequel" shares no name with "A Dog's ..."


def own_event(sentence: str, pos: int, title: str = "", lead: str = "") -> str:
    """The word naming what the sentence's subject did or underwent at the date at `pos`
    (the event word nearest before it, among the four words the relation holds), or "" when
    the date belongs to someone or something else (see the module's note). With `title` and
    `lead` (the document's first sentence), the sentence must be about the document too
    (`about_subject`)."""
    if title and not about_subject(sentence, title, lead):
        return ""
    # a quoted name that opens the sentence is its subject: it stands aside like a pronoun
    head = _OPENING_QUOTE.sub(lambda m: " " * len(m.group(0)), sentence[:pos])
    marks = list(_BOUNDARY.finditer(head))
    cut = marks[-1].end() if marks else 0
    words = _REL_WORD.findall(head[cut:])
    keys = [k for k in relation_keys(" ".join(words[-4:])) if event(k)]
    if not keys or not words:
        return ""
    opener = _REL_WORD.findall(sentence[:40])
    if opener and opener[0].lower() in _POSSESSIVE:
        return ""
    if any(w.lower() in _RELATIVE for w in words):
        return ""
    at = max(i for i, w in enumerate(words) if w.lower() == keys[0])
    named = 0  # the capitalized words that open the sentence: its subject's name
    if not _REL_WORD.search(head[:cut]):  # the clause opens the sentence
        while named < at and words[named][:1].isupper():
            named += 1
    if any(w[:1].isupper() for w in words[named:at]):
        return ""
    if marks and marks[-1].group(0) in ",—–" and words[0].lower() == keys[0]:
        before = _REL_WORD.findall(head[:marks[-1].start()])
        if len(before) > 3:
            return ""
    if keys[0] in WORKS and at > 0 and words[at - 1].lower() not in _AUXILIARIES:
        return ""  # "He directed ... in": the date is the work's
    return keys[0]


LIFE_KEYS = ("born", "died")  # what the span in parentheses after a name dates
_LIFE = re.compile(r"\(([^()]{4,120})\)")  # matched at the first "(" only
_LABEL = re.compile(r"\b(?:reign(?:ed)?|r\.|ruled|office|term|served|active|fl)\b",
                    re.IGNORECASE)  # a span of something else than a life
_DASH = re.compile(r"\s*[–—]\s*|\s+-\s+|(?<=\d)-(?=\d)|\s+to\s+")
_VAGUE = re.compile(r"\b(?:c\.|ca\.|circa|fl\.|floruit|before|after|or)\s|\?")


def title_after(lead: str, at: int, title: str) -> bool:
    """Whether `title` (without a parenthesis) is written in `lead` after position `at`."""
    name = re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lead[at:]) is not None


def life_dates(lead: str, title: str) -> list[tuple[str, re.Match[str]]]:
    """("born", date) and ("died", date) from the span in parentheses right after the
    subject's name that opens the document's first sentence, as encyclopedias write a life:
    "Jonathan Demme (February 22, 1944 – April 26, 2017) was ..."; the two sides of a dash, each
    an exact date (no "c.", "fl." or "?"); or "(born NAME, DATE)", a birth name before the
    date, where the words before the date are no relation."""
    m = _LIFE.match(lead, lead.find("("))  # the sentence's first parenthesis, not nested
    if "(" not in lead or m is None:
        return []
    before = _REL_WORD.findall(lead[:m.start()])
    if not before or len(before) > 12 or re.search(r"[.!?;:]\s", lead[:m.start()]):
        return []
    if not about_subject(lead, title, lead) and not (
            all(w[:1].isupper() for w in before) and title_after(lead, m.end(), title)):
        return []  # but a birth name, the known one after it: "Vishal Devgan (born 2 April
        # 1969), known professionally as Ajay Devgn"
    out: list[tuple[str, re.Match[str]]] = []
    for part in m.group(1).split(";"):
        sides = _DASH.split(part, maxsplit=1)
        if len(sides) == 1 and re.match(r"\s*born\b", part):  # "(born Rahul Kumar Johar,
            date = DATE.search(part)  # 25 May 1972)": a birth name, then the date
            if date and not _VAGUE.search(part):
                out.append(("born", date))
                break
        if len(sides) == 2:
            if _LABEL.search(part):
                break  # "(reigned: 1545–1554)", "(in office 1990 – 1995)": not a life
            for key, side in zip(LIFE_KEYS, sides, strict=True):
                date = DATE.search(side)
                if date and not _VAGUE.search(side) and not re.search(r"\b(?:born|died)\b", side):
                    out.append((key, date))
            break
    return out


def quantities(text: str, unit: str) -> set[float]:
    """Every quantity `text` gives of `unit` ("films"), in any sentence."""
    return {number_of(m.group(1)) for m in NUMBER.finditer(text)
            if (m.group(3) or "").lower() == unit}


def year_of(value: str) -> int:
    """The year a date fact states."""
    return int(re.findall(YEAR, value)[-1])


def number_of(value: str) -> float:
    """The quantity of a number fact ("12,500 km" gives 12500.0)."""
    return float(value.split()[0].rstrip("%").replace(",", ""))


def extract(doc: Document, names: NameIndex) -> list[Fact]:
    """The facts of one document, in text order within each kind."""
    out: list[Fact] = []
    counts: dict[str, int] = {}

    def add(fact: Fact) -> None:
        if counts.get(fact.kind, 0) < MAX_FACTS_PER_KIND:
            counts[fact.kind] = counts.get(fact.kind, 0) + 1
            out.append(fact)

    lead = _FIRST.split(doc.text.lstrip(), maxsplit=1)[0]  # the first sentence
    for key, date in life_dates(lead, doc.title):
        add(Fact(doc=doc.doc_id, kind="date", relation=key, value=date.group(0), evidence=lead))
    for start, sent in sentences(doc.text):
        for hit in names.find(sent, exclude=doc.doc_id):
            if names.follows(hit, doc.doc_id):
                add(Fact(doc=doc.doc_id, kind="entity", value=hit.surface, evidence=sent,
                         relation=relation_before(sent, hit.start), target=hit.doc))
        dates = list(DATE.finditer(sent))
        for m in dates:
            relation = relation_before(sent, m.start())
            if own_event(sent, m.start(), doc.title, lead):
                add(Fact(doc=doc.doc_id, kind="date", relation=relation, value=m.group(0),
                         evidence=sent))
        taken = [(m.start(), m.end()) for m in dates]
        for m in NUMBER.finditer(sent):
            if any(a <= m.start() < b for a, b in taken) or re.fullmatch(YEAR, m.group(1)):
                continue
            if number_of(m.group(1)) < 2 or (m.start() < 3 and sent[m.end():m.end() + 1] == "."):
                continue  # a sense number ("2. A parallel language")
            counted = (m.group(3) or "").endswith("s") and m.group(3) not in STOPWORDS
            if _AFTER_MONTH.search(sent[:m.start()]) or (
                    m.group(1).isdigit() and 500 <= int(m.group(1)) <= 2049 and not counted):
                continue  # a day after a month name, or a year (not "over 800 films")
            relation = relation_before(sent, m.start())
            unit = m.group(3) or ""
            if unit in STOPWORDS or unit in MONTHS:
                unit = ""
            if unit in _SPANS or not about_subject(sent, doc.title, lead):
                continue  # an age or a span ("for 15 years"), or someone else's number
            if _BOUND.search(sent[:m.start()]):
                continue  # a bound, not a quantity: "over 200 titles" is no count to compare
            if unit and (unit.endswith("s") or m.group(2)):
                value = (f"{m.group(1)}%" if m.group(2) else
                         f"{m.group(1)} {unit}" if unit else m.group(1))
                add(Fact(doc=doc.doc_id, kind="number", relation=relation, value=value,
                         evidence=sent))
    for m in [*_FOLDOC_TAG.finditer(doc.text), *_JARGON_TAG.finditer(doc.text)]:
        line = doc.text[m.start():doc.text.find("\n", m.end()) % (len(doc.text) + 1)].strip()
        for tag in m.group(1).split(","):
            tag = " ".join(tag.split())
            if len(tag) >= 3:
                add(Fact(doc=doc.doc_id, kind="category", relation="category", value=tag,
                         evidence=line or m.group(0)))
    return _unique(out)


def _unique(facts: Sequence[Fact]) -> list[Fact]:
    seen: set[tuple[str, str, str, str]] = set()
    out = []
    for f in facts:
        key = (f.kind, f.relation, f.value, f.target)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def extract_all(docs: Sequence[Document], names: NameIndex) -> dict[str, list[Fact]]:
    """doc_id -> its facts, for every document."""
    return {d.doc_id: extract(d, names) for d in docs}


def verify(fact: Fact, doc: Document, names: NameIndex) -> str:
    """"" when `fact` holds in `doc` as written, else what is wrong (for model-made facts)."""
    if fact.doc != doc.doc_id:
        return "wrong_doc"
    if not fact.evidence or fact.evidence not in doc.text:
        return "evidence_not_verbatim"
    if not fact.value or fact.value not in fact.evidence:
        return "value_not_in_evidence"
    if fact.relation and fact.relation.lower() not in fact.evidence.lower():
        return "relation_not_in_evidence"
    if fact.kind == "entity":
        found = {h.doc for h in names.find(fact.evidence, exclude=doc.doc_id) if h.doc}
        if fact.target not in found:
            return "target_not_named"
    if fact.kind == "date" and not DATE.search(fact.value):
        return "not_a_date"
    if fact.kind == "number" and not NUMBER.match(fact.value):
        return "not_a_number"
    return ""
