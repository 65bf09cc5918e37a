"""Server and configuration failures stop a trajectories run; none of them becomes a record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes, read_parts, write_part
from hopforge.corpus.store import write_corpus
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth import prompts
from hopforge.synth.teacher.chat import ModelUnavailable
from hopforge.synth.teacher.errors import ModelRequestError
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.trajectories.stage import TrajectoryConfig

from tests.helpers.openai_server import CONTEXT_REFUSAL, OpenAITestServer, Reply

FAST = Backoff(base_s=0.01, cap_s=0.02)


def _model(server: OpenAITestServer, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"backoff": FAST, "read_timeout": 5.0, "max_retries": 1}
    return OpenAIChatModel(server.base_url, "test-model", **(options | kwargs))


def _build(tmp_path: Path, documents: list, questions: list) -> BuildDir:
    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, documents)
    write_part(build.questions, 0, [q.to_row() for q in questions])
    return build


def _question(request: dict[str, Any]) -> str:
    return str(request["messages"][1]["content"])


def _answer_at_once(request: dict[str, Any]) -> Reply:
    return Reply.tool_call("answer", {"text": "Quillon"})


def _journaled(build: BuildDir) -> list[str]:
    return [line for p in build.trajectories.glob(".part-*.journal.jsonl")
            for line in p.read_text().splitlines() if line.strip()]


def test_a_server_without_a_tool_parser_stops_at_once_and_writes_nothing(
    tmp_path: Path, agent_documents: list, agent_questions: list
) -> None:
    build = _build(tmp_path, agent_documents, agent_questions)
    config = TrajectoryConfig(checkpoint_every=0, concurrency=1, part_questions=2)
    with OpenAITestServer(auto_tool_choice=False) as server:
        server.set_handler(_answer_at_once)
        with pytest.raises(ModelRequestError) as info:
            run_trajectories_build(build, config, teacher=_model(server))
        message = str(info.value)
        assert "--enable-auto-tool-choice --tool-call-parser" in message
        assert '"auto" tool choice requires' in message and "--call-format text" in message
        assert len(server.requests) == 1  # the first such answer ends the run
        assert list(read_parts(build.trajectories)) == [] and _journaled(build) == []
        server.auto_tool_choice = True  # the server restarted with the flags
        report = run_trajectories_build(build, config, teacher=_model(server))
    assert report["terminations"]["answer"] == 5


def test_retries_exhausted_keep_finished_parts_and_a_rerun_redoes_the_rest(
    tmp_path: Path, openai_server: OpenAITestServer, agent_documents: list, agent_questions: list
) -> None:
    build = _build(tmp_path, agent_documents, agent_questions)
    config = TrajectoryConfig(checkpoint_every=0, concurrency=1, part_questions=1)
    broken = agent_questions[3].question

    def flaky(request: dict[str, Any]) -> Reply:
        return Reply.error(500) if broken in _question(request) else _answer_at_once(request)

    openai_server.set_handler(flaky)
    with pytest.raises(ModelUnavailable, match="kept failing"):
        run_trajectories_build(build, config, teacher=_model(openai_server))
    assert done_indexes(build.trajectories) == {0, 1, 2}
    rows = list(read_parts(build.trajectories))
    assert len(rows) == 3 and {r["termination"] for r in rows} == {"answer"}
    openai_server.reset()
    openai_server.set_handler(_answer_at_once)
    report = run_trajectories_build(build, config, teacher=_model(openai_server))
    asked = {_question(r) for r in openai_server.requests}
    assert asked == {f"Question: {q.question}" for q in agent_questions[3:]}
    assert report["terminations"]["answer"] == 5 and report["terminations"]["error"] == 0


def test_the_context_budget_comes_from_the_server(
    tmp_path: Path, agent_documents: list, agent_questions: list
) -> None:
    build = _build(tmp_path, agent_documents, agent_questions[:1])
    config = TrajectoryConfig(checkpoint_every=0, context_tokens=32768, max_tokens=256,
                              no_progress_turns=60, repeat_limit=60)

    def wander(request: dict[str, Any]) -> Reply:
        if len(request["tools"]) == 1:  # the forced final turn offers only `answer`
            return Reply.tool_call("answer", {"text": "Dorran Pell"})
        return Reply.tool_call("search", {"query": f"lighthouse {len(request['messages'])}"})

    with OpenAITestServer(max_model_len=2500) as server:
        server.set_handler(wander)
        report = run_trajectories_build(build, config, teacher=_model(server))
        statuses = [r.reply.status for r in server.recorded if r.method == "POST" and r.reply]
    (row,) = read_parts(build.trajectories)
    assert row["termination"] == "context_limit" and row["final_answer"] == "Dorran Pell"
    assert "of 2500 tokens" in row["reason"]
    assert set(statuses) == {200} and len(statuses) == len(row["turns"])
    assert report["terminations"]["context_limit"] == 1


def test_a_prompt_the_server_refuses_as_too_long_ends_in_a_forced_answer(
    tmp_path: Path, openai_server: OpenAITestServer, agent_documents: list, agent_questions: list
) -> None:
    build = _build(tmp_path, agent_documents, agent_questions[:1])
    refusal = {"error": {"message": CONTEXT_REFUSAL.format(
        limit=8192, total=9000, prompt=8500, completion=500), "code": 400}}
    openai_server.enqueue(
        Reply.tool_call("search", {"query": "Mount Fendle"}),
        Reply.error(400, body=refusal),
        Reply.tool_call("answer", {"text": "Dorran Pell"}),
    )
    config = TrajectoryConfig(checkpoint_every=0)
    run_trajectories_build(build, config, teacher=_model(openai_server))
    (row,) = read_parts(build.trajectories)
    assert row["termination"] == "context_limit" and row["final_answer"] == "Dorran Pell"
    assert "refused a prompt" in row["reason"]
    forced = openai_server.requests[2]
    assert [t["function"]["name"] for t in forced["tools"]] == ["answer"]
    assert forced["messages"][-1]["content"] == prompts.AGENT_FORCE_ANSWER
