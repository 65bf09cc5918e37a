"""What a document says about itself: dated facts, and the blurring that hides them.

Rules over plain text, no model: "Ilse Varro was a cartographer born in the port of Quillon in
1815." gives the fact (born, 1815). A year becomes its decade and a large number is rounded to
obfuscate questions. Type nouns and descriptions live in `hopforge.synth.definitions` and are
importable from here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopforge.corpus.records import Document
from hopforge.synth.chains import split_sentences
from hopforge.synth.definitions import FALLBACK_TYPE, description, starts_with_subject, type_noun

__all__ = [  # type nouns and descriptions are importable from here too
    "FALLBACK_TYPE", "YearFact", "blur", "blur_numbers", "blur_years", "decade", "description",
    "event_question", "is_person_event", "type_noun", "year_facts",
]

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
        if before.endswith(("the ", " a ", " an ", "'s ", "’s ")) or before in ("a ", "an "):
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
