"""Error messages for the OpenAI-compatible client: each names the URL, what happened, and the fix.

No message ever contains the API key: every text from a server passes through `redact`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from hopforge.synth.teacher.chat import (
    ModelError,
    ModelResponseError,
    ModelUnavailable,
    ModelUnreachable,
)

_CONTEXT_HINTS = (
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "max_model_len",
)
_AUTO_TOOL_HINTS = ("--enable-auto-tool-choice", "auto tool choice", '"auto" tool choice')
AUTO_TOOL_FIX = (
    "Restart vLLM with `--enable-auto-tool-choice --tool-call-parser hermes` (or the parser "
    "that fits the model, e.g. llama3_json, mistral), or run with --call-format text, which "
    "sends no tools and reads the calls from the text."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One failed try that may succeed when repeated."""

    url: str
    problem: str  # e.g. "HTTP 503" or "ConnectError: [Errno 111] Connection refused"
    status: int | None = None
    detail: str = ""  # the server's error body, if any
    retry_after: float | None = None
    timeout: bool = False


class ModelRequestError(ModelResponseError):
    """The server refused the request itself (a 4xx other than 408/425/429); not retried."""

    def __init__(self, message: str, *, url: str, status: int, detail: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.detail = detail

    @property
    def context_limit(self) -> bool:
        """True when the server says the prompt does not fit the model's context."""
        text = self.detail.lower()
        return self.status in (400, 413, 422) and any(h in text for h in _CONTEXT_HINTS)

    @property
    def auto_tool_choice(self) -> bool:
        """True when the server refuses tools because it was started without a tool parser."""
        text = self.detail.lower()
        return self.status == 400 and any(h in text for h in _AUTO_TOOL_HINTS)


def is_context_limit(exc: ModelError) -> bool:
    """True when the server refused a prompt as longer than the model's context."""
    return isinstance(exc, ModelRequestError) and exc.context_limit


def stops_run(exc: ModelError) -> bool:
    """True for a failure of the server or its setup rather than of one record.

    The server could not be reached or kept failing after every retry, or it refused a request
    for a reason other than its length (flags, key, model name): each later request would fail
    the same way, so a stage stops, keeps what is done, and redoes the rest after the fix.
    """
    if isinstance(exc, ModelUnavailable):
        return True
    return isinstance(exc, ModelRequestError) and not exc.context_limit


def request_error(
    url: str, status: int, detail: str, *, model: str, secret: str | None
) -> ModelRequestError:
    """The error for a non-retryable 4xx answer."""
    detail = _error_detail(redact(detail, secret))
    if status in (401, 403):
        fix = (
            "Set HOPFORGE_API_KEY (or OPENAI_API_KEY) to the key the server expects "
            "(`vllm serve --api-key KEY`)."
        )
        what = "refused the API key" if secret else "requires an API key"
    elif status == 404:
        what = f"does not know this route or model {model!r}"
        fix = (
            "Check that the base URL ends in /v1 and that --teacher-model / "
            f"HOPFORGE_TEACHER_MODEL matches a model listed by GET {url}/models."
        )
    elif any(h in detail.lower() for h in _AUTO_TOOL_HINTS):
        what = "refuses requests with tools"
        fix = AUTO_TOOL_FIX
    else:
        what = "rejected the request"
        fix = (
            "Shorten the conversation or raise the server's --max-model-len."
            if any(h in detail.lower() for h in _CONTEXT_HINTS)
            else "Check the request options (tools, response format, max tokens) against what "
            "the server supports."
        )
    message = f"The model server at {url} {what} (HTTP {status}): {detail or 'no detail'}. {fix}"
    return ModelRequestError(message, url=url, status=status, detail=detail)


def unavailable_error(
    failures: Sequence[Failure], *, attempts: int, secret: str | None
) -> ModelUnavailable:
    """The error after every try failed: per URL the last problem, then the likely fix."""
    urls = list(dict.fromkeys(f.url for f in failures))
    if not failures:
        return ModelUnavailable("No model server was tried. Set HOPFORGE_TEACHER_URL.")
    last = {f.url: f for f in failures}
    parts = []
    for url in urls:
        f = last[url]
        detail = _error_detail(redact(f.detail, secret))
        prefix = f"{url}: " if len(urls) > 1 else ""
        parts.append(f"{prefix}{f.problem}" + (f" ({detail})" if detail else ""))
    tries = f"{attempts} {'try' if attempts == 1 else 'tries'}"
    where = ", ".join(urls)
    kinds = {_kind(f) for f in last.values()}
    if kinds == {"connect"}:
        head = f"Could not reach a model server at {where} ({tries}: {'; '.join(parts)})."
        fix = "Start one with `vllm serve MODEL` or set HOPFORGE_TEACHER_URL."
    elif kinds == {"timeout"}:
        head = f"The model server at {where} did not answer in time ({tries}: {'; '.join(parts)})."
        fix = (
            "It may be overloaded or stuck: lower --concurrency, raise the read timeout, "
            "or add replicas with more --teacher-url."
        )
    elif kinds == {"busy"}:
        head = f"The model server at {where} kept answering 'too many requests' ({tries}: "
        head += "; ".join(parts) + ")."
        fix = "Lower --concurrency or add replicas with more --teacher-url."
    else:
        head = f"The model server at {where} kept failing ({tries}: {'; '.join(parts)})."
        fix = (
            "Check the server's log; if it is down, start it with `vllm serve MODEL` or point "
            "HOPFORGE_TEACHER_URL at a running one."
        )
    error = ModelUnreachable if kinds == {"connect"} else ModelUnavailable
    return error(redact(f"{head} {fix}", secret))


def _kind(failure: Failure) -> str:
    if failure.timeout:
        return "timeout"
    if failure.status == 429:
        return "busy"
    if failure.status is None:
        return "connect"
    return "server"


def _error_detail(body: str, limit: int = 300) -> str:
    """The `error.message` of an OpenAI-style error body, else the body itself, shortened."""
    text = body.strip()
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        error = obj.get("error", obj)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(obj.get("message"), str):
            text = obj["message"]
        elif isinstance(obj.get("detail"), str):
            text = obj["detail"]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text
