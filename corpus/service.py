"""The search service: one process holds the index and serves search, open and find over HTTP.

`hopforge serve-search BUILD` runs `serve` on a loaded `Searcher`. Routes (JSON in and out):

- `GET /health`: passages, documents, whether the index has vectors, the default mode.
- `POST /search {"queries": [...], "k": 10, "mode": "hybrid"}`: `{"hits": [[Hit row, ...], ...]}`.
- `POST /tools/NAME {arguments}` for each tool of `corpus.tools.TOOLS`: the agent's tool result
  `{"text", "ok", "error", "doc_ids"}`, exactly as `ToolBox.call` gives it in process.
- `POST /documents {"doc_ids": [...]}`: `{"documents": [Document row or null, ...]}`;
  `POST /titles {"title": ...}`: the doc_ids with that title; `GET /doc_ids`.
- `POST /retrieve {"queries": [...], "topk": 3, "return_scores": true}`: Search-R1's retrieval
  server shape, `{"result": [[{"document": {"id", "contents"}, "score"}, ...], ...]}` with
  contents `"Title"\\npassage text`.

- `GET /metrics`: Prometheus metrics (corpus/http_app.py).

This module is what the routes do; corpus/http_app.py serves it with Starlette on uvicorn, with
a bounded queue (503 when full). BM25 searches run in the request's worker thread; searches that
embed their queries (dense, hybrid) are gathered into `search_batch` calls by one batcher
thread, so that concurrent requests share one embedding batch. The client is `RemoteSearcher`
(corpus/remote.py).
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import Any, cast

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Hit
from hopforge.corpus.search import Searcher
from hopforge.corpus.tools import DEFAULT_K, MAX_K, PAGE_CHARS, ToolBox

log = logging.getLogger(__name__)

DEFAULT_PORT = 8900
MAX_BATCH = 64
MAX_BODY = 16 * 2**20
SEARCH_R1_TOPK = 3  # Search-R1's retrieval server default when a request gives no topk


class _Batcher:
    """Runs queued searches in `search_batch` calls on one thread, whatever arrives together."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self._queue: queue.Queue[tuple[list[str], int, str, Future[list[list[Hit]]]] | None] = (
            queue.Queue())
        self._thread = threading.Thread(target=self._loop, name="search-batcher", daemon=True)
        self._thread.start()

    def search(self, queries: list[str], k: int, mode: str) -> list[list[Hit]]:
        future: Future[list[list[Hit]]] = Future()
        self._queue.put((queries, k, mode, future))
        return future.result()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                batch.append(nxt)
            groups: dict[tuple[int, str], list[int]] = {}
            for i, (_, k, mode, _) in enumerate(batch):
                groups.setdefault((k, mode), []).append(i)
            for (k, mode), idx in groups.items():
                queries = [q for i in idx for q in batch[i][0]]
                try:
                    hits = self.searcher.search_batch(queries, k=k, mode=mode)
                except Exception as exc:  # noqa: BLE001 - each waiting request gets the error
                    for i in idx:
                        batch[i][3].set_exception(exc)
                    continue
                at = 0
                for i in idx:
                    n = len(batch[i][0])
                    batch[i][3].set_result(hits[at : at + n])
                    at += n


class _ThroughBatcher:
    """The part of a `Searcher` a `ToolBox` uses, with searches going through the batcher."""

    def __init__(self, searcher: Searcher, batcher: _Batcher) -> None:
        self.documents = searcher.documents
        self._searcher, self._batcher = searcher, batcher

    def search_batch(self, queries: list[str], k: int, mode: str) -> list[list[Hit]]:
        """Searches that embed queries go through the batcher; BM25 runs in the calling thread."""
        if mode == "bm25" or not self._searcher.has_dense:
            return self._searcher.search_batch(queries, k=k, mode=mode)
        return self._batcher.search(queries, k, mode)

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> list[Hit]:
        return self.search_batch([query], k, mode)[0]


class SearchService:
    """What the routes do, over one searcher and its toolbox (no HTTP in here)."""

    def __init__(self, searcher: Searcher, *, mode: str = "", page_chars: int = PAGE_CHARS,
                 default_k: int = DEFAULT_K, max_k: int = MAX_K) -> None:
        self.searcher = searcher
        self.mode = mode or searcher.default_mode
        self._batcher = _Batcher(searcher)
        self._search = _ThroughBatcher(searcher, self._batcher)
        self.toolbox = ToolBox(cast(Searcher, self._search),
                               page_chars=page_chars, default_k=default_k, max_k=max_k,
                               mode=self.mode)
        self._passages: dict[str, Any] | None = None
        self._titles: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._batcher.close()

    def health(self) -> dict[str, Any]:
        return {"ok": True, "documents": len(self.searcher.documents),
                "passages": len(self.searcher.passages), "dense": self.searcher.has_dense,
                "default_mode": self.searcher.default_mode, "tool_mode": self.mode}

    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        queries = body.get("queries")
        if queries is None and isinstance(body.get("query"), str):
            queries = [body["query"]]
        if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
            raise HopforgeError('/search needs "queries": a list of strings')
        k = _int(body.get("k", 10), "k")
        mode = body.get("mode") or self.searcher.default_mode
        hits = self._search.search_batch(queries, k, str(mode))
        return {"hits": [[h.to_row() for h in row] for row in hits]}

    def tool(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        result = self.toolbox.call(name, body)
        return {"text": result.text, "ok": result.ok, "error": result.error,
                "doc_ids": list(result.doc_ids)}

    def documents(self, body: dict[str, Any]) -> dict[str, Any]:
        ids = body.get("doc_ids")
        if not isinstance(ids, list):
            raise HopforgeError('/documents needs "doc_ids": a list of doc_id strings')
        docs = self.searcher.documents
        return {"documents": [docs[i].to_row() if isinstance(i, str) and i in docs else None
                              for i in ids]}

    def titles(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._titles is None:
                self._titles = {}
                for d in self.searcher.documents.values():
                    self._titles.setdefault(d.title.casefold(), []).append(d.doc_id)
        return {"doc_ids": self._titles.get(str(body.get("title", "")).casefold(), [])}

    def doc_ids(self) -> dict[str, Any]:
        return {"doc_ids": list(self.searcher.documents)}

    def retrieve(self, body: dict[str, Any]) -> dict[str, Any]:
        """Search-R1's `/retrieve`: the best passages of each query, as corpus rows."""
        queries = body.get("queries")
        if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
            raise HopforgeError('/retrieve needs "queries": a list of strings')
        given = body.get("topk")  # only a missing topk takes the default; 0 is an error
        topk = SEARCH_R1_TOPK if given is None else _int(given, "topk")
        with self._lock:
            if self._passages is None:
                self._passages = {p.passage_id: p for p in self.searcher.passages}
        hits = self._search.search_batch(queries, topk, self.searcher.default_mode)
        docs = self.searcher.documents
        result = []
        for row in hits:
            items = []
            for h in row:
                p = self._passages[h.passage_id]
                doc = {"id": h.passage_id, "doc_id": h.doc_id,
                       "contents": f'"{docs[h.doc_id].title}"\n{p.text}'}
                items.append({"document": doc, "score": h.score} if body.get("return_scores")
                             else doc)
            result.append(items)
        return {"result": result}


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HopforgeError(f'"{name}" must be an integer of 1 or more, got {value!r}')
    return value
