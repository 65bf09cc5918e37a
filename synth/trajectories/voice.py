"""How the scripted teacher words its thoughts and builds its queries: its voices and habits.

A real teacher has a house style: pet openers and phrases, and habits in how it writes queries
(copying the question into the first search, say), at a high but not universal rate, and the
habits come together. The scripted teacher draws one `Style` per trajectory from that
trajectory's seed: the house voice with the house query habit with probability `house_style`,
otherwise one of the other voices with another query habit, uniformly. Within a trajectory,
each thought, and the query habit for each document, slips into another style with probability
`drift`. A style changes how the teacher words its thoughts and queries; which documents it
reads, its detours and its reactions to faults stay as they are.

A thought is what the teacher saw, what it knows or still has open, then why it makes this
call: note lines (NOTES) built from its state (what the last result showed, a fault seen, a
branch that failed (back), the facts known, what is still open, the tally and the items left),
then the line for the situation (SITUATIONS).

    first          how the voice names the first entity before it has read anything ({title})
    search         the first query for a document ({what}: the first entity or a title)
    rephrase       another query after one that did not show the document
    widen          the last, wider search before giving up
    retry          the same call again after an error
    reread         the same call again after a cut or a changed layout
    open           opening a document the results show ({title})
    open_more      reading the next page of a document ({title}, {page})
    open_wrong     checking a candidate that may not be the one ({title})
    find           looking for a phrase inside a document ({title}, {pattern})
    find_fallback  find after an open that did not come through ({title}, {pattern})
    give_up        the document cannot be found
    early          answering an intermediate entity ({title})
    answer         the final answer ({answer})
    not_found      no document meets the question's premise ({why})
    forced         answering because the context is full
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SITUATIONS: tuple[str, ...] = (
    "first", "search", "rephrase", "widen", "retry", "reread", "open", "open_more",
    "open_wrong", "find", "find_fallback", "give_up", "early", "answer", "not_found",
    "forced",
)
# What a thought reports before its call: {title}, {names}, {pattern}, {n}, {tool}, ...
NOTES: tuple[str, ...] = (
    "hit", "miss", "page", "page_none", "lines", "no_lines", "timeout", "empty", "cut", "layout",
    "known", "todo", "tally", "left", "value", "back",
)
# What the state notes hold: facts read ({title}, {via}, {pattern}, {value}) and the open question.
FACTS: tuple[str, ...] = (
    "f_start", "f_link", "f_phrase", "f_value", "f_all",
    "o_start", "o_link", "o_links2", "o_items", "o_all",
)
Note = tuple[str, dict[str, Any]]  # a NOTES kind (or FACTS kind) and its slots
FIRST_QUERIES: tuple[str, ...] = ("question", "keywords", "title", "title-context")
NEXT_QUERIES: tuple[str, ...] = ("name-near", "name", "near-name", "quoted")


@dataclass(frozen=True, slots=True, kw_only=True)
class Voice:
    """One way of wording thoughts: a template per situation."""

    name: str
    lines: Mapping[str, str]

    def say(self, situation: str, **slots: Any) -> str:
        """The line for a situation or note, its slots filled (unused slots are ignored).

        A slot may hold a note, or a list of notes, worded in this voice too.
        """
        return self.lines[situation].format_map(_Slots(self, slots))


class _Slots(dict[str, Any]):
    """Format slots: nested notes are worded by the voice; a missing slot reads as "X"."""

    def __init__(self, voice: Voice, slots: dict[str, Any]) -> None:
        super().__init__(slots)
        self.voice = voice

    def __getitem__(self, key: str) -> str:
        value = super().__getitem__(key)
        if isinstance(value, tuple):
            return self.voice.say(value[0], **value[1])
        if isinstance(value, list):
            return "; ".join(self.voice.say(k, **s) for k, s in value)
        return str(value)

    def __missing__(self, key: str) -> str:
        return "X"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryHabit:
    """How queries are built: `first` for the first document, `next` for a bridge entity.

    first: question (the question itself), keywords (its content words, names first), title,
    title-context (the title and two other words of the question). next: name-near (the bridge
    and two words of its clue), name, near-name (one clue word, then the bridge), quoted.
    """

    first: str
    next: str


HOUSE = Voice(name="house", lines={
    "first": "the first entity of the question",
    "search": "Let me search for {what}.",
    "rephrase": "Nothing useful; rephrasing the query.",
    "widen": "Still missing; asking for more results.",
    "retry": "That failed; trying again.",
    "open": "{title} looks right; opening it.",
    "open_wrong": "{title} might be it.",
    "find": "Checking where {title} mentions {pattern}.",
    "find_fallback": "The page did not come through; searching inside the document instead.",
    "give_up": "I cannot find the next document; giving up.",
    "early": "{title} must be the answer.",
    "answer": "So the answer is {answer}.",
    "forced": "Out of room; answering with what I have.",
    "reread": "That looked wrong; reading it again.",
    "open_more": "Reading page {page} of {title}.",

    "not_found": "Nothing meets the question: {why}.",
})

OTHER_VOICES: tuple[Voice, ...] = (
    Voice(name="plain", lines={
        "first": "{title}",
        "search": "Looking for {what}.",
        "rephrase": "Not found; trying other words.",
        "widen": "One more try with a longer list.",
        "retry": "The tool errored, retrying.",
        "open": "Opening {title}.",
        "open_wrong": "Trying {title} first.",
        "find": "Where does it mention {pattern}?",
        "find_fallback": "No text came back; using find.",
        "give_up": "Nothing left to try; stopping.",
        "early": "That settles it: {title}.",
        "answer": "That gives {answer}.",
        "forced": "No room left, so answering now.",
        "reread": "Odd output; same call again.",
        "open_more": "Next page of {title}: {page}.",
        "back": "Wrong branch; returning to {title}.",
        "not_found": "No answer exists here: {why}.",
    }),
    Voice(name="methodical", lines={
        "first": "the starting entity",
        "search": "Next step: locate {what}.",
        "rephrase": "That query missed, so I will word it differently.",
        "widen": "I will widen the search to more results.",
        "retry": "The call returned an error; I will repeat it.",
        "open": "The results list {title}, so I will read it.",
        "open_wrong": "I will check {title} before the others.",
        "find": "I will look for {pattern} inside {title}.",
        "find_fallback": "The page did not load, so I will search within the document.",
        "give_up": "I have run out of leads, so I will stop here.",
        "early": "I will answer {title}.",
        "answer": "I will answer {answer}.",
        "forced": "I am out of context, so I will answer with what I know.",
        "reread": "The output was not complete, so I will request it again.",
        "open_more": "I will read the next part of {title}.",
        "back": "This branch failed, so I will return to {title}.",
        "not_found": "I have checked every candidate and none qualifies: {why}.",
    }),
    Voice(name="curious", lines={
        "first": "whatever comes first",
        "search": "Where would {what} turn up? Searching.",
        "rephrase": "Hmm, no luck. Different words then.",
        "widen": "Perhaps a longer result list shows it.",
        "retry": "Odd, an error. Again.",
        "open": "There it is: {title}.",
        "open_wrong": "Could {title} be the one?",
        "find": "Does {title} say anything about {pattern}?",
        "find_fallback": "Blank page? I'll try find instead.",
        "give_up": "Out of ideas; I give up.",
        "early": "Surely it is {title}.",
        "answer": "It looks like {answer}.",
        "forced": "Running short on space; here is my answer.",
        "reread": "That came out strange. Once more.",
        "open_more": "What comes next in {title}?",
        "back": "Not this one. Back to {title}.",
        "not_found": "Nothing fits after all: {why}.",
    }),
    Voice(name="terse", lines={
        "first": "{title}",
        "search": "Search: {what}.",
        "rephrase": "Miss. Rewording.",
        "widen": "Widening.",
        "retry": "Error. Repeat.",
        "open": "Open {title}.",
        "open_wrong": "Try {title}.",
        "find": "Find {pattern}.",
        "find_fallback": "Open failed. Find instead.",
        "give_up": "Stuck. Stopping.",
        "early": "Answer: {title}.",
        "answer": "Answer: {answer}.",
        "forced": "Context full. Answering.",
        "reread": "Bad output. Again.",
        "open_more": "{title} p{page}.",
        "back": "Back: {title}.",
        "not_found": "None: {why}.",
    }),
    Voice(name="narrative", lines={
        "first": "where the chain begins",
        "search": "Now I need to track down {what}.",
        "rephrase": "The results missed it; another query might work.",
        "widen": "Asking the search for a longer list of results.",
        "retry": "An error came back, so the same call again.",
        "open": "Now reading {title} to see what it says.",
        "open_wrong": "First a look at {title}, just in case.",
        "find": "Scanning {title} for any mention of {pattern}.",
        "find_fallback": "The document would not open; searching its text directly.",
        "give_up": "The trail has gone cold, so I will stop.",
        "early": "The answer has to be {title}.",
        "answer": "The chain ends at {answer}.",
        "forced": "The context is nearly full, so here is the answer.",
        "reread": "The reply came back mangled, so I am asking for it again.",
        "open_more": "Turning over to the next page of {title}.",
        "back": "That path led nowhere, so I return to {title}.",
        "not_found": "Every lead is exhausted and nothing meets the premise: {why}.",
    }),
)

HOUSE_NOTES: dict[str, str] = {
    "hit": "{title} is in the results.",
    "miss": "{title} is not in the results.",
    "page": "Page {page} of {title} mentions {names}.",
    "page_none": "Page {page} of {title} does not mention it.",
    "lines": "{title} has {n} line(s) with {pattern}.",
    "no_lines": "{title} has no line with {pattern}.",
    "timeout": "The {tool} call timed out after {seconds} s.",
    "empty": "The {tool} call came back empty.",
    "cut": "The {tool} result was cut off.",
    "layout": "The {tool} result came back in another layout.",
    "known": "So far: {known}.",
    "todo": "Still open: {open}.",
    "tally": "{checked} of {total} checked, {hits} matching.",
    "left": "Left to check: {names}.",
    "value": "{title} gives {value}.",
    "back": "Dead end; back to {title}.",
    "f_start": "{title} is where it starts",
    "f_link": "{via} leads to {title}",
    "f_phrase": "{via} leads to {title}, which has {pattern}",
    "f_value": "{title}: {value}",
    "f_all": "{title} has all the phrases",
    "o_start": "where the question starts: {title}",
    "o_link": "which entry {via} mentions has {pattern}",
    "o_links2": "the entries mentioned by those {title} mentions",
    "o_items": "which of the {n} entries contain {pattern}",
    "o_all": "the one entry with all of {phrases}",
}
PLAIN_NOTES: dict[str, str] = {
    "hit": "Found {title} in the list.",
    "miss": "No {title} in the list.",
    "page": "{title} p{page} names {names}.",
    "page_none": "{title} p{page}: not there.",
    "lines": "{n} hit(s) for {pattern} in {title}.",
    "no_lines": "Zero hits for {pattern} in {title}.",
    "timeout": "{tool}: timeout after {seconds} s.",
    "empty": "{tool}: empty reply.",
    "cut": "{tool}: truncated.",
    "layout": "{tool}: unusual layout.",
    "known": "Have: {known}.",
    "todo": "Need: {open}.",
    "tally": "Count {hits} after {checked}/{total}.",
    "left": "Queue: {names}.",
    "value": "{title}: {value}.",
    "f_start": "start = {title}",
    "f_link": "{via} -> {title}",
    "f_phrase": "{via} -> {title} ({pattern})",
    "f_value": "{title} = {value}",
    "f_all": "{title} matches every phrase",
    "o_start": "locate {title}",
    "o_link": "{via} link with {pattern}",
    "o_links2": "links of links of {title}",
    "o_items": "{n} entries vs {pattern}",
    "o_all": "entry with {phrases}",
}
STORY_NOTES: dict[str, str] = {
    "hit": "The search turned up {title}.",
    "miss": "The search did not turn up {title}.",
    "page": "In part {page} of its text, {title} refers to {names}.",
    "page_none": "Part {page} of {title} has no such reference.",
    "lines": "There are {n} passage(s) in {title} that contain {pattern}.",
    "no_lines": "Nothing in {title} contains {pattern}.",
    "timeout": "My {tool} request hung for {seconds} s and timed out.",
    "empty": "My {tool} request returned nothing at all.",
    "cut": "My {tool} request returned only part of the output.",
    "layout": "My {tool} request returned its output in a different shape.",
    "known": "What I have established: {known}.",
    "todo": "What remains: {open}.",
    "tally": "I have gone through {checked} of the {total}, and {hits} qualify.",
    "left": "Still waiting to be checked: {names}.",
    "value": "According to {title}, the year is {value}.",
    "f_start": "the question begins at {title}",
    "f_link": "{via} points on to {title}",
    "f_phrase": "{via} points on to {title}, where {pattern} appears",
    "f_value": "{title} dates from {value}",
    "f_all": "{title} contains every one of the phrases",
    "o_start": "finding {title}, where the question begins",
    "o_link": "which of the entries named in {via} contains {pattern}",
    "o_links2": "every entry reached two steps from {title}",
    "o_items": "how many of the {n} entries contain {pattern}",
    "o_all": "the single entry that contains {phrases}",
}
TERSE_NOTES: dict[str, str] = {
    "hit": "{title} listed.",
    "miss": "{title} not listed.",
    "page": "{title} p{page} names {names}.",
    "page_none": "{title} p{page}: nothing.",
    "lines": "{title}: {n} line(s) with {pattern}.",
    "no_lines": "{title}: no {pattern}.",
    "timeout": "{tool} timed out ({seconds} s).",
    "empty": "{tool} empty.",
    "cut": "{tool} cut off.",
    "layout": "{tool} layout changed.",
    "known": "Known: {known}.",
    "todo": "Open: {open}.",
    "tally": "{hits} of {checked} checked match; {total} in all.",
    "left": "Unchecked: {names}.",
    "value": "{title}: {value}.",
    "back": "Back to {title}.",
    "f_start": "start {title}",
    "f_link": "{via} links {title}",
    "f_phrase": "{via} links {title} ({pattern})",
    "f_value": "{title} {value}",
    "f_all": "{title} has every phrase",
    "o_start": "find {title}",
    "o_link": "{via}'s link with {pattern}",
    "o_links2": "links of {title}'s links",
    "o_items": "which of {n} have {pattern}",
    "o_all": "entry with {phrases}",
}
METHODICAL_NOTES: dict[str, str] = {
    "hit": "The result list includes {title}.",
    "miss": "The result list does not include {title}.",
    "page": "Section {page} of {title} names the following: {names}.",
    "page_none": "Section {page} of {title} names nothing relevant.",
    "lines": "The document {title} contains {pattern} on {n} line(s).",
    "no_lines": "The document {title} does not contain {pattern}.",
    "timeout": "The {tool} request exceeded its {seconds} s limit.",
    "empty": "The {tool} request produced no output.",
    "cut": "The {tool} request produced incomplete output.",
    "layout": "The {tool} request produced output in an unexpected format.",
    "known": "Established facts: {known}.",
    "todo": "Outstanding: {open}.",
    "tally": "Progress: {checked} of {total} examined, {hits} satisfying the condition.",
    "left": "Remaining: {names}.",
    "value": "Recorded value for {title}: {value}.",
    "back": "Returning to the list in {title}.",
    "f_start": "the starting entry is {title}",
    "f_link": "the entry after {via} is {title}",
    "f_phrase": "the entry after {via} is {title}, containing {pattern}",
    "f_value": "the value for {title} is {value}",
    "f_all": "{title} satisfies every constraint",
    "o_start": "identify the starting entry {title}",
    "o_link": "identify the entry cited by {via} that contains {pattern}",
    "o_links2": "enumerate the entries two references away from {title}",
    "o_items": "determine how many of {n} entries contain {pattern}",
    "o_all": "identify the entry satisfying {phrases}",
}
CURIOUS_NOTES: dict[str, str] = {
    "hit": "Oh, {title} shows up.",
    "miss": "Hmm, no sign of {title}.",
    "page": "Bit {page} of {title} talks about {names}.",
    "page_none": "Bit {page} of {title}: nothing useful.",
    "lines": "Aha, {title} has {pattern} on {n} line(s).",
    "no_lines": "No {pattern} anywhere in {title}, it seems.",
    "timeout": "Ugh, {tool} stalled for {seconds} s.",
    "empty": "Strange, {tool} gave back nothing.",
    "cut": "Hm, the {tool} output stops halfway.",
    "layout": "Odd, the {tool} output looks different.",
    "known": "I know this much: {known}.",
    "todo": "I still wonder about {open}.",
    "tally": "{hits} so far, after looking at {checked} of {total}.",
    "left": "Still curious about {names}.",
    "value": "Interesting: {title} says {value}.",
    "back": "Let's go back to {title}.",
    "f_start": "it all starts at {title}",
    "f_link": "{via} brought me to {title}",
    "f_phrase": "{via} brought me to {title}, which mentions {pattern}",
    "f_value": "{title} goes with {value}",
    "f_all": "{title} fits every clue",
    "o_start": "where {title} lives",
    "o_link": "which of {via}'s neighbours mentions {pattern}",
    "o_links2": "what the neighbours of {title}'s neighbours are",
    "o_items": "how many of the {n} mention {pattern}",
    "o_all": "who has all of {phrases}",
}
_NOTES_OF = {"house": HOUSE_NOTES, "plain": PLAIN_NOTES, "terse": TERSE_NOTES,
             "methodical": METHODICAL_NOTES, "curious": CURIOUS_NOTES}


def _with_notes(voice: Voice) -> Voice:
    return Voice(name=voice.name, lines={**voice.lines, **_NOTES_OF.get(voice.name, STORY_NOTES)})

HOUSE = _with_notes(HOUSE)
OTHER_VOICES = tuple(_with_notes(v) for v in OTHER_VOICES)
VOICES: tuple[Voice, ...] = (HOUSE, *OTHER_VOICES)
HOUSE_QUERIES = QueryHabit(first="question", next="name-near")

OTHER_QUERIES: tuple[QueryHabit, ...] = tuple(
    QueryHabit(first=f, next=n) for f in FIRST_QUERIES for n in NEXT_QUERIES
    if f != HOUSE_QUERIES.first and n != HOUSE_QUERIES.next)


@dataclass(frozen=True, slots=True, kw_only=True)
class Style:
    """A trajectory's voice and query habit."""

    voice: Voice
    queries: QueryHabit


def draw_style(rng: random.Random, house_style: float) -> Style:
    """The house style with probability `house_style`, else another voice and query habit."""
    if rng.random() < house_style:
        return Style(voice=HOUSE, queries=HOUSE_QUERIES)
    return Style(voice=rng.choice(OTHER_VOICES), queries=rng.choice(OTHER_QUERIES))


class Speaker:
    """Words a trajectory's thoughts and picks its query habits, now and then in another style."""

    def __init__(self, style: Style, rng: random.Random, drift: float) -> None:
        self.style = style
        self.rng = rng
        self.drift = drift
        self._voices = tuple(v for v in VOICES if v is not style.voice)
        self._habits = tuple(h for h in (HOUSE_QUERIES, *OTHER_QUERIES) if h != style.queries)

    def _slip(self) -> bool:
        return self.drift > 0 and self.rng.random() < self.drift

    def say(self, situation: str, notes: Sequence[Note] = (), **slots: str) -> str:
        """The notes, then the line for `situation`, in one voice (slots: module docstring)."""
        voice = self.rng.choice(self._voices) if self._slip() else self.style.voice
        if situation == "search" and "what" not in slots:
            slots["what"] = voice.say("first", **slots)
        return " ".join([*(voice.say(k, **s) for k, s in notes), voice.say(situation, **slots)])

    def habit(self) -> QueryHabit:
        """The query habit for the next document."""
        return self.rng.choice(self._habits) if self._slip() else self.style.queries

