"""Several base URLs of one model: spread the load, and set a failing one aside for a while."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from hopforge.synth.teacher.retry import Backoff


def server_problem(urls: Sequence[str], model: str) -> str | None:
    """What keeps `urls` and `model` from naming a model server, with the fix; None if nothing."""
    if not urls:
        return (
            "The openai teacher needs a server URL: pass --teacher-url http://HOST:8000/v1 or set "
            "HOPFORGE_TEACHER_URL (start a server with `vllm serve MODEL`)."
        )
    for url in urls:
        if not url.startswith(("http://", "https://")):
            return (
                f"Teacher URL {url!r} must start with http:// or https://, "
                "e.g. http://127.0.0.1:8000/v1."
            )
    if not model.strip():
        return (
            "The openai teacher needs a model name: pass --teacher-model NAME or set "
            "HOPFORGE_TEACHER_MODEL (the name the server was started with; "
            f"GET {urls[0]}/models lists it)."
        )
    return None


@dataclass(slots=True)
class Replica:
    """One base URL and what the client knows about it."""

    url: str
    in_flight: int = 0
    down_until: float = 0.0  # event-loop time before which it is set aside
    marked_at: float = -1.0  # when it was last set aside
    failures: int = 0  # consecutive failed incidents (drives its backoff)
    requests: int = 0
    errors: int = 0


class ReplicaSet:
    """Picks the replica with the fewest requests in flight (ties in turn) among those up."""

    def __init__(self, urls: Sequence[str], backoff: Backoff, rng: random.Random) -> None:
        self.replicas = [Replica(url=u) for u in dict.fromkeys(urls)]
        self.backoff = backoff
        self._rng = rng
        self._turn = 0  # round-robin position among equally loaded replicas

    def pick(self, now: float) -> Replica:
        """The replica for the next try: least busy among those up, else the first back up."""
        up = [r for r in self.replicas if r.down_until <= now]
        if not up:
            return min(self.replicas, key=lambda r: r.down_until)
        least = min(r.in_flight for r in up)
        tied = [r for r in up if r.in_flight == least]
        self._turn += 1
        return tied[self._turn % len(tied)]

    def time_until_up(self, now: float) -> float:
        """Seconds until some replica may be tried again (0 when one is up now)."""
        return max(0.0, min(r.down_until for r in self.replicas) - now)

    def set_aside(
        self, replica: Replica, started: float, now: float, retry_after: float | None
    ) -> None:
        """Record a failed try sent at `started`: keep `replica` aside for its backoff time."""
        replica.errors += 1
        # Failures of requests sent before the replica was last set aside are the same incident:
        # they do not lengthen its backoff, so one outage does not ratchet the wait to the cap.
        if replica.marked_at < started:
            replica.failures += 1
        replica.marked_at = now
        delay = self.backoff.delay(replica.failures - 1, self._rng, retry_after)
        replica.down_until = max(replica.down_until, now + delay)

    @staticmethod
    def answered(replica: Replica) -> None:
        """Record that `replica` answered: its next failure starts a fresh backoff."""
        replica.failures = 0
