"""How a question refers to documents it must not name, and the rewriting that hides names.

A hidden document is referred to by its type ("a cartographer", then "that cartographer") when
every place it is mentioned allows a noun phrase there, and by a letter ("X") otherwise: a name
used as a modifier ("Unix machines"), inside quotes, or after a noun ("the editor EMACS") takes
a letter, which fits anywhere a name does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopforge.synth.lexicon import (
    ADJECTIVES,
    STOPWORDS,
    is_noun,
    is_plural,
    is_verb_like,
)

LETTERS = ("X", "Y", "Z", "W", "V", "U", "T", "S")
_DETERMINERS = r"(?:the|its|his|her|their|a|an)"
_QUOTE_OPEN = ("“", '"', "‘", "'", "«")
SUBJECT = "\x01"  # marks the subject's own names while a sentence is rewritten


_A_BEFORE_VOWEL = re.compile(r"^(?:uni|use|usu|uti|ure|uro|eu|ewe|one\b|once\b)", re.IGNORECASE)
_AN_BEFORE_H = re.compile(r"^(?:hour|honest|honou?r|heir)", re.IGNORECASE)


def article(phrase: str) -> str:
    """ "a cartographer" / "an engineer" / "a user" / "an hour"."""
    head = phrase.split(" ", 1)[0]
    if len(head) > 1 and head.isupper() and head.isalpha():  # "an FTP site", "a DEC machine"
        return f"{'an' if head[0] in 'AEFHILMNORSX' else 'a'} {phrase}"
    vowel = phrase[:1].lower() in "aeiou" and not _A_BEFORE_VOWEL.match(phrase)
    return f"{'an' if vowel or _AN_BEFORE_H.match(phrase) else 'a'} {phrase}"


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


_LOWERABLE = STOPWORDS | {"there", "here", "according"}


def low(text: str) -> str:
    """Lower-case a leading common word ("The", "Hackers", "Used"), never a leading name."""
    word = text.split(" ", 1)[0].strip(",;:")
    lower = word.lower()
    common = lower in ADJECTIVES or is_verb_like(lower) or (is_plural(lower) and is_noun(lower))
    if lower in _LOWERABLE or word[1:].islower() and word.isalpha() and common:
        return text[:1].lower() + text[1:]
    return text


def possessive(ref: str) -> str:
    return f"{ref}'" if ref.endswith("s") else f"{ref}'s"


@dataclass(frozen=True, slots=True)
class Ref:
    """How a question refers to one hidden document: by its type, or by a letter. `noun` names
    what it is when asking for it ("Which language is X?"): its type, or a neutral word."""

    kind: str  # "" when the document goes by a letter
    letter: str = ""
    det: str = "that"  # how a later mention points back: "that", "this" or "the"
    noun: str = "term"

    @property
    def intro(self) -> str:
        return self.letter or article(self.kind)

    @property
    def that(self) -> str:
        return self.letter or f"{self.det} {self.kind}"

    @property
    def this(self) -> str:
        return self.letter or f"this {self.kind}"


def kind_fits(text: str, pattern: re.Pattern[str], kind: str) -> bool:
    """Whether every mention of a name in `text` can become a noun phrase of `kind`: not used as
    a modifier of a following noun, not quoted, not after a noun other than the kind itself."""
    kind_words = {w.lower() for w in kind.split()}
    for m in pattern.finditer(text):
        before = text[: m.start()]
        after = text[m.end() :]
        if before.rstrip()[-1:] in _QUOTE_OPEN or after[:1] in ("”", '"', "’"):
            return False
        nxt = re.match(r"\s+([a-z][\w-]*)", after)
        if nxt and not after.startswith(("'s", "’s")):
            word = nxt.group(1)
            if word not in STOPWORDS and not is_verb_like(word, loose=True):
                return False  # "life patterns", "Unix machines", "Quillon harbour"
        prev = re.search(r"([A-Za-z][\w-]*)\s*$", before)
        if prev and not re.search(r"[,;:(]\s*$", before):
            word = prev.group(1)
            if (word.islower() and word not in STOPWORDS and not is_verb_like(word)
                    and word.lower() not in kind_words):
                return False  # "the editor EMACS", "the term W"
    return True


def mask(
    text: str,
    pattern: re.Pattern[str],
    title: str,
    ref: str,
    later_ref: str,
    who: Ref,
    *,
    this_mode: bool,
) -> str:
    """`text` with each mention of a hidden document replaced: the first by `ref`, the others by
    `later_ref` ("by the cartographer Ilse Varro" -> "by a cartographer")."""
    kind_words = [w for w in who.kind.split() if len(w) > 2 and w != "of"]
    first = True
    pos = 0
    upper = " " not in title and any(c.isupper() for c in title)
    while (m := pattern.search(text, pos)) is not None:
        if upper and m.group(0).islower():
            pos = m.end()  # a common word, not the name
            continue
        before, after = text[: m.start()], text[m.end() :]
        use = ref if first else later_ref
        replaced = apposition(before, kind_words, this_mode) if first else None
        if after.startswith(("'s", "’s")):
            head, after = before + possessive(use), after[2:]
        elif replaced is not None:
            head, after = replaced, (after.lstrip(",") if after.startswith(",") else after)
        else:
            article_before = r"\b(?:[Tt]he|[Aa]n?)\s+$" if not who.letter else r"\b[Tt]he\s+$"
            head = re.sub(article_before, "", before) + use
        text, pos = head + after, len(head)
        first = False
    return re.sub(r"\s+([,.;])", r"\1", re.sub(r"\s{2,}", " ", text)).replace(",,", ",")


def apposition(before: str, kind_words: list[str], this_mode: bool) -> str | None:
    """ "by the cartographer Ilse Varro" -> "by a cartographer" (or "by this cartographer")."""
    if not kind_words:
        return None
    words = "|".join(re.escape(w) for w in kind_words)
    m = re.search(
        rf"\b({_DETERMINERS})\s+((?:[\w-]+\s+){{0,2}}?(?:{words}))(?:,?\s+(?:the\s+)?|\s+of\s+)$",
        before,
        re.IGNORECASE,
    )
    if m is None:
        return None
    det = m.group(1)
    if this_mode:
        det = "this"
    elif det.lower() == "the":
        det = article(m.group(2)).split(" ", 1)[0]
    return before[: m.start()] + det + " " + m.group(2) + " "


def name_subject(text: str, kind: str, ref: str) -> str:
    """Put `ref` where `text` names its subject (the `SUBJECT` marks), or where it opens with a
    pronoun, "This term" or "The <kind>"; "" when the subject appears nowhere."""
    determined = re.fullmatch(r"[A-Z]", ref) is not None or ref.split(" ", 1)[0].lower() in (
        "a", "an", "that", "this", "the")
    later = ref if not ref.lower().startswith(("a ", "an ")) else f"that {kind}"
    if SUBJECT in text:
        if determined:
            text = re.sub(rf"\b(?:[Aa]n?|[Tt]he) {SUBJECT}", SUBJECT, text)
        text = text.replace(f"{SUBJECT}'s", possessive(ref), 1).replace(SUBJECT, ref, 1)
        text = text.replace(f"{SUBJECT}'s", possessive(later)).replace(SUBJECT, later)
        return drop_copula(cap(text), ref, kind) if kind else cap(text)
    lead = re.match(r"^(It|He|She|They|This (?:term|word|entry|usage|sense)|The term)\b", text)
    if lead and lead.group(1) == "It" and _EXPLETIVE.match(text):
        lead = None  # "It is reported that ...": "it" stands for nothing
    poss = re.match(r"^(Its|His|Her|Their)\b", text)
    last = re.escape((kind or "-").split()[-1])
    the_kind = re.match(
        rf"^The (?:{re.escape(kind or '-')}\b|{last} (?=is|was|are|were|has|had|\w+ed\b|\w+s\b))",
        text,
    )
    if poss:
        text = possessive(ref) + text[poss.end() :]
    elif lead:
        text = ref + text[lead.end() :]
    elif the_kind and kind:
        text = ref + " " + text[the_kind.end() :].lstrip()
    else:
        return ""
    return drop_copula(cap(text), ref, kind) if kind else cap(text)


_EXPLETIVE = re.compile(
    r"^It (?:is|was|has been|had been|seems|seemed|appears|may be|might be|would be|will be)"
    r"(?: \w+){0,3}? (?:that|to|whether|if|how|why|when)\b"
)


def drop_copula(text: str, ref: str, kind: str) -> str:
    """ "That cartographer was a cartographer born in ..." -> "That cartographer was born in ..."."""
    last = kind.split()[-1]
    if last not in ref.lower().split():
        return text  # "Pentagram Pro is a humorous corruption of ...": a name needs no help
    m = re.match(
        rf"^{re.escape(cap(ref))} (is|was|are|were) (a|an|the) (?:[a-z][\w-]* ){{0,3}}?{re.escape(last)}\b,? ?",
        text,
    )
    if m is None:
        return text
    rest = text[m.end() :]
    head = rest.split(" ", 1)[0].strip(",.;").lower()
    if head and head not in STOPWORDS and not is_verb_like(head) and is_noun(head):
        return text  # "the most successful minicomputer design": the kind was a modifier
    indefinite = ref.lower().startswith(("a ", "an "))
    if indefinite and m.group(2).lower() != "the":
        return f"There {m.group(1)} {low(text[len(ref) + len(m.group(1)) + 2 :])}"
    also = re.match(r"and ([a-z][\w-]*)", rest)
    if also and not indefinite and also.group(1) not in STOPWORDS and not is_verb_like(
        also.group(1)
    ):
        return f"{cap(ref)} {m.group(1)} also {article(rest[4:])}"  # "was also a collector"
    if indefinite:  # "An art is the art and science of ...": one of its kind
        return "One " + text.split(" ", 1)[1]
    if not rest or re.match(r"(?:and|or|[,.;])", rest):
        return text
    first = rest.split(" ", 1)[0].lower()
    if first == "of" or m.group(2).lower() == "the" and first in STOPWORDS - {
        "who", "that", "which"
    }:
        return text  # "the highest summit of ...", "an offshoot of ...": the copula stays
    rel = re.match(r"(?:who|that|which) (\S+)", rest)
    if rel and is_verb_like(rel.group(1)):
        return f"{cap(ref)} {rest[rel.start(1) :]}"
    if rel:
        return text  # "a magazine that many hackers read": the relative clause needs its noun
    return f"{cap(ref)} {m.group(1)} {rest}"
