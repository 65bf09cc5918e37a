"""`grep(doc_id, word)`: every line of a document that holds a word, listed page by page.

Where `find` gives the first lines that contain a phrase with their character offsets, `grep`
walks the pages `open` shows and lists each matching line under its page, numbered as the line
stands on that page, so the model knows which page to open for the context. The word matches as
`corpus.matching` says (whole word, case-insensitive, also plural or possessive).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hopforge.corpus.matching import INFLECTIONS_TEXT, pattern_regex
from hopforge.corpus.records import Document
from hopforge.corpus.tools.base import Box, DocumentTool, ToolResult, failure
from hopforge.corpus.tools.find import around

MAX_GREP_LINES = 30


class Grep(DocumentTool):
    """The lines of a document that hold one word, grouped under the page that shows them."""

    name = "grep"
    argument = "word"
    empty_text = "(empty reply)"
    description = (
        f"List every line of a document that contains a word (case-insensitive, {INFLECTIONS_TEXT}"
        "), page by page: each line with its page and its line number on that page. Use it to "
        "see which pages of a long document to open.")
    argument_help = "One word to look for, e.g. a surname or a year."

    def look(self, box: Box, doc: Document, word: str) -> ToolResult:
        """Up to MAX_GREP_LINES matching lines, in page order, and how many matched in all."""
        if len(word.split()) > 1:
            return failure(f"grep: {word!r} is several words; grep looks for one word, use "
                           "find for a phrase")
        regex = pattern_regex(word)
        shown: list[str] = []
        total = listed = pages_hit = 0
        for page, text in enumerate(box.pages(doc.doc_id)):
            hits = [(n, line, m.start()) for n, line in enumerate(text.split("\n"), start=1)
                    for m in [regex.search(line)] if m is not None]
            if not hits:
                continue
            total, pages_hit = total + len(hits), pages_hit + 1
            room = hits[:MAX_GREP_LINES - listed]
            if room:
                shown.append(f"page {page}:")
                shown += [f"  line {n}: {around(line, pos, len(word))}" for n, line, pos in room]
                listed += len(room)
        where = f"{doc.title} [doc_id: {doc.doc_id}]"
        quoted = json.dumps(word, ensure_ascii=False)
        if not total:
            return ToolResult(text=f"No line of {where} contains {quoted}.", ok=True,
                              doc_ids=(doc.doc_id,))
        cut = f" (showing the first {listed})" if listed < total else ""
        head = f"{total} line(s) on {pages_hit} page(s) of {where} contain {quoted}{cut}:"
        return ToolResult(text="\n".join([head, *shown]), ok=True, doc_ids=(doc.doc_id,))

    def shows(self, arguments: Mapping[str, Any], result: str, pattern: str) -> bool:
        """A clean grep checks the pattern when it looked for it or its lines show it."""
        return super().shows(arguments, result, pattern) or pattern in result.casefold()
