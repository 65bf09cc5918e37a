"""Bad-input accounting for ingestion: typed errors and the counter every reader reports to.

A malformed record is reported with its file and line and skipped (or, in strict mode, raised at
once). Recoverable oddities (non-UTF-8 bytes, empty documents, duplicate ids, documents split
because they are very large) are counted and described. Nothing is dropped without a count.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from hopforge.corpus.errors import HopforgeError

log = logging.getLogger(__name__)

# Kinds of problems a reader can report; `stats["problems"]` counts each.
MALFORMED = "malformed"
NON_UTF8 = "non_utf8"
EMPTY = "empty"
DUPLICATE_ID = "duplicate_id"
CHUNKED = "chunked"
KINDS: tuple[str, ...] = (MALFORMED, NON_UTF8, EMPTY, DUPLICATE_ID, CHUNKED)
SITE_EXAMPLES = 5  # first locations kept per (action, reason) of a site reader


class IngestError(HopforgeError):
    """A source could not be ingested; the message names the file and the fix."""


class MalformedRecordError(IngestError):
    """A record (line, element, page, file) could not be read; raised in strict mode."""

    def __init__(self, where: str, why: str, fix: str = "") -> None:
        self.where = where
        self.why = why
        self.fix = fix
        hint = f" {fix}" if fix else ""
        super().__init__(f"{where}: {why}.{hint} (--strict stops at the first malformed record)")


class UnknownFormatError(IngestError):
    """The format of a source could not be detected, or `--format` names no known format."""


def where(path: object, line: int | None = None) -> str:
    """A location as `file:line` (or just `file`)."""
    return f"{path}:{line}" if line is not None else str(path)


@dataclass
class Problems:
    """Counts and describes bad input; `malformed` raises in strict mode."""

    strict: bool = False
    max_messages: int = 200
    counts: Counter[str] = field(default_factory=Counter)
    messages: list[str] = field(default_factory=list)
    site: Counter[tuple[str, str]] = field(default_factory=Counter)
    site_first: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def malformed(self, at: str, why: str, fix: str = "") -> None:
        """Report a record that cannot be read; it is skipped (strict mode raises)."""
        if self.strict:
            raise MalformedRecordError(at, why, fix)
        self._add(MALFORMED, f"{at}: {why}; skipped.{' ' + fix if fix else ''}")

    def note(self, kind: str, at: str, what: str) -> None:
        """Count a recoverable oddity of `kind` (one of KINDS) with a description."""
        self._add(kind, f"{at}: {what}")

    def site_note(self, action: str, reason: str, at: str) -> None:
        """Count a page a site reader skipped, merged, split or retitled, and why."""
        self.site[(action, reason)] += 1
        first = self.site_first.setdefault((action, reason), [])
        if len(first) < SITE_EXAMPLES:
            first.append(at)

    def site_summary(self) -> dict[str, dict[str, object]]:
        """{action: {reason: count}} and the first locations of each, for the stats."""
        out: dict[str, dict[str, object]] = {}
        for (action, reason), n in sorted(self.site.items()):
            out.setdefault(action, {})[reason] = n
        if out:
            out["first"] = {f"{a}.{r}": list(at) for (a, r), at in sorted(self.site_first.items())}
        return out

    def _add(self, kind: str, message: str) -> None:
        self.counts[kind] += 1
        if len(self.messages) < self.max_messages:
            self.messages.append(message)
            log.debug("%s", message)
        elif len(self.messages) == self.max_messages:
            self.messages.append("... more problems not listed (see the counts in the stats)")
            log.warning(
                "more than %d input problems; further ones are only counted", self.max_messages
            )

    def summary(self) -> dict[str, int]:
        """Counts of every kind (zero included), for the stats."""
        return {k: int(self.counts.get(k, 0)) for k in KINDS}
