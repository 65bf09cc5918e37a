"""How the scripted teacher words its thoughts and builds its queries: its voices and habits.

A real teacher has a house style: pet openers and phrases, and habits in how it writes queries
(copying the question into the first search, say), at a high but not universal rate, and the
habits come together. The scripted teacher draws one `Style` per trajectory from that
trajectory's seed: the house voice with the house query habit with probability `house_style`,
otherwise one of the other voices with another query habit, uniformly. Within a trajectory,
each thought, and the query habit for each document, slips into another style with probability
`drift`. A style changes how the teacher words its thoughts and queries; which documents it
reads, its detours and its reactions to faults stay as they are.

Situations a thought is written for, with the slots its template may use:

    first          how the voice names the first entity before it has read anything ({title})
    search         the first query for a document ({what}: the first entity or a title)
    rephrase       another query after one that did not show the document
    widen          the last, wider search before giving up
    retry          the same call again after an error
    open           opening the document the results show ({title})
    open_wrong     opening a wrong hit first ({title})
    find           looking for the bridge inside a document ({title}, {pattern})
    find_fallback  find after an open that did not come through ({title}, {pattern})
    side           a side search that leads nowhere ({other})
    side_open      opening that side document ({other})
    give_up        the document cannot be found
    early          answering an intermediate entity ({title})
    answer         the final answer ({answer})
    forced         answering because the context is full
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

SITUATIONS: tuple[str, ...] = (
    "first", "search", "rephrase", "widen", "retry", "open", "open_wrong", "find",
    "find_fallback", "side", "side_open", "give_up", "early", "answer", "forced",
)
FIRST_QUERIES: tuple[str, ...] = ("question", "keywords", "title", "title-context")
NEXT_QUERIES: tuple[str, ...] = ("name-near", "name", "near-name", "quoted")


@dataclass(frozen=True, slots=True, kw_only=True)
class Voice:
    """One way of wording thoughts: a template per situation."""

    name: str
    lines: Mapping[str, str]

    def say(self, situation: str, **slots: str) -> str:
        """The thought for `situation`, its slots filled (unused slots are ignored)."""
        return self.lines[situation].format(**slots)


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
    "side": "Maybe {other} matters here.",
    "side_open": "Taking a look at {other}.",
    "give_up": "I cannot find the next document; giving up.",
    "early": "{title} must be the answer.",
    "answer": "So the answer is {answer}.",
    "forced": "Out of room; answering with what I have.",
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
        "side": "Checking {other} on the side.",
        "side_open": "Reading {other}.",
        "give_up": "Nothing left to try; stopping.",
        "early": "That settles it: {title}.",
        "answer": "That gives {answer}.",
        "forced": "No room left, so answering now.",
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
        "side": "It is worth checking {other} as well.",
        "side_open": "I will read {other}.",
        "give_up": "I have run out of leads, so I will stop here.",
        "early": "I will answer {title}.",
        "answer": "I will answer {answer}.",
        "forced": "I am out of context, so I will answer with what I know.",
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
        "side": "I wonder whether {other} is related.",
        "side_open": "Peeking at {other}.",
        "give_up": "Out of ideas; I give up.",
        "early": "Surely it is {title}.",
        "answer": "It looks like {answer}.",
        "forced": "Running short on space; here is my answer.",
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
        "side": "Side check: {other}.",
        "side_open": "Open {other}.",
        "give_up": "Stuck. Stopping.",
        "early": "Answer: {title}.",
        "answer": "Answer: {answer}.",
        "forced": "Context full. Answering.",
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
        "side": "A short detour to {other} could help.",
        "side_open": "Having a look at {other}.",
        "give_up": "The trail has gone cold, so I will stop.",
        "early": "The answer has to be {title}.",
        "answer": "The chain ends at {answer}.",
        "forced": "The context is nearly full, so here is the answer.",
    }),
)
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

    def say(self, situation: str, **slots: str) -> str:
        """The thought for `situation` (see the module docstring for its slots)."""
        voice = self.rng.choice(self._voices) if self._slip() else self.style.voice
        if situation == "search" and "what" not in slots:
            slots["what"] = voice.say("first", **slots)
        return voice.say(situation, **slots)

    def habit(self) -> QueryHabit:
        """The query habit for the next document."""
        return self.rng.choice(self._habits) if self._slip() else self.style.queries
