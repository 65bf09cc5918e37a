"""`OpenAIChatModel`: the `ChatModel` for `vllm serve` and any OpenAI-compatible server.

Pooled keep-alive connections (`pools.PoolSet`) serve every call. At most
`concurrency` requests are in flight in total; each goes to the replica (base URL) with the
fewest requests in flight, ties taken in turn; a retry waits for a free slot like any request,
so retries never put more than `concurrency` requests on the servers.

Completions are streamed by default (`stream: true`, server-sent events): the read timeout then
bounds the silence between two events, not the whole answer, so a long answer that is still
coming is never abandoned and sent again. With `stream=False` the whole answer must arrive
within the read timeout; a request that timed out that way is retried as a stream. A request
is sent again after a timeout at most `timeout_retries` times.

Connection errors, timeouts, 429 and 5xx are retried with capped, jittered exponential backoff
(a `Retry-After` header wins); a failing replica is set aside for the backoff time, so the next
try goes to another one when there is one. Other 4xx answers are not retried. A failure raises a
`ModelError` naming the URL and the fix; an error text never becomes a `Completion`.

Use it inside one event loop: `async with OpenAIChatModel([...], "MODEL") as model: ...`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn, Self

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
    redact,
    request_error,
    unavailable_error,
)
from hopforge.synth.teacher.pools import PoolSet
from hopforge.synth.teacher.recording import Recorder
from hopforge.synth.teacher.replicas import Replica, ReplicaSet, server_problem
from hopforge.synth.teacher.retry import Backoff, is_retryable_status, parse_retry_after
from hopforge.synth.teacher.stream import StreamAssembler, StreamError
from hopforge.synth.teacher.wire import (
    STRUCTURED_OUTPUT_MODES,
    StructuredOutput,
    build_request,
    parse_chat_response,
)

__all__ = ["ModelRequestError", "OpenAIChatModel", "StageModel"]

log = logging.getLogger(__name__)
# what asking a replica which models it serves can raise: no answer, an HTTP error, not JSON
_UNREADABLE = (httpx.HTTPError, ValueError, AttributeError)


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
        stream: bool = True,
        timeout_retries: int = 1,
        recorder: Recorder | None = None,
    ) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        urls = [u.strip().rstrip("/") for u in urls if u and u.strip()]
        problem = server_problem(urls, model or "")
        if problem is not None:
            raise ModelError(problem)
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if timeout_retries < 0:
            raise ValueError(f"timeout_retries must be >= 0, got {timeout_retries}")
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
        self.stream = stream
        self.timeout_retries = timeout_retries
        self.recorder = recorder
        self.requests = 0  # tries sent, retries included
        self.retries = 0
        self.timeouts = 0  # tries that timed out (no answer, or a silent stream)
        self.retries_after_timeout = 0  # retries whose previous try timed out
        self.streamed_chunks = 0
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
        stage: str | None = None,
        **options: Any,
    ) -> Completion:
        """One chat completion (`options` as in `CompletionOptions`), retried as configured.

        Raises `ModelError` on failure.
        """
        body = build_request(
            self.model,
            messages,
            tool_choice=self.tool_choice,
            structured_output=self.structured_output,
            extra_body=self.extra_body,
            **options,
        )
        started = time.perf_counter()
        completion = await self._post_with_retries(body)
        completion = replace(completion, latency_s=time.perf_counter() - started)
        self._count(completion, stage)
        return completion

    async def check(self) -> dict[str, list[str]]:
        """Models each replica serves (`GET /models`); `ModelUnavailable` if none answers."""
        served: dict[str, list[str]] = {}
        failures: list[Failure] = []
        for replica in self.replicas:
            try:
                data = await self._listed_models(replica)
            except _UNREADABLE as exc:
                failures.append(Failure(url=replica.url, problem=_describe(exc)))
                continue
            served[replica.url] = [str(m.get("id")) for m in data if isinstance(m, dict)]
        if not served:
            raise unavailable_error(failures, attempts=len(failures), secret=self._api_key)
        return served

    async def context_window(self) -> int | None:
        """The smallest `max_model_len` the replicas report for this model (vLLM does), or None.

        Servers that do not report one, or cannot be asked, give None; requests will still say.
        """
        limits = []
        for replica in self.replicas:
            try:
                data = await self._listed_models(replica)
            except _UNREADABLE:
                continue
            for entry in data:
                if isinstance(entry, dict) and str(entry.get("id")) == self.model:
                    value = entry.get("max_model_len")
                    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                        limits.append(value)
        return min(limits) if limits else None

    async def _listed_models(self, replica: Replica) -> list[Any]:
        """The `data` entries of one replica's `GET /models`; raises one of `_UNREADABLE`."""
        async with self._connections().client(replica.url) as client:
            response = await client.get(f"{replica.url}/models")
        response.raise_for_status()
        return response.json().get("data") or []

    def stats(self) -> dict[str, Any]:
        """Requests, errors and retries per replica, and the summed usage."""
        return {
            "model": self.model,
            "stream": self.stream,
            "requests": self.requests,
            "retries": self.retries,
            "timeouts": self.timeouts,
            "retries_after_timeout": self.retries_after_timeout,
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
        stream = self.stream
        timeouts = 0
        tries = self.max_retries + 1
        for attempt in range(tries):
            if attempt:
                self.retries += 1
                if failures[-1].timeout:
                    self.retries_after_timeout += 1
            wait = self._replicas.time_until_up(loop.time())
            if wait > 0:
                wait *= 1 + 0.1 * self._rng.random()  # waiters on one replica wake spread out
                self.backoff_seconds += wait
                await asyncio.sleep(wait)
            async with self._sem:  # a retry waits for a slot: never more than `concurrency`
                replica = self._replicas.pick(loop.time())
                started = loop.time()
                replica.in_flight += 1
                replica.requests += 1
                self.requests += 1
                try:
                    return await self._post_once(replica, body, stream=stream)
                except _Retryable as exc:
                    failure = exc.failure
                    failures.append(failure)
                    now = loop.time()
                    self._replicas.set_aside(replica, started, now, failure.retry_after)
                    log.warning(
                        "model server %s: %s (try %d of %d)",
                        replica.url, failure.problem, attempt + 1, tries,
                    )
                finally:
                    replica.in_flight -= 1
            if failure.timeout:
                self.timeouts += 1
                timeouts += 1
                if timeouts > self.timeout_retries:
                    break  # the same request would time out again
                stream = True  # a whole answer that outlived the timeout is asked for as a stream
        raise unavailable_error(failures, attempts=len(failures), secret=self._api_key)

    async def _post_once(
        self, replica: Replica, body: dict[str, Any], *, stream: bool
    ) -> Completion:
        if stream:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        sent = _Try(replica=replica, body=body, stream=stream, started=time.perf_counter())
        try:
            async with self._connections().client(replica.url) as client:
                payload = await (self._read_stream if stream else self._read_whole)(client, sent)
        except httpx.ConnectTimeout:
            problem = f"ConnectTimeout: no connection within {self._timeout.connect:g}s"
            self._record(sent, failure=problem)
            raise _Retryable(Failure(url=replica.url, problem=problem)) from None
        except httpx.TimeoutException as exc:
            what = "silent for" if stream else "no answer within"
            problem = f"{type(exc).__name__}: {what} {self._timeout.read:g}s"
            self._record(sent, failure=problem)
            raise _Retryable(Failure(url=replica.url, problem=problem, timeout=True)) from None
        except httpx.TransportError as exc:  # refused, reset, closed without an answer, ...
            self._record(sent, failure=_describe(exc))
            raise _Retryable(Failure(url=replica.url, problem=_describe(exc))) from None
        except StreamError as exc:
            self._record(sent, failure=str(exc))
            raise _Retryable(
                Failure(url=replica.url, problem="error event in the stream", detail=exc.detail)
            ) from None
        self._replicas.answered(replica)
        latency = time.perf_counter() - sent.started
        self._record(sent, response=payload, status=200)
        return parse_chat_response(
            payload, url=replica.url, fallback_model=self.model, latency_s=latency
        )

    async def _read_whole(self, client: httpx.AsyncClient, sent: _Try) -> Any:
        response = await client.post(sent.url, json=sent.body)
        if response.status_code != 200:
            self._refuse(sent, response.status_code, response.text, response.headers)
        return _json_body(sent.replica.url, response.text)

    async def _read_stream(self, client: httpx.AsyncClient, sent: _Try) -> Any:
        """Read the server-sent events of one request; the read timeout bounds each silence."""
        async with client.stream("POST", sent.url, json=sent.body) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode("utf-8", "replace")
                self._refuse(sent, response.status_code, text, response.headers)
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # a server that ignores `stream` and sends the whole answer at once
                text = (await response.aread()).decode("utf-8", "replace")
                return _json_body(sent.replica.url, text)
            assembler = StreamAssembler(url=sent.replica.url)
            async for line in response.aiter_lines():
                assembler.feed_line(line)
                if assembler.done:
                    break
        if not assembler.done and assembler.finish_reason is None:
            raise httpx.RemoteProtocolError(
                f"the stream ended after {assembler.chunks} chunks without [DONE]"
            )
        self.streamed_chunks += assembler.chunks
        return assembler.payload()

    def _refuse(self, sent: _Try, status: int, detail: str, headers: httpx.Headers) -> NoReturn:
        """Raise for a non-200 answer: retryable for 408/425/429/5xx, else a request error."""
        self._record(sent, status=status, failure=detail[:2000])
        url = sent.replica.url
        if is_retryable_status(status):
            raise _Retryable(
                Failure(
                    url=url,
                    problem=f"HTTP {status}",
                    status=status,
                    detail=detail,
                    retry_after=parse_retry_after(headers.get("retry-after")),
                )
            )
        raise request_error(url, status, detail, model=self.model, secret=self._api_key)

    def _record(
        self, sent: _Try, *, status: int | None = None, response: Any = None, failure: str = ""
    ) -> None:
        if self.recorder is None:
            return
        self.recorder.write(
            sent.body,
            url=sent.replica.url,
            status=status,
            stream=sent.stream,
            latency_s=time.perf_counter() - sent.started,
            response=response if isinstance(response, dict) else None,
            failure=redact(failure, self._api_key),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Try:
    """One request sent to one replica: what reading, refusing and recording its answer share."""

    replica: Replica
    body: dict[str, Any]
    stream: bool
    started: float  # time.perf_counter() when it was sent

    @property
    def url(self) -> str:
        return f"{self.replica.url}/chat/completions"


class StageModel:
    """A `ChatModel` that forwards to an `OpenAIChatModel` and counts usage under one stage."""

    def __init__(self, parent: OpenAIChatModel, stage: str) -> None:
        self.parent = parent
        self.stage = stage
        self.name = parent.name

    @property
    def usage(self) -> Usage:
        return self.parent.usage_by_stage.get(self.stage, Usage())

    async def complete(self, messages: list[Message], **options: Any) -> Completion:
        """Forward to the parent model, counting usage under this stage."""
        return await self.parent.complete(messages, stage=self.stage, **options)


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


def _json_body(url: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ModelResponseError(
            f"The model server at {url} answered HTTP 200 with a body that is not "
            f"JSON ({text[:200]!r}). Check that the URL points at an "
            "OpenAI-compatible /v1 API and not at a proxy or web page."
        ) from None


def _describe(exc: BaseException) -> str:
    kind = type(exc).__name__
    text = str(exc).strip()
    return f"{kind}: {text}" if text else kind
