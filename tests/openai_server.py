"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It answers `POST /v1/chat/completions` and `GET /v1/models` from a background thread, records
every request (JSON body and headers), and can misbehave on purpose:

    with OpenAITestServer() as server:
        server.enqueue(Reply.error(500), Reply.text("hello"))
        ...  # point a client at server.base_url
        assert server.requests[-1]["model"] == "test-model"

Replies are served first-in first-out from the queue; when it is empty, the handler set with
`set_handler(fn)` answers (by default: echo the last user message). Import it as
`from tests.openai_server import OpenAITestServer, Reply` (tests/conftest.py puts the repository
root on `sys.path`), or use the `openai_server` fixture.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
    ) -> Reply:
        """A native tool call; `arguments` are JSON-encoded unless given as a string (as vLLM)."""
        return cls.tool_calls([(name, arguments, call_id)], content=content)

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


@dataclass(slots=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # decoded JSON, or the raw text when it was not JSON
    at: float = field(default_factory=time.monotonic)  # when it arrived (time.monotonic)
    reply: Reply | None = None


@dataclass(slots=True)
class _State:
    model: str
    queue: collections.deque[Reply] = field(default_factory=collections.deque)
    handler: Callable[[dict[str, Any]], Reply] = echo_handler
    recorded: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    max_in_flight: int = 0
    sockets: set[socket.socket] = field(default_factory=set)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so a client's connection pool is exercised
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        with self.server.state.lock:
            self.server.state.sockets.add(self.connection)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.sockets.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def do_GET(self) -> None:
        state = self.server.state
        self._record(None)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = {"object": "list", "data": [{"id": state.model, "object": "model"}]}
            self._send(200, json.dumps(models).encode(), ())
        else:
            self._send(404, b'{"error": {"message": "not found"}}', ())

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        text = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            body = text
        recorded = self._record(body)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}', ())
            return
        if not isinstance(body, dict):
            self._send(400, b'{"error": {"message": "request body is not a JSON object"}}', ())
            return
        with state.lock:
            reply = state.queue.popleft() if state.queue else None
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if reply is None:
                reply = state.handler(body)
            recorded.reply = reply
            self._answer(reply, body)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _record(self, body: Any) -> Recorded:
        recorded = Recorded(self.command, self.path, dict(self.headers.items()), body)
        with self.server.state.lock:
            self.server.state.recorded.append(recorded)
        return recorded

    def _answer(self, reply: Reply, request: dict[str, Any]) -> None:
        stop = self.server.state.stop
        if reply.delay_s and stop.wait(reply.delay_s):
            self.close_connection = True
            return
        if reply.hang_s is not None:
            stop.wait(reply.hang_s)
            if reply.then is None or stop.is_set():
                self.close_connection = True  # hang up without an answer
                return
            self._answer(reply.then, request)
            return
        if reply.verbatim:
            self._send(reply.status, str(reply.body).encode(), reply.headers)
        elif reply.status != 200:
            self._send(reply.status, json.dumps(reply.body).encode(), reply.headers)
        else:
            self._send(200, json.dumps(self._completion(reply, request)).encode(), reply.headers)

    def _completion(self, reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
        model = request.get("model") or self.server.state.model
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
            "model": model,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _send(self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client went away (e.g. it timed out)
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # many clients connect at once in the concurrency benchmark
    state: _State


class OpenAITestServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port), run in a background thread."""

    def __init__(self, *, model: str = "test-model") -> None:
        self._state = _State(model=model)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def model(self) -> str:
        return self._state.model

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the test server is not running; use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """E.g. `http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def recorded(self) -> list[Recorded]:
        """Every request so far (chat completions and others), in arrival order."""
        with self._state.lock:
            return list(self._state.recorded)

    @property
    def requests(self) -> list[Any]:
        """JSON bodies of the chat-completion requests, in arrival order."""
        return [r.body for r in self.recorded if r.method == "POST"]

    @property
    def headers(self) -> list[dict[str, str]]:
        """Headers of the chat-completion requests, in arrival order."""
        return [r.headers for r in self.recorded if r.method == "POST"]

    @property
    def max_in_flight(self) -> int:
        """The most chat-completion requests the server was answering at one time."""
        return self._state.max_in_flight

    def enqueue(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (FIFO) before the handler is used."""
        with self._state.lock:
            self._state.queue.extend(replies)

    def set_handler(self, fn: Callable[[dict[str, Any]], Reply]) -> None:
        """Answer requests with `fn(request_json)` whenever the queue is empty."""
        self._state.handler = fn

    def reset(self) -> None:
        """Forget recorded requests, queued replies and the in-flight maximum; echo again."""
        with self._state.lock:
            self._state.recorded.clear()
            self._state.queue.clear()
            self._state.max_in_flight = 0
            self._state.handler = echo_handler

    def start(self) -> Self:
        """Bind a free port and serve in a background thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.state = self._state
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-test-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake stalled replies, and close every socket."""
        if self._httpd is None:
            return
        self._state.stop.set()
        self._httpd.shutdown()
        with self._state.lock:
            open_sockets = list(self._state.sockets)
        for sock in open_sockets:  # wake handler threads waiting on idle keep-alive connections
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
