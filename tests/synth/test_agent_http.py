"""The agent loop over HTTP: OpenAIChatModel against the local OpenAI-compatible test server."""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts, write_part
from hopforge.corpus.store import write_corpus
from hopforge.corpus.tools import TOOLS, ToolBox
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth import prompts
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ModelUnavailable, ModelUnreachable
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.trajectories.faults import TRUNCATION_NOTE, FaultConfig, FaultyTools
from hopforge.synth.trajectories.loop import run_agent
from hopforge.synth.trajectories.stage import BatchedTools, SearchBatcher, TrajectoryConfig

from tests.helpers.openai_server import OpenAITestServer, Reply

FAST = Backoff(base_s=0.01, cap_s=0.02)
DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")


def model(server: OpenAITestServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"backoff": FAST, "read_timeout": 5.0, "max_retries": 2}
    return OpenAIChatModel(server.base_url, "test-model", **(options | kwargs))


def solve(server: OpenAITestServer, question: Question, searcher: Any, **config: Any) -> Trajectory:
    cfg = TrajectoryConfig(**{"checkpoint_every": 0, **config})
    tools = FaultyTools(BatchedTools(ToolBox(searcher), SearchBatcher(searcher)), cfg.faults,
                        random.Random(0))

    async def go() -> Trajectory:
        async with model(server) as m:
            return await run_agent(question, m, tools, config=cfg, tid="t", sample=0, seed=3)

    return asyncio.run(go())


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def reader(request: dict[str, Any]) -> Reply:
    """A stateless teacher: search the question, open the first hit, then answer its title."""
    results = tool_messages(request)
    if not results:
        return Reply.tool_call("search", {"query": "Orvin Gallery founder"})
    if len(results) == 1:
        ids = DOC_ID.findall(results[0]["content"])
        return Reply.tool_call("open", {"doc_id": ids[0]}, content="Opening the first hit.")
    return Reply.tool_call("answer", {"text": "Hesper Quaile"})


def test_native_tool_calls_end_to_end(openai_server: OpenAITestServer, agent_questions: list,
                                      agent_searcher: Any) -> None:
    openai_server.enqueue(
        Reply.tool_call("search", {"query": "Orvin Gallery"}, "c1", content="Find the gallery."),
        Reply.tool_call("open", {"doc_id": "orvin-gallery"}, "c2").with_usage(300, 12),
        Reply.tool_call("answer", {"text": "Hesper Quaile"}, "c3"),
    )
    t = solve(openai_server, agent_questions[2], agent_searcher)
    assert t.termination == "answer" and t.final_answer == "Hesper Quaile"
    assert t.teacher == "openai:test-model" and t.turns[0].thought == "Find the gallery."
    assert "orvin-gallery" in t.turns[0].new_evidence and t.turns[1].tokens == 12
    assert t.usage.prompt_tokens >= 300
    first, second, third = openai_server.requests
    assert [s["function"]["name"] for s in first["tools"]] == [cls.name for cls in TOOLS]
    # the schemas once: in `tools`, not a second time in the system text
    assert first["messages"][0]["role"] == "system" and '"search"' not in first["messages"][0][
        "content"]
    assert first["messages"][1]["content"].startswith("Question: ")
    assert second["messages"][-2]["tool_calls"][0]["id"] == "c1"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "c1",
                                      "content": t.turns[0].result}
    assert "Orvin Gallery [doc_id: orvin-gallery] page 0" in tool_messages(third)[-1]["content"]


def test_malformed_calls_get_feedback(openai_server: OpenAITestServer, agent_questions: list,
                                      agent_searcher: Any) -> None:
    openai_server.enqueue(
        Reply.tool_call("search", '{"query": "Orvin'),  # arguments cut off mid-JSON
        Reply.text("The answer is probably Hesper Quaile."),
        Reply.tool_call("open", {"page": 0}),  # missing doc_id
        Reply.tool_call("answer", {"text": "Hesper Quaile"}),
    )
    t = solve(openai_server, agent_questions[2], agent_searcher)
    assert t.termination == "answer"
    assert [(x.schema_valid, x.args_valid) for x in t.turns] == [
        (False, False), (False, False), (True, False), (True, True)]
    assert '"arguments": "{\\"query\\": \\"Orvin"' in t.turns[0].raw and "not valid JSON" in t.turns[0].error
    second = openai_server.requests[1]["messages"]
    assert second[-1]["role"] == "user" and "could not be used" in second[-1]["content"]
    assert "missing required argument 'doc_id'" in tool_messages(openai_server.requests[3])[-1]["content"]


def test_text_format_calls(openai_server: OpenAITestServer, agent_questions: list,
                           agent_searcher: Any) -> None:
    openai_server.enqueue(
        Reply.text('Search first.\n<tool_call>{"name": "search", "arguments": {"query": "Quillon"}}</tool_call>'),
        Reply.text('```json\n{"name": "answer", "arguments": {"text": "Quillon"}}\n```'),
    )
    t = solve(openai_server, agent_questions[2], agent_searcher, call_format="text")
    assert t.final_answer == "Quillon" and t.turns[0].thought == "Search first."
    first, second = openai_server.requests
    assert "tools" not in first and "<tool_call>" in first["messages"][0]["content"]
    assert '"search"' in first["messages"][0]["content"]  # no native tools: the schemas in the text
    assert second["messages"][-1]["role"] == "user"
    assert second["messages"][-1]["content"].startswith("<tool_response>\nResults for")


@pytest.mark.parametrize("call_format", ["native", "text"])
def test_bare_json_calls_in_the_text_are_read(openai_server: OpenAITestServer,
                                              agent_questions: list, agent_searcher: Any,
                                              call_format: str) -> None:
    # What small served models write: a bare JSON object in the content, no tags, so the
    # server's tool parser leaves `tool_calls` empty.
    openai_server.enqueue(
        Reply.text('{"name": "search", "arguments": {"query": "Orvin Gallery founder"}}'),
        Reply.text('{"name": "open", "arguments": "{\\"doc_id\\": \\"doc123\\"}"}'),
        Reply.text('{"name": "browse", "arguments": {"url": "x"}}'),
        Reply.tool_call("open", {"doc_id": "orvin-gallery"}),
        Reply.text('I know it now. {"name": "answer", "arguments": {"text": "Hesper Quaile"}}'),
    )
    t = solve(openai_server, agent_questions[2], agent_searcher, call_format=call_format)
    assert t.termination == "answer" and t.final_answer == "Hesper Quaile"
    assert [x.call_format for x in t.turns] == ["json", "json", "json", "native", "json"]
    assert [(x.schema_valid, x.args_valid) for x in t.turns] == [
        (True, True), (True, True), (False, False), (True, True), (True, True)]
    assert t.turns[1].call is not None and t.turns[1].call.arguments == {"doc_id": "doc123"}
    assert "doc123" in t.turns[1].error  # an invented doc_id: the tool says so
    assert "browse" in t.turns[2].error and t.turns[4].thought == "I know it now."
    second = openai_server.requests[1]["messages"]
    assert second[-2] == {
        "role": "assistant",
        "content": '{"name": "search", "arguments": {"query": "Orvin Gallery founder"}}',
    }
    assert second[-1]["role"] == "user" and "Results for" in second[-1]["content"]


def test_server_errors_stop_the_run_and_never_reach_the_messages(
    openai_server: OpenAITestServer, agent_questions: list, agent_searcher: Any
) -> None:
    body = {"error": {"message": "CUDA out of memory SECRET", "type": "server_error"}}
    openai_server.enqueue(
        Reply.tool_call("search", {"query": "Quillon"}),
        Reply.error(503, body=body),  # retried by the client, then it works
        Reply.tool_call("search", {"query": "salt cod"}),
        *[Reply.error(500, body=body)] * 3,  # max_retries=2: three failures end the run
    )
    with pytest.raises(ModelUnavailable, match="kept failing"):
        solve(openai_server, agent_questions[2], agent_searcher)
    assert len(openai_server.requests) == 6
    assert not any("SECRET" in json.dumps(r["messages"]) for r in openai_server.requests)


def test_repeats_stop_the_trajectory(openai_server: OpenAITestServer, agent_questions: list,
                                     agent_searcher: Any) -> None:
    openai_server.set_handler(lambda r: Reply.tool_call("open", {"doc_id": "quillon"}))
    t = solve(openai_server, agent_questions[2], agent_searcher, repeat_limit=2)
    assert t.termination == "repetition" and len(t.turns) == 3
    assert [x.repeat_of for x in t.turns] == [None, 0, 1]


def _wander(r: dict[str, Any]) -> Reply:
    return Reply.tool_call("search", {"query": f"nothing number {len(r['messages'])}"})


def _context_filler(r: dict[str, Any]) -> Reply:
    if r["messages"][-1]["content"] == prompts.AGENT_FORCE_ANSWER:
        return Reply.tool_call("answer", {"text": "Quillon"})
    return Reply.tool_call("open", {"doc_id": ["quillon", "salt-cod", "calden"][len(r["messages"]) % 3]})


@pytest.mark.parametrize(
    ("handler", "config", "termination"),
    [
        (reader, {}, "answer"),
        (_wander, {"max_turns": 4, "no_progress_turns": 50}, "max_turns"),
        (_wander, {"no_progress_turns": 3}, "no_progress"),
        (_context_filler, {"context_tokens": 1800, "max_tokens": 100, "keep_results": 99,
                           "repeat_limit": 50}, "context_limit"),
        (lambda r: Reply.text("no idea"), {"max_invalid_turns": 1}, "error"),
        (lambda r: Reply.tool_call("find", {"doc_id": "quillon", "pattern": "x"}),
         {"repeat_limit": 1}, "repetition"),
    ],
)
def test_each_stop_rule_over_http(openai_server: OpenAITestServer, agent_questions: list,
                                  agent_searcher: Any, handler: Any, config: dict[str, Any],
                                  termination: str) -> None:
    openai_server.set_handler(handler)
    t = solve(openai_server, agent_questions[2], agent_searcher, **config)
    assert t.termination == termination, t.reason
    if termination == "context_limit":
        assert t.final_answer == "Quillon"
        assert [s["function"]["name"] for s in openai_server.requests[-1]["tools"]] == ["answer"]


@pytest.mark.parametrize("kind", ["empty", "timeout", "format", "partial"])
def test_each_fault_kind_reaches_the_teacher(openai_server: OpenAITestServer, kind: str,
                                             agent_questions: list, agent_searcher: Any) -> None:
    openai_server.enqueue(Reply.tool_call("search", {"query": "Quillon salt cod", "k": 6}),
                          Reply.tool_call("answer", {"text": "Quillon"}))
    faults = FaultConfig(**{kind: 1.0}, timeout_delay_s=0.01)
    t = solve(openai_server, agent_questions[2], agent_searcher, faults=faults)
    assert t.turns[0].fault is not None and t.turns[0].fault.kind == kind
    shown = tool_messages(openai_server.requests[1])[-1]["content"]
    assert shown == t.turns[0].result
    expected = {"empty": lambda s: s == "(empty reply)",
                "timeout": lambda s: "timed out" in s,
                "format": lambda s: s.startswith('{"tool": "search"') or " | " in s,
                "partial": lambda s: s.endswith(TRUNCATION_NOTE)}
    assert expected[kind](shown)


def test_checkpoints_over_http(openai_server: OpenAITestServer, agent_questions: list,
                               agent_searcher: Any) -> None:
    state = {"goal": "find the founder", "facts": [{"fact": "The gallery is on Lake Orvin",
                                                    "source": "orvin-gallery"}],
             "open_constraints": ["founder"], "queries_tried": ["Orvin Gallery"]}

    def handler(r: dict[str, Any]) -> Reply:
        if "response_format" in r:
            return Reply.json(state)
        return Reply.tool_call("search", {"query": f"Orvin Gallery {len(r['messages'])}"})

    openai_server.set_handler(handler)
    t = solve(openai_server, agent_questions[2], agent_searcher, checkpoint_every=2, max_turns=5,
              no_progress_turns=50)
    assert [c.turn for c in t.checkpoints] == [1, 3]
    assert t.checkpoints[0].facts == (("The gallery is on Lake Orvin", "orvin-gallery"),)
    cp_request = next(r for r in openai_server.requests if "response_format" in r)
    assert cp_request["response_format"]["json_schema"]["name"] == "checkpoint"
    assert cp_request["messages"][-1]["content"] == prompts.AGENT_CHECKPOINT
    later = openai_server.requests[-1]["messages"][1]["content"]
    assert "Your checkpoint at turn 3" in later and "founder" in later


def test_an_unreachable_server_stops_the_run_and_a_rerun_finishes(
        tmp_path: Path, openai_server: OpenAITestServer, agent_documents: list,
        agent_questions: list) -> None:
    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, agent_documents)
    write_part(build.questions, 0, [q.to_row() for q in agent_questions])
    config = TrajectoryConfig(samples=1, concurrency=4, checkpoint_every=0, part_questions=3)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    nowhere = OpenAIChatModel(dead, "test-model", backoff=FAST, max_retries=1)
    with pytest.raises(ModelUnreachable, match="Could not reach"):
        run_trajectories_build(build, config, teacher=nowhere)
    assert list(read_parts(build.trajectories)) == []  # no failure per question was recorded
    openai_server.set_handler(reader)
    report = run_trajectories_build(build, config, teacher=model(openai_server))
    assert report["terminations"]["answer"] == 5 and report["terminations"]["error"] == 0
    assert len(list(read_parts(build.trajectories))) == 5


def test_build_runner_with_an_http_teacher(tmp_path: Path, openai_server: OpenAITestServer,
                                           agent_documents: list, agent_questions: list) -> None:
    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, agent_documents)
    write_part(build.questions, 0, [q.to_row() for q in agent_questions])
    openai_server.set_handler(lambda r: Reply.delay(0.05, reader(r)))
    config = TrajectoryConfig(samples=2, concurrency=8, checkpoint_every=0, part_questions=3)
    report = run_trajectories_build(build, config, teacher=model(openai_server, concurrency=8))
    rows = list(read_parts(build.trajectories))
    assert len(rows) == 10 and report["terminations"]["answer"] == 10
    assert {r["teacher"] for r in rows} == {"openai:test-model"}
    assert openai_server.max_in_flight > 1
    seeds = {r["tid"]: r["seed"] for r in rows}
    assert seeds["q0-s0"] != seeds["q0-s1"]
    assert {r["seed"] for r in openai_server.requests} == set(seeds.values())
