"""Whether a call uses only what the teacher has been shown: the question and earlier results.

One checker for every teacher, scripted or model. A call is justified when each word of its
search query or find pattern, and its doc_id as a whole, occurs in the visible text: the system
prompt, the question, and every tool result returned earlier in the same trajectory (an elided
result was still seen). An answer is checked the same way, except for bare numbers (a count is
computed, not read) and the not-found marker. Words are compared case-insensitively.
"""

from __future__ import annotations

import re

from hopforge.corpus.tools import tool_named
from hopforge.synth.records import NOT_FOUND, ToolCall

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
        words = [] if said.lower() == NOT_FOUND else [w for w in words if not w.isdigit()]
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
