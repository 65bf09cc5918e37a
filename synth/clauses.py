"""Clue sentences made readable: bracketed asides and dictionary boilerplate dropped, fragments
refused.

Dictionary corpora (the Jargon File, FOLDOC) mix definitions with cross-references ("Compare
comment out.", "Syn. chad."), grammar tags ("n.", "vt."), pronunciations ("/klooj/") and
etymologies ("Prob. from ..."). `strip_boilerplate` removes them; `clause_problem` says whether
what is left reads as a full clause; `definition_phrase` recognises a definition written as a
bare noun phrase ("A person who enjoys ...") so that it can be stated as "X is a person who ...";
`readability_problem` is the cheap check a finished question must pass.
"""

from __future__ import annotations

import itertools
import re

from hopforge.synth.lexicon import (
    ADJECTIVES,
    STOPWORDS,
    is_adjective,
    is_noun,
    is_plural,
    is_verb_like,
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
_SUBORDINATORS = frozenset(
    ["who", "whom", "whose", "which", "that", "where", "when", "because", "if", "although", "though", "while", "as", "after", "before", "since", "until", "unless", "so"]
)
_AUX = frozenset(
    ["is", "was", "are", "were", "be", "been", "has", "have", "had", "can", "could", "will", "would", "may", "might", "must", "shall", "should", "do", "does", "did"]
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


def balanced(text: str) -> bool:
    """Whether quotes and brackets in `text` are paired."""
    pairs = (*_QUOTES, ("(", ")"), ("[", "]"))
    return text.count('"') % 2 == 0 and all(text.count(a) == text.count(b) for a, b in pairs)


def words_of(text: str) -> list[str]:
    """The words of `text` without surrounding punctuation."""
    return [w for w in (t.strip(".,;:!?\"'“”‘’()[]") for t in text.split()) if w]


def has_verb(text: str) -> bool:
    """Whether some word of `text` looks like a finite verb (capitalized words inside it are
    names: "Job Control Language" has none; a word in -ing counts only after an auxiliary)."""
    words = words_of(text)
    for i, w in enumerate(words):
        if i and w[:1].isupper():
            continue
        if w.lower().endswith("ing") and not (i and words[i - 1].lower() in _AUX_ING):
            continue  # "possibly containing ...": no finite verb
        if is_verb_like(w, loose=True):
            return True
    return False


_AUX_ING = frozenset(["is", "was", "are", "were", "be", "been", "am", "keeps", "kept", "start",
                      "starts", "started", "stop", "stops", "stopped"])
_NP_OPENERS = frozenset(["a", "an", "the", "any", "some", "something", "someone", "one",
                         "anything", "anyone", "each", "every", "this", "these", "those"])


_PARTICIPLE_PREPOSITIONS = frozenset(
    ["in", "by", "for", "with", "to", "as", "from", "at", "on", "into", "under", "during",
     "away", "out", "up", "off", "down", "over", "through"]
)
_CLAUSE_OPENERS = frozenset(
    ["who", "whom", "whose", "which", "that", "where", "when", "because", "if", "although",
     "though", "while", "after", "before", "since", "until", "unless", "whereas", "once"]
)
_GROUP_ADVERBS = frozenset(
    ["otherwise", "not", "never", "also", "still", "just", "then", "always", "even", "already",
     "often", "usually", "sometimes", "rarely", "only", "probably", "perhaps", "first", "later",
     "once", "again", "soon", "since", "ever", "yet", "really"]
)
_PREPOSITIONS = frozenset(
    ["of", "in", "on", "at", "from", "for", "with", "by", "into", "onto", "about", "between",
     "among", "under", "over", "through", "during", "without", "within", "against", "toward",
     "towards", "upon", "via", "per", "than", "as"]
)
_DETERMINERS_BEFORE = frozenset(["a", "an", "the", "this", "that", "these", "those", "its", "his",
                                 "her", "their", "our", "my", "your", "some", "any", "each"])
_CONTRACTED = frozenset(["it's", "that's", "there's", "he's", "she's", "what's", "who's",
                         "it’s", "that’s", "there’s", "he’s", "she’s", "what’s", "who’s"])


def main_verb(words: list[str]) -> bool:
    """Whether a sentence has a finite verb outside its relative and subordinate clauses: a
    clause opened by "that", "which", "when" ... holds the first verb group after it and ends
    at a comma. "Special-case code to cope with input that would otherwise cause a crash." has
    none; "Other films in which she appeared include ..." and "When you send mail, it's copied
    to a spool file." have one. Infinitives, words in -ing, participles after a noun ("a
    system invented in") and words inside quotes do not count."""
    inside = 0  # 0: main clause; 1: clause verb awaited; 2: in its verb group; 3: after it
    quoted = False
    group_aux = False  # the clause's verb group so far holds only auxiliaries
    for i, raw in enumerate(words):
        low = raw.lower().strip(".,;:!?\"'“”‘’()[]")
        opens, closes = raw[:1] in "“\"", raw.rstrip(".,;:!?)")[-1:] in "”\""
        if quoted or (opens and not closes):
            quoted = not closes if (quoted or opens) else quoted
            continue  # a quoted title: "When The Stars Go Blue" is a song
        titled = i and raw[:1].isupper()
        if not titled and (low in _CLAUSE_OPENERS and (i or low != "that")):
            inside = 1
        elif low in _CONTRACTED and not inside:
            return True
        elif not titled or i == 0:
            finite = _finite(words, i, low)
            if finite and (inside in (0, 3) or inside == 2 and not group_aux):
                return True  # "Other films in which she appeared include ..."
            if finite and inside in (1, 2):
                inside, group_aux = 2, low in _AUX
            elif inside == 2 and not (low in _GROUP_ADVERBS or low.endswith("ly")):
                inside = 3
        if raw.endswith((",", ";", ":")) or raw in ("—", "–"):
            inside = 0
    return False


def _finite(words: list[str], i: int, low: str) -> bool:
    prev = words[i - 1].lower().strip("\"'“”‘’(") if i else ""
    before = words[i - 2].lower().strip("\"'“”‘’(") if i > 1 else ""
    if prev == "to":
        return False  # "to be", "to monitor": an infinitive
    if low in _AUX:
        return True
    if low.endswith("ing") or low in ("like", "unlike"):
        return False
    if prev in _DETERMINERS_BEFORE or prev in _PREPOSITIONS or (
        prev.endswith(("'s", "’s"))
        or before in _DETERMINERS_BEFORE and is_adjective(prev) and not is_verb_like(prev)
    ):
        return False  # "the use of", "in compounds", "a superlative form": a noun
    if not is_verb_like(low, loose=True):
        return False
    nxt = words[i + 1].lower().strip(",;:.") if i + 1 < len(words) else ""
    after_noun = prev.isalpha() and words[i - 1][:1].islower() and prev not in STOPWORDS and (
        prev not in _PRONOUN_SUBJECTS and prev not in _AUX)
    # "a system invented in ...", "long thought to be ...": a participle, not a finite verb
    return not (after_noun and low.endswith(("ed", "en", "wn", "ght"))
                and nxt in _PARTICIPLE_PREPOSITIONS)


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


_ADVERBS = frozenset(
    ["often", "also", "especially", "esp", "sometimes", "usually", "almost", "mostly", "now",
     "still", "rarely", "occasionally", "generally", "commonly", "frequently", "primarily",
     "mainly", "originally", "formerly", "later", "then", "similarly", "loosely", "hence",
     "thus"]
)
_QUANTIFIERS = frozenset(
    ["like", "unlike", "including", "according", "following", "given", "despite", "many", "most", "more", "several", "few", "some", "all", "each", "every", "such", "other",
     "both", "certain", "various", "any", "no", "much", "first", "last", "one", "two"]
)
_MODALS = frozenset(["may", "might", "can", "could", "will", "would", "should", "must"])


_COPULAS = frozenset(["is", "was", "are", "were", "has", "had"])
_PRONOUN_SUBJECTS = frozenset(["it", "he", "she", "they", "this", "we", "i", "you"])


def _titled_subject(words: list[str]) -> bool:
    """Whether a sentence that opens like a predicate has a subject after all: a title before
    its verb ("Ask a Policeman is a 1939 film"), or a pronoun after an opening phrase ("Directed
    by George Sherman, it stars ...")."""
    for k, word in enumerate(words[:14]):
        if word.lower() in _COPULAS and k >= 2 and words[k - 1].lstrip("\"“'‘")[:1].isupper():
            return True
    return any(a.endswith(",") and b.lower() in _PRONOUN_SUBJECTS
               for a, b in itertools.pairwise(words))


def _quotation(text: str) -> bool:
    """Whether a text is a quoted usage example, not a sentence about a quoted title."""
    text = text.strip()
    if text[:1] not in "“\"‘'«":
        return False
    close = max(text.rfind(q) for q in "”\"’'»")
    return close >= 0.6 * len(text)


def subjectless(words: list[str]) -> bool:
    """Whether a sentence opens with its predicate, as dictionary senses do after the first:
    "Used of hardware ...", "Especially used of ...", "Describes a tendency ...", "May also
    display ...", "Smaller than micro-, and ..."."""
    if not words or _titled_subject(words):
        return False
    words = [w for w in (t.strip(".,;:!?\"'“”‘’()[]") for t in words) if w]
    if not words:
        return False
    i = _skip_adverbs(words)
    first = words[i]
    low = first.lower()
    if first[:1].isupper() and not first[1:].islower():
        return False  # an acronym or a name: "DEC", "McCarthy"
    if low == "not" and i == 0:
        return True  # "Not quite as bad as X, but close."
    if low in _QUANTIFIERS or low in STOPWORDS or low.endswith("ing"):
        return False  # "Describing X as Y means ...": a gerund is a subject
    if low in _MODALS:
        return True
    nxt = words[i + 1].lower() if i + 1 < len(words) else ""
    loose = i == 0 and low.endswith("s") and nxt in _PREDICATE_PREPOSITIONS | {"a", "an", "the"}
    if is_verb_like(low, loose=loose) and not is_noun(low):
        # "Used of ...", "Competes with ..."; not "Commonly cited examples include ..."
        return not (low.endswith("ed") and (is_noun(nxt) or is_plural(nxt)))
    if not is_adjective(low) or is_noun(low) or i + 1 >= len(words):
        return False
    nxt = words[i + 1].lower()  # "Smaller than", "Pejorative term for", not "Ethical views aside"
    after = words[i + 2].lower() if i + 2 < len(words) else ""
    return nxt in _PREDICATE_PREPOSITIONS or (
        nxt not in STOPWORDS and not is_verb_like(nxt) and after in _PREDICATE_PREPOSITIONS
    )


_PREDICATE_PREPOSITIONS = frozenset(
    ["than", "to", "with", "for", "of", "in", "on", "about", "as", "from", "enough", "used",
     "that", "by", "at", "into"]
)
_MASS_NOUNS = frozenset(
    ["hardware", "software", "data", "time", "code", "information", "slang", "jargon", "text",
     "output", "input", "stuff", "equipment", "traffic", "mail", "email", "spam", "noise",
     "money", "power", "memory", "storage", "garbage", "documentation", "usage", "behavior",
     "behaviour", "lossage", "cruft", "humor", "humour", "music", "art", "work", "research"]
)


def _skip_adverbs(words: list[str]) -> int:
    i = 0
    while i < len(words) - 1 and (
        words[i].lower() in _ADVERBS
        or words[i].lower().endswith("ly") and words[i].lower() not in ("family", "assembly")
    ):
        i += 1
    return i


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
    i = _skip_adverbs(words)
    verb = words[i].lower()
    if verb in _MODALS or verb in _PAST_ONLY or (verb.endswith("s") and is_verb_like(verb, loose=True)):
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
    if words[0].rstrip(",").lower() in _ADVERBS and words[0].endswith(","):
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
        if low in _SUBORDINATORS or raw.endswith((",", ";", ":")) or low in ("—", "–", "-"):
            return low in _AUX
        if low in _AUX:
            return True
        if i > 0 and low.endswith("s") and is_verb_like(low) and not is_noun(low):
            return True  # "A program runs ..."
    return False


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
    if _BOILERPLATE_LEFT.search(question):
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
        if words[-1].lower() in _DANGLING_END:
            return "dangling_end"  # "... the veneration of X, a.k.a."
    return ""
