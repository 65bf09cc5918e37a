"""Clues: facts as a question states them, blurred, with the exact test a document must pass.

A clue picks one document among rivals (the other documents a page names) when the document
passes its test and no rival does. The tests read the facts of synth/questions/facts.py:
- date: a date fact whose relation has the word `key`, its year in [low, high]; shown as a
  decade ("born in the 1950s") or a bound ("released before 1990"), never the year itself;
- number: a number fact with the unit `key`, its quantity above or below a round bound
  ("with more than 20 seasons");
- category: the corpus's category tag `value`;
- entity: a mention of the document `target` by the name the clue quotes, `key` ("directed by
  “Laurent Tirard”"): its title, or the alias the text writes where it does not write the
  title (a documentation page names "Built-in Exceptions" as `UnicodeDecodeError`), so that a
  reader's `find` for the quoted name sees it;
- phrase: the words `value` in the text (the fallback).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from hopforge.corpus.matching import matches
from hopforge.corpus.names import NameIndex, doc_names, name_key, without_parenthesis
from hopforge.corpus.records import Document
from hopforge.synth.questions.facts import (
    PAST,
    event,
    extract_all,
    number_of,
    quantities,
    relation_key,
    relation_keys,
    year_of,
)
from hopforge.synth.records import Clue, Fact

PREFERENCE = ("date", "entity", "number", "category", "phrase")
MIN_TAGGED = 3  # documents that must carry a category for it to be one


def happening(key: str) -> bool:
    """Whether a relation key says what happened (a participle or past form, facts.event)."""
    return event(key)


def verb(fact: Fact, key: str) -> str:
    """`key` as the subject's verb: active for what a subject does ("died", "won", facts.PAST),
    passive for what it undergoes ("was born", "was founded", "was knighted")."""
    return key if key in PAST else f"was {key}"


class FactBook:
    """The facts of a corpus, indexed for the clue tests."""

    def __init__(self, docs: Sequence[Document], names: NameIndex,
                 facts: dict[str, list[Fact]] | None = None) -> None:
        self.docs = {d.doc_id: d for d in docs}
        self.names = names
        found = facts if facts is not None else extract_all(docs, names)
        # a category is a kind several documents share ("[IBM]", "<programming>"); a bracket
        # one or two documents open with is a note ("[from Virtual Address eXtension]")
        tagged = Counter(v for fs in found.values()
                         for v in {f.value.lower() for f in fs if f.kind == "category"})
        self.facts = {d: [f for f in fs if f.kind != "category"
                          or tagged[f.value.lower()] >= MIN_TAGGED] for d, fs in found.items()}
        self.dates: dict[str, dict[str, list[int]]] = {}
        self.numbers: dict[str, dict[str, list[float]]] = {}
        self.categories: dict[str, set[str]] = {}
        self.key_of: dict[Fact, str] = {}
        for doc_id, found in self.facts.items():
            for f in found:
                if f.kind == "date":  # a date of every relation word before it that says
                    keys = [k for k in relation_keys(f.relation) if event(k)]  # what happened
                    if keys:
                        self.key_of[f] = keys[0]
                    for key in keys:
                        self.dates.setdefault(doc_id, {}).setdefault(key, []).append(
                            year_of(f.value))
                elif f.kind == "number":
                    unit = f.value.split()[-1].lower() if " " in f.value else "%"
                    self.key_of[f] = unit
                    self.numbers.setdefault(doc_id, {}).setdefault(unit, []).append(
                        number_of(f.value))
                elif f.kind == "category":
                    self.categories.setdefault(doc_id, set()).add(f.value.lower())
        # the earliest and latest year the corpus gives each kind of event: a bound outside
        # them ("released before 2025" in a corpus of films up to 2019) rules nothing out
        every: dict[str, list[int]] = {}
        for per_key in self.dates.values():
            for key, years in per_key.items():
                every.setdefault(key, []).extend(years)
        self.span = {key: (min(years), max(years)) for key, years in every.items()}
        # units a document's text gives two quantities of ("64 films in Europe ... 102 films in
        # Hollywood", "directed 93 films ... acted in 62 films"): which is meant is unclear
        self.twice = {doc_id: {u for u in units if u != "%"
                               and len(quantities(self.docs[doc_id].text, u)) > 1}
                      for doc_id, units in self.numbers.items()}
        self._mentioned: dict[str, set[str]] = {}
        self._named_as: dict[str, set[tuple[str, str]]] = {}
        self._written: dict[str, set[str]] = {}
        self._order: dict[str, list[str]] = {}
        self._share: float | None = None

    def fact_share(self) -> float:
        """The share of documents with a date, number or category fact of their own."""
        if self._share is None:
            have = set(self.dates) | set(self.numbers) | set(self.categories)
            self._share = len(have) / max(1, len(self.docs))
        return self._share

    def dated(self, doc_id: str, key: str) -> Fact | None:
        """The first date fact of `doc_id` whose relation has the word `key`, or None."""
        return next((f for f in self.of(doc_id, "date") if key in relation_keys(f.relation)),
                    None)

    def verb(self, doc_id: str, key: str) -> str:
        """How `doc_id`'s text states its dated relation `key`, as a verb ("was born")."""
        fact = self.dated(doc_id, key)
        return verb(fact, key) if fact else f"was {key}"

    def of(self, doc_id: str, kind: str) -> list[Fact]:
        return [f for f in self.facts.get(doc_id, ()) if f.kind == kind]

    def mentioned(self, doc_id: str) -> set[str]:
        """Every document `doc_id`'s text names unambiguously (common names too)."""
        if doc_id not in self._mentioned:
            self._mentioned[doc_id] = set(self.in_order(doc_id))
        return self._mentioned[doc_id]

    def in_order(self, doc_id: str) -> list[str]:
        """The documents `doc_id`'s text names that a reader can follow (`NameIndex.entries`:
        what `open` lists under its pages), first named first."""
        if doc_id not in self._order:
            doc = self.docs[doc_id]
            self._order[doc_id] = [h.doc for h in self.names.entries(doc.text, exclude=doc_id)]
        return self._order[doc_id]

    def named_as(self, doc_id: str) -> set[tuple[str, str]]:
        """(document, name key) of every name `doc_id`'s text writes that names a document a
        reader can follow there (`NameIndex.follows`)."""
        if doc_id not in self._named_as:
            doc = self.docs[doc_id]
            self._named_as[doc_id] = {(h.doc, h.key) for h in self.names.find(
                doc.text, exclude=doc_id) if h.doc and self.names.follows(h, doc_id)}
        return self._named_as[doc_id]

    def written(self, doc_id: str) -> set[str]:
        """The name keys of every name `doc_id`'s text writes, followable or not (an everyday
        word, an unlinked one-word name, a name two documents share), a name of several words
        in any case: what a reader may take for a mention."""
        if doc_id not in self._written:
            doc = self.docs[doc_id]
            self._written[doc_id] = {h.key for h in self.names.find(
                doc.text, exclude=doc_id, loose=True)} | {  # "command line": "Command line"
                h.key for h in self.names.find(doc.text, exclude=doc_id, loose=True,
                                               any_case=True) if " " in h.key}
        return self._written[doc_id]

    def quoted(self, fact: Fact) -> str:
        """The name an entity clue quotes for `fact`, as the text writes it: the target's title,
        the title without its parenthesis (a name of the target alone, or the name index would
        not have resolved it), or the alias, as the target lists it."""
        target = self.docs[fact.target]
        hits = self.names.find(fact.value)
        key = hits[0].key if hits else name_key(fact.value)
        if key == name_key(target.title):
            return target.title
        cut = without_parenthesis(target.title)  # the text writes "Rich Man, Poor Man" for
        if key == name_key(cut):  # "Rich Man, Poor Man (novel)": a name of this one alone
            return cut
        return next((n for n in doc_names(target) if name_key(n) == key), fact.value)

    def holds(self, clue: Clue, doc_id: str, *, every: bool = False, loose: bool = False
              ) -> bool:
        """Whether document `doc_id` passes `clue`'s test: a date or number clue when one of
        the years or quantities it states for the relation or unit lies within the bounds
        (`every`: when all of them do, so that no figure of the text contradicts it); an
        entity clue when the text names the target where a reader can follow it, or
        (`loose`: as a reader may take it) writes the name at all."""
        test = all if every else any
        if clue.kind == "date":
            years = self.dates.get(doc_id, {}).get(clue.key, [])
            return bool(years) and test(_within(y, clue) for y in years)
        if clue.kind == "number":
            values = self.numbers.get(doc_id, {}).get(clue.key, [])
            return bool(values) and test(_within(v, clue) for v in values)
        if clue.kind == "category":
            return clue.key in self.categories.get(doc_id, set())
        if clue.kind == "entity":  # by the name the clue quotes (a title: also without its
            names = {name_key(clue.key), name_key(without_parenthesis(clue.key))}  # parenthesis)
            if loose:
                return bool(names & self.written(doc_id))
            return any(d == clue.target and k in names for d, k in self.named_as(doc_id))
        return matches(self.docs[doc_id].text, clue.value)

    def year_for(self, doc_id: str, clue: Clue) -> int | None:
        """The year `doc_id` states for a date clue's event: the first that meets the clue,
        else the first it states (None: it dates no such event)."""
        years = self.dates.get(doc_id, {}).get(clue.key, [])
        return next((y for y in years if _within(y, clue)), years[0] if years else None)

    def picks(self, clue: Clue, doc_id: str, rivals: Iterable[str]) -> bool:
        """Whether `clue` holds for `doc_id` by every figure it states, for none of `rivals` by
        any, and names none of them (a rival's own text holds its name)."""
        rivals = [r for r in rivals if r != doc_id]
        if clue.kind == "entity" and clue.target in rivals:
            return False
        return self.holds(clue, doc_id, every=True) and not any(
            self.holds(clue, r, loose=True) for r in rivals)

    def clues(self, doc_id: str, *, hidden: Iterable[str] = ()) -> list[Clue]:
        """Every clue `doc_id`'s own facts give, best kinds first (see PREFERENCE); an entity
        clue never names a document of `hidden`."""
        hidden = set(hidden)
        out: list[Clue] = []
        for f in self.of(doc_id, "date"):
            key = self.key_of.get(f)
            if key:
                first, last = self.span[key]
                out += [c for c in date_clues(f, key)
                        if not (c.low is None and c.high is not None and c.high >= last)
                        and not (c.high is None and c.low is not None and c.low <= first)]
        for f in self.of(doc_id, "entity"):
            if f.target not in hidden and f.target != doc_id:
                out.append(entity_clue(f, self.quoted(f)))
        for f in self.of(doc_id, "number"):
            key = self.key_of.get(f)
            if key and key not in self.twice.get(doc_id, ()):  # no clue of a unit given twice
                out += number_clues(f, key)
        for f in self.of(doc_id, "category"):
            out.append(Clue(kind="category", relation=f.relation, value=f.value,
                            evidence=f.evidence, key=f.value.lower(),
                            shown=f"tagged “{f.value}”"))
        return [c for c in out if self.holds(c, doc_id, every=True)]

    def picking(self, doc_id: str, rivals: Sequence[str], *, hidden: Iterable[str] = ()
                ) -> list[Clue]:
        """The clues of `doc_id` that no rival passes, best kinds first."""
        found = [c for c in self.clues(doc_id, hidden=hidden) if self.picks(c, doc_id, rivals)]
        return sorted(found, key=_rank)


def _rank(clue: Clue) -> float:
    """Where a clue stands in PREFERENCE; a name that is one lower-case word ("mode") is a
    weaker clue than a name, and comes after the categories."""
    rank = float(PREFERENCE.index(clue.kind))
    if clue.kind == "entity" and clue.key.isalpha() and clue.key.islower():
        rank = PREFERENCE.index("category") + 0.5
    return rank


def _within(value: float, clue: Clue) -> bool:
    return (clue.low is None or value >= clue.low) and (clue.high is None or value <= clue.high)


def date_clues(fact: Fact, key: str) -> list[Clue]:
    """A date fact blurred: its decade, then bounds at the next round years around it."""
    year = year_of(fact.value)
    said = f"whose subject {verb(fact, key)}"
    base = Clue(kind="date", relation=fact.relation, value=fact.value, evidence=fact.evidence,
                key=key)
    decade = year - year % 10
    out = []
    if year != decade:  # "in the 1970s" for 1970 would quote the year itself
        out.append(replace(base, low=decade, high=decade + 9, shown=f"{said} in the {decade}s"))
    for step in (10, 25, 50):
        above = (year // step + 1) * step
        below = (year // step) * step
        if above - year <= 15:
            out.append(replace(base, low=None, high=above - 1, shown=f"{said} before {above}"))
        if year - below <= 15 and year != below:
            out.append(replace(base, low=below + 1, high=None, shown=f"{said} after {below}"))
    return out


def _round(x: float) -> float:
    """A round number near `x`: one or two significant digits."""
    if x < 10:
        return float(math.floor(x))
    digits = 10 ** (int(math.log10(x)) - 1)
    return float(math.floor(x / digits) * digits)


def _figure(x: float) -> str:
    return f"{int(x):,}" if x == int(x) else f"{x:g}"


def number_clues(fact: Fact, unit: str) -> list[Clue]:
    """A number fact blurred to a bound: "more than 20 seasons", "fewer than 500 people"."""
    value = number_of(fact.value)
    base = Clue(kind="number", relation=fact.relation, value=fact.value, evidence=fact.evidence,
                key=unit)
    noun = "percent" if unit == "%" else unit
    done = doing(fact.relation)
    says = f"whose subject {done}" if done else "whose text gives"
    out = []
    low = _round(value * 0.8)
    if 0 < low < value:
        out.append(replace(base, low=low + (1 if low == int(low) else 0), high=None,
                           shown=f"{says} more than {_figure(low)} {noun}"))
    high = _round(value * 1.5) or value + 1
    if high > value:
        out.append(replace(base, low=None, high=high - 1 if high == int(high) else high,
                           shown=f"{says} fewer than {_figure(high)} {noun}"))
    return out


_SUBJECTS = frozenset(["he", "she", "it", "they", "has", "have", "had"])


def doing(relation: str) -> str:
    """The subject's own verb right before a quantity, with its preposition ("He directed 20
    films": "directed"; "She has appeared in 14 films": "appeared in"), or "" where the words
    before it are no such verb ("an estimated 500", "was ranked 3", "as an actor in 62")."""
    words = [w for w in relation.split() if w.lower() != "also"]  # "He also directed"
    prep = words.pop() if words and words[-1] in ("in", "on") else ""
    if not words:
        return ""
    word, before = words[-1], words[-2] if len(words) > 1 else ""
    if not (word.isalpha() and word.islower() and (word in PAST or word.endswith("ed"))):
        return ""
    if before and before.lower() not in _SUBJECTS and not before[:1].isupper():
        return ""
    return f"{word} {prep}".strip()


def entity_clue(fact: Fact, name: str) -> Clue:
    """A mention of another document by `name` (FactBook.quoted), with the relation's verb
    when it has one."""
    key = relation_key(fact.relation)
    words = fact.relation.split()
    if key and happening(key) and words and words[-1].lower() in ("by", "in", "at", "for",
                                                                   "with", "to", "of"):
        shown = f"whose subject {verb(fact, key)} {words[-1].lower()} “{name}”"
    else:
        shown = f"whose text mentions “{name}”"
    return Clue(kind="entity", relation=fact.relation, value=fact.value, evidence=fact.evidence,
                target=fact.target, key=name, shown=shown)


def phrase_clue(doc: Document, phrase: str) -> Clue:
    """The fallback: the words `phrase` of `doc`, as written."""
    at = doc.text.lower().find(phrase.lower())
    start = max(doc.text.rfind(".", 0, max(at, 0)) + 1, 0)
    end = doc.text.find(".", at + len(phrase))
    evidence = doc.text[start:end + 1 if end >= 0 else len(doc.text)].strip()
    return Clue(kind="phrase", relation="contains", value=phrase, evidence=evidence,
                key=phrase, shown=f"whose text contains the words “{phrase}”")
