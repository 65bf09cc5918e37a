"""`RemoteSearcher`: a search service (`hopforge serve-search`) used where a `Searcher` is.

It has the interface the tools and stages use (`search`, `search_batch`, `documents`,
`has_dense`, `default_mode`), so a `ToolBox` over it gives the same results as over the index
loaded in process. Documents are fetched when first read and kept. A service that cannot be
reached, or answers with an error, raises `HopforgeError` naming the URL and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Self

import httpx
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Document, Hit


class RemoteDocuments(Mapping[str, Document]):
    """The service's documents by doc_id, fetched on first use and cached."""

    def __init__(self, remote: RemoteSearcher, count: int) -> None:
        self._remote, self._count = remote, count
        self._cache: dict[str, Document | None] = {}

    def _fetch(self, doc_id: str) -> Document | None:
        if doc_id not in self._cache:
            row = self._remote.post("/documents", {"doc_ids": [doc_id]})["documents"][0]
            self._cache[doc_id] = Document.from_row(row) if row is not None else None
        return self._cache[doc_id]

    def __getitem__(self, doc_id: str) -> Document:
        doc = self._fetch(doc_id) if isinstance(doc_id, str) else None
        if doc is None:
            raise KeyError(doc_id)
        return doc

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self._fetch(doc_id) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._remote.get("/doc_ids")["doc_ids"])

    def __len__(self) -> int:
        return self._count

    def doc_ids_by_title(self, title: str) -> list[str]:
        """The doc_ids whose title is `title` (case-insensitive), asked of the service."""
        return list(self._remote.post("/titles", {"title": title})["doc_ids"])


class RemoteSearcher:
    """Search through a running search service at `url` (e.g. http://search-host:8900)."""

    def __init__(self, url: str, *, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._client = httpx.Client(base_url=self.url, timeout=timeout_s,
                                    limits=httpx.Limits(max_connections=64))
        try:
            info = self.get("/health")
        except HopforgeError:
            self._client.close()
            raise
        self.has_dense: bool = bool(info["dense"])
        self.default_mode: str = str(info["default_mode"])
        self.passages_count = int(info["passages"])
        self.documents: Mapping[str, Document] = RemoteDocuments(self, int(info["documents"]))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        try:
            response = self._client.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise HopforgeError(
                f"Could not reach the search service at {self.url} ({type(exc).__name__}: "
                f"{exc}). Start it with `hopforge serve-search BUILD --port PORT` on that host, "
                "or remove [tools] url from the build file to load the index in this process."
            ) from exc
        try:
            payload: dict[str, Any] = response.json()
        except ValueError:
            payload = {"error": response.text[:200]}
        if response.status_code != 200:
            raise HopforgeError(f"the search service at {self.url} answered {path} with "
                                f"{response.status_code}: {payload.get('error', payload)}")
        return payload

    def get(self, path: str) -> dict[str, Any]:
        return self._request("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", path, body)

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> list[Hit]:
        """The k best documents for `query`, as the service's `Searcher.search` gives them."""
        return self.search_batch([query], k=k, mode=mode)[0]

    def search_batch(self, queries: list[str], k: int = 10, mode: str = "hybrid") -> list[list[Hit]]:
        """`search` for many queries in one request."""
        if not queries:
            return []
        rows = self.post("/search", {"queries": list(queries), "k": k, "mode": mode})["hits"]
        return [[Hit(**h) for h in row] for row in rows]

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call one of the service's tools: {"text", "ok", "error", "doc_ids"}."""
        return self.post(f"/tools/{name}", arguments)
