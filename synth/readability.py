"""The cheap readability check a finished question must pass.

Each part of a question (split at sentence ends, semicolons and "(n)" marks, not after an
abbreviation or an initial) must read as English: no dictionary marks left in, paired quotes, a
verb and at least four words in every clue, no clause ending on "the" or "of", and no "the" +
adjective standing as a noun phrase ("the sudden", "this usual"). Failing questions are rejected
as `unreadable(<problem>)` and counted in the stage report.
"""

from __future__ import annotations

import re

from hopforge.synth.clauses import (
    balanced,
    dangling_end,
    has_verb,
    leftover_boilerplate,
    words_of,
)
from hopforge.synth.lexicon import ADJECTIVES, is_noun

_CLUE_SPLIT = re.compile(r"(?<=[.;!?])\s+(?=\S)|\s+\(\d\)\s+|^\(\d\)\s+")
_LEADS = re.compile(
    r"^(?:About [^:]{1,80}:\s*|(?:Also|Moreover|In addition|First|Next|Then|Finally|To begin|"
    r"From there|After that|In the end|Step one|Step two|Step three|Last step),\s*)+"
)
_DANGLING_ADJ = re.compile(
    r"\b(?:the|this|these|those|a|an)\s+([a-z][a-z-]+)"
    r"(?=\s*[.;:?]|\s+(?:is|was|are|were|has|had)\b)"
)
_BROKEN_NP = re.compile(
    r"\b(?:[Tt]he|[Aa]n?)\s+(?:not|never|is|was|are|were|of|to|and|or|the|a|an|that|which)\b"
)
_NOMINAL_ADJECTIVES = frozenset(
    ["first", "last", "former", "latter", "original", "same", "other", "following", "opposite",
     "previous", "next", "like", "rest", "whole", "best", "worst", "most", "least"]
)
_STRONG_ADJ_SUFFIXES = ("ous", "ful", "less", "able", "ible", "ical", "ish")


def dangling_adjective(word: str) -> bool:
    """Whether `word` after "the"/"a" and before a full stop or verb is an adjective used as a
    noun ("the sudden.", "this usual is"); nominal uses ("the former", "the first") are fine."""
    if word in _NOMINAL_ADJECTIVES or word.endswith("ly") or is_noun(word):
        return False
    return word in ADJECTIVES or word.endswith(_STRONG_ADJ_SUFFIXES) or (
        "-" in word and word.endswith("ed")
    )


_NOT_ENDS = frozenset(
    ["dr", "mr", "mrs", "ms", "st", "jr", "sr", "prof", "no", "vs", "etc", "inc", "ltd", "co",
     "col", "gen", "lt", "capt", "sgt", "rev", "mt", "ft", "e.g", "i.e", "u.s", "u.k", "cf",
     "esp", "approx", "ca", "fig", "vol", "a.k.a", "viz", "poss", "prob"]
)


def _segments(question: str) -> list[str]:
    """The parts of a question between sentence ends, semicolons and "(n)" marks, not split
    after an abbreviation ("Dr.", "St.") or an initial ("Charles B. Griffith")."""
    out: list[str] = []
    start = 0
    text = question.strip()
    for m in _CLUE_SPLIT.finditer(text):
        before = text[start : m.start()].rsplit(" ", 1)[-1].rstrip(".").lower()
        initial = len(before) == 1 and before.isalpha() and before.upper() not in "XYZWVUTS"
        if text[m.start() - 1 : m.start()] == "." and (before in _NOT_ENDS or initial):
            continue
        out.append(text[start : m.start()])
        start = m.end()
    out.append(text[start:])
    return out


def readability_problem(question: str) -> str:
    """"" when each part of a question reads as English, else the first problem found:
    boilerplate (dictionary marks left in), unbalanced quotes, a clue segment without a verb or
    under four words, or a dangling "the" + adjective used as a noun phrase ("the sudden")."""
    if leftover_boilerplate(question):
        return "boilerplate"
    if not balanced(question):
        return "unbalanced"
    if any(dangling_adjective(m.group(1)) for m in _DANGLING_ADJ.finditer(question)):
        return "dangling_adjective"
    if _BROKEN_NP.search(question):
        return "broken_noun_phrase"  # "the not clear that ...", "an of"
    for segment in filter(None, (s.strip() for s in _segments(question))):
        body = _LEADS.sub("", segment)
        head, colon, tail = body.partition(": ")
        if colon and head.split(" ", 1)[0] in ("Which", "What", "Who", "Whose"):
            body = _LEADS.sub("", tail)  # "Which term fits all of these clues: <clue>;"
        words = words_of(body)
        if segment.endswith("?") and words:
            continue  # the asking sentence: checked for form elsewhere
        if len(words) < 4:
            return "fragment"
        if not has_verb(body):
            return "no_verb"
        if dangling_end(words[-1]):
            return "dangling_end"  # "... the veneration of X, a.k.a."
    return ""
