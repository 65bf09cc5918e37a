"""Clue sentences made readable: bracketed asides and dictionary boilerplate dropped, fragments
refused.

Dictionary corpora (the Jargon File, FOLDOC) mix definitions with cross-references ("Compare
comment out.", "Syn. chad."), grammar tags ("n.", "vt."), pronunciations ("/klooj/") and
etymologies ("Prob. from ..."). `strip_boilerplate` removes them; `clause_problem` says whether
what is left reads as a full clause; `definition_phrase` recognises a definition written as a
bare noun phrase ("A person who enjoys ...") so that it can be stated as "X is a person who ...";
`hopforge.synth.readability` holds the cheap check a finished question must pass.
"""

from __future__ import annotations

import re

from hopforge.synth.lexicon import (
    STOPWORDS,
    is_adjective,
    is_noun,
    is_plural,
    is_verb_like,
)
from hopforge.synth.verbs import (
    ADVERBS,
    AUX,
    MODALS,
    SUBORDINATORS,
    has_verb,
    main_verb,
    skip_adverbs,
    subjectless,
    words_of,
)

_LEADING_NOISE = re.compile(
    r"^(?:(?:\d{1,2}\.|(?:[a-z]{1,6}\.,?)+|/[^/\s][^/]{0,40}/,?|<[^>]*>|\[[^\]]*\]|\([^)]*\))\s*)+"
)
_BRACKETS = re.compile(r"\s*(?:\([^()]*\)|\[[^\[\]]*\]|<[^<>]*>)")
_PRONUNCIATION = re.compile(r"(?<!\S)/[A-Za-z' ,.:-]{1,40}/(?=[\s,;.]|$),?")
_CROSS_REF = (
    r"(?:See(?:\s+also)?|Compare|Cf\.?|Syn\.|Synonyms?:|Antonyms?:?|Oppose[sd]?|Opposite:|"
    r"Abbrev\.|Abbreviated|Also(?:\s+(?:called|spelled|spelt|written|known|seen|used))?|"
    r"Var\.|Variants?:|Obs\.|Esp\.|Usage:|Rare:|Pl\.|Plural:|Often abbreviated|"
    r"(?:Prob|Poss)\.(?:\s+from)?|(?:Probably|Possibly|Perhaps)\s+(?:from|derived)|"
    r"From\s+(?:the\s+)?(?:Latin|Greek|German|French|Old|Middle|Yiddish|Japanese))"
)
_BOILERPLATE_SEGMENT = re.compile(rf"^\W*{_CROSS_REF}(?![\w-])", re.IGNORECASE)
_SENSE_REF = re.compile(r",?\s+sense\s+\d+\b")  # "Same as X, sense 2."
_TRAILING_REF = re.compile(r"\s*[,;:—–-]+\s*(?:see(?:\s+also)?|compare|cf\.?|esp\.)\s.*$",
                           re.IGNORECASE)
_SEGMENT = re.compile(
    r"(?<=[.;])(?<!\bSyn\.)(?<!\bsyn\.)(?<!\bAbbrev\.)(?<!\bProb\.)(?<!\bPoss\.)(?<!\bCf\.)"
    r"(?<!\bcf\.)(?<!\bEsp\.)(?<!\besp\.)(?<!\bVar\.)(?<!\bObs\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"\s+(?=\S)"
)
_BOILERPLATE_LEFT = re.compile(
    r"\b(?i:syn|abbrev|cf|prob|obs)\.|(?<![\w-])(?:See also|See|Compare)\s+(?=\S)|"
    r"[;,]\s+(?:see|compare)\s|(?<=\s)(?:n|adj|adv|vt|vi)\.\s"
)
_DETERMINER = re.compile(r"^(?:(?:a|an|the|one of the|one of a|one of|any|some)\s+)", re.IGNORECASE)
_BARE_DEFINITION = re.compile(
    r"^(?:[A-Za-z-]+\s+){0,2}(?:synonym|abbreviation|acronym|term|name|nickname|euphemism|"
    r"variant|slang|jargon|word|expression|contraction|alternative)\s+(?:for|of)\s",
    re.IGNORECASE,
)
_DANGLING_END = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "from", "for", "with", "by", "to", "into", "onto", "and", "or", "but", "nor", "than", "as", "its", "his", "her", "their", "our", "my", "your", "whose", "which", "who", "whom", "very", "such", "that", "a.k.a", "aka", "e.g", "i.e", "etc", "esp"]
)
_QUOTES = (("“", "”"), ("«", "»"))


def strip_brackets(text: str) -> str:
    """Drop parenthesised, bracketed and angle-bracketed asides (they hold dates and names)."""
    prev = None
    while prev != text:
        prev, text = text, _BRACKETS.sub("", text)
    return " ".join(text.split())


def clean_sentence(sentence: str) -> str:
    """A sentence without list numbering, part-of-speech marks or bracketed asides."""
    return strip_brackets(_LEADING_NOISE.sub("", sentence.strip()))


def strip_boilerplate(sentence: str) -> str:
    """`sentence` cleaned, without dictionary boilerplate: cross-reference, synonym, abbreviation
    and etymology segments ("Compare X.", "See X.", "Syn. X.", "Prob. from ..."), trailing
    "; see X", grammar tags and quoted pronunciations. "" when nothing else is left."""
    text = _PRONUNCIATION.sub("", clean_sentence(sentence))
    kept = []
    for segment in _SEGMENT.split(" ".join(text.split())):
        segment = _LEADING_NOISE.sub("", segment)
        if not segment or _BOILERPLATE_SEGMENT.match(segment):
            continue
        segment = _SENSE_REF.sub("", _TRAILING_REF.sub("", segment))
        if segment:
            kept.append(segment)
    out = drop_connective(" ".join(kept).strip(" ;,:"))
    if out and out[-1] not in ".!?\"”’)" and text.rstrip().endswith("."):
        out += "."  # "A feature that is not a bug; see also X." keeps its full stop
    return out


def leftover_boilerplate(text: str) -> bool:
    """Whether dictionary marks are left in `text` ("Syn.", "Compare X", "; see X", "n.")."""
    return _BOILERPLATE_LEFT.search(text) is not None


def dangling_end(word: str) -> bool:
    """Whether a clause cannot end on `word` ("the", "of", "a.k.a")."""
    return word.lower() in _DANGLING_END


def balanced(text: str) -> bool:
    """Whether quotes and brackets in `text` are paired."""
    pairs = (*_QUOTES, ("(", ")"), ("[", "]"))
    return text.count('"') % 2 == 0 and all(text.count(a) == text.count(b) for a, b in pairs)


def clause_problem(text: str, *, min_words: int = 4) -> str:
    """"" when `text` reads as a full clause, else what is wrong with it: too_short, no_verb,
    no_subject, quotation, boilerplate, unbalanced, dangling_end or list."""
    words = words_of(text)
    if len(words) < min_words:
        return "too_short"
    if _BOILERPLATE_LEFT.search(text):
        return "boilerplate"
    if not balanced(text):
        return "unbalanced"
    if _quotation(text):
        return "quotation"  # a usage example, not a statement
    if words[0].lower() == "to" and len(words) > 1 and _infinitive(words[1]):
        return "infinitive"  # "To send a message to ...": a definition, not a statement
    if subjectless(text.split()):
        return "no_subject"
    if not main_verb(text.split()):
        return "np_fragment"  # "Special-case code to cope with input that would cause ..."
    if words[0].lower() in _SUBORDINATE_OPENERS | _PREPOSITION_OPENERS and "," not in text:
        return "subordinate"  # "Because X components can support ...": no main clause
    if words[-1].lower() in _DANGLING_END:
        return "dangling_end"
    if text.count(",") > max(4, len(words) // 5) or text.count(";") > 1:
        return "list"
    if not has_verb(text):
        return "no_verb"
    return ""


def _quotation(text: str) -> bool:
    """Whether a text is a quoted usage example, not a sentence about a quoted title."""
    text = text.strip()
    if text[:1] not in "“\"‘'«":
        return False
    close = max(text.rfind(q) for q in "”\"’'»")
    return close >= 0.6 * len(text)


_MASS_NOUNS = frozenset(
    ["hardware", "software", "data", "time", "code", "information", "slang", "jargon", "text",
     "output", "input", "stuff", "equipment", "traffic", "mail", "email", "spam", "noise",
     "money", "power", "memory", "storage", "garbage", "documentation", "usage", "behavior",
     "behaviour", "lossage", "cruft", "humor", "humour", "music", "art", "work", "research"]
)


def predicate_phrase(text: str) -> tuple[str, str] | None:
    """A sentence that opens with its predicate, as (verb, phrase) to state it of a subject:
    "Used of hardware ..." -> ("is", "used of hardware ..."), "Describes a tendency ..." ->
    ("", "describes a tendency ..."), "May also display ..." -> ("", "may also display ...").
    None when `text` has a subject of its own."""
    words = words_of(text)
    if len(words) < 3 or not subjectless(text.split()):
        return None
    body = text.strip().rstrip(".")
    body = body[:1].lower() + body[1:]
    i = skip_adverbs(words)
    verb = words[i].lower()
    if verb in MODALS or verb in _PAST_ONLY or (verb.endswith("s") and is_verb_like(verb, loose=True)):
        return "", body  # "May also ...", "Became ...", "Competes with ..."
    noun = words[i + 1].lower() if i + 1 < len(words) else ""
    if i == 0 and is_adjective(verb) and is_noun(noun) and not is_plural(noun) and (
        noun not in _MASS_NOUNS
    ):
        return "is", f"{'an' if body[:1] in 'aeiou' else 'a'} {body}"  # "Pejorative term for"
    return "is", body


_SUBORDINATE_OPENERS = frozenset(
    ["because", "although", "though", "whereas", "unless", "if", "while", "since"]
)
_PREPOSITION_OPENERS = frozenset(["unlike", "like", "despite", "including", "besides"])
_PAST_ONLY = frozenset(
    ["became", "began", "wrote", "came", "went", "took", "gave", "ran", "saw", "grew", "knew",
     "drew", "fell", "rose", "spoke", "broke", "chose", "ate", "drove", "flew", "threw", "stole",
     "swore", "woke", "wore", "sang", "sank", "was", "were", "had", "did"]
)
_CONNECTIVE = re.compile(
    r"^(?:However|Indeed|Thus|Hence|Therefore|Also|Moreover|Furthermore|In addition|"
    r"On the other hand|In fact|Of course|Consequently|Additionally|Similarly|Likewise|"
    r"For example|For instance|E\.g\.|Conversely|Again|Still|Instead|Ironically|"
    r"Interestingly|Unfortunately|Fortunately|Naturally|Clearly|Obviously),?\s+"
)


def drop_connective(text: str) -> str:
    """`text` without a leading discourse connective ("However, ...", "Indeed, ..."), which
    points back to a sentence the question does not show."""
    out = _CONNECTIVE.sub("", text, count=1)
    return out[:1].upper() + out[1:] if out != text else text


_SENSE_OPENING = re.compile(
    r"^\s*(?:\d{1,2}\.\s|(?:n|adj|adv|vt|vi|v|interj|pl)\.|<[^>]+>|/[^/\s][^/]{0,40}/|\[)"
)


def opens_sense(sentence: str, *, first: bool) -> bool:
    """Whether a raw sentence opens a document or a numbered or tagged sense of a dictionary
    entry: the place where a bare phrase is a definition of the entry's term."""
    return first or _SENSE_OPENING.match(sentence) is not None


def _infinitive(word: str) -> bool:
    """Whether the word after a sentence-initial "To" is a verb ("To surround ...", not "To the
    astonishment of ...")."""
    return word.isalpha() and word.islower() and word not in STOPWORDS and not is_noun(word)


def definition_phrase(text: str) -> tuple[str, str] | None:
    """A definition written as a bare phrase, as (verb, phrase) to state it of its subject:
    "A person who enjoys ..." -> ("is", "a person who enjoys ..."), "To surround ..." ->
    ("means", "to surround ..."), "Synonym for ..." -> ("is", "a synonym for ..."). None for a
    sentence with a main verb, or anything else."""
    text = text.strip().rstrip(".")
    words = text.split()
    if len(words) < 3 or not balanced(text) or words[-1].lower() in _DANGLING_END:
        return None
    if words[0].rstrip(",").lower() in ADVERBS and words[0].endswith(","):
        words = words[1:]  # "Originally, a metasyntactic variable ..."
        text = " ".join(words)
        if len(words) < 3:
            return None
    first = words[0].lower()
    if first == "to" and _infinitive(words[1]):
        return "means", "to " + " ".join(words[1:])
    if first in ("one", "someone", "something", "anyone", "anything") and words[1].lower() in (
        "who", "that", "which", "whose"
    ):
        return "is", first + " " + " ".join(words[1:])
    m = _DETERMINER.match(text)
    if m is None:
        head = first.strip(",")
        bare = _BARE_DEFINITION.match(text) or (
            is_noun(head) and not is_plural(head) and head not in _MASS_NOUNS
            and words[1].lower() in ("for", "of", "that", "which", "who", "used")
        )  # "Hackerism for ...", "Term used for ..."
        if bare and not _main_verb(words[1:]):
            phrase = text[:1].lower() + text[1:]
            return "is", f"{'an' if phrase[:1] in 'aeiou' else 'a'} {phrase}"
        return None
    if _main_verb(text[m.end() :].split()):
        return None
    return "is", text[:1].lower() + text[1:]


def _main_verb(words: list[str]) -> bool:
    """Whether a phrase has a finite verb before its first subordinate clause or comma."""
    for i, raw in enumerate(words):
        low = raw.lower().strip("\"'“”‘’")
        if low in SUBORDINATORS or raw.endswith((",", ";", ":")) or low in ("—", "–", "-"):
            return low in AUX
        if low in AUX:
            return True
        if i > 0 and low.endswith("s") and is_verb_like(low) and not is_noun(low):
            return True  # "A program runs ..."
    return False
