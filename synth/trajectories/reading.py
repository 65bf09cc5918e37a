"""The scripted teacher's reading moves: search for a name, read pages, find a phrase, recover.

Each move is a generator that yields (thought, call) and is sent the tool's result text. What a
move types comes from text it was shown: a name is searched as it appears in the question or a
page, a doc_id is one a result listed, a phrase is one the question quotes. The map (the spec
and the link graph) only says which of the shown options to take. Every fault kind gets a
visible reaction: a timeout or an empty page or find is retried, an empty search rephrased, a
cut or re-laid result read again, and a call that keeps failing is replaced by another way to
the same text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hopforge.corpus.matching import matches
from hopforge.corpus.mentions import STOPWORDS
from hopforge.corpus.records import Document
from hopforge.corpus.tools import EMPTY_TEXTS, is_final, normalize_text
from hopforge.synth.annotate import normalize_call
from hopforge.synth.records import ToolCall
from hopforge.synth.trajectories.faults import TRUNCATION_NOTE, relaid, unlaid
from hopforge.synth.trajectories.voice import Note, Speaker

Act = tuple[str, ToolCall]
MAX_SENDS = 3  # the agent's repetition stop rule ends a trajectory at a fourth
Move = Generator[Act, str, Any]
_HIT = re.compile(r"\[doc_id: ([^\]\s]+)\] ([^|\n\"\\]+)")
_MORE = re.compile(r"\(more: open doc_id=\S+ page=(\d+)\)")
_PAGES = re.compile(r"\(pages 0-(\d+)\)")
_SECONDS = re.compile(r"after (\d+(?:\.\d+)?) s")
_LINES = re.compile(r"(\d+) line\(s\) match")
_WORD = re.compile(r"\w[\w'-]*")  # "__qualname__" and "Émile" are words too
_STOP = STOPWORDS | frozenset(  # no query pads a name with "You" or "few"
    ["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "was", "were", "are", "be", "been", "it", "its", "his", "her", "their", "this", "that", "which", "who", "whom", "whose", "what", "when", "where", "how", "why", "did", "does", "do", "as", "into", "than", "then", "there", "these", "those", "he", "she", "they", "them", "one", "also", "first", "later", "most", "known", "not", "see"]
)


# how questions are put, not what they ask about: a query of these finds nothing
_ASKING = frozenset(
    ["take", "start", "article", "articles", "entry", "entries", "page", "pages", "document", "documents", "mentions", "mentioned", "mention", "text", "subject", "contains", "contain", "words", "word", "list", "titles", "title", "count", "many", "leaving", "out", "itself", "last", "next", "which", "what", "whose", "name", "names", "there", "those", "both", "two", "each", "other", "others", "one", "ones", "give", "tell", "find", "state", "states", "stated"]
)


def keywords(text: str, n: int, exclude: str = "") -> list[str]:
    """Up to `n` content words of `text` in order, none of them in `exclude`, and none of the
    words every question is put in ("article", "mentions", "text")."""
    skip = {w.lower() for w in _WORD.findall(exclude)} | _ASKING
    out: list[str] = []
    for w in _WORD.findall(text):
        if w.lower() not in _STOP and w.lower() not in skip and len(w) > 2 and w not in out:
            out.append(w)
    return out[:n]


def fault_seen(obs: str, tool: str) -> str:
    """The fault a result shows to a careful reader: timeout, empty, cut, layout, or ""."""
    head = obs[:200].lower()
    if obs.startswith("Error") and "timed out" in head:
        return "timeout"
    if obs.startswith("Error"):
        return "error"
    if TRUNCATION_NOTE in obs:
        return "cut"
    if not is_final(tool) and relaid(obs):
        return "layout"
    if obs.strip() in EMPTY_TEXTS:
        return "empty"
    return ""


FINAL = frozenset({"answer", "early", "not_found", "forced", "give_up"})


@dataclass(slots=True)
class Reader:
    """What one trajectory has read, and the moves that read more."""

    docs: Mapping[str, Document]
    speaker: Speaker
    max_retries: int = 2
    k: int = 5
    wide_k: int = 15
    shown: dict[str, str] = field(default_factory=dict)  # doc_id -> title, as results list it
    pages: dict[str, dict[int, str]] = field(default_factory=dict)  # doc_id -> page -> text
    last_page: dict[str, int] = field(default_factory=dict)  # doc_id -> last page number
    # pages whose last reading still came back cut short (their later names are missing)
    garbled: set[tuple[str, int]] = field(default_factory=set)
    queries: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # what the next thought reports first
    state: Any = None  # a callable giving the state notes (known, open, tally)
    fresh: Any = None  # a callable giving the facts learned since the last thought
    sent: Counter[str] = field(default_factory=Counter)  # normalized call -> times sent
    tried: set[tuple[str, int]] = field(default_factory=set)  # (normalized query, k) searched
    found: dict[str, list[str]] = field(default_factory=dict)  # doc_id -> find results shown
    clean: bool = True  # whether the last search came back without a fault

    def say(self, situation: str, **slots: Any) -> str:
        """A thought: what was just seen, one thing of the state, then the situation's line."""
        state = list(self.state()) if self.state is not None else []
        if situation in FINAL:  # an answer leaves nothing open
            state = [n for n in state if n[0] not in ("todo", "left")]
        rng = self.speaker.rng  # the wording stream: what it mentions, never what it does
        rate = 1.0 if self.speaker.style.voice.name == "house" else 0.6  # the house recaps always
        kept = [rng.choice(state)] if state and rng.random() < rate else []  # one thing it knows
        fresh = list(self.fresh()) if self.fresh is not None else []
        if fresh:  # what it just learned, said at once (and not a second time as the recap)
            kept = [*fresh, *(n for n in kept if n[0] != "known")]
        notes = [*self.notes, *kept]
        self.notes = []
        return self.speaker.say(situation, notes, **slots)

    def note(self, kind: str, **slots: str) -> None:
        self.notes.append((kind, slots))

    def title(self, doc_id: str) -> str:
        """The title as a result showed it, else the document's own."""
        return self.shown.get(doc_id) or (self.docs[doc_id].title if doc_id in self.docs else doc_id)

    def _observe(self, obs: str) -> None:
        for doc_id, title in _HIT.findall(obs):
            title = title.strip().split(" page ")[0].strip()
            if doc_id not in self.shown and title:
                self.shown[doc_id] = title

    # -- one call, with the reactions to faults ---------------------------------------------

    def call(self, situation: str, call: ToolCall, enough: Callable[[str], bool] | None = None,
             **slots: str) -> Move:
        """Send `call`; retry a timeout, ask again for a result cut short (unless `enough`
        says what came through before the cut is what was wanted). Returns the text.

        No call goes out more than MAX_SENDS times in a trajectory, in any words order.
        """
        key = normalize_call(call)
        self.sent[key] += 1
        obs = yield self.say(situation, **slots), call
        self._observe(obs)
        for attempt in range(self.max_retries + 1):
            kind = fault_seen(obs, call.name)
            if kind not in ("timeout", "cut", "layout", "empty"):
                break
            seconds = _SECONDS.search(obs)
            self.note(kind, tool=call.name, seconds=seconds.group(1) if seconds else "?")
            if kind == "layout":  # all of it is there: read it as it is, no second call
                obs = unlaid(obs)
                self._observe(obs)
                break
            if kind == "cut" and enough is not None and enough(obs):
                break  # the part that came through shows what was wanted
            last = attempt == self.max_retries or self.sent[key] >= MAX_SENDS
            if last or (kind == "empty" and call.name == "search"):
                break  # the caller rephrases or goes another way (the same words, said so)
            self.sent[key] += 1
            # empty: a find or a page; reread: a result cut short
            again = "retry" if kind in ("timeout", "empty") else "reread"
            obs = yield self.say(again, what=self.named(call)), call
            self._observe(obs)
        return obs

    def named(self, call: ToolCall) -> Note:
        """The call said again in this voice: its query, its page and title, its pattern."""
        args = call.arguments
        title = self.title(str(args.get("doc_id", "")))
        if call.name == "search":
            return "c_search", {"query": args.get("query", "")}
        if call.name == "open":
            return "c_open", {"title": title, "page": args.get("page", 0)}
        if call.name == "find":
            return "c_find", {"title": title, "pattern": args.get("pattern", "")}
        return "c_call", {"tool": call.name}

    # -- moves ---------------------------------------------------------------------------------

    def search(self, query: str, k: int | None = None, situation: str = "search",
               enough: Callable[[str], bool] | None = None, **slots: str) -> Move:
        """One search; returns the doc_ids it showed (none when it failed)."""
        self.queries.append(query)
        self.tried.add((normalize_text(query), k or self.k))
        args: dict[str, Any] = {"query": query}
        if (k or self.k) != 5:
            args["k"] = k or self.k
        obs = yield from self.call(situation, ToolCall(name="search", arguments=args),
                                   enough, **slots)
        fault = fault_seen(obs, "search")
        self.clean = not fault  # a whole list, or a plain "No results"
        if fault in ("timeout", "error"):
            return []
        return [d for d, _ in _HIT.findall(obs)]

    def locate(self, doc_id: str, name: str, near: str = "", first: str = "") -> Move:
        """Make `doc_id` shown by searching `name` (as read); True once a result listed it.

        The name alone, then the name with a longer list, then with words read around it.
        """
        if doc_id in self.shown:
            return True
        tried = self.tried
        around = keywords(near, 4, exclude=name)
        plan = [(first, self.k, "search"), (name, self.k, "search"),
                (name, self.wide_k, "widen"), (f"{name} {' '.join(around[:2])}", self.k, "rephrase"),
                (f"{name} {' '.join(around)}", self.wide_k, "widen")]
        sent, last = 0, ""
        for query, k, situation in plan:
            key = (normalize_text(query), k)
            if not key[0] or key in tried or self.sent[f"search:{key[0]}"] >= MAX_SENDS - 1:
                continue  # never the same words twice at the same length, in any order or quotes
            said = "rephrase" if sent and situation == "search" else situation
            if sent and not self.clean:  # the last search failed: it showed nothing either way
                said = "retry" if key[0] == last else "reword"
            last = key[0]
            ids = yield from self.search(query.strip(), k=k, situation=said if sent else "search",
                                         enough=lambda obs: doc_id in obs,
                                         what=name if query.strip() == name else
                                         f'"{query.strip()}"', title=name)
            sent += 1
            if doc_id in ids:
                self.note("hit", title=self.title(doc_id))
                return True
            if self.clean:  # a failed search says nothing of what is in the index
                self.note("miss", title=name)
        return False

    def read_page(self, doc_id: str, page: int, first: str = "open") -> Move:
        """Open one page; its text when it came through, else "". `first`: the situation of
        opening page 0 ("read" when nothing seen so far says it is the next step)."""
        args: dict[str, Any] = {"doc_id": doc_id}
        if page:
            args["page"] = page
        situation = "open_more" if page else first
        call = ToolCall(name="open", arguments=args)
        if self.sent[normalize_call(call)] >= MAX_SENDS:
            return ""  # asked as often as a reader would: it does not come through
        obs = yield from self.call(situation, call, title=self.title(doc_id), page=str(page))
        kind = fault_seen(obs, "open")
        if kind in ("timeout", "error", "empty") or doc_id not in obs:
            return ""
        if kind == "cut":
            self.garbled.add((doc_id, page))
        else:
            self.garbled.discard((doc_id, page))
        more = _MORE.search(obs)
        total = _PAGES.search(obs)
        if total:
            self.last_page[doc_id] = int(total.group(1))
        elif not more:
            self.last_page.setdefault(doc_id, page)
        self.pages.setdefault(doc_id, {})[page] = obs
        return obs

    def read_until(self, doc_id: str, done: Any, all_pages: bool = False,
                   first: str = "read") -> Move:
        """Read pages in order until `done(text read so far)` or the last page; the text read."""
        page = 0
        while True:
            if page not in self.pages.get(doc_id, {}):
                yield from self.read_page(doc_id, page, first)
            text = self.text(doc_id)
            if (not all_pages and done(text)) or page >= self.last_page.get(doc_id, page):
                return text
            page += 1

    def read_whole(self, doc_id: str) -> bool:
        """Whether every page of a document came through, none of them cut short."""
        pages = self.pages.get(doc_id, {})
        last = self.last_page.get(doc_id)
        return last is not None and all(p in pages and (doc_id, p) not in self.garbled
                                        for p in range(last + 1))

    def text(self, doc_id: str) -> str:
        """Everything read of a document so far, pages in order."""
        return "\n".join(t for _, t in sorted(self.pages.get(doc_id, {}).items()))

    def find(self, doc_id: str, pattern: str, situation: str = "find") -> Move:
        """find(doc_id, pattern): the matching lines' text, "" when none, None when it failed."""
        call = ToolCall(name="find", arguments={"doc_id": doc_id, "pattern": pattern})
        quoted = f'"{pattern}"'
        obs = yield from self.call(situation, call, title=self.title(doc_id), pattern=quoted)
        kind = fault_seen(obs, "find")
        if kind in ("timeout", "error", "empty"):
            return None
        self.found.setdefault(doc_id, []).append(obs)
        count = _LINES.search(obs)
        if count:
            self.note("lines", title=self.title(doc_id), n=count.group(1), pattern=quoted)
            return obs
        self.note("no_lines", title=self.title(doc_id), pattern=quoted)
        return ""

    def contains(self, doc_id: str, pattern: str) -> Move:
        """Whether the document has `pattern`: find, or reading its pages when find fails;
        None when neither came through (nothing of it was shown)."""
        lines = yield from self.find(doc_id, pattern)
        if lines is None:  # find keeps failing: read the document instead
            text = yield from self.read_until(doc_id, lambda t: matches(t, pattern))
            return (matches(text, pattern) if text else None), text
        return bool(lines), lines
