"""The scripted teacher's plan per task family: chain, comparison, intersection, aggregation.

A plan walks the question's spec with the reading moves (synth/trajectories/reading.py). It
keeps its state in a `Notebook` (what it knows, what is open, the tally and the items checked),
which every thought reports and every checkpoint holds as JSON. Where a clue could fit several
mentions, the plan checks candidates in text order, a few wrong ones first at the configured
rate, and goes back to the list when a branch fails. An unanswerable question is answered
`not found` only after every candidate was checked, with the reason in the thought.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hopforge.corpus.matching import matches
from hopforge.corpus.names import index_for, name_key, without_parenthesis
from hopforge.corpus.records import Document
from hopforge.corpus.tools.page import named_line
from hopforge.synth.questions.facts import LIFE_KEYS
from hopforge.synth.questions.families import family_of
from hopforge.synth.questions.wording import quoted
from hopforge.synth.records import NONE, NOT_FOUND, Clue, Question, Spec, Step, ToolCall
from hopforge.synth.trajectories.fairness import NAMED, page_body
from hopforge.synth.trajectories.reading import Move, Reader, keywords
from hopforge.synth.trajectories.voice import Note, Voice

GIVE_UP = NOT_FOUND  # a trajectory that cannot go on says so, like an unanswerable one


@dataclass(slots=True)
class Notebook:
    """The teacher's research state: facts with their sources, the open question, the tally."""

    goal: str
    facts: list[tuple[Note, str]] = field(default_factory=list)  # (fact, source doc_id)
    open: Note | None = None
    checked: int = 0
    total: int = 0
    hits: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    now: str = ""  # the item being checked, neither checked nor left
    ruled_out: int = 0  # candidates a tool result showed not to match
    told: int = 0  # facts the thoughts have stated (the rest were learned since the last one)

    def checking(self, now: str = "", left: list[str] | None = None) -> None:
        """The item being checked and those after it; no arguments: none (done or given up)."""
        self.now, self.left = now, left or []

    def fresh(self) -> list[Note]:
        """The facts learned since the last thought, which the next one states: a later row
        may show the page they came from cut down to a pointer, never this thought."""
        new = self.facts[self.told:]
        self.told = len(self.facts)
        return [("known", {"known": [f for f, _ in new[-2:]]})] if new else []

    def notes(self) -> list[Note]:
        """The state as note lines for the next thought."""
        out: list[Note] = []
        if self.facts:
            out.append(("known", {"known": [f for f, _ in self.facts[-2:]]}))
        if self.total:
            out.append(("tally", {"checked": str(self.checked), "total": str(self.total),
                                  "hits": str(len(self.hits))}))
        if self.open:
            out.append(("todo", {"open": self.open}))
        if self.left:
            more = f" and {len(self.left) - 3} more" if len(self.left) > 3 else ""
            out.append(("left", {"names": ", ".join(self.left[:3]) + more,
                                 "now": self.now}))
        return out

    def checkpoint(self, queries: list[str], voice: Voice) -> dict[str, Any]:
        """The state in the checkpoint's JSON shape, facts worded in `voice`."""
        open_ = [voice.say(self.open[0], **self.open[1])] if self.open else []
        if self.total:
            open_.append(f"checked {self.checked} of {self.total} items; {len(self.hits)} match"
                         + (f": {', '.join(self.hits)}" if self.hits else ""))
        if self.now:
            open_.append(f"checking now: {self.now}")
        if self.left:
            open_.append(f"left to check: {', '.join(self.left)}")
        return {"goal": self.goal,
                "facts": [{"fact": voice.say(f[0], **f[1]), "source": s} for f, s in self.facts],
                "open_constraints": open_ or ["confirm the answer"],
                "queries_tried": list(queries)}


def legacy_spec(question: Question, docs: Mapping[str, Document]) -> Spec:
    """A chain spec for a question made before specs: its evidence, read as linked in order."""
    route = [d for d in question.evidence if d in docs]
    if not route and question.hops:
        route = [question.hops[0].from_doc, *(h.to_doc for h in question.hops)]
    steps = [Step(doc=route[0], relation="start")] if route else []
    steps += [Step(doc=b, relation="link", via=a) for a, b in itertools.pairwise(route)]
    return Spec(family="chain", start=route[0] if route else "", steps=tuple(steps),
                target=route[-1] if route else "")


def listed(result: str) -> list[str]:
    """The names an `open` result lists as entries named on its page, as written there."""
    return [x.split(" → ")[0] for x in named_line(result).split("; ") if x]


def typed(clue: Clue | None) -> bool:
    """A condition on a date or a number: the notes state it as the question does ("whose
    subject died after 1980"), not as the word `find` looks for ("died")."""
    return clue is not None and clue.kind in ("date", "number") and bool(clue.shown)


_TOOL_LINE = re.compile(rf"^.*\[doc_id: [^\]]+\] page \d+ \(pages 0-\d+\).*$|"
                        rf"^{re.escape(NAMED)}.*$|^\((?:more: open|end of document).*$",
                        re.MULTILINE)


def _around(text: str, at: int, name: str) -> str:
    """The whole words within 80 characters of `name` written at `at` in `text`, the tool's
    own lines left out (a page header's "(pages 0-0)" is no word of the page)."""
    text = _TOOL_LINE.sub(lambda m: " " * len(m.group(0)), text)  # positions kept
    near = text[max(0, at - 80):at + len(name) + 80]
    near = near.split(" ", 1)[-1] if at > 80 else near
    return " ".join(near.rsplit(" ", 1)[0].split())


class Plans:
    """The plans of one trajectory over its question's spec."""

    def __init__(self, question: Question, spec: Spec, reader: Reader, rng: random.Random,
                 *, wrong_candidate: float, max_wrong: int, early_answer: float) -> None:
        self.q, self.spec, self.r, self.rng = question, spec, reader, rng
        self.docs = reader.docs
        self.book = Notebook(goal=question.question)
        self.wrong_candidate, self.max_wrong, self.early_answer = (
            wrong_candidate, max_wrong, early_answer)
        self.names = index_for(self.docs)
        reader.state = self.book.notes
        reader.fresh = self.book.fresh

    # -- helpers --------------------------------------------------------------------------------

    def answer(self, situation: str, text: str, **slots: str) -> Move:
        yield self.r.say(situation, answer=text, **slots), ToolCall(name="answer",
                                                                    arguments={"text": text})

    def surface(self, doc_id: str, text: str) -> tuple[str, int]:
        """How `doc_id` is first named in `text` (as written there) and where, by the same
        name index as `mentions`; ("", -1) if it is not."""
        for hit in self.names.find(text):
            if hit.doc == doc_id:
                return hit.surface, hit.start
        return ("", -1)

    def _read(self, doc_id: str, page: int | None = None) -> str:
        """The text of the pages read of `doc_id` (or of its page `page` alone), in order."""
        pages = sorted(self.r.pages.get(doc_id, {}).items())
        return " ".join(page_body(text) for n, text in pages if page is None or n == page)

    def _entries(self, doc_id: str, body: str) -> list[tuple[int, str, str]]:
        """(where, doc_id, name as written) of each document `body` lists as an entry named."""
        return [(h.start, h.doc, h.surface) for h in self.names.entries(body, exclude=doc_id)]

    def mentions(self, doc_id: str) -> list[tuple[str, str]]:
        """(doc_id, name as written) of every document whose name the pages read of `doc_id`
        show, in text order (corpus/names.py: what a reader sees, not a link set)."""
        return [(d, name) for _, d, name in self._entries(doc_id, self._read(doc_id))]

    def shown(self, doc_id: str, page: int | None = None) -> list[tuple[str, str]]:
        """(doc_id, name as written) of every document the pages read of `doc_id` (or its page
        `page` alone) name, in text order: what `open` lists as the entries named there."""
        return [(d, name) for _, d, name in self._entries(doc_id, self._read(doc_id, page))]

    def named(self, doc_id: str) -> str:
        """How the question names a start: as `surface` does, or by a name other documents
        share when it is this one's whole title (a search for it shows the one titled so)."""
        title = name_key(self.r.title(doc_id))
        for hit in self.names.find(self.q.question):
            if hit.doc == doc_id or (not hit.doc and doc_id in hit.docs
                                     and name_key(hit.surface) == title):
                return hit.surface
        # a title too short to be a name in running text ("C") that the question quotes
        return next((t for t in quoted(self.q.question) if name_key(t) == title), "")

    def start(self, doc_id: str) -> Move:
        """Find the document the question names; the first search follows the query habit."""
        name = self.named(doc_id)
        habit = self.r.speaker.habit().first
        q = self.q.question.strip().rstrip("?").strip()
        said = " ".join(quoted(q)) or q  # its names and clues, not the words it is put in
        first = {"question": q, "keywords": " ".join(keywords(said, 6)),
                 "title": name, "title-context": f"{name} {' '.join(keywords(said, 2, name))}"}
        query = first.get(habit) or q
        if not name:  # the question does not spell the start's name: search with its words
            name = " ".join(keywords(q, 4))
        self.book.open = ("o_start", {"title": name})
        ok = yield from self.r.locate(doc_id, name, near=said, first=query.strip())
        self.book.open = None
        if ok:
            self.book.facts.append((("f_start", {"title": self.r.title(doc_id)}), doc_id))
        return ok

    def reach(self, via: str, doc_id: str, near: str = "", name: str = "") -> Move:
        """Make a document `via` mentions shown: search its name as `via`'s text writes it
        (`name`: as the page listed it, of the names a page may give one document)."""
        text = self.r.text(via)
        pos = text.find(name) if name else -1
        if pos < 0:
            name, pos = self.surface(doc_id, text)
        if not name:
            return False
        return (yield from self.r.locate(doc_id, name,
                                         near=near or _around(self.r.text(via), pos, name)))

    def read_for(self, via: str, doc_id: str) -> Move:
        """Read `via` until `doc_id` is mentioned in what was read (or to its end)."""
        yield from self.r.read_until(via, lambda t: self.surface(doc_id, t)[1] >= 0,
                                     first="open")
        last = max(self.r.pages.get(via, {0: ""}))
        seen = listed(self.r.pages.get(via, {}).get(last, ""))  # as the page just read lists
        if seen:
            more = f" and {len(seen) - 4} more" if len(seen) > 5 else ""
            self.r.note("page", page=str(last), title=self.r.title(via),
                        names=", ".join(seen[:4] if more else seen) + more)

    @staticmethod
    def candidates(order: list[tuple[str, str]], target: str) -> list[tuple[str, str]]:
        """Of the names a page shows (`shown`), those to check for a clue, in text order up to
        the target's: each one before it is ruled out by a tool result, none is skipped."""
        ids = [d for d, _ in order]
        return order[: ids.index(target) + 1] if target and target in ids else order

    def pattern(self, clue: Clue | None, phrase: str) -> str:
        """What `find` looks for to check a clue: the question's own words for it."""
        if clue is None or clue.kind == "phrase":
            return phrase or (clue.value if clue else "")
        if clue.kind == "entity" and clue.target in self.docs:
            # the name the question quotes, without a disambiguating parenthesis
            name = clue.key or self.docs[clue.target].title
            return without_parenthesis(name) or name
        return clue.key

    def criterion(self, clue: Clue | None, phrase: str) -> str:
        """The clue as the notes state it."""
        pattern = self.pattern(clue, phrase)
        quoted = f'"{pattern}"'
        if clue is None or clue.kind == "phrase" or pattern in clue.shown:
            return quoted  # not '"Charmed" (whose text mentions “Charmed”)'
        return f"{quoted} ({clue.shown})"

    def seen(self, doc_id: str, clue: Clue | None, phrase: str) -> str:
        """What the run was shown of `doc_id` that meets the clue, quoted: a date or number as
        the text writes it ("20 April 1960", not the word "died"), else the clue's words."""
        if clue is not None and clue.kind in ("date", "number") and clue.value:
            read = "\n".join([self.r.text(doc_id), *self.r.found.get(doc_id, [])])
            year = re.findall(r"\d{4}", clue.value)[-1:] if clue.kind == "date" else []
            for said in (clue.value, *year):
                if matches(read, said):
                    return f'"{said}"'
        return self.criterion(clue, phrase)

    def shows(self, clue: Clue | None, phrase: str, text: str) -> bool:
        """Whether `text` shows what the clue needs of the right document: the fact's value
        (a date's year, a number) or the pattern itself."""
        if clue is not None and clue.kind == "date" and clue.value:
            year = re.findall(r"\d{4}", clue.value)[-1:]  # the year, not inside a longer number
            return bool(year) and re.search(rf"(?<![\d,.]){year[0]}(?![\d,])", text) is not None
        if clue is not None and clue.kind == "number" and clue.value:
            return matches(text, clue.value)  # "28 years" as written, not "28" in "1928"
        pattern = self.pattern(clue, phrase)
        return bool(pattern) and matches(text, pattern)

    def check(self, cand: str, clue: Clue | None, phrase: str, want: bool) -> Move:
        """Whether `cand` meets the clue, from what a tool shows of it, the same way for every
        candidate (the one the plan leads to is not opened first): its lead for a birth or
        death year, else `find` with the clue's words, then its pages when the lines found do
        not show the value."""
        if clue is None and not phrase:
            return want
        pattern = self.pattern(clue, phrase)
        if clue is not None and clue.kind == "date" and clue.key in LIFE_KEYS:
            # a life's dates stand in the lead, often as "(1929 – 1989)" without the word
            # "born": open it before any `find`; a page read whole says all there is
            lead = yield from self.r.read_until(cand, lambda t: True, first="open_lead")
            if lead and self.shows(clue, phrase, lead):
                return want
            if lead and not want and self.r.read_whole(cand):
                return False
        has, lines = yield from self.r.contains(cand, pattern)
        if has is None:
            return None  # nothing of it came through: it is neither met nor ruled out
        if not has and clue is not None and clue.kind == "date" and clue.key in LIFE_KEYS:
            # a life's dates stand in parentheses after the name, without the word: the lead
            lead = yield from self.r.read_until(cand, lambda t: True, first="open_dates")
            return want if lead else None  # the plan's fact: its years stand in the lead
        if not want:
            if has and clue is not None and clue.kind == "category":  # why its lines do not count
                self.r.note("untagged", title=self.r.title(cand), pattern=f'"{clue.value}"')
            return False
        if has and not self.shows(clue, phrase, lines):
            text = yield from self.r.read_until(cand, lambda t: self.shows(clue, phrase, t))
            has = self.shows(clue, phrase, text)
        return bool(has)

    def follow(self, via: str, target: str, step: Step, exhaust: bool = False) -> Move:
        """From `via`, find the document it names that meets the step's clue; the doc_id, or
        "" if none. Candidates are checked in text order, each the same way; `exhaust` checks
        every one."""
        clue, phrase = step.fact, step.phrase
        quoted = self.criterion(clue, phrase) if clue or phrase else "the next link"
        via_title = self.r.title(via)
        # open from the first page read: a checkpoint while reading says this hop is left
        self.book.open = (("o_link_if", {"via": via_title, "cond": clue.shown}) if typed(clue)
                          else ("o_link", {"via": via_title, "pattern": quoted}))
        if exhaust:
            yield from self.r.read_until(via, lambda t: False, all_pages=True)
        else:
            yield from self.read_for(via, target)
        every = self.shown(via)
        cands = every if exhaust else self.candidates(every, target)
        for n, (cand, name) in enumerate(cands):
            # what is left is every later name the pages show, not the names up to the target
            self.book.checking(name, [c for _, c in every[n + 1:]])
            if not (yield from self.reach(via, cand, name=name)):
                break  # not reached, so not ruled out: a later name may not be taken over it
            want = cand == target and bool(target)
            has = yield from self.check(cand, clue, phrase, want)
            if has is None:  # it could not be checked: no later one may be taken over it
                break
            if has:
                self.book.checking()
                self.book.open = None  # settled: no later thought says it is still open
                fact = "f_phrase" if clue or phrase else "f_link"
                self.book.facts.append(((fact, {"via": self.r.title(via), "title": self.r.title(cand),
                                                "pattern": self.seen(cand, clue, phrase)}), cand))
                return cand
            self.book.ruled_out += 1
            if n + 1 < len(cands):
                self.r.note("back", title=self.r.title(via))
        self.book.checking()
        return ""

    def title_in(self, via: str, doc_id: str) -> str:
        return self.surface(doc_id, self.r.text(via))[0] or self.r.title(doc_id)

    def value(self, doc_id: str, value: str, already: str = "") -> Move:
        """Read `doc_id` until `value` (a year) is in what was read; the value, or ""."""
        if value and value in already:
            return value
        text = yield from self.r.read_until(doc_id, lambda t: value in t)
        if value and value in text:
            self.r.note("value", title=self.r.title(doc_id), value=value)
            return value
        return ""

    # -- the families ---------------------------------------------------------------------------

    def play(self) -> Move:
        """The whole trajectory: the family's plan, then its answer."""
        plan = getattr(self, family_of(self.spec).plan)
        yield from plan()

    def not_found(self) -> Move:
        """Answer `not found` (a list: `none`), saying what the run itself checked (never the
        spec's reason)."""
        book = self.book
        if book.total:
            why = f"{book.checked} of {book.total} checked, none matches"
        elif book.ruled_out:
            why = (f"{book.ruled_out} candidate{'s' * (book.ruled_out != 1)} checked, "
                   "none matches")
        else:
            why = "what I read names nothing that matches"
        empty = self.spec.operation == "list"  # a list no member of the set belongs to
        yield from self.answer("not_found", NONE if empty else NOT_FOUND, why=why)

    def chain(self) -> Move:
        steps = [s for s in self.spec.steps if s.doc or s.relation != "start"]
        if not steps or not (yield from self.start(steps[0].doc)):
            yield from self.answer("give_up", GIVE_UP)
            return
        at = steps[0].doc
        stop_at = -1
        if len(steps) > 2 and self.rng.random() < self.early_answer:
            stop_at = self.rng.randrange(1, len(steps) - 1)
        for i, step in enumerate(steps[1:], start=1):
            last = i == len(steps) - 1
            exhaust = bool(self.spec.unanswerable) and last
            nxt = yield from self.follow(step.via or at, step.doc, step, exhaust=exhaust)
            if exhaust and nxt != step.doc or not nxt:
                if self.spec.unanswerable:
                    yield from self.not_found()
                else:
                    yield from self.answer("give_up", GIVE_UP)
                return
            at = nxt
            if i == stop_at and self.r.title(at).lower() != self.q.answer.lower():
                yield from self.answer("early", self.r.title(at), title=self.r.title(at))
                return
        yield from self.finish(at, steps[-1])

    def finish(self, doc_id: str, step: Step) -> Move:
        """Answer with the target's title, or the year it states."""
        if (self.spec.answer_type == "year" and step.value and self.spec.condition
                and step.value not in self.r.text(doc_id)):  # not yet in what it read
            _, lines = yield from self.r.contains(doc_id, self.spec.condition.key)
            got = yield from self.value(doc_id, step.value, lines or "")
            yield from self.answer("answer", got or GIVE_UP)
            return
        if self.spec.answer_type == "year" and step.value:
            got = yield from self.value(doc_id, step.value)
            yield from self.answer("answer", got or GIVE_UP)
            return
        yield from self.answer("answer", self.r.title(doc_id))

    def clues(self, relation: str) -> list[tuple[Step, Step]]:
        """The spec's clues of several starts: each start step with the `relation` step after it."""
        return [(a, x) for a, x in itertools.pairwise(self.spec.steps)
                if a.relation == "start" and x.relation == relation]

    def start_and_follow(self, start: Step, step: Step) -> Move:
        """Find the start a clue names, then the document its step leads to, reading it; that
        doc_id, or "" when either is not found."""
        if not (yield from self.start(start.doc)):
            return ""
        return (yield from self.follow(start.doc, step.doc, step))

    def comparison(self) -> Move:
        years: dict[str, int] = {}
        sides = self.clues("compare")
        for a, x in sides:
            got = yield from self.start_and_follow(a, x)
            if not got:
                continue
            seen = self.r.text(got)
            if self.spec.condition and x.value not in seen:
                _, lines = yield from self.r.contains(got, self.spec.condition.key)
                seen = lines or seen
            year = yield from self.value(got, x.value, seen)
            if year:
                years[got] = int(year)
                self.book.facts.append((("f_value", {"title": self.r.title(got), "value": year}),
                                        got))
        if len(years) < len(sides):  # a side never reached settles nothing
            yield from self.answer("give_up", GIVE_UP)
            return
        pick = max if self.spec.operation == "later" else min
        winner = pick(years, key=lambda d: years[d])
        others = [d for d in years if d != winner]
        if len(others) == 1 and years[others[0]] != years[winner]:  # the comparison, stated
            self.r.note("compared", winner=self.r.title(winner), wv=str(years[winner]),
                        other=self.r.title(others[0]), ov=str(years[others[0]]),
                        order="later" if self.spec.operation == "later" else "earlier")
        yield from self.answer("answer", self.r.title(winner))

    def intersection(self) -> Move:
        if any(s.relation == "start" for s in self.spec.steps):
            yield from self.common_mention()
            return
        yield from self.phrase_intersection()

    def common_mention(self) -> Move:
        """Each clue names a start and a phrase to a hidden entry; the answer is what every
        hidden entry mentions: read each one whole and intersect what they mention."""
        common: set[str] | None = None
        hidden: list[str] = []
        sides = self.clues("link")
        for a, e in sides:
            got = yield from self.start_and_follow(a, e)
            if not got:
                continue
            hidden.append(got)  # open while its pages are read: what they name in common
            self.book.open = ("o_common", {"phrases": ", ".join(self.r.title(h) for h in hidden)})
            yield from self.r.read_until(got, lambda t: False, all_pages=True)
            seen = {d for d, _ in self.mentions(got)}
            common = seen if common is None else common & seen
        target = self.spec.target
        if len(hidden) < len(sides):  # a side never reached: what they share is unknown
            yield from self.answer("give_up", GIVE_UP)
        elif common and target in common:
            # the name every side writes it by; sides that name it otherwise share its title
            names = {self.title_in(h, target) for h in hidden}
            name = names.pop() if len(names) == 1 else self.r.title(target)
            self.book.facts.append((("f_common", {"title": name}), target))
            yield from self.reach(hidden[-1], target)  # its title as a result lists it
            yield from self.answer("answer", self.r.title(target) if target in self.r.shown
                                   else name)
        elif self.spec.unanswerable:
            yield from self.not_found()
        else:
            yield from self.answer("give_up", GIVE_UP)

    def phrase_intersection(self) -> Move:
        """Each clue is a phrase of the answer itself: search them, check candidates with find."""
        phrases = [s.phrase for s in self.spec.steps if s.phrase]
        target = self.spec.target or (self.spec.steps[0].doc if self.spec.steps else "")
        counts: dict[str, int] = {}
        self.book.open = ("o_all", {"phrases": ", ".join(f'"{p}"' for p in phrases)})
        for p in phrases:
            for d in (yield from self.r.search(f'"{p}"', k=10, what=f'"{p}"')):
                counts[d] = counts.get(d, 0) + 1
        pairs = [f"{a} {b}" for i, a in enumerate(phrases) for b in phrases[i + 1:]]
        for query in pairs[:4]:
            if target in counts and not self.spec.unanswerable:
                break
            for d in (yield from self.r.search(query, k=20, situation="widen",
                                              what=f'"{query}"')):
                counts[d] = counts.get(d, 0) + 1
        ranked = sorted(counts, key=lambda d: -counts[d])
        if self.spec.unanswerable:
            cands = ranked[:6]
        else:
            wrong = [d for d in ranked if d != target][: self.max_wrong]
            first = wrong[: self.rng.randint(1, len(wrong))] if wrong and (
                self.rng.random() < self.wrong_candidate) else []
            cands = [*first, target] if target in counts else ranked[:6]
        for n, cand in enumerate(cands):
            self.book.checking(self.r.title(cand), [self.r.title(c) for c in cands[n + 1:]])
            ok = True
            for p in phrases:
                has, _ = yield from self.r.contains(cand, p)
                if not has:
                    ok = False
                    break
            if ok:
                self.book.checking()
                self.book.facts.append((("f_all", {"title": self.r.title(cand)}), cand))
                yield from self.answer("answer", self.r.title(cand))
                return
            self.r.note("back", title="the candidates")
        self.book.checking()
        if self.spec.unanswerable:
            yield from self.not_found()
        else:
            yield from self.answer("give_up", GIVE_UP)

    def aggregation(self) -> Move:
        spec = self.spec
        if not (yield from self.start(spec.start)):
            yield from self.answer("give_up", GIVE_UP)
            return
        self.book.open = ("o_list", {"title": self.r.title(spec.start)})  # while its pages are read
        yield from self.r.read_until(spec.start, lambda t: False, all_pages=True)
        level = [(d, n, spec.start) for d, n in self.shown(spec.start)]
        # documents of the set, or pages listing it, that the run could not reach or read whole
        unread: list[str] = [] if self.r.read_whole(spec.start) else [spec.start]
        if spec.scope == "links2":
            outer, level, seen = level, [], {spec.start}
            self.book.open = ("o_links2", {"title": self.r.title(spec.start)})
            for d, name, via in outer:
                if not (yield from self.reach(via, d, name=name)):
                    unread.append(d)  # its names stay unknown: no count can be given
                    continue
                yield from self.r.read_until(d, lambda t: False, all_pages=True)
                if not self.r.read_whole(d):
                    unread.append(d)
                level += [(x, n, d) for x, n in self.shown(d) if x not in seen]
                seen.update(x for x, _, _ in level if x)
        wanted = set(spec.items)
        first: dict[str, tuple[str, str, str]] = {}  # each under the name it is first listed by
        for d, listed_as, v in level:
            if d in wanted:
                first.setdefault(d, (d, listed_as, v))
        items = list(first.values())
        values = {s.doc: s.value for s in spec.steps if s.relation == "item"}
        book = self.book
        if not items:  # the lists did not come through: nothing is known
            yield from self.give_up_set(unread or [spec.start])
            return
        book.total = len(items)
        # the queue as read off the pages: every name to check, so a count has its source
        self.r.note("listed", n=str(len(items)), names=", ".join(n for _, n, _ in items))
        cond = spec.condition
        book.open = (("o_items_if", {"n": str(len(items)), "cond": cond.shown}) if typed(cond)
                     else ("o_items", {"n": str(len(items)),
                                       "pattern": self.criterion(cond, spec.pattern)}))
        found: dict[str, int] = {}
        matching = set(spec.matching)
        for n, (d, name, via) in enumerate(items):
            book.checking(name, [name for _, name, _ in items[n + 1:]])
            if not (yield from self.reach(via, d, name=name)):
                unread.append(d)
            else:
                has = yield from self.check(d, cond, spec.pattern, d in matching)
                lines = self.r.text(d) + "\n" + "\n".join(self.r.found.get(d, []))
                if has is None:  # nothing of it came through: the total is unknown
                    unread.append(d)
                    continue
                if has:
                    book.hits.append(self.r.title(d))
                    if spec.operation in ("max", "min") and values.get(d):
                        year = yield from self.value(d, values[d], lines)
                        if year:
                            found[d] = int(year)
                            book.facts.append((("f_value", {"title": self.r.title(d),
                                                             "value": year}), d))
                if spec.operation not in ("max", "min") and values.get(d) and matches(
                        lines, values[d]):  # the year read, met or not: the count's source
                    book.facts.append((("f_value", {"title": self.r.title(d),
                                                     "value": f"{cond.key} {values[d]}"}), d))
                book.checked += 1
        book.checking()
        if unread:  # a member it could not check may meet the condition: the total is
            yield from self.give_up_set(unread)  # unknown, and so is whether none does
            return
        # (a set no member meets says how many of them it checked: "20 of 22 checked")
        yield from self.total_answer(found)

    def give_up_set(self, unread: list[str]) -> Move:
        """Give up on a set whose listing pages or members did not come through, naming them."""
        titles = [self.r.title(d) for d in dict.fromkeys(unread)]
        shown = ", ".join(titles[:3]) + (f" and {len(titles) - 3} more" if len(titles) > 3 else "")
        yield from self.answer("give_up_set", GIVE_UP, unread=shown)

    def total_answer(self, years: dict[str, int]) -> Move:
        op, hits = self.spec.operation, self.book.hits
        if not hits:
            yield from self.not_found()
        elif op == "count":
            yield from self.answer("answer", str(len(hits)))
        elif op in ("max", "min") and years:
            pick = max if op == "max" else min
            yield from self.answer("answer", self.r.title(pick(years, key=lambda d: years[d])))
        elif op in ("max", "min"):
            yield from self.answer("give_up", GIVE_UP)
        else:
            yield from self.answer("answer", "; ".join(hits))
