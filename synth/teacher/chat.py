"""The `ChatModel` protocol every model-driven stage talks to, and its completion record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, Unpack

from hopforge.corpus.errors import HopforgeError
from hopforge.synth.records import ToolCall

Message = dict[str, Any]  # an OpenAI-format chat message


@dataclass(frozen=True, slots=True, kw_only=True)
class Completion:
    """What one model call produced. An error is never a completion: it raises `ModelError`."""

    text: str
    reasoning: str = ""  # reasoning content, kept apart from the answer text
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"  # stop | length | tool_calls | ...
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""


class ModelError(HopforgeError):
    """A model call failed (after retries); the message names the server and the fix."""


class ModelUnavailable(ModelError):
    """The server could not be reached, timed out, or kept answering with errors."""


class ModelUnreachable(ModelUnavailable):
    """No server could be reached at all (every try failed to connect).

    Nothing a run produces without a server is data, so stages stop the run on this error
    (finished parts stay) instead of recording one failed record per item.
    """


class ModelResponseError(ModelError):
    """The server answered, but with something that is not a usable completion."""


class CompletionOptions(TypedDict, total=False):
    """What a caller may ask of one completion besides its messages; unset means the default."""

    tools: list[dict[str, Any]] | None  # function schemas the model may call
    response_format: dict[str, Any] | None  # a JSON schema the answer must follow
    temperature: float | None
    max_tokens: int | None
    seed: int | None


class ChatModel(Protocol):
    """Messages and tool schemas in, a completion out."""

    name: str  # e.g. "scripted" or "openai:Qwen/Qwen2.5-7B-Instruct"

    async def complete(
        self, messages: list[Message], **options: Unpack[CompletionOptions]
    ) -> Completion: ...
