"""A JSONL log of every request the teacher client sends and what came back.

One line per try: the request body, the assembled response payload (or the failure), the HTTP
status, whether it was streamed, and its latency. Tests replay such a log through the local test
server (tests/helpers/openai_server.py), and `make check-teacher` reads it for the prefix-reuse figure.
Nothing secret is written: the API key travels in a header, and headers are not logged.
"""

from __future__ import annotations

import json
import threading

ENV_RECORD = "HOPFORGE_TEACHER_RECORD"  # the file every request is logged to, when set
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class Recorder:
    """Appends one JSON line per request try to `path` (created with its parent folders)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.count = 0

    def write(
        self,
        request: dict[str, Any],
        *,
        url: str,
        status: int | None,
        stream: bool,
        latency_s: float,
        response: dict[str, Any] | None = None,
        failure: str = "",
    ) -> None:
        """Log one try; `response` is the (assembled) payload, `failure` what went wrong."""
        row: dict[str, Any] = {
            "url": url,
            "stream": stream,
            "status": status,
            "latency_s": round(latency_s, 3),
            "request": request,
        }
        if response is not None:
            row["response"] = response
        if failure:
            row["failure"] = failure
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
            self.count += 1


def read_recording(path: Path | str) -> Iterator[dict[str, Any]]:
    """The rows of a recording, in the order they were written."""
    with Path(path).open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _prompt_text(request: dict[str, Any]) -> str:
    """The prompt as the server's template would see it, roughly: roles, texts and calls in order."""
    parts = []
    for m in request.get("messages") or ():
        calls = json.dumps(m.get("tool_calls"), sort_keys=True) if m.get("tool_calls") else ""
        parts.append(f"<{m.get('role')}>{m.get('content') or ''}{calls}")
    return "\n".join(parts)


def _conversation(request: dict[str, Any]) -> str:
    messages = request.get("messages") or []
    return json.dumps(messages[:2], sort_keys=True)


def prefix_reuse(rows: list[dict[str, Any]]) -> list[float]:
    """Per request after the first of its conversation: the share of its prompt (in characters)
    that repeats the previous request of the same conversation, i.e. what a prefix cache reuses.

    A conversation is the requests that share their first two messages (system and question).
    """
    last: dict[str, str] = {}
    shares = []
    for row in rows:
        request = row.get("request") or {}
        key = _conversation(request)
        text = _prompt_text(request)
        before = last.get(key)
        last[key] = text
        if before is None or not text:
            continue
        n = 0
        for a, b in zip(before, text, strict=False):
            if a != b:
                break
            n += 1
        shares.append(n / len(text))
    return shares
