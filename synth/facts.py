"""What a document says about itself: its type noun, a short description, dated facts.

Rules over plain text, no model: "Ilse Varro was a cartographer born in the port of Quillon in
1815." gives the type "cartographer", the description "a cartographer born in the port of
Quillon in 1815" and the fact (born, 1815). Also the blurring used to obfuscate questions: a year
becomes its decade, a large number is rounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopforge.corpus.records import Document
from hopforge.synth.chains import (
    clean_sentence,
    mention_names,
    name_pattern,
    split_sentences,
)

FALLBACK_TYPE = "entry"
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_YEAR = r"(?:1[0-9]{3}|20[0-4][0-9])"
_DATED_YEAR = re.compile(
    rf"(?<![\w.,/:$£€-])(?:(?:\d{{1,2}}\s+)?(?:{_MONTHS})\.?\s+(?:\d{{1,2}},?\s+)?)?(?P<year>{_YEAR})"
    r"(?![\w/:-]|\.\d|,\d)"
)
_HEDGES = frozenset(
    ("about", "around", "approximately", "roughly", "nearly", "almost", "some", "over", "under")
)
_ON_DECADE = re.compile(r"\bon (the \d{4}s)")
_NUMBER = re.compile(r"(?<![\w.,/:$£€-])(\d{1,3}(?:,\d{3})+|\d{3,})(?![\w/:-]|\.\d|,\d)")
_EVENTS = (
    "born|died|founded|established|opened|built|completed|published|released|formed|created|"
    "introduced|invented|designed|written|coined|lit|surveyed|launched|closed|developed|"
    "discovered|founded|incorporated|dissolved|abolished|constructed|premiered|recorded"
)
_FACT = re.compile(rf"\b(?P<event>{_EVENTS})\b(?P<mid>[^.;:!?]{{0,40}}?)(?P<year>{_YEAR})(?![\w-])")
_COPULA = re.compile(
    r"^(?P<subj>.{1,90}?)\s+(?:is|was|are|were)\s+"
    r"(?:(?:also|probably|perhaps|usually|often|originally|traditionally|generally|now)\s+)?"
    r"(?P<pred>(?:(?:a|an|the|one of the)\s+)?[a-z].+?)[.!]?$",
    re.IGNORECASE,
)
_STOP = frozenset(
    ["of", "in", "on", "at", "from", "for", "with", "by", "to", "into", "near", "under", "over", "who", "whom", "whose", "which", "that", "where", "when", "as", "and", "or", "but", "than", "born", "known", "called", "named", "made", "founded", "based", "located", "built", "written", "used", "like", "such", "during", "after", "before", "since", "between", "among", "within", "without", "against", "about", "is", "was", "are", "were", "be", "been", "has", "have", "had", "can", "may", "will", "would", "should", "could", "does", "did", "do", "its", "his", "her", "their", "their", "this", "these", "those", "whose", '",']
)
_VAGUE = frozenset(
    ["kind", "type", "form", "member", "part", "piece", "unit", "variety", "sort", "genre", "style", "species", "breed", "family", "group", "range", "series", "set", "class", "collection", "branch", "line", "body"]
)
_DROP = frozenset(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "last", "former", "late", "famous", "well-known", "notable"]
)
_VERBS = frozenset(["is", "was", "are", "were", "has", "have", "had", "can", "may", "will", "would", "should", "could", "does", "did", "do"])
_PRONOUNS = frozenset(["it", "he", "she", "they", "this", "these"])
_PERSON_EVENTS = frozenset({"born", "died"})


@dataclass(frozen=True, slots=True, kw_only=True)
class YearFact:
    """A dated event a document states about itself, e.g. (born, 1815)."""

    doc_id: str
    event: str
    year: int
    sentence: str


def decade(year: int) -> str:
    return f"the {year // 10 * 10}s"


def blur_years(text: str) -> str:
    """Replace each year (with any day and month before it) by its decade: 1847 -> the 1840s."""

    def sub(m: re.Match[str]) -> str:
        blurred = decade(int(m.group("year")))
        before = text[max(0, m.start() - 4) : m.start()].lower()
        if before.endswith(("the ", " a ", " an ")) or before in ("a ", "an "):
            return blurred[4:]  # "the 1847 survey", "a 1996 film" -> "a 1990s film"
        return blurred

    return _ON_DECADE.sub(r"in \1", _DATED_YEAR.sub(sub, text))


def blur_numbers(text: str) -> str:
    """Round numbers of three or more digits to one significant figure: 912 -> about 900."""

    def sub(m: re.Match[str]) -> str:
        preceding = m.string[max(0, m.start() - 20) : m.start()].split()
        if preceding and preceding[-1][:1].isupper():
            return m.group(0)  # a model number: "the Motorola 68000"
        following = [w.rstrip(",.;:)") for w in m.string[m.end() : m.end() + 14].split()]
        if not following or not following[0].isalpha() or not following[0].islower():
            return m.group(0)  # a model number or code, not a quantity ("the Intel 8080")
        if following[0] in ("and", "or", "to", "in", "on", "of", "with", "by"):
            return m.group(0)
        value = int(m.group(1).replace(",", ""))
        if 1000 <= value <= 2049 and "," not in m.group(1):
            return m.group(0)  # a year: blur_years handles it
        scale = 10 ** (len(str(value)) - 1)
        rounded = round(value / scale) * scale
        if rounded == value:
            return m.group(0)
        hedged = preceding and preceding[-1].lower() in _HEDGES
        return f"{rounded:,}" if hedged else f"about {rounded:,}"

    return _NUMBER.sub(sub, text)


def blur(text: str) -> str:
    """Years to decades and large numbers rounded."""
    return blur_numbers(blur_years(text))


def is_subject(text: str, doc: Document, kind: str = "") -> bool:
    """Whether `text` (the start of a sentence) names `doc`, is a pronoun, or is "the <kind>"."""
    text = text.strip()
    low = text.lower()
    if low in _PRONOUNS:
        return True
    if (
        kind
        and kind != FALLBACK_TYPE
        and low in (f"the {kind}".lower(), f"the {kind.split()[-1]}".lower())
    ):
        return True
    for article in ("the ", "a ", "an "):
        if low.startswith(article):
            text = text[len(article) :]
            break
    names = {n.lower() for n in mention_names(doc)}
    return text.lower() in names


def type_noun(doc: Document) -> str:
    """A short noun phrase naming what `doc` is ("cartographer", "port city"), or "entry"."""
    for i, sentence in enumerate(split_sentences(doc.text)[:3]):
        first = i == 0
        sentence = clean_sentence(sentence)
        m = _COPULA.match(sentence)
        words = None
        if m and is_subject(m.group("subj"), doc) and _nominal(m.group("pred")):
            words = m.group("pred").split()
        elif (
            first
            and sentence.lower().startswith(("a ", "an ", "the "))
            and not _names_in(sentence[:40], doc)
        ):
            words = sentence.split()  # a definition: "A person who enjoys ..."
        elif m and first and m.group("subj")[:1].isupper() and len(m.group("subj").split()) <= 8:
            words = m.group("pred").split()  # a lead sentence about a differently named subject
        if words:
            found = _head(words)
            if found and not _names_in(found, doc):
                return found
    return _title_head(doc.title) or FALLBACK_TYPE


_TITLE_HEADS = frozenset(
    ["school", "university", "college", "academy", "institute", "river", "lake", "sea", "bay", "island", "mountain", "hill", "hills", "valley", "forest", "park", "bridge", "church", "cathedral", "abbey", "chapel", "temple", "castle", "palace", "tower", "museum", "gallery", "library", "observatory", "station", "airport", "harbour", "harbor", "port", "street", "road", "railway", "canal", "company", "corporation", "band", "club", "team", "party", "army", "navy", "war", "battle", "treaty", "prize", "award", "film", "album", "song", "novel", "opera", "play", "journal", "magazine", "newspaper", "market", "festival", "language", "protocol", "algorithm", "system", "theorem", "law"]
)


def _title_head(title: str) -> str:
    """The last word of a multi-word title when it is a common noun ("Royal Survey School")."""
    words = title.split()
    if len(words) >= 2 and words[-1].lower() in _TITLE_HEADS:
        return words[-1].lower()
    return ""


def _names_in(text: str, doc: Document) -> bool:
    pattern = name_pattern(mention_names(doc))
    return bool(pattern and pattern.search(text))


def _head(words: list[str]) -> str:
    if words[0].lower() in ("a", "an", "the"):
        words = words[1:]
    elif [w.lower() for w in words[:3]] == ["one", "of", "the"]:
        words = words[3:]
    picked: list[str] = []
    for i, raw in enumerate(words):
        word = raw.strip(",;:.!?\"'“”‘’")
        low = word.lower()
        if low == "of" and picked and picked[-1].lower() in _VAGUE:
            picked.append(word)
            continue
        if re.fullmatch(r"[\d,.-]+s?|[\d-]+(?:st|nd|rd|th)", word) and not picked:
            continue  # "a 2004 Swedish drama film"
        if low in _STOP or not re.fullmatch(r"[A-Za-z][A-Za-z'-]*", word):
            break
        nxt = words[i + 1].lower() if i + 1 < len(words) else ""
        if picked and (low.endswith(("ed", "ly")) or nxt in ("the", "a", "an", "why", "how")):
            break  # "a film directed by", "a system supported mainly by", "a theory explains the"
        if low.endswith("est") and len(low) > 5 or low in _DROP:
            continue
        picked.append(word)
        if raw[-1:] in ";:." or (raw[-1:] == "," and (nxt in _STOP or not nxt.isalpha())):
            break
        if i >= 6:
            break
    while picked and picked[-1].lower() in ("of", "and", "or"):
        picked.pop()
    if not picked:
        return ""
    if "of" not in (w.lower() for w in picked):
        picked = picked[-2:]
    if not picked[-1].islower():
        return ""
    return " ".join(picked)


def description(doc: Document, *, max_words: int = 16, avoid_year: int | None = None) -> str:
    """A noun phrase from the document's own text that describes it, or "" when none is found.

    "a cartographer born in the port of Quillon in 1815"; or "the engineer who designed harbours
    and lighthouses". Sentences stating `avoid_year` are skipped (a comparison must not give its
    answer away). The result is not blurred.
    """
    kind = type_noun(doc)
    for i, sentence in enumerate(split_sentences(doc.text)[:4]):
        sentence = clean_sentence(sentence).rstrip(".!")
        if avoid_year is not None and str(avoid_year) in sentence:
            continue
        m = _COPULA.match(sentence)
        if m and is_subject(m.group("subj"), doc, kind) and _nominal(m.group("pred")):
            phrase = m.group("pred")
        elif (
            i == 0
            and sentence.startswith(("A ", "An ", "The "))
            and _defines(sentence, kind)
            and not _names_in(sentence, doc)
        ):
            phrase = sentence[:1].lower() + sentence[1:]  # "A person who enjoys ..."
        else:
            rest = _after_subject(sentence, doc, kind)
            if rest is None or kind == FALLBACK_TYPE:
                continue
            who = "who" if re.match(r"(?i)(he|she|they)\b", sentence) else "that"
            phrase = f"the {kind} {who} {rest}"
        return _truncate(phrase, max_words)
    return ""


def starts_with_subject(sentence: str, doc: Document, kind: str = "") -> bool:
    """Whether `sentence` is about `doc`: it opens with its name, a pronoun, or "The <kind>"."""
    words = clean_sentence(sentence).split(" ", 3)
    if any(is_subject(" ".join(words[:take]), doc, kind) for take in (1, 2, 3)):
        return True
    pattern = name_pattern(mention_names(doc))
    m = pattern.match(sentence.removeprefix("The ")) if pattern else None
    return bool(m)


def _defines(sentence: str, kind: str) -> bool:
    """A definition sentence: it opens with the type noun phrase and has no main verb."""
    head = " ".join(sentence.split()[:5]).lower()
    return kind != FALLBACK_TYPE and kind.lower() in head and not re.search(
        r"\b(?:is|was|are|were)\b", sentence
    )


def _nominal(pred: str) -> bool:
    first = pred.split(" ", 1)[0].lower()
    return first in ("a", "an", "the", "one") or not (first in _STOP or first.endswith("ed"))


def _after_subject(sentence: str, doc: Document, kind: str) -> str | None:
    size = len(doc.title.split()) + 1
    parts = sentence.split(" ", size)
    for take in range(1, size + 1):
        if len(parts) > take and is_subject(" ".join(parts[:take]), doc, kind):
            rest = " ".join(parts[take:])
            first = rest.split(" ", 1)[0]
            return rest if first.islower() and first not in _STOP - _VERBS else None
    return None


def _truncate(phrase: str, max_words: int) -> str:
    words = phrase.split()
    if len(words) <= max_words:
        return phrase
    cut = words[:max_words]
    for i in range(len(cut) - 1, 2, -1):
        if cut[i].endswith((",", ";")):
            cut = cut[: i + 1]
            break
        if cut[i].lower() in ("and", "which", "who", "but", "whose", "where"):
            cut = cut[:i]
            break
    while len(cut) > 2 and cut[-1].lower().strip(",;") in _STOP:
        cut.pop()
    return " ".join(cut).rstrip(",;")


def year_facts(doc: Document) -> list[YearFact]:
    """Dated events stated in `doc` (first per event), in text order."""
    facts: list[YearFact] = []
    seen: set[str] = set()
    kind = type_noun(doc)
    for sentence in split_sentences(doc.text):
        if not starts_with_subject(sentence, doc, kind):
            continue
        for m in _FACT.finditer(sentence):
            event = m.group("event").lower()
            if event in seen or re.search(r"\b(?:and|but|which|who)\b", m.group("mid")):
                continue
            seen.add(event)
            facts.append(
                YearFact(
                    doc_id=doc.doc_id, event=event, year=int(m.group("year")), sentence=sentence
                )
            )
    return facts


def is_person_event(event: str) -> bool:
    return event in _PERSON_EVENTS


def event_question(event: str, ref: str) -> str:
    """The clause asking when `event` happened to `ref`: "was that engineer born", "did ... die"."""
    if event == "died":
        return f"did {ref} die"
    return f"was {ref} {event}"
