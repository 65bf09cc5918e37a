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
then the line for the situation (SITUATIONS). The words themselves are data: voices.toml, beside
this module, holds every voice's line for each situation and note; `Voice.say` renders them.

    first          how the voice names the first entity before it has read anything ({title})
    search         the first query for a document ({what}: the first entity or a title)
    rephrase       another query after one that did not show the document ({what}: the query)
    reword         another query after one that failed (an error, an empty reply) ({what})
    widen          a longer result list, or the last, wider search ({what}: the query)
    retry          the same call again after an error ({what}: the call, as `call_words` says it)
    reread         the same call again after a result cut short ({what})
    open           opening a document the results show, the next step on ({title})
    read           reading a document to check it or list what it names, no claim made of
                   it yet ({title})
    open_more      reading the next page of a document ({title}, {page})
    open_dates     reading a page's opening for its dates, after find showed no line ({title})
    open_lead      reading a page's opening for a birth or death year, before any find ({title})
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
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from hopforge.corpus.errors import HopforgeError

SITUATIONS: tuple[str, ...] = (
    "first", "search", "rephrase", "reword", "widen", "retry", "reread", "open", "read", "open_more",
    "open_dates", "open_lead", "find", "find_fallback", "give_up", "give_up_set",
    "early", "answer", "not_found", "forced",
)
# What a thought reports before its call: {title}, {names}, {pattern}, {n}, {tool}, ...
NOTES: tuple[str, ...] = (
    "hit", "miss", "page", "page_none", "lines", "no_lines", "timeout", "empty", "cut", "layout",
    "known", "todo", "tally", "left", "listed", "value", "compared", "back", "untagged",
    "c_search", "c_open", "c_find", "c_call",  # a call named again ({query}, {page}, {title} ...)
)
# What the state notes hold: facts read ({title}, {via}, {pattern}, {value}) and the open question.
FACTS: tuple[str, ...] = (
    "f_start", "f_link", "f_phrase", "f_value", "f_all", "f_common",
    "o_start", "o_link", "o_list", "o_links2", "o_items", "o_all", "o_common",
    "o_link_if", "o_items_if",  # a typed condition, as the question states it ({cond})
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


VOICES_FILE = "voices.toml"  # package data beside this module: the wording of every voice


def load_voices(text: str, origin: str = VOICES_FILE) -> tuple[Voice, ...]:
    """The voices a voices file declares, in its order; each must word every situation and note."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HopforgeError(f"{origin} is not valid TOML ({exc}); fix the line it names") from exc
    rows = data.get("voices")
    if not isinstance(rows, list) or not rows:
        raise HopforgeError(f"{origin} declares no voices: add [[voices]] tables with a name, "
                            "[voices.situations] and [voices.notes]")
    voices = []
    for n, row in enumerate(rows):
        name = row.get("name") or f"voices[{n}]"
        lines = {**row.get("situations", {}), **row.get("notes", {})}
        missing = [k for k in (*SITUATIONS, *NOTES, *FACTS) if k not in lines]
        if missing:
            raise HopforgeError(f"{origin}: voice {name!r} has no line for {', '.join(missing)}; "
                                "every voice words every situation and note")
        unknown = sorted(set(lines) - {*SITUATIONS, *NOTES, *FACTS})
        if unknown:
            raise HopforgeError(f"{origin}: voice {name!r} has lines nothing says: "
                                f"{', '.join(unknown)}; remove them or fix their names")
        voices.append(Voice(name=str(name), lines={k: str(v) for k, v in lines.items()}))
    return tuple(voices)


VOICES: tuple[Voice, ...] = load_voices(
    files("hopforge.synth.trajectories").joinpath(VOICES_FILE).read_text("utf-8"))
HOUSE, OTHER_VOICES = VOICES[0], VOICES[1:]  # the file lists the house voice first
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

