"""The search service: queries per second at 16 clients on loopback against in-process search.

Index: BM25 over the real paragraphs of ../shared/data/wiki (2WikiMultihopQA and HotpotQA
corpora); queries: the HotpotQA questions, k=5. "in process" runs `Searcher.search` from 16
threads sharing the searcher (what a worker that loads the index does); "service" runs the same
queries from 16 client threads, each with its own keep-alive `RemoteSearcher`, against
`hopforge serve-search`'s server in a child process. `same_hits` checks every result against the
in-process one; the last row sends 8 queries per request. Ratios are against in-process search
at 16 threads, in the same run.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CLIENTS = 16
BATCH = 8  # queries per request in the batched row (POST /search takes a list)


def _documents() -> list[Any]:
    from hopforge.corpus.records import Document

    docs = []
    wiki = json.loads((SHARED / "wiki" / "2wikimultihopqa_corpus.json").read_text("utf-8"))
    for i, p in enumerate(wiki):
        docs.append(Document(doc_id=f"2w{i}", title=p["title"], text=p["text"], source="2wiki"))
    hotpot = json.loads((SHARED / "wiki" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for i, (title, sents) in enumerate(hotpot.items()):
        docs.append(Document(doc_id=f"hp{i}", title=title, text=" ".join(sents), source="hp"))
    return docs


def _qps(search: Callable[[str], Any], queries: list[str], clients: int) -> tuple[float, list]:
    def work(chunk: list[str]) -> list:
        return [search(q) for q in chunk]

    chunks = [queries[i::clients] for i in range(clients)]
    t = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        parts = list(pool.map(work, chunks))
    seconds = time.perf_counter() - t
    results: list = [None] * len(queries)
    for i, part in enumerate(parts):
        results[i::clients] = part
    return len(queries) / seconds, results


def _serve(ready: Any) -> None:
    """Child process: build the searcher, serve it, report the port."""
    from hopforge.corpus.search import Searcher
    from hopforge.corpus.service import SearchService, make_server

    server = make_server(SearchService(Searcher.from_documents(_documents(), dense=False)),
                         "127.0.0.1", 0)
    ready.put(server.server_address[1])
    server.serve_forever()


def run(quick: bool = False) -> list[dict]:
    """One row per way of searching."""
    import multiprocessing

    from hopforge.corpus.remote import RemoteSearcher
    from hopforge.corpus.search import Searcher

    searcher = Searcher.from_documents(_documents(), dense=False)
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    queries = [r["question"] for r in rows] * (2 if quick else 10)
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Queue()
    child = ctx.Process(target=_serve, args=(ready,), daemon=True)
    child.start()
    url = f"http://127.0.0.1:{ready.get(timeout=300)}"
    local = threading.local()

    def remote_search(q: str) -> Any:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = RemoteSearcher(url)
        return client.search(q, k=5, mode="bm25")

    def remote_batch(qs: list[str]) -> Any:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = RemoteSearcher(url)
        return client.search_batch(qs, k=5, mode="bm25")

    out: list[dict] = []
    try:
        one, truth = _qps(lambda q: searcher.search(q, k=5, mode="bm25"), queries, 1)
        many, _ = _qps(lambda q: searcher.search(q, k=5, mode="bm25"), queries, CLIENTS)
        served, got = _qps(remote_search, queries, CLIENTS)
        served1, got1 = _qps(remote_search, queries[: len(queries) // 4], 1)
        groups = [queries[i : i + BATCH] for i in range(0, len(queries), BATCH)]
        batched, got_groups = _qps(remote_batch, groups, CLIENTS)
    finally:
        child.terminate()
        child.join()
    common = {"passages": len(searcher.passages), "queries": len(queries)}
    same = sum(g == t for g, t in zip(got, truth)) / len(truth)
    same1 = sum(g == t for g, t in zip(got1, truth)) / len(got1)
    out.append({**common, "way": "in process, 1 thread", "clients": 1, "queries_per_s": one,
                "vs_in_process_16": one / many, "same_hits": 1.0})
    out.append({**common, "way": "in process, 16 threads", "clients": CLIENTS,
                "queries_per_s": many, "vs_in_process_16": 1.0, "same_hits": 1.0})
    out.append({**common, "way": "service on loopback, 1 client", "clients": 1,
                "queries_per_s": served1, "vs_in_process_16": served1 / many, "same_hits": same1})
    out.append({**common, "way": "service on loopback, 16 clients", "clients": CLIENTS,
                "queries_per_s": served, "vs_in_process_16": served / many, "same_hits": same})
    got_b = [hits for group in got_groups for hits in group]
    batched *= len(queries) / len(groups)
    out.append({**common, "way": f"service, 16 clients, {BATCH} queries per request",
                "clients": CLIENTS, "queries_per_s": batched, "vs_in_process_16": batched / many,
                "same_hits": sum(g == t for g, t in zip(got_b, truth)) / len(truth)})
    return out
