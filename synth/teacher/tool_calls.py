"""Parse a teacher turn into one tool call: native `tool_calls`, `<tool_call>` text, fenced JSON,
or a bare JSON object in the message text (what small models write when the server's tool parser
finds no tags).

Each format has exactly one parse function, and each raises a `ToolCallParseError` subclass whose
message is written for the model: it says what was wrong and how to write a valid call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hopforge.corpus.tools import tools
from hopforge.synth.records import ToolCall
from hopforge.synth.teacher.chat import Completion
from hopforge.synth.teacher.wire import RAW_ARGUMENTS

CallFormat = Literal["native", "tagged", "fenced", "json"]
CALL_FORMATS: tuple[str, ...] = ("native", "tagged", "fenced", "json")

_TAG_OPEN = "<tool_call>"
_TAG_CLOSE = "</tool_call>"
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```(?:json|JSON|tool_call)?[ \t]*\n?(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "tool", "function")
_ARG_KEYS = ("arguments", "parameters", "args")
_EXAMPLE = '{"name": "search", "arguments": {"query": "..."}}'


class ToolCallParseError(ValueError):
    """A teacher turn could not be read as a tool call; `raw` keeps what the model wrote."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class NoToolCall(ToolCallParseError):
    """The turn contains no tool call at all."""


class MalformedToolCall(ToolCallParseError):
    """The turn tries to call a tool, but the call is not a JSON object with a name and arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedCall:
    """A tool call read from one completion, with the free text around it."""

    call: ToolCall
    thought: str
    fmt: CallFormat
    extra_calls: int = 0  # further calls in the same turn, which are not executed


def parse_native_tool_calls(calls: Sequence[ToolCall], raw: str = "") -> ParsedCall:
    """Take the first of the server's parsed `tool_calls`; its arguments must be a JSON object."""
    if not calls:
        raise NoToolCall("The message has no tool call. Call exactly one tool.", raw)
    first = calls[0]
    if not isinstance(first.name, str) or not first.name.strip():
        raise MalformedToolCall(
            "The tool call has no function name. Name one of the tools: "
            f"{', '.join(tool.name for tool in tools())}.",
            raw,
        )
    arguments = first.arguments
    if isinstance(arguments, dict) and set(arguments) == {RAW_ARGUMENTS}:
        arguments = arguments[RAW_ARGUMENTS]  # the client keeps undecodable arguments verbatim
    arguments = _arguments_object(arguments, raw)
    call = ToolCall(name=first.name.strip(), arguments=arguments, call_id=first.call_id)
    return ParsedCall(call=call, thought="", fmt="native", extra_calls=len(calls) - 1)


def parse_tagged_tool_call(text: str) -> ParsedCall:
    """Read `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes / Qwen style)."""
    matches = list(_TAGGED.finditer(text))
    if not matches:
        if _TAG_OPEN in text:
            raise MalformedToolCall(
                f"The <tool_call> tag is never closed. Write {_TAG_OPEN}{_EXAMPLE}{_TAG_CLOSE}.", text
            )
        raise NoToolCall(
            f"The message has no <tool_call> block. Write {_TAG_OPEN}{_EXAMPLE}{_TAG_CLOSE}.", text
        )
    first = matches[0]
    call = _call_from_json(first.group(1), text)
    thought = (text[: first.start()] + text[matches[-1].end() :]).strip()
    return ParsedCall(call=call, thought=thought, fmt="tagged", extra_calls=len(matches) - 1)


def parse_fenced_json_call(text: str) -> ParsedCall:
    """Read a fenced JSON block (```json ... ```) holding one `{"name", "arguments"}` object."""
    matches = list(_FENCED.finditer(text))
    if not matches:
        if "```" in text:
            raise MalformedToolCall(
                f"The ``` code block is never closed. Write ```json\n{_EXAMPLE}\n```.", text
            )
        raise NoToolCall(f"The message has no ```json block. Write ```json\n{_EXAMPLE}\n```.", text)
    first = matches[0]
    call = _call_from_json(first.group(1), text)
    thought = (text[: first.start()] + text[first.end() :]).strip()
    return ParsedCall(call=call, thought=thought, fmt="fenced", extra_calls=len(matches) - 1)


def parse_bare_json_call(text: str) -> ParsedCall:
    """Read a bare `{"name": ..., "arguments": {...}}` object written in the message text.

    The first JSON object in the text that names a tool is the call; text around it is the
    thought. Arguments given as a JSON string are decoded, as in the OpenAI wire format.
    """
    objects, error = _json_objects(text)
    calls = [(start, end) for start, end, obj in objects if _names_a_tool(obj)]
    if not calls:
        if error is not None:
            raise MalformedToolCall(
                f"The tool call is not valid JSON ({error.msg} at position {error.pos}). "
                f"Write one JSON object like {_EXAMPLE}.",
                text,
            )
        if objects:
            raise MalformedToolCall(
                f'The JSON object in the message has no "name" of a tool. Write {_EXAMPLE}.', text
            )
        raise NoToolCall(f"The message has no tool call. Write one JSON object like {_EXAMPLE}.", text)
    start, end = calls[0]
    call = _call_from_json(text[start:end], text)
    thought = (text[:start] + text[end:]).strip()
    return ParsedCall(call=call, thought=thought, fmt="json", extra_calls=len(calls) - 1)


def _json_objects(text: str) -> tuple[list[tuple[int, int, Any]], json.JSONDecodeError | None]:
    """The top-level JSON objects in `text` as (start, end, decoded), left to right, and the
    decoding error of the first `{` when no object starts there."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, Any]] = []
    first_error: json.JSONDecodeError | None = None
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            if not found and first_error is None:
                first_error = exc
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append((i, end, obj))
        i = text.find("{", end)
    return found, first_error


def _names_a_tool(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("function"), dict):
        return _names_a_tool(obj["function"])
    return any(isinstance(obj.get(k), str) and obj[k].strip() for k in _NAME_KEYS)


def parse_completion(completion: Completion) -> ParsedCall:
    """Dispatch to the parser for the format this completion uses; raises `ToolCallParseError`."""
    text = completion.text or ""
    if completion.tool_calls:
        parsed = parse_native_tool_calls(completion.tool_calls, raw=text)
        return ParsedCall(
            call=parsed.call, thought=text.strip(), fmt="native", extra_calls=parsed.extra_calls
        )
    if _TAG_OPEN in text:
        parsed = parse_tagged_tool_call(text)
    elif _fenced_has_object(text):
        parsed = parse_fenced_json_call(text)
    elif "{" in text:
        parsed = parse_bare_json_call(text)
    elif "```" in text:
        parsed = parse_fenced_json_call(text)
    else:
        raise NoToolCall(
            "The message has no tool call. Call exactly one tool; to finish, call "
            'answer with {"text": "..."}.',
            text,
        )
    return parsed  # the reasoning stays apart, on `completion.reasoning`


def _fenced_has_object(text: str) -> bool:
    return any(m.group(1).strip().startswith("{") for m in _FENCED.finditer(text))


def _call_from_json(body: str, raw: str) -> ToolCall:
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedToolCall(
            f"The tool call is not valid JSON ({exc.msg} at position {exc.pos}). "
            f"Write one JSON object like {_EXAMPLE}.",
            raw,
        ) from None
    if not isinstance(obj, dict):
        raise MalformedToolCall(
            f"The tool call is a JSON {type(obj).__name__}, not an object. Write {_EXAMPLE}.", raw
        )
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), "")
    if isinstance(obj.get("function"), dict):  # OpenAI-shaped {"function": {"name", "arguments"}}
        return _call_from_json(json.dumps(obj["function"]), raw)
    if not name.strip():
        raise MalformedToolCall(
            f'The tool call has no "name". Write {_EXAMPLE}.', raw
        )
    if any(k in obj for k in _ARG_KEYS):
        args_value: Any = next(obj[k] for k in _ARG_KEYS if k in obj)
    else:  # arguments beside the name ({"name": "answer", "text": "..."}), as small models write
        args_value = {k: v for k, v in obj.items() if k not in (*_NAME_KEYS, "id", "type")}
    return ToolCall(name=name.strip(), arguments=_arguments_object(args_value, raw))


def _arguments_object(value: Any, raw: str) -> dict[str, Any]:
    if isinstance(value, str):  # double-encoded arguments, as OpenAI's wire format has them
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as exc:
            raise MalformedToolCall(
                f"The tool call's arguments are not valid JSON ({exc.msg} at position {exc.pos}). "
                'Pass a JSON object, e.g. {"query": "..."}.',
                raw,
            ) from None
    if not isinstance(value, dict):
        raise MalformedToolCall(
            f"The tool call's arguments are a JSON {type(value).__name__}, not an object. "
            'Pass a JSON object, e.g. {"query": "..."}.',
            raw,
        )
    return value
