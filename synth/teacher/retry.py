"""When to retry a model call and how long to wait: capped, jittered exponential backoff."""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass

# 408 request timeout, 425 too early, 429 too many requests, and every 5xx are worth retrying;
# any other 4xx means the request itself is wrong and would fail again.
RETRY_STATUSES = frozenset({408, 425, 429})


def is_retryable_status(status: int) -> bool:
    """True for 408, 425, 429 and every 5xx."""
    return status in RETRY_STATUSES or 500 <= status <= 599


@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """Exponential backoff with "equal jitter": half the step is fixed, half is random.

    Step n waits between `d/2` and `d`, where `d = min(cap_s, base_s * 2**n)`; a server's
    `Retry-After` wins over the computed step, up to `max_retry_after_s`.
    """

    base_s: float = 0.5
    cap_s: float = 20.0
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if not (self.base_s >= 0 and math.isfinite(self.base_s)):
            raise ValueError(f"backoff base_s must be a finite number >= 0, got {self.base_s}")
        if not self.cap_s >= self.base_s:
            raise ValueError(f"backoff cap_s must be >= base_s ({self.base_s}), got {self.cap_s}")
        if not self.max_retry_after_s >= 0:
            raise ValueError(
                f"backoff max_retry_after_s must be >= 0, got {self.max_retry_after_s}"
            )

    def delay(self, step: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before try number `step + 1` (step 0 is the first retry)."""
        if retry_after is not None:
            honoured = min(max(retry_after, 0.0), self.max_retry_after_s)
            return honoured + rng.uniform(0, 0.1 * honoured)  # spread clients told the same time
        full = min(self.cap_s, self.base_s * 2 ** min(step, 62))
        return full / 2 + rng.uniform(0, full / 2)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or HTTP date); None if absent or bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)
