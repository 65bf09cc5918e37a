"""One bounded-concurrency helper for every stage that calls a model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def bounded_map(
    fn: Callable[[T], Awaitable[R]],
    items: Iterable[T],
    *,
    limit: int,
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """Run `fn` over `items` with at most `limit` in flight; results keep the input order.

    `on_result(i, result)` is called as each one finishes (for progress and incremental writes).
    An exception in `fn` cancels the calls still running and then propagates: per-record
    failures must be turned into rejected records by `fn` itself.
    """
    if limit < 1:
        raise ValueError(f"concurrency limit must be >= 1, got {limit}")
    items = list(items)
    results: list[R | None] = [None] * len(items)
    sem = asyncio.Semaphore(limit)

    async def run(i: int, item: T) -> None:
        async with sem:
            r = await fn(item)
        results[i] = r
        if on_result is not None:
            on_result(i, r)

    tasks = [asyncio.ensure_future(run(i, it)) for i, it in enumerate(items)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        # The first failure ends the map: the rest is cancelled (and waited for) before it
        # propagates, so no further call goes out while the caller handles it.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return results  # type: ignore[return-value]
