"""The search service on a real loopback server against the same searcher in process."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.remote import RemoteSearcher
from hopforge.corpus.search import Searcher
from hopforge.corpus.service import SearchService, make_server
from hopforge.corpus.tools import ToolBox
from hopforge.synth.records import Question
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

QUERIES = ["volcano in the north", "who founded the harbour town", "river", "zzzz qqqq",
           "Mount Fendle"]


@pytest.fixture(scope="module")
def served(agent_searcher: Searcher) -> Iterator[str]:
    """The URL of a search service over the tiny corpus, on a free loopback port."""
    service = SearchService(agent_searcher)
    server = make_server(service, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()
    service.close()


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
    from hopforge.flows.build.adapters import open_search
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
