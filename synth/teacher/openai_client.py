"""`OpenAIChatModel`: the `ChatModel` for `vllm serve` and any OpenAI-compatible server.

Pooled keep-alive connections (`pools.PoolSet`) serve every call. At most
`concurrency` requests are in flight in total; each goes to the replica (base URL) with the
fewest requests in flight, ties taken in turn. Connection errors, timeouts, 429 and 5xx are
retried with capped, jittered exponential backoff (a `Retry-After` header wins); a failing
replica is set aside for the backoff time, so the next try goes to another one when there is
one. Other 4xx answers are not retried. A failure raises a `ModelError` naming the URL and the
fix; an error text never becomes a `Completion`.

Use it inside one event loop: `async with OpenAIChatModel([...], "MODEL") as model: ...`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Self

import httpx
from hopforge.synth.records import Usage
from hopforge.synth.teacher.chat import (
    Completion,
    Message,
    ModelError,
    ModelResponseError,
)
from hopforge.synth.teacher.errors import (
    Failure,
    ModelRequestError,
    request_error,
    unavailable_error,
)
from hopforge.synth.teacher.pools import PoolSet
from hopforge.synth.teacher.replicas import Replica, ReplicaSet
from hopforge.synth.teacher.retry import Backoff, is_retryable_status, parse_retry_after
from hopforge.synth.teacher.wire import (
    STRUCTURED_OUTPUT_MODES,
    StructuredOutput,
    build_request,
    parse_chat_response,
)

__all__ = ["ModelRequestError", "OpenAIChatModel", "StageModel"]

log = logging.getLogger(__name__)


class OpenAIChatModel:
    """A `ChatModel` over the OpenAI chat-completions API, for one model on one or more replicas."""

    def __init__(
        self,
        base_urls: Sequence[str] | str,
        model: str,
        *,
        api_key: str | None = None,
        concurrency: int = 16,
        connect_timeout: float = 5.0,
        read_timeout: float = 120.0,
        max_retries: int = 4,
        backoff: Backoff | None = None,
        structured_output: StructuredOutput = "response_format",
        tool_choice: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        seed: int | None = None,
        pool_shard_size: int = 8,
    ) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        urls = [u.strip().rstrip("/") for u in urls if u and u.strip()]
        if not urls:
            raise ModelError(
                "No model server URL given. Pass --teacher-url http://HOST:8000/v1 "
                "or set HOPFORGE_TEACHER_URL."
            )
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ModelError(
                    f"Model server URL {url!r} must start with http:// or https://, "
                    "e.g. http://127.0.0.1:8000/v1."
                )
        if not model or not model.strip():
            raise ModelError(
                "No model name given. Pass --teacher-model NAME or set HOPFORGE_TEACHER_MODEL "
                "(the name `vllm serve` was started with; GET /v1/models lists it)."
            )
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if not (connect_timeout > 0 and read_timeout > 0):
            raise ValueError(
                f"timeouts must be > 0 seconds, got connect={connect_timeout} read={read_timeout}"
            )
        if structured_output not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(
                f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}, "
                f"got {structured_output!r}"
            )
        self.model = model.strip()
        self.name = f"openai:{self.model}"
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff = backoff or Backoff()
        self.structured_output: StructuredOutput = structured_output
        self.tool_choice = tool_choice
        self.extra_body = dict(extra_body or {})
        self.usage = Usage()
        self.usage_by_stage: dict[str, Usage] = {}
        self.retries = 0
        self.backoff_seconds = 0.0  # time spent waiting before retries
        self._api_key = api_key or None
        self._timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=connect_timeout, pool=None
        )
        self._rng = random.Random(seed)
        self._replicas = ReplicaSet(urls, self.backoff, self._rng)
        self._pool_shard_size = pool_shard_size
        self._sem: asyncio.Semaphore | None = None
        self._pools: PoolSet | None = None

    def __repr__(self) -> str:  # no API key here, ever
        urls = ", ".join(r.url for r in self.replicas)
        return f"OpenAIChatModel(model={self.model!r}, base_urls=[{urls}])"

    @property
    def replicas(self) -> list[Replica]:
        """The base URLs with their load and error counts."""
        return self._replicas.replicas

    @property
    def base_urls(self) -> list[str]:
        return [r.url for r in self.replicas]

    async def __aenter__(self) -> Self:
        self._connections()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections; the model can be used again afterwards."""
        pools, self._pools = self._pools, None
        self._sem = None
        if pools is not None:
            await pools.aclose()

    def _connections(self) -> PoolSet:
        if self._pools is None:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._pools = PoolSet(
                max_in_flight=self.concurrency,
                timeout=self._timeout,
                headers=headers,
                shard_size=self._pool_shard_size,
            )
            self._sem = asyncio.Semaphore(self.concurrency)
        return self._pools

    def for_stage(self, stage: str) -> StageModel:
        """A view of this model that also adds its token usage to `usage_by_stage[stage]`."""
        return StageModel(self, stage)

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        stage: str | None = None,
    ) -> Completion:
        """One chat completion, retried as configured; raises `ModelError` on failure."""
        body = build_request(
            self.model,
            messages,
            tools=tools,
            tool_choice=self.tool_choice,
            response_format=response_format,
            structured_output=self.structured_output,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            extra_body=self.extra_body,
        )
        started = time.perf_counter()
        completion = await self._post_with_retries(body)
        completion = replace(completion, latency_s=time.perf_counter() - started)
        self._count(completion, stage)
        return completion

    async def check(self) -> dict[str, list[str]]:
        """Models each replica serves (`GET /models`); `ModelUnavailable` if none answers."""
        pools = self._connections()
        served: dict[str, list[str]] = {}
        failures: list[Failure] = []
        for replica in self.replicas:
            try:
                async with pools.client(replica.url) as client:
                    response = await client.get(f"{replica.url}/models")
                response.raise_for_status()
                data = response.json().get("data") or []
                served[replica.url] = [str(m.get("id")) for m in data if isinstance(m, dict)]
            except (httpx.HTTPError, ValueError, AttributeError) as exc:
                failures.append(Failure(url=replica.url, problem=_describe(exc)))
        if not served:
            raise unavailable_error(failures, attempts=len(failures), secret=self._api_key)
        return served

    def stats(self) -> dict[str, Any]:
        """Requests, errors and retries per replica, and the summed usage."""
        return {
            "model": self.model,
            "retries": self.retries,
            "backoff_seconds": round(self.backoff_seconds, 3),
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "seconds": round(self.usage.seconds, 3),
            },
            "replicas": [
                {"url": r.url, "requests": r.requests, "errors": r.errors} for r in self.replicas
            ],
        }

    def _count(self, completion: Completion, stage: str | None) -> None:
        self.usage = _add(self.usage, completion)
        if stage is not None:
            self.usage_by_stage[stage] = _add(self.usage_by_stage.get(stage, Usage()), completion)

    async def _post_with_retries(self, body: dict[str, Any]) -> Completion:
        self._connections()
        assert self._sem is not None
        loop = asyncio.get_running_loop()
        failures: list[Failure] = []
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.retries += 1
            wait = self._replicas.time_until_up(loop.time())
            if wait > 0:
                wait *= 1 + 0.1 * self._rng.random()  # waiters on one replica wake spread out
                self.backoff_seconds += wait
                await asyncio.sleep(wait)
            async with self._sem:
                replica = self._replicas.pick(loop.time())
                started = loop.time()
                replica.in_flight += 1
                replica.requests += 1
                try:
                    return await self._post_once(replica, body)
                except _Retryable as exc:
                    failures.append(exc.failure)
                    now = loop.time()
                    self._replicas.set_aside(replica, started, now, exc.failure.retry_after)
                    log.warning(
                        "model server %s: %s (try %d of %d)",
                        replica.url,
                        exc.failure.problem,
                        attempt + 1,
                        self.max_retries + 1,
                    )
                finally:
                    replica.in_flight -= 1
        raise unavailable_error(failures, attempts=len(failures), secret=self._api_key)

    async def _post_once(self, replica: Replica, body: dict[str, Any]) -> Completion:
        url = f"{replica.url}/chat/completions"
        started = time.perf_counter()
        try:
            async with self._connections().client(replica.url) as client:
                response = await client.post(url, json=body)
        except httpx.ConnectTimeout:
            problem = f"ConnectTimeout: no connection within {self._timeout.connect:g}s"
            raise _Retryable(Failure(url=replica.url, problem=problem)) from None
        except httpx.TimeoutException as exc:
            problem = f"{type(exc).__name__}: no answer within {self._timeout.read:g}s"
            raise _Retryable(Failure(url=replica.url, problem=problem, timeout=True)) from None
        except httpx.TransportError as exc:  # refused, reset, closed without an answer, ...
            raise _Retryable(Failure(url=replica.url, problem=_describe(exc))) from None
        if response.status_code != 200:
            detail = response.text
            if is_retryable_status(response.status_code):
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                raise _Retryable(
                    Failure(
                        url=replica.url,
                        problem=f"HTTP {response.status_code}",
                        status=response.status_code,
                        detail=detail,
                        retry_after=retry_after,
                    )
                )
            raise request_error(
                replica.url, response.status_code, detail, model=self.model, secret=self._api_key
            )
        self._replicas.answered(replica)
        try:
            payload = response.json()
        except ValueError:
            raise ModelResponseError(
                f"The model server at {replica.url} answered HTTP 200 with a body that is not "
                f"JSON ({response.text[:200]!r}). Check that the URL points at an "
                "OpenAI-compatible /v1 API and not at a proxy or web page."
            ) from None
        return parse_chat_response(
            payload,
            url=replica.url,
            fallback_model=self.model,
            latency_s=time.perf_counter() - started,
        )


class StageModel:
    """A `ChatModel` that forwards to an `OpenAIChatModel` and counts usage under one stage."""

    def __init__(self, parent: OpenAIChatModel, stage: str) -> None:
        self.parent = parent
        self.stage = stage
        self.name = parent.name

    @property
    def usage(self) -> Usage:
        return self.parent.usage_by_stage.get(self.stage, Usage())

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Forward to the parent model, counting usage under this stage."""
        return await self.parent.complete(
            messages,
            tools=tools,
            response_format=response_format,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            stage=self.stage,
        )


class _Retryable(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.problem)
        self.failure = failure


def _add(usage: Usage, completion: Completion) -> Usage:
    return replace(
        usage,
        prompt_tokens=usage.prompt_tokens + completion.prompt_tokens,
        completion_tokens=usage.completion_tokens + completion.completion_tokens,
        seconds=usage.seconds + completion.latency_s,
    )


def _describe(exc: BaseException) -> str:
    kind = type(exc).__name__
    text = str(exc).strip()
    return f"{kind}: {text}" if text else kind
