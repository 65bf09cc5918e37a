"""Teacher-client throughput against a local OpenAI-compatible server with fixed added latency.

The server (tests/helpers/openai_server.py) runs in its own process, so it does not share the GIL with
the client, and answers every request after `LATENCY_S`. With `c` requests in flight the ideal
throughput is `c / LATENCY_S`; each row gives `OpenAIChatModel` as a share of that ideal, next
to the reference: bare `httpx.AsyncClient` calls (no retries, no parsing into records) under the
same semaphore, in the same process, against the same server.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from hopforge.synth.teacher.openai_client import OpenAIChatModel

LATENCY_S = 0.2
LEVELS = (16, 64, 256)
ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "Which mountain did Ilse Varro climb first?"}]


def _start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.openai_server", "--delay", str(delay)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        proc.wait()
        raise RuntimeError("the benchmark server did not start")
    return proc, url


def _stop_server(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


async def _client_rate(url: str, concurrency: int, n: int) -> float:
    async with OpenAIChatModel([url], "test-model", concurrency=concurrency) as model:
        await asyncio.gather(*(model.complete(MESSAGES) for _ in range(concurrency)))  # warm-up
        t0 = time.perf_counter()
        await asyncio.gather(*(model.complete(MESSAGES) for _ in range(n)))
        return n / (time.perf_counter() - t0)


async def _httpx_rate(url: str, concurrency: int, n: int) -> float:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    sem = asyncio.Semaphore(concurrency)
    body = {"model": "test-model", "messages": MESSAGES}

    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def one() -> None:
            async with sem:
                response = await client.post(f"{url}/chat/completions", json=body)
                response.raise_for_status()
                response.json()

        await asyncio.gather(*(one() for _ in range(concurrency)))  # warm-up
        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return n / (time.perf_counter() - t0)


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per concurrency level: requests/s and share of the ideal, client vs bare httpx."""
    rounds = 2 if quick else 5
    rows = []
    proc, url = _start_server(LATENCY_S)
    try:
        for concurrency in LEVELS:
            n = concurrency * rounds
            ideal = concurrency / LATENCY_S
            client = asyncio.run(_client_rate(url, concurrency, n))
            bare = asyncio.run(_httpx_rate(url, concurrency, n))
            rows.append(
                {
                    "concurrency": concurrency,
                    "requests": n,
                    "ideal_req_s": round(ideal, 1),
                    "client_req_s": round(client, 1),
                    "client_share": round(client / ideal, 3),
                    "httpx_req_s": round(bare, 1),
                    "httpx_share": round(bare / ideal, 3),
                    "client_vs_httpx": round(client / bare, 3),
                }
            )
    finally:
        _stop_server(proc)
    return rows
