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

    def malformed(self, at: str, why: str, fix: str = "") -> None:
        """Report a record that cannot be read; it is skipped (strict mode raises)."""
        if self.strict:
            raise MalformedRecordError(at, why, fix)
        self._add(MALFORMED, f"{at}: {why}; skipped.{' ' + fix if fix else ''}")

    def note(self, kind: str, at: str, what: str) -> None:
        """Count a recoverable oddity of `kind` (one of KINDS) with a description."""
        self._add(kind, f"{at}: {what}")

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
