"""The OpenAI chat-completions wire format: request bodies out, `Completion` records in.

`parse_chat_response` is the one function that reads a server's answer; it raises
`ModelResponseError` for anything that is not a usable completion.

Tool-call arguments that are not a JSON object are not an error of the server but of the model:
the call is kept as `ToolCall(name, {RAW_ARGUMENTS: text})` so the caller can record the turn as
schema-invalid with what the model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hopforge.synth.records import ToolCall
from hopforge.synth.teacher.chat import Completion, Message, ModelResponseError

API_KEY_ENV = ("HOPFORGE_API_KEY", "OPENAI_API_KEY")  # where a server's key is read from


def api_key_from(env: Mapping[str, str], *, first: Sequence[str] = ()) -> str:
    """The first non-empty variable of `first`, then of API_KEY_ENV, in `env`; "" if none."""
    return next((env[k] for k in (*first, *API_KEY_ENV) if env.get(k)), "")

RAW_ARGUMENTS = "__raw__"  # key holding undecodable tool-call arguments, verbatim

# How a JSON schema for structured output is sent:
#   response_format     OpenAI's `response_format: {"type": "json_schema", ...}` (vLLM, OpenAI, ...)
#   guided_json         vLLM's older extra parameter `guided_json: SCHEMA`
#   structured_outputs  vLLM >= 0.10.2 extra parameter `structured_outputs: {"json": SCHEMA}`
#   none                not sent; the caller parses and validates the text itself
StructuredOutput = Literal["response_format", "guided_json", "structured_outputs", "none"]
STRUCTURED_OUTPUT_MODES: tuple[str, ...] = (
    "response_format",
    "guided_json",
    "structured_outputs",
    "none",
)


def json_schema_format(schema: Mapping[str, Any], name: str = "output") -> dict[str, Any]:
    """A `response_format` asking for JSON that follows `schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(schema), "strict": True},
    }


def build_request(
    model: str,
    messages: list[Message],
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    response_format: dict[str, Any] | None = None,
    structured_output: StructuredOutput = "response_format",
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of one `POST /chat/completions`; unset options are left out."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if seed is not None:
        body["seed"] = seed
    if response_format is not None:
        _add_structured_output(body, response_format, structured_output)
    if extra_body:
        body.update(extra_body)
    return body


def _add_structured_output(
    body: dict[str, Any], response_format: dict[str, Any], mode: StructuredOutput
) -> None:
    schema = _schema_of(response_format)
    if mode == "none":
        return
    if mode == "response_format" or schema is None:  # json_object has no vLLM extra form
        body["response_format"] = response_format
    elif mode == "guided_json":
        body["guided_json"] = schema
    elif mode == "structured_outputs":
        body["structured_outputs"] = {"json": schema}
    else:
        raise ValueError(
            f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}, got {mode!r}"
        )


def _schema_of(response_format: Mapping[str, Any]) -> dict[str, Any] | None:
    if response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    if isinstance(spec, Mapping) and isinstance(spec.get("schema"), Mapping):
        return dict(spec["schema"])
    return None


def parse_chat_response(
    payload: Any, *, url: str = "", fallback_model: str = "", latency_s: float = 0.0
) -> Completion:
    """Read a chat-completion JSON answer; raise `ModelResponseError` if it is not usable."""
    where = f" at {url}" if url else ""
    if not isinstance(payload, dict):
        raise ModelResponseError(
            f"The model server{where} answered with a JSON {type(payload).__name__}, not a "
            "chat completion object. Check that the URL points at an OpenAI-compatible /v1 API."
        )
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ModelResponseError(
            f"The model server{where} answered without choices ({_snippet(payload)}). "
            "The request may have been filtered or the server is misconfigured; check its log."
        )
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ModelResponseError(
            f"The model server{where} answered with a choice that has no message "
            f"({_snippet(choice)}). Check that the server speaks the chat-completions format."
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ModelResponseError(
            f"The model server{where} answered with non-text content ({_snippet(content)}). "
            "hopforge reads plain-text chat completions only."
        )
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    raw_usage = payload.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    return Completion(
        text=content or "",
        reasoning=reasoning if isinstance(reasoning, str) else "",
        tool_calls=_parse_tool_calls(message.get("tool_calls"), where),
        finish_reason=str(choice.get("finish_reason") or "stop"),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        latency_s=latency_s,
        model=str(payload.get("model") or fallback_model),
    )


def _parse_tool_calls(raw_calls: Any, where: str) -> tuple[ToolCall, ...]:
    if raw_calls is None:
        return ()
    if not isinstance(raw_calls, list):
        raise ModelResponseError(
            f"The model server{where} sent `tool_calls` that is not a list ({_snippet(raw_calls)})."
        )
    calls = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ModelResponseError(
                f"The model server{where} sent a tool call without a function name "
                f"({_snippet(raw)}). Check the server's tool-call parser "
                "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME)."
            )
        call_id = raw.get("id")
        calls.append(
            ToolCall(
                name=function["name"],
                arguments=decode_arguments(function.get("arguments")),
                call_id=call_id if isinstance(call_id, str) else "",
            )
        )
    return tuple(calls)


def decode_arguments(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; anything but a JSON object becomes `{RAW_ARGUMENTS: text}`."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return {RAW_ARGUMENTS: text}
    return decoded if isinstance(decoded, dict) else {RAW_ARGUMENTS: text}


def completion_message(completion: Completion) -> Message:
    """The assistant message to append to the conversation after `completion`."""
    message: Message = {"role": "assistant", "content": completion.text or None}
    if completion.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.call_id or f"call_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": encode_arguments(call.arguments)},
            }
            for i, call in enumerate(completion.tool_calls)
        ]
    return message


def encode_arguments(arguments: Mapping[str, Any]) -> str:
    """Tool-call arguments as the wire's JSON string (raw text comes back as it was)."""
    if set(arguments) == {RAW_ARGUMENTS} and isinstance(arguments[RAW_ARGUMENTS], str):
        return str(arguments[RAW_ARGUMENTS])
    return json.dumps(dict(arguments), ensure_ascii=False)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _snippet(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."
