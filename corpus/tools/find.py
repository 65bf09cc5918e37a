"""`find(doc_id, pattern)`: the lines of a document that contain a pattern, with their pages."""

from __future__ import annotations

import bisect
import json

from hopforge.corpus.matching import INFLECTIONS_TEXT, pattern_regex
from hopforge.corpus.records import Document
from hopforge.corpus.tools.base import Box, DocumentTool, ToolResult

MAX_FIND_LINES = 20
FIND_CONTEXT_CHARS = 160


class Find(DocumentTool):
    """Matching lines (case-insensitive, literal, with inflections), each with its position."""

    name = "find"
    argument = "pattern"
    empty_text = "(empty reply)"
    description = (
        "Find the lines of a document that contain a text pattern (case-insensitive, literal, "
        f"{INFLECTIONS_TEXT}). Returns each matching line with its line number, character "
        "offset and page.")
    argument_help = "Text to look for, e.g. a name or a year."

    def look(self, box: Box, doc: Document, pattern: str) -> ToolResult:
        """Up to MAX_FIND_LINES matching lines, and how many matched in all."""
        doc_id = doc.doc_id
        starts = box.page_starts(doc_id)
        regex = pattern_regex(pattern)
        matches: list[str] = []
        line_start = total = 0
        for number, line in enumerate(doc.text.split("\n"), start=1):
            hits = [m.start() for m in regex.finditer(line)]
            if hits:
                total += 1
                if len(matches) < MAX_FIND_LINES:
                    pos = line_start + hits[0]
                    page = bisect.bisect_right(starts, pos) - 1
                    more = f", {len(hits)} matches" if len(hits) > 1 else ""
                    matches.append(f"[line {number}, char {pos}, page {page}{more}] "
                                   f"{around(line, hits[0], len(pattern))}")
            line_start += len(line) + 1
        quoted = json.dumps(pattern, ensure_ascii=False)
        if not matches:
            return ToolResult(text=f"No match for {quoted} in {doc.title} [doc_id: {doc_id}]. "
                                   "Try a shorter pattern or another word form, or open the "
                                   "document.", ok=True, doc_ids=(doc_id,))
        shown = f" (showing the first {len(matches)})" if total > len(matches) else ""
        head = f"{total} line(s) match {quoted} in {doc.title} [doc_id: {doc_id}]{shown}:"
        return ToolResult(text="\n".join([head, *matches]), ok=True, doc_ids=(doc_id,))


def around(line: str, pos: int, length: int) -> str:
    """The line itself when short, else about FIND_CONTEXT_CHARS characters around a match."""
    line = line.strip("\r")
    if len(line) <= FIND_CONTEXT_CHARS:
        return line.strip()
    half = (FIND_CONTEXT_CHARS - length) // 2
    start = max(0, pos - half)
    end = min(len(line), start + FIND_CONTEXT_CHARS)
    start = max(0, end - FIND_CONTEXT_CHARS)
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")
