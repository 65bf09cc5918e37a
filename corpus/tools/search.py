"""`search(query, k)`: the hybrid BM25 + dense search over the collection."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.tools.base import Box, Tool, ToolResult, ToolSettings, failure, normalize_text


class Search(Tool):
    """Lists doc_id, title and snippet of each hit, best first."""

    name = "search"
    query = "query"
    typed = ("query",)
    empty_text = "(empty reply)"
    description = ("Search the document collection. Returns up to k documents, best first, each "
                   "with its doc_id, title and a snippet. Use the doc_id with open or find.")
    optional = ("k",)

    def properties(self, settings: ToolSettings) -> dict[str, Any]:
        """`query`, and `k` capped at the toolbox's `max_k`."""
        return {
            "query": {"type": "string", "minLength": 1,
                      "description": "Keywords or a question, e.g. a name plus what you want to "
                                     "know."},
            "k": {"type": "integer", "minimum": 1, "maximum": settings.max_k,
                  "description": f"Number of results (1-{settings.max_k}, default "
                                 f"{settings.default_k})."}}

    def run(self, box: Box, arguments: dict[str, Any]) -> ToolResult:
        """The hits of the query in the toolbox's search mode."""
        query = arguments["query"]
        k = arguments.get("k")
        k = box.default_k if k is None else k
        try:
            hits = box.searcher.search(query, k=k, mode=box.mode)
        except HopforgeError as exc:
            return failure(f"search failed: {exc}")
        quoted = json.dumps(query, ensure_ascii=False)
        if not hits:
            return ToolResult(text=f"No results for {quoted}. Try fewer or different words, or "
                                   "another spelling of a name.", ok=True)
        lines = [f"Results for {quoted}:"]
        for h in hits:
            lines.append(f"{h.rank}. [doc_id: {h.doc_id}] {h.title}")
            lines.append(f"   {h.snippet}")
        return ToolResult(text="\n".join(lines), ok=True, doc_ids=tuple(h.doc_id for h in hits))

    def key(self, arguments: Mapping[str, Any]) -> str:
        """Queries BM25 reads the same are the same search (k aside)."""
        return normalize_text(arguments.get("query"))
