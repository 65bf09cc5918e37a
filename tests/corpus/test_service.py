"""The search service on a real loopback server against the same searcher in process."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.http_app import ServiceServer, make_app
from hopforge.corpus.remote import RemoteSearcher
from hopforge.corpus.search import Searcher
from hopforge.corpus.service import SearchService
from hopforge.corpus.tools import ToolBox
from hopforge.synth.records import Question
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

QUERIES = ["volcano in the north", "who founded the harbour town", "river", "zzzz qqqq",
           "Mount Fendle"]


def test_search_equals_in_process(served: str, agent_searcher: Searcher) -> None:
    remote = RemoteSearcher(served)
    assert remote.default_mode == agent_searcher.default_mode and not remote.has_dense
    for k in (1, 3, 10):
        assert remote.search_batch(QUERIES, k=k) == agent_searcher.search_batch(QUERIES, k=k)
    assert remote.search("harbour", k=2, mode="bm25") == agent_searcher.search("harbour", k=2,
                                                                               mode="bm25")
    remote.close()


def test_tools_equal_in_process(served: str, agent_searcher: Searcher) -> None:
    remote = RemoteSearcher(served)
    local, over_http = ToolBox(agent_searcher), ToolBox(remote)  # type: ignore[arg-type]
    doc_id, title = next((d.doc_id, d.title) for d in agent_searcher.documents.values())
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": q, "k": 4}) for q in QUERIES] + [
        ("open", {"doc_id": doc_id}), ("open", {"doc_id": doc_id, "page": 5}),
        ("find", {"doc_id": doc_id, "pattern": title.split()[0]}),
        ("open", {"doc_id": "no-such-doc"}), ("open", {"doc_id": title}),
        ("find", {"doc_id": f"[doc_id: {doc_id}]", "pattern": "x"}),
        ("search", {"query": ""}), ("answer", {"text": "42"})]
    for name, arguments in calls:
        assert over_http.call(name, arguments) == local.call(name, arguments), (name, arguments)
        served_row = remote.tool(name, arguments)
        want = local.call(name, arguments)
        assert (served_row["text"], served_row["ok"]) == (want.text, want.ok)
        assert tuple(served_row["doc_ids"]) == want.doc_ids
    remote.close()


def test_trajectories_through_the_service_equal_in_process(
        served: str, agent_searcher: Searcher, agent_questions: list[Question]) -> None:
    remote = RemoteSearcher(served)
    config = TrajectoryConfig(samples=1, concurrency=4)

    def run(searcher: Any) -> list[Any]:
        def factory(q: Question, sample: int, seed: int) -> Any:
            return ScriptedTeacher(q, searcher.documents, seed=seed,
                                   config=ScriptedConfig(early_answer=0.0))
        return asyncio.run(run_trajectories(agent_questions, searcher, factory, config=config))

    local, over_http = run(agent_searcher), run(remote)
    strip = [[(t.call, t.result) for t in tr.turns] for tr in local]
    assert [[(t.call, t.result) for t in tr.turns] for tr in over_http] == strip
    assert [t.final_answer for t in over_http] == [t.final_answer for t in local]
    remote.close()


def test_search_r1_retrieve_shape(served: str, agent_searcher: Searcher) -> None:
    body = {"queries": QUERIES[:2], "topk": 3, "return_scores": True}
    result = httpx.post(f"{served}/retrieve", json=body).json()["result"]
    assert len(result) == 2
    for query, items in zip(QUERIES[:2], result):
        hits = agent_searcher.search(query, k=3)
        assert [i["document"]["doc_id"] for i in items] == [h.doc_id for h in hits]
        assert [i["score"] for i in items] == [h.score for h in hits]
        for item, hit in zip(items, hits):
            title = agent_searcher.documents[hit.doc_id].title
            assert item["document"]["contents"].startswith(f'"{title}"\n')
            assert item["document"]["id"] == hit.passage_id
    plain = httpx.post(f"{served}/retrieve", json={"queries": ["river"]}).json()["result"]
    assert len(plain[0]) == 3 and "contents" in plain[0][0]  # Search-R1's default topk, no scores


def test_bad_requests_name_the_problem(served: str) -> None:
    r = httpx.post(f"{served}/search", json={"queries": "not a list"})
    assert r.status_code == 400 and "list of strings" in r.json()["error"]
    assert httpx.post(f"{served}/nowhere", json={}).status_code == 404
    r = httpx.post(f"{served}/retrieve", json={"queries": ["river"], "topk": 0})
    assert r.status_code == 400 and '"topk" must be an integer of 1 or more, got 0' in r.json()["error"]
    assert httpx.post(f"{served}/search", content=b"{oops").status_code == 400
    remote = RemoteSearcher(served)
    with pytest.raises(HopforgeError, match="answered /search with 400"):
        remote.search("river", k=0)
    remote.close()


def test_a_service_that_is_down_is_a_clear_error() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(HopforgeError, match=f"search service at {url}.*hopforge serve-search"):
        RemoteSearcher(url, timeout_s=2)


def test_build_file_tools_url_and_the_command(served: str, tmp_path: Any) -> None:
    from hopforge.flows.build.context import open_search
    from hopforge.flows.commands.cli import build_parser
    from hopforge.flows.config.build_file import ConfigError, parse_config

    doc = {"corpus": {"sources": ["builtin:jargon"]}, "tools": {"url": served}}
    config = parse_config(doc, base_dir=tmp_path, env={})
    assert config.tools.url == served and config.tables()["tools"] == {"url": served}
    with open_search(config) as remote:
        assert isinstance(remote, RemoteSearcher) and remote.search("river", k=1)
    assert open_search(parse_config({"corpus": doc["corpus"]}, base_dir=tmp_path, env={})) is None
    with pytest.raises(ConfigError, match=r"\[tools\] url = 'search-host:8900'"):
        parse_config({**doc, "tools": {"url": "search-host:8900"}}, base_dir=tmp_path, env={})
    args = build_parser().parse_args(["serve-search", "builds/x"])
    assert (args.host, args.port) == ("127.0.0.1", 8900)


def test_health_and_metrics_count_what_was_served(agent_searcher: Searcher) -> None:
    service = SearchService(agent_searcher)
    server = ServiceServer(make_app(service, max_pending=8)).start()
    try:
        health = httpx.get(f"{server.url}/health").json()
        assert health["ok"] and health["pending"] == 0 and health["max_pending"] == 8
        for _ in range(3):
            assert httpx.post(f"{server.url}/search", json={"queries": QUERIES}).status_code == 200
        assert httpx.post(f"{server.url}/tools/search", json={"query": "river"}).status_code == 200
        assert httpx.post(f"{server.url}/search", json={"queries": 3}).status_code == 400
        text = httpx.get(f"{server.url}/metrics").text
        assert 'hopforge_search_requests_total{route="search",status="200"} 3.0' in text
        assert 'hopforge_search_requests_total{route="search",status="400"} 1.0' in text
        assert 'hopforge_search_requests_total{route="tools/search",status="200"} 1.0' in text
        assert f"hopforge_search_queries_total {3 * len(QUERIES) + 1 + 0.0}" in text
        assert 'hopforge_search_request_seconds_count{route="search"} 4.0' in text
        assert "hopforge_search_overloaded_total 0.0" in text
    finally:
        server.stop()
        service.close()


def test_a_full_queue_answers_503_with_retry_after(agent_searcher: Searcher) -> None:
    """Two requests in hand at most: of 12 sent at once, the rest are refused, none lost."""
    service = SearchService(agent_searcher)
    server = ServiceServer(make_app(service, threads=1, max_pending=2)).start()
    heavy = {"queries": QUERIES * 400, "k": 10, "mode": "bm25"}  # 2,000 queries: ~0.1 s or more

    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            return await asyncio.gather(*(client.post("/search", json=heavy) for _ in range(12)))

    try:
        answers = asyncio.run(burst())
        codes = [r.status_code for r in answers]
        refused = [r for r in answers if r.status_code == 503]
        assert set(codes) == {200, 503} and codes.count(200) >= 2, codes
        for r in refused:
            assert r.headers["Retry-After"] == "1"
            assert "max_pending=2" in r.json()["error"] and "replica" in r.json()["error"]
        for r in answers:
            if r.status_code == 200:
                assert len(r.json()["hits"]) == len(heavy["queries"])
        text = httpx.get(f"{server.url}/metrics").text
        assert f"hopforge_search_overloaded_total {float(len(refused))}" in text
        assert httpx.get(f"{server.url}/health").json()["pending"] == 0
    finally:
        server.stop()
        service.close()


def test_serve_search_command_serves_and_stops_on_sigterm(tiny_corpus_path: Any,
                                                          tmp_path: Any) -> None:
    import signal
    import subprocess
    import sys

    from tests.helpers.tiny import HOPFORGE, tiny_cli_index

    hopforge = [sys.executable, *HOPFORGE]
    build = tmp_path / "b"
    env = tiny_cli_index(tiny_corpus_path, build)
    with subprocess.Popen([*hopforge, "serve-search", str(build), "--port", "0"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            assert line.startswith("serving "), line
            url = line.rsplit(" on ", 1)[1].strip()
            hits = httpx.post(f"{url}/tools/search", json={"query": "river", "k": 2}).json()
            assert hits["ok"] and hits["doc_ids"]
            proc.send_signal(signal.SIGTERM)
            # uvicorn shuts down gracefully, then re-raises the signal: the status tells it
            assert proc.wait(timeout=30) == -signal.SIGTERM
            assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
        finally:
            if proc.poll() is None:
                proc.kill()
