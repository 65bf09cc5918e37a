"""What a document says it is: its type noun and a short description, from definitions only.

A type noun is taken only from a definitional pattern ("Ilse Varro was a cartographer ...",
"A person who enjoys ...", "n. A device that ...") and only when the head of that noun phrase
passes the word checks of `hopforge.synth.lexicon` (a singular noun, not an adjective, stopword
or verb form). Otherwise the document has no type (`FALLBACK_TYPE`) and composers use neutral
wording ("term" in a dictionary, "topic" elsewhere) instead of a guessed noun.
"""

from __future__ import annotations

import re

from hopforge.corpus.records import Document
from hopforge.synth.chains import mention_names, name_pattern, split_sentences
from hopforge.synth.clauses import (
    balanced,
    clean_sentence,
    definition_phrase,
    strip_boilerplate,
)
from hopforge.synth.lexicon import (
    STOPWORDS,
    is_adjective,
    is_kin,
    is_noun,
    is_plural,
    is_verb_like,
    singular,
)

FALLBACK_TYPE = "entry"  # no type found; never shown as a noun in a question
_COPULA = re.compile(
    r"^(?P<subj>.{1,90}?)\s+(?:is|was|are|were)\s+"
    r"(?:(?:also|probably|perhaps|usually|often|originally|traditionally|generally|now)\s+)?"
    r"(?P<pred>(?:(?:a|an|the|one of the)\s+)?[a-z].+?)[.!]?$",
    re.IGNORECASE,
)
_DETERMINER = re.compile(r"^(?:an?|the|one of (?:the|a|an))\s+", re.IGNORECASE)
_PRONOUNS = frozenset(["it", "he", "she", "they", "this", "these"])
_NUMBERISH = re.compile(r"[\d,.-]+s?|[\d-]+(?:st|nd|rd|th)")
_VAGUE_OF = frozenset(["kind", "type", "sort", "form", "variety", "style", "species", "breed",
                       "genre", "class", "category", "brand"])
_HOLLOW = frozenset(["member", "part", "piece", "example", "instance", "bit", "set", "series",
                     "collection", "group", "range", "family", "line", "body", "pair", "number",
                     "lot", "version", "name", "term", "word", "one", "unit", "branch", "stage",
                     "television", "use", "way", "result", "means", "case", "side", "amount"])
_TITLE_HEADS = frozenset(
    ["school", "university", "college", "academy", "institute", "river", "lake", "sea", "bay", "island", "mountain", "hill", "valley", "forest", "park", "bridge", "church", "cathedral", "abbey", "chapel", "temple", "castle", "palace", "tower", "museum", "gallery", "library", "observatory", "station", "airport", "harbour", "harbor", "port", "street", "road", "railway", "canal", "company", "corporation", "band", "club", "team", "party", "army", "navy", "war", "battle", "treaty", "prize", "award", "film", "album", "song", "novel", "opera", "play", "journal", "magazine", "newspaper", "market", "festival", "language", "protocol", "algorithm", "system", "theorem", "law"]
)


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
    for art in ("the ", "a ", "an "):
        if low.startswith(art):
            text = text[len(art) :]
            break
    names = {n.lower() for n in mention_names(doc)}
    return text.lower() in names


def names_in(text: str, doc: Document) -> bool:
    """Whether `text` mentions one of `doc`'s names."""
    pattern = name_pattern(mention_names(doc))
    return bool(pattern and pattern.search(text))


def head_noun(phrase: str) -> str:
    """The type noun of a noun phrase opening with a determiner, or "" when its head is not a
    clean singular noun: "a large room or rooms" -> "room", "a 1925 American drama film" ->
    "drama film", "one of the fundamental source books" -> "source book", "an edge strips" ->
    "", "this usual example" -> ""."""
    m = _DETERMINER.match(phrase.strip())
    if m is None:
        return ""
    det = m.group(0).lower().split()
    words = phrase.strip()[m.end() :].split()
    span: list[str] = []
    rest: list[str] = []
    for i, raw in enumerate(words[:8]):
        word = raw.strip(",;:.!?\"'“”‘’")
        low = word.lower()
        if not span and _NUMBERISH.fullmatch(word):
            continue  # "a 2004 Swedish drama film"
        if re.fullmatch(r"[A-Za-z]+-", word):
            continue  # "crime- drama film": half of a compound split by a stray space
        if not re.fullmatch(r"[A-Za-z][A-Za-z-]*[A-Za-z]", word) or low in STOPWORDS:
            rest = words[i:]
            break
        if span and is_verb_like(low) and not is_noun(low):
            break  # "a film directed by"
        span.append(word)
        if raw[-1:] in ",;:.!?\"”":
            break
    if not span:
        return ""
    head = span[-1]
    if head.lower() in _VAGUE_OF and rest[:1] == ["of"]:
        return head_noun("a " + " ".join(rest[1:]).replace(" a ", " ", 1)) if len(rest) > 1 else ""
    if not head.islower() or head in _HOLLOW or head in _VAGUE_OF:
        return ""
    if is_plural(head):
        if det[0] != "one":  # "an edge strips": not one thing
            return ""
        head = singular(head)
    elif det[0] == "one" and not head.endswith("s"):
        return ""  # "one of the best": an adjective, not a plural noun
    if not is_noun(head):
        return ""
    if is_kin(head):  # "the eldest daughter of King ...": a person; "the mother of all ...": not
        return "person" if rest[:1] == ["of"] and rest[1:2] and rest[1][:1].isupper() else ""
    if len(span) >= 2:
        mod = span[-2]
        before = span[-3] if len(span) >= 3 else ""
        plain_before = not before or not before.islower() or is_adjective(before)
        if (mod.islower() and is_noun(mod) and not is_plural(mod) and not is_adjective(mod)
                and plain_before and not before.endswith("-")):  # not "board system"
            return f"{mod} {head}"
    return head


def _defining_phrase(sentence: str, doc: Document, *, first: bool) -> str:
    """The noun phrase a sentence defines `doc` with ("a cartographer born in ..."), or ""."""
    m = _COPULA.match(sentence)
    if m:
        subj = m.group("subj").strip(" ,")
        lead = subj.split(" ", 1)[0].lower()
        named = is_subject(subj, doc) or any(
            subj.lower().startswith(n.lower() + sep) for n in mention_names(doc) for sep in (" ", ",")
        )
        if named or (first and subj[:1].isupper() and len(subj.split()) <= 8
                     and lead not in STOPWORDS):
            pred = m.group("pred")
            return pred if _DETERMINER.match(pred) else ""
    if first:
        found = definition_phrase(sentence)
        if (found and found[0] == "is" and _DETERMINER.match(found[1])
                and not names_in(sentence[:40], doc)):
            return found[1]
    return ""


def type_noun(doc: Document) -> str:
    """A short noun naming what `doc` is ("cartographer", "port city"), or `FALLBACK_TYPE`."""
    for i, sentence in enumerate(split_sentences(doc.text)[:3]):
        phrase = _defining_phrase(clean_sentence(sentence), doc, first=i == 0)
        found = head_noun(phrase) if phrase else ""
        if found and not names_in(found, doc):
            return found
    return _title_head(doc.title) or FALLBACK_TYPE


def _title_head(title: str) -> str:
    """The last word of a multi-word title when it is a common noun ("Royal Survey School")."""
    words = title.split()
    if len(words) >= 2 and words[-1].lower() in _TITLE_HEADS:
        return words[-1].lower()
    return ""


def description(doc: Document, *, max_words: int = 16, avoid_year: int | None = None) -> str:
    """A noun phrase from the document's own definition, or "" when it has no clean one.

    "a cartographer born in the port of Quillon in 1815" from "Ilse Varro was a cartographer
    born in ..."; "a person who enjoys exploring the details of programmable systems" from a
    dictionary definition. Sentences stating `avoid_year` are skipped (a comparison must not give
    its answer away). The result is not blurred.
    """
    if type_noun(doc) == FALLBACK_TYPE:
        return ""
    for i, sentence in enumerate(split_sentences(doc.text)[:4]):
        text = clean_sentence(sentence).rstrip(".!")
        if avoid_year is not None and str(avoid_year) in text:
            continue
        phrase = _defining_phrase(strip_boilerplate(text), doc, first=i == 0)
        phrase = re.split(r"\s*(?:;|:|\s[—–]\s)\s*", phrase, maxsplit=1)[0]
        if not phrase or not head_noun(phrase) or names_in(phrase, doc):
            continue
        out = truncate_phrase(phrase, max_words)
        if len(out.split()) >= 2 and balanced(out):
            return out
    return ""


def truncate_phrase(phrase: str, max_words: int) -> str:
    """A noun phrase cut to at most `max_words` at a clean boundary (after a comma, before a
    relative word or conjunction) that ends on a noun or a name, else before a participle ("a
    war film released by ..."); never on a trailing function word."""
    words = phrase.split()
    if len(words) > max_words:
        cut = words[: max_words + 1]
        ends = [i + 1 for i in range(2, max_words) if cut[i].endswith((",", ";"))]
        ends += [i for i in range(3, max_words + 1)
                 if cut[i].lower().strip(",;") in ("and", "which", "who", "but", "whose", "where",
                                                   "that")]
        complete = [e for e in ends if _ends_on_noun(cut[e - 1])]
        participle = next((i for i in range(2, max_words) if cut[i].lower().endswith("ed")
                           and is_verb_like(cut[i]) and not is_noun(cut[i])), None)
        if complete:
            words = cut[: max(complete)]
        elif participle is not None:
            words = cut[:participle]
        else:
            words = cut[:max_words]
    while len(words) > 2 and words[-1].lower().strip(",;") in STOPWORDS:
        words.pop()
    return " ".join(words).rstrip(",;:")


def _ends_on_noun(word: str) -> bool:
    word = word.strip(",;:")
    return bool(word) and (word[:1].isupper() or is_noun(word))


def starts_with_subject(sentence: str, doc: Document, kind: str = "") -> bool:
    """Whether `sentence` is about `doc`: it opens with its name, a pronoun, or "The <kind>"."""
    words = clean_sentence(sentence).split(" ", 3)
    if any(is_subject(" ".join(words[:take]), doc, kind) for take in (1, 2, 3)):
        return True
    pattern = name_pattern(mention_names(doc))
    m = pattern.match(sentence.removeprefix("The ")) if pattern else None
    return bool(m)


def neutral_noun(dictionary: bool) -> str:
    """The noun for a document of unknown type: "term" in a dictionary, "topic" elsewhere."""
    return "term" if dictionary else "topic"
