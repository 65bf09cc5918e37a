"""How a pattern matches a text, for every part that tests it: the `find` tool, the question
checks and the scripted teacher.

A pattern matches as whole words, case-insensitively: no letter or digit right before it, and
right after it either nothing of a word or one of the inflections in `INFLECTIONS` (plural and
possessive). So "rally" does not match "generally", "india" does not match "Indian", and
"operating system" matches "operating systems" and "operating system's".
"""

from __future__ import annotations

import re
from functools import lru_cache

INFLECTIONS: tuple[str, ...] = ("s", "es", "'s", "’s")
INFLECTIONS_TEXT = "whole words, also as plural (-s, -es) or possessive ('s)"


@lru_cache(maxsize=65536)
def pattern_regex(pattern: str) -> re.Pattern[str]:
    """The compiled whole-word, inflection-tolerant, case-insensitive regex of `pattern`."""
    body = re.escape(" ".join(pattern.split()))
    body = body.replace(r"\ ", r"\s+")
    before = r"(?<!\w)" if pattern[:1].isalnum() or pattern[:1] == "_" else ""
    after = r"(?:s|es|'s|’s)?(?!\w)" if pattern[-1:].isalnum() else ""
    return re.compile(before + body + after, re.IGNORECASE)


def matches(text: str, pattern: str) -> bool:
    """Whether `pattern` occurs in `text` under the rule above."""
    pattern = pattern.strip()
    return bool(pattern) and pattern_regex(pattern).search(text) is not None


def first_match(text: str, pattern: str) -> int:
    """The position of the first match of `pattern` in `text`, or -1."""
    pattern = pattern.strip()
    m = pattern_regex(pattern).search(text) if pattern else None
    return m.start() if m else -1
