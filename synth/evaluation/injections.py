"""Scripted failure modes for validating the harness: a `ChatModel` wrapper that breaks a teacher.

`--inject` takes, repeatably (parsed by `config.parse_injection`):

- `repeat@N`: from call N on, the model sends its previous call again, every turn.
- `bad-args@N`: from call N on, every argument name is misspelled (the schema rejects it).
- `forget@N`: at call N the model drops an item it has already checked: it goes back to check
  it again as if it had never been read, and its final answer leaves it out (a count one lower,
  a list without it; for other questions it names the dropped document instead).
- `ignore-faults`: the model does not see faults: a timeout reads as an empty result, a cut
  result as a whole one, a changed layout as the usual one, and whatever it would do in
  reaction to a faulted call (retry it, re-read the document, rephrase the search) is answered
  with an empty result behind the scenes until it moves on.

Calls are numbered from 1, as the harness reports them; checkpoint requests are not calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hopforge.corpus.records import Document
from hopforge.corpus.tools import is_final, is_read
from hopforge.synth.annotate import call_intent
from hopforge.synth.evaluation.config import Injection
from hopforge.synth.evaluation.tasks import check_phrase, tracked_docs
from hopforge.synth.records import Question, ToolCall
from hopforge.synth.teacher.chat import ChatModel, Completion, Message
from hopforge.synth.teacher.tool_calls import ToolCallParseError, parse_completion
from hopforge.synth.trajectories.faults import TRUNCATION_NOTE, empty_result, unlaid

MAX_HIDDEN_REACTIONS = 8  # ignore-faults: reactions answered behind the scenes, at most
_SPLIT = re.compile(r"\s*(?:,|;|\band\b)\s*")


def _call_of(completion: Completion) -> ToolCall | None:
    try:
        return parse_completion(completion).call
    except ToolCallParseError:
        return None


def _emit(thought: str, call: ToolCall, tokens: int) -> Completion:
    return Completion(text=thought, tool_calls=(call,), finish_reason="tool_calls",
                      completion_tokens=tokens, model="injected")


def unfault_text(tool: str, text: str) -> str:
    """A tool result as it would read without its fault, as far as its text shows the fault."""
    if text.startswith("Error") and "timed out" in text[:200]:
        return empty_result(tool).text
    if text.rstrip().endswith(TRUNCATION_NOTE):
        return text.rstrip()[: -len(TRUNCATION_NOTE)].rstrip()
    return unlaid(text)  # a result in another layout: its lines in the usual one


def _looks_faulted(tool: str, text: str) -> bool:
    return unfault_text(tool, text) != text


class InjectingTeacher:
    """Wraps a teacher for one task and breaks it as `injections` say (a `ChatModel`)."""

    def __init__(self, inner: ChatModel, injections: Sequence[Injection], question: Question,
                 documents: Mapping[str, Document]) -> None:
        self.inner = inner
        self.name = f"{inner.name}+{'+'.join(str(i) for i in injections)}"
        self.at = {i.kind: i.turn for i in injections}
        self.question, self.docs = question, documents
        self.tracked = frozenset(tracked_docs(question))
        self.turn = 0
        self.injected: list[tuple[int, str]] = []  # (call number, what was done)
        self._last: Completion | None = None
        self._last_call: ToolCall | None = None
        self._held: Completion | None = None
        self._settled: dict[str, int] = {}
        self._last_touched = ""
        self.forgotten = ""

    async def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        """The inner teacher's next move, broken where an injection says so."""
        view = self._view(messages)
        if kwargs.get("response_format") is not None:  # a checkpoint: not a call
            return self._drop_from_state(await self.inner.complete(view, **kwargs))
        self.turn += 1
        faulted = self._observe(messages)
        completion = await self._next(view, faulted, kwargs)
        completion = self._rewrite_answer(completion)
        self._last, self._last_call = completion, _call_of(completion)
        return completion

    async def _next(self, view: list[Message], faulted: bool, kwargs: dict[str, Any]) -> Completion:
        n = self.turn
        if "repeat" in self.at and n >= self.at["repeat"] and self._last_call is not None:
            self._note(n, "repeat")
            call = replace(self._last_call, call_id=f"inject_{n}")
            return _emit(self._last.text if self._last else "", call, 8)
        if self._held is not None:
            held, self._held = self._held, None
            return held
        if "forget" in self.at and not self.forgotten and n >= self.at["forget"]:
            doc = self._pick_forgotten()
            if doc:
                self.forgotten = doc
                self._held = await self._inner(view, faulted, kwargs)
                self._note(n, f"forget {doc}")
                pattern = check_phrase(self.question, doc) or self._title(doc)
                call = ToolCall(name="find", arguments={"doc_id": doc, "pattern": pattern},
                                call_id=f"inject_{n}")
                return _emit(f"Let me check {self._title(doc)}.", call, 10)
        completion = await self._inner(view, faulted, kwargs)
        if "bad-args" in self.at and n >= self.at["bad-args"] and completion.tool_calls:
            self._note(n, "bad-args")
            first = completion.tool_calls[0]
            bad = ToolCall(name=first.name, arguments={f"{k}_": v for k, v in
                                                       first.arguments.items()} or {"_": ""},
                           call_id=first.call_id)
            completion = replace(completion, tool_calls=(bad, *completion.tool_calls[1:]))
        return completion

    async def _inner(self, view: list[Message], faulted: bool,
                     kwargs: dict[str, Any]) -> Completion:
        """The inner move; under ignore-faults its reactions to a fault are answered unseen."""
        completion = await self.inner.complete(view, **kwargs)
        if "ignore-faults" not in self.at or not faulted or self._last_call is None:
            return completion
        intent = call_intent(self._last_call)
        for _ in range(MAX_HIDDEN_REACTIONS):
            call = _call_of(completion)
            if call is None or is_final(call.name) or call_intent(call) != intent:
                break
            self._note(self.turn, f"hid a reaction: {call.name}")
            wire = {"name": call.name, "arguments": json.dumps(call.arguments)}
            view = [*view,
                    {"role": "assistant", "content": completion.text or None,
                     "tool_calls": [{"id": "hidden", "type": "function", "function": wire}]},
                    {"role": "tool", "tool_call_id": "hidden",
                     "content": empty_result(call.name).text}]
            completion = await self.inner.complete(view, **kwargs)
        return completion

    def _view(self, messages: list[Message]) -> list[Message]:
        """What the inner teacher sees: under ignore-faults, tool results without their faults."""
        if "ignore-faults" not in self.at:
            return messages
        out, names = [], {}
        for m in messages:
            for tc in m.get("tool_calls") or ():
                names[tc.get("id")] = tc.get("function", {}).get("name", "")
            if m.get("role") == "tool" and isinstance(m.get("content"), str):
                m = {**m, "content": unfault_text(names.get(m.get("tool_call_id"), ""),
                                                  m["content"])}
            out.append(m)
        return out

    def _observe(self, messages: list[Message]) -> bool:
        """Follow the last call's result; True when it shows a fault."""
        call = self._last_call
        if call is None or not messages:
            return False
        text = str(messages[-1].get("content") or "")
        faulted = _looks_faulted(call.name, text)
        doc = str(call.arguments.get("doc_id", "")) if is_read(call.name) else ""
        if doc in self.tracked:
            self._last_touched = doc
            if not faulted and not text.startswith("Error"):
                self._settled.setdefault(doc, self.turn - 1)
        return faulted

    def _pick_forgotten(self) -> str:
        spec = self.question.spec
        matching = set(spec.matching) if spec is not None else set()
        done = [d for d in self._settled if d != self._last_touched]
        return next((d for d in done if d in matching), done[0] if done else "")

    def _title(self, doc_id: str) -> str:
        doc = self.docs.get(doc_id)
        return doc.title if doc is not None else doc_id

    def _rewrite_answer(self, completion: Completion) -> Completion:
        """After forget, the final answer leaves out the dropped item."""
        if not self.forgotten or not completion.tool_calls:
            return completion
        first = completion.tool_calls[0]
        if not is_final(first.name) or not isinstance(first.arguments.get("text"), str):
            return completion
        text = dropped_answer(self.question, first.arguments["text"], self._title(self.forgotten),
                              self.forgotten)
        self._note(self.turn, "answer without the dropped item")
        call = replace(first, arguments={**first.arguments, "text": text})
        return replace(completion, tool_calls=(call, *completion.tool_calls[1:]))

    def _drop_from_state(self, completion: Completion) -> Completion:
        """After forget, a checkpoint no longer lists facts read from the dropped document."""
        if not self.forgotten:
            return completion
        try:
            state = json.loads(completion.text)
        except json.JSONDecodeError:
            return completion
        if isinstance(state, dict) and isinstance(state.get("facts"), list):
            state["facts"] = [f for f in state["facts"]
                              if not (isinstance(f, dict) and f.get("source") == self.forgotten)]
            return replace(completion, text=json.dumps(state, ensure_ascii=False))
        return completion

    def _note(self, turn: int, what: str) -> None:
        if not self.injected or self.injected[-1] != (turn, what):
            self.injected.append((turn, what))


def dropped_answer(question: Question, answer: str, title: str, doc_id: str) -> str:
    """`answer` with one checked item left out (see the module docstring)."""
    spec = question.spec
    operation = spec.operation if spec is not None and spec.items else ""
    if operation == "count":
        digits = re.search(r"\d+", answer)
        if digits and spec is not None and doc_id in spec.matching:
            n = max(0, int(digits.group()) - 1)
            return answer[: digits.start()] + str(n) + answer[digits.end():]
        return answer
    if operation == "list":
        parts = [p for p in _SPLIT.split(answer) if p]
        kept = [p for p in parts if p.casefold() != title.casefold()]
        return ", ".join(kept) if kept else answer
    return title if title.casefold() != answer.strip().casefold() else answer
