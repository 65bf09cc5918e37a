"""`open(doc_id, page)`: one page of a document, with a header and a footer that say where."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopforge.corpus.tools.base import (
    DOC_ID_PROPERTY,
    Box,
    Tool,
    ToolResult,
    ToolSettings,
    doc_argument,
    failure,
)

END_OF_DOCUMENT = "(end of document)"  # the footer of a document's last page
NAMED = "Entries named here: "  # the line before the footer: the page's names of other entries


def named_line(result: str) -> str:
    """What an `open` result lists after NAMED ("" when it lists nothing)."""
    return next((ln.removeprefix(NAMED) for ln in result.splitlines() if ln.startswith(NAMED)),
                "")


class Open(Tool):
    """Reads a document one page at a time; pages are numbered from 0."""

    name = "open"
    reads = True
    empty_text = "(empty page)"
    description = ("Read a document by doc_id, one page at a time. Pages are numbered from 0; "
                   "the reply says how many pages the document has, and lists the names on "
                   "the page of other documents (\"Entries named here\"; \"name → title\" "
                   "where the document's title is another).")
    optional = ("page",)

    def properties(self, settings: ToolSettings) -> dict[str, Any]:
        """`doc_id`, and the page to read."""
        return {"doc_id": DOC_ID_PROPERTY,
                "page": {"type": "integer", "minimum": 0,
                         "description": "Page number, from 0 (default 0)."}}

    def run(self, box: Box, arguments: dict[str, Any]) -> ToolResult:
        """The page, headed by title, doc_id and page range, footed by the next call to make."""
        doc_id, page = arguments["doc_id"], arguments.get("page", 0)
        if doc_id not in box.searcher.documents:
            return box.unknown_doc(self.name, doc_id)
        doc = box.searcher.documents[doc_id]
        pages = box.pages(doc_id)
        if page >= len(pages):
            return failure(f"open: page {page} is out of range; {doc.title} [doc_id: {doc_id}] "
                           f"has {len(pages)} page(s), numbered 0 to {len(pages) - 1}")
        footer = (f"(more: open doc_id={doc_id} page={page + 1})" if page + 1 < len(pages)
                  else END_OF_DOCUMENT)
        head = f"{doc.title} [doc_id: {doc_id}] page {page} (pages 0-{len(pages) - 1})"
        named = box.entries_named(doc_id, page)
        if named:  # "; " between names: a title may hold a comma
            footer = f"{NAMED}{'; '.join(named)}\n{footer}"
        text = f"{head}\n\n{pages[page].strip()}\n\n{footer}"
        return ToolResult(text=text, ok=True, doc_ids=(doc_id,))

    def key(self, arguments: Mapping[str, Any]) -> str:
        """A page of a document."""
        return f"{doc_argument(arguments)}#{arguments.get('page') or 0}"

    def read_key(self, arguments: Mapping[str, Any]) -> str:
        """The page read."""
        return f"{doc_argument(arguments)}#page{arguments.get('page') or 0}"

    def shows(self, arguments: Mapping[str, Any], result: str, pattern: str) -> bool:
        """The page shows the pattern, or the whole document was read (page 0 is the last)."""
        return pattern in result.casefold() or (
            not arguments.get("page") and END_OF_DOCUMENT in result)
