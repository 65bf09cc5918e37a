"""Whether each trained assistant turn of a row is justified by that row alone.

A student sees only its row, so a trained call may use only what the row shows before it: each
word of a search query, find pattern or answer occurs in an earlier message (the system prompt,
the question, a result, an elided result's pointer), and a doc_id it opens or searches inside is
shown there together with its title (a result's hit line, page or find head, or a pointer's
`doc_id (Title)`). The rule for words is the trajectory stage's own
(`hopforge.synth.trajectories.fairness`); rows only add the title. `hide_unjustified` makes such
turns context (weight 0); `unjustified_turns` counts what a written row still trains wrongly,
for the export report (it must be 0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from hopforge.synth.annotate import shown_titles
from hopforge.synth.prompts import AGENT_ELIDED_RESULT
from hopforge.synth.records import ToolCall
from hopforge.synth.trajectories.fairness import Visible, call_words

_ELIDED = re.compile(re.escape(AGENT_ELIDED_RESULT.split("{", 1)[0]) + r"\d+ elided")


def message_call(message: dict[str, Any]) -> ToolCall | None:
    """The first tool call of an assistant message (arguments as an object, or JSON text)."""
    calls = message.get("tool_calls") or ()
    if not calls:
        return None
    fn = calls[0]["function"]
    args = fn["arguments"]
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return ToolCall(name=fn["name"], arguments=args if isinstance(args, dict) else {})


class _RowView:
    """What a row has shown so far: its words and doc_id tokens, and doc_ids with a title."""

    def __init__(self) -> None:
        self.visible = Visible()
        self.titled: set[str] = set()
        self.text = ""

    def see(self, content: str) -> None:
        self.visible.see(content)
        self.titled.update(shown_titles(content))
        self.text += content + "\n"

    def problem(self, call: ToolCall) -> str:
        """Why the row does not justify `call`; "" when it does."""
        ok, unseen = self.visible.check(call)
        if not ok:
            return f"{call.name} uses what the row does not show: {', '.join(unseen)}"
        _, ids = call_words(call)
        for doc in ids:
            if doc not in self.titled and f"{doc} (" not in self.text:
                return f"{call.name} on {doc}, shown in the row without its title"
        return ""


def _trained(messages: Sequence[dict[str, Any]]) -> Iterator[tuple[int, str]]:
    """(message index, problem) of every weighted assistant call the row does not justify,
    and of every weighted turn that answers a result the row shows only as an elided pointer
    (its thought would state what the row does not show)."""
    view = _RowView()
    elided = False  # the last result before this turn is a pointer
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("weight", 1):
            call = message_call(m)
            problem = view.problem(call) if call is not None else ""
            if not problem and elided:
                problem = "follows a result the row shows only as elided"
            if problem:
                yield i, problem
        if m["role"] == "assistant":
            elided = False
        else:
            content = m.get("content") or ""
            elided = m["role"] != "system" and _ELIDED.search(content[:60]) is not None
            view.see(content)


def hide_unjustified(messages: list[dict[str, Any]]) -> None:
    """Weight 0 for each trained call its row does not justify (it stays as context)."""
    for i, _ in list(_trained(messages)):
        messages[i]["weight"] = 0


def unjustified_turns(prompt: Sequence[dict[str, Any]], trained: Sequence[dict[str, Any]]
                      ) -> list[str]:
    """Problems of a written row: `prompt` is its context, `trained` the messages it trains.

    Layouts with weights pass the whole conversation as `prompt` and nothing as `trained`;
    prompt-completion layouts pass the completion as `trained`.
    """
    rows = [*prompt, *({**m, "weight": 1} for m in trained)]
    if trained:
        rows = [{**m, "weight": 0} if m["role"] == "assistant" else m
                for m in prompt] + rows[len(prompt):]
    return [problem for _, problem in _trained(rows)]
