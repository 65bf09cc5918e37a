"""Server-sent events of a streamed chat completion, assembled into one completion payload.

A streamed answer (`stream: true`) is a sequence of `data: {chunk}` lines ending in
`data: [DONE]`. Each chunk carries deltas: content and reasoning text to append, and tool-call
pieces keyed by `index` (the id and name come once, the arguments in fragments). `StreamAssembler`
adds them up and returns the payload a non-streamed request would have received, so one parser
(`wire.parse_chat_response`) reads both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hopforge.synth.teacher.chat import ModelResponseError

DONE = "[DONE]"


class StreamError(ModelResponseError):
    """The server sent an error event in the middle of a stream."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


@dataclass(slots=True)
class _ToolCallParts:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamAssembler:
    """Feed it the `data:` payloads of one stream in order; `payload()` gives the whole answer."""

    url: str = ""
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    reasoning_field: str = "reasoning_content"
    tool_calls: dict[int, _ToolCallParts] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str = ""
    chunks: int = 0
    choices: int = 0  # chunks that carried a choice
    done: bool = False

    def feed_line(self, line: str) -> None:
        """Take one line of the event stream (comments, blank lines and other fields are skipped)."""
        if not line.startswith("data:"):
            return
        data = line[5:].strip()
        if data == DONE:
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            raise ModelResponseError(
                f"The model server at {self.url} streamed an event that is not JSON "
                f"({data[:200]!r}). Check that the URL points at an OpenAI-compatible /v1 API."
            ) from None
        self.feed(chunk)

    def feed(self, chunk: Any) -> None:
        """Add one decoded chunk."""
        if not isinstance(chunk, dict):
            raise ModelResponseError(
                f"The model server at {self.url} streamed a JSON {type(chunk).__name__}, "
                "not a chat-completion chunk."
            )
        if "error" in chunk:
            error = chunk["error"]
            text = error.get("message") if isinstance(error, dict) else error
            detail = json.dumps(chunk)[:300]
            raise StreamError(
                f"The model server at {self.url} stopped the stream with an error: {text}. "
                "Check the server's log.",
                detail,
            )
        self.chunks += 1
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return  # e.g. the final usage-only chunk
        choice = choices[0]
        if not isinstance(choice, dict):
            return
        self.choices += 1
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._add_delta(delta)

    def _add_delta(self, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("content"), str):
            self.content.append(delta["content"])
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str) and delta[key]:
                self.reasoning.append(delta[key])
                self.reasoning_field = key
        for raw in delta.get("tool_calls") or ():
            if not isinstance(raw, dict):
                continue
            index = raw.get("index")
            parts = self.tool_calls.setdefault(
                index if isinstance(index, int) else len(self.tool_calls), _ToolCallParts()
            )
            if isinstance(raw.get("id"), str) and raw["id"]:
                parts.call_id = raw["id"]
            function = raw.get("function")
            if isinstance(function, dict):
                if isinstance(function.get("name"), str) and function["name"]:
                    parts.name += function["name"]
                if isinstance(function.get("arguments"), str):
                    parts.arguments.append(function["arguments"])

    def payload(self) -> dict[str, Any]:
        """The assembled answer in the shape of a non-streamed chat completion."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.reasoning:
            message[self.reasoning_field] = "".join(self.reasoning)
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": parts.call_id,
                    "type": "function",
                    "function": {"name": parts.name, "arguments": "".join(parts.arguments)},
                }
                for _, parts in sorted(self.tool_calls.items())
            ]
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason or "stop"}
        payload: dict[str, Any] = {
            "object": "chat.completion",
            "model": self.model,
            "choices": [choice] if self.choices else [],
        }
        if self.usage is not None:
            payload["usage"] = self.usage
        return payload
