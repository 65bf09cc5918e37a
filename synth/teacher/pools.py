"""Pooled keep-alive HTTP connections for the model client, kept in small shards.

httpcore 1.0.x scans every pooled connection for every queued request
(`AsyncConnectionPool._assign_requests_to_connections`, encode/httpcore#1035), so one pool of
hundreds of connections spends more CPU on bookkeeping than on requests: at 256 requests in
flight, one shared pool ran at a few percent of the ideal rate. Several `httpx.AsyncClient`s of
at most `shard_size` connections each keep that cost flat (8 measured a little cheaper per
request than 16 or 32 in bench/bench_client.py). Each base URL gets its own shards, made when
first needed; a request uses the least busy one.
"""

from __future__ import annotations

import contextlib
import math
import ssl
from collections.abc import AsyncIterator, Mapping

import certifi
import httpx


class PoolSet:
    """`httpx.AsyncClient`s per base URL, each holding at most `shard_size` connections."""

    def __init__(
        self,
        *,
        max_in_flight: int,
        timeout: httpx.Timeout,
        headers: Mapping[str, str] | None = None,
        shard_size: int = 8,
    ) -> None:
        if shard_size < 1:
            raise ValueError(f"shard_size must be >= 1, got {shard_size}")
        self.shard_size = shard_size
        self.shards_per_url = max(1, math.ceil(max_in_flight / shard_size))
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._ssl: ssl.SSLContext | None = None  # one for all clients: loading CAs takes ~40 ms
        self._clients: dict[str, list[httpx.AsyncClient | None]] = {}
        self._loads: dict[str, list[int]] = {}

    @contextlib.asynccontextmanager
    async def client(self, url: str) -> AsyncIterator[httpx.AsyncClient]:
        """The least busy client for `url`, counted as busy while the block runs."""
        clients = self._clients.setdefault(url, [None] * self.shards_per_url)
        loads = self._loads.setdefault(url, [0] * self.shards_per_url)
        i = min(range(len(loads)), key=loads.__getitem__)
        client = clients[i]
        if client is None:
            limits = httpx.Limits(
                max_connections=self.shard_size, max_keepalive_connections=self.shard_size
            )
            if self._ssl is None:
                self._ssl = ssl.create_default_context(cafile=certifi.where())
            client = httpx.AsyncClient(
                timeout=self._timeout, limits=limits, headers=self._headers, verify=self._ssl
            )
            clients[i] = client
        loads[i] += 1
        try:
            yield client
        finally:
            loads[i] -= 1

    @property
    def open_clients(self) -> int:
        """How many clients have been made so far."""
        return sum(c is not None for clients in self._clients.values() for c in clients)

    async def aclose(self) -> None:
        """Close every client and forget them."""
        clients = [c for cs in self._clients.values() for c in cs if c is not None]
        self._clients.clear()
        self._loads.clear()
        for client in clients:
            await client.aclose()
