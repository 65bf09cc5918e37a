"""Whether a call uses only what the teacher has been shown: the question and earlier results.

One checker for every teacher, scripted or model. A call is justified when each word of its
search query or find pattern, and its doc_id as a whole, occurs in the visible text: the system
prompt, the question, and every tool result returned earlier in the same trajectory (an elided
result was still seen). An answer is checked the same way, except for bare numbers (a count is
computed, not read) and the not-found marker. Words are compared case-insensitively.

`choices` checks what a run took from what it was shown: when it goes on to a document a page
named, every name the page showed before it must have been ruled out by a tool result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopforge.corpus.names import NameIndex
from hopforge.corpus.tools import tool_named
from hopforge.corpus.tools.page import NAMED
from hopforge.synth.records import NONE, NOT_FOUND, Spec, ToolCall, Trajectory

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"[^\s\[\](){}<>,;\"'|=]+")  # doc_id-like runs: split at brackets and quotes


def call_words(call: ToolCall) -> tuple[list[str], list[str]]:
    """The words a call types (query, pattern, answer) and the doc_ids it names."""
    tool = tool_named(call.name)
    if tool is None:
        return [], []
    words = tool.typed_words(call.arguments)
    if tool.final:  # a count is computed, not read; the not-found marker is no reading
        said = " ".join(str(call.arguments.get(a) or "") for a in tool.typed).strip()
        words = [] if said.lower() in (NOT_FOUND, NONE) else [w for w in words if not w.isdigit()]
    return words, tool.named_docs(call.arguments)


class Visible:
    """What one trajectory has been shown so far, as words and doc_id-like tokens."""

    def __init__(self, *texts: str) -> None:
        self.words: set[str] = set()
        self.tokens: set[str] = set()
        for text in texts:
            self.see(text)

    def see(self, text: str) -> None:
        """Add a text the teacher was shown (a tool result, the question)."""
        self.words.update(_WORD.findall(text.lower()))
        for token in _TOKEN.findall(text):
            self.tokens.add(token.rstrip(".:"))

    def check(self, call: ToolCall) -> tuple[bool, tuple[str, ...]]:
        """(justified, the words and doc_ids of `call` that were never shown)."""
        words, ids = call_words(call)
        unseen = [w for w in dict.fromkeys(words) if w not in self.words]
        unseen += [i for i in ids if i not in self.tokens]
        return not unseen, tuple(unseen)


_HEADER = re.compile(r"^.*\[doc_id: [^\]]+\] page \d+ \(pages 0-\d+\)\s*")
_NAMED_LINE = rf"(?:\n{re.escape(NAMED)}[^\n]*\n)?"
_FOOTER = re.compile(rf"\s*{_NAMED_LINE}\((?:more: open doc_id=\S+ page=\d+|end of document)\)\s*$")


def page_body(result: str) -> str:
    """The document's text on an `open` result, without the tool's own words (its title and
    page header, the "Entries named here" line, "(more: open doc_id=... page=1)" or "(end of
    document)"): the scripted teacher
    reads pages through it, and the choices check below, so both see the same names."""
    return _FOOTER.sub("", _HEADER.sub("", result, count=1))


@dataclass(frozen=True, slots=True)
class Choice:
    """Where a run had to choose among what a page showed: the page, the document the question
    leads to there ("" for a set), and the candidates the run never ruled out (`skipped`)."""

    page_doc: str
    doc: str
    skipped: tuple[str, ...]


def choices(traj: Trajectory, spec: Spec, names: NameIndex) -> list[Choice]:
    """The choices a run of a question made among the names its pages showed.

    A candidate is ruled out only by a tool call on it (reading it, or looking inside it) whose
    result came through; a search that lists it does not, nor a call that failed. A set
    question (its `item` steps) has one choice: every member must be checked. A step a clue picks among the names of the page before it (`link`,
    `compare`) is a choice among the names that page shows before the document the run went
    on to, as far as the run read it; a step the question says no document meets (an
    unanswerable one) is a choice among all of them. A step the run never reached is none. The
    candidates are the entries `open` lists under the page (`NameIndex.entries`).
    """
    touched: set[str] = set()  # documents a call that came through named
    read: dict[str, str] = {}  # doc_id -> the text of its pages the run read
    for turn in traj.turns:
        tool = tool_named(turn.call.name) if turn.call is not None else None
        if turn.call is None or tool is None:
            continue
        ids = tool.named_docs(turn.call.arguments)
        if turn.fault is None or turn.fault.kind in ("partial", "format"):
            touched.update(ids)  # a call that failed (timeout, empty) rules nothing out
        shown = turn.fault is None or turn.fault.kind == "partial"  # an error shows no page
        if tool.name == "open" and turn.result and ids and shown:
            read[ids[0]] = read.get(ids[0], "") + "\n" + page_body(turn.result)
    out = []
    items = [st.doc for st in spec.steps if st.relation == "item" and st.doc]
    if items:
        out.append(Choice(page_doc=spec.start, doc="",
                          skipped=tuple(d for d in items if d not in touched)))
    for st in spec.steps:
        if st.relation not in ("link", "compare") or not st.via or st.via not in read:
            continue
        if st.doc and st.doc not in touched:
            continue  # the run never got there
        order = [h.doc for h in names.entries(read[st.via], exclude=st.via)]
        if st.doc and st.doc not in order:
            continue  # taken from elsewhere (a result list), not from this page
        before = order[: order.index(st.doc)] if st.doc else order
        out.append(Choice(page_doc=st.via, doc=st.doc,
                          skipped=tuple(c for c in before if c not in touched)))
    return out
