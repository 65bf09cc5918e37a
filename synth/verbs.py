"""Verbs without a tagger: whether a sentence has a finite main verb, or opens with its
predicate as dictionary senses do ("Used of hardware ...", "Describes a tendency ...").

Word lists and suffix rules from `hopforge.synth.lexicon`; each check errs towards calling a
sentence a fragment, so that a doubtful clue is dropped rather than written.
"""

from __future__ import annotations

import itertools

from hopforge.synth.lexicon import STOPWORDS, is_adjective, is_noun, is_plural, is_verb_like


def words_of(text: str) -> list[str]:
    """The words of `text` without surrounding punctuation."""
    return [w for w in (t.strip(".,;:!?\"'“”‘’()[]") for t in text.split()) if w]


SUBORDINATORS = frozenset(
    ["who", "whom", "whose", "which", "that", "where", "when", "because", "if", "although", "though", "while", "as", "after", "before", "since", "until", "unless", "so"]
)
AUX = frozenset(
    ["is", "was", "are", "were", "be", "been", "has", "have", "had", "can", "could", "will", "would", "may", "might", "must", "shall", "should", "do", "does", "did"]
)


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
                inside, group_aux = 2, low in AUX
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
    if low in AUX:
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
        prev not in _PRONOUN_SUBJECTS and prev not in AUX)
    # "a system invented in ...", "long thought to be ...": a participle, not a finite verb
    return not (after_noun and low.endswith(("ed", "en", "wn", "ght"))
                and nxt in _PARTICIPLE_PREPOSITIONS)


ADVERBS = frozenset(
    ["often", "also", "especially", "esp", "sometimes", "usually", "almost", "mostly", "now",
     "still", "rarely", "occasionally", "generally", "commonly", "frequently", "primarily",
     "mainly", "originally", "formerly", "later", "then", "similarly", "loosely", "hence",
     "thus"]
)
QUANTIFIERS = frozenset(
    ["like", "unlike", "including", "according", "following", "given", "despite", "many", "most", "more", "several", "few", "some", "all", "each", "every", "such", "other",
     "both", "certain", "various", "any", "no", "much", "first", "last", "one", "two"]
)
MODALS = frozenset(["may", "might", "can", "could", "will", "would", "should", "must"])


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


def subjectless(words: list[str]) -> bool:
    """Whether a sentence opens with its predicate, as dictionary senses do after the first:
    "Used of hardware ...", "Especially used of ...", "Describes a tendency ...", "May also
    display ...", "Smaller than micro-, and ..."."""
    if not words or _titled_subject(words):
        return False
    words = [w for w in (t.strip(".,;:!?\"'“”‘’()[]") for t in words) if w]
    if not words:
        return False
    i = skip_adverbs(words)
    first = words[i]
    low = first.lower()
    if first[:1].isupper() and not first[1:].islower():
        return False  # an acronym or a name: "DEC", "McCarthy"
    if low == "not" and i == 0:
        return True  # "Not quite as bad as X, but close."
    if low in QUANTIFIERS or low in STOPWORDS or low.endswith("ing"):
        return False  # "Describing X as Y means ...": a gerund is a subject
    if low in MODALS:
        return True
    nxt = words[i + 1].lower() if i + 1 < len(words) else ""
    loose = i == 0 and low.endswith("s") and nxt in PREDICATE_PREPOSITIONS | {"a", "an", "the"}
    if is_verb_like(low, loose=loose) and not is_noun(low):
        # "Used of ...", "Competes with ..."; not "Commonly cited examples include ..."
        return not (low.endswith("ed") and (is_noun(nxt) or is_plural(nxt)))
    if not is_adjective(low) or is_noun(low) or i + 1 >= len(words):
        return False
    nxt = words[i + 1].lower()  # "Smaller than", "Pejorative term for", not "Ethical views aside"
    after = words[i + 2].lower() if i + 2 < len(words) else ""
    return nxt in PREDICATE_PREPOSITIONS or (
        nxt not in STOPWORDS and not is_verb_like(nxt) and after in PREDICATE_PREPOSITIONS
    )


PREDICATE_PREPOSITIONS = frozenset(
    ["than", "to", "with", "for", "of", "in", "on", "about", "as", "from", "enough", "used",
     "that", "by", "at", "into"]
)
def skip_adverbs(words: list[str]) -> int:
    i = 0
    while i < len(words) - 1 and (
        words[i].lower() in ADVERBS
        or words[i].lower().endswith("ly") and words[i].lower() not in ("family", "assembly")
    ):
        i += 1
    return i
