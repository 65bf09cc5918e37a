"""One-turn SFT rows against the prompts a model teacher was really sent (a local HTTP server)."""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from hopforge.corpus.tools import ToolBox
from hopforge.export.messages import turn_weights, without_tool_schemas
from hopforge.export.windows import WindowSettings, turn_windows
from hopforge.synth import prompts
from hopforge.synth.annotate import label_trajectory
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.trajectories.faults import FaultyTools
from hopforge.synth.trajectories.loop import run_agent
from hopforge.synth.trajectories.stage import BatchedTools, SearchBatcher, TrajectoryConfig

from tests.helpers.openai_server import OpenAITestServer, Reply

DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")
KEEP = 2
QUERIES = ("Orvin Gallery", "Tamsin Pell", "gallery founder", "canvas", "Hesper Quaile")


def teacher() -> Any:
    """Searches, opens each first hit, once opens an invented doc_id, then answers."""
    turns = [0]

    def answer(request: dict[str, Any]) -> Reply:
        last = request["messages"][-1]
        if last["role"] == "user" and last["content"] == prompts.AGENT_CHECKPOINT:
            state = {"goal": "find the founder", "facts": [], "open_constraints": [],
                     "queries_tried": []}
            return Reply.text(json.dumps(state))
        turns[0] += 1
        return move(turns[0] - 1, [m for m in request["messages"] if m["role"] == "tool"])

    return answer


def move(turn: int, results: list[dict[str, Any]]) -> Reply:
    """The call of one turn."""
    if turn >= 2 * len(QUERIES) + 1:
        return Reply.tool_call("answer", {"text": "Hesper Quaile"}, content="Done.")
    if turn == 5:
        return Reply.tool_call("open", {"doc_id": "doc123"}, content="Maybe this one.")
    if results and DOC_ID.findall(results[-1]["content"]) and turn % 2:
        doc = DOC_ID.findall(results[-1]["content"])[0]
        return Reply.tool_call("open", {"doc_id": doc}, content=f"Opening {doc}.")
    return Reply.tool_call("search", {"query": QUERIES[turn // 2 % len(QUERIES)]},
                           content="Searching.")


def _solve(server: OpenAITestServer, question: Question, searcher: Any) -> Trajectory:
    cfg = TrajectoryConfig(checkpoint_every=4, keep_results=KEEP, max_turns=20)
    tools = FaultyTools(BatchedTools(ToolBox(searcher), SearchBatcher(searcher)), cfg.faults,
                        random.Random(0))

    async def go() -> Trajectory:
        options: dict[str, Any] = {"backoff": Backoff(base_s=0.01, cap_s=0.02),
                                   "read_timeout": 5.0, "max_retries": 2}
        async with OpenAIChatModel(server.base_url, "test-model", **options) as m:
            return await run_agent(question, m, tools, config=cfg, tid="t", sample=0, seed=3)

    return asyncio.run(go())


def _plain(messages: list[dict[str, Any]]) -> list[tuple[str, str, list[tuple[str, Any]]]]:
    """Role, content and calls (name, decoded arguments) of each message; nothing else."""
    out = []
    for m in messages:
        calls = [(c["function"]["name"], c["function"]["arguments"] if isinstance(
            c["function"]["arguments"], dict) else json.loads(c["function"]["arguments"]))
                 for c in m.get("tool_calls") or ()]
        content = m.get("content") or ""
        if m["role"] == "system":
            content = without_tool_schemas(content)
        out.append((m["role"], content, calls))
    return out


def test_each_one_turn_row_is_the_prompt_the_teacher_was_sent(
    openai_server: OpenAITestServer, agent_questions: list, agent_searcher: Any
) -> None:
    openai_server.set_handler(teacher())
    question = agent_questions[2]
    traj = label_trajectory(_solve(openai_server, question, agent_searcher), question)
    assert traj.termination == "answer" and traj.checkpoints
    sent = [r for r in openai_server.requests
            if r["messages"][-1].get("content") != prompts.AGENT_CHECKPOINT]
    assert len(sent) == len(traj.turns)
    invented = next(t for t in traj.turns if t.call and t.call.arguments.get("doc_id") == "doc123")
    assert invented.label == "off_track"
    weights = turn_weights(traj)
    assert weights[invented.index] == 0 and sum(weights) > 5
    rows = turn_windows(traj, question.question, weights, [],
                        WindowSettings(keep_results=KEEP, max_seq_tokens=32_768))
    assert {w.trained[0] for w in rows} == {i for i, w in enumerate(weights) if w}
    elided = 0
    for w in rows:
        request = sent[w.trained[0]]
        got = _plain(list(w.messages))
        assert got[:-1] == _plain(request["messages"])  # the prompt, message for message
        assert got[-1][2][0][0] == traj.turns[w.trained[0]].call.name  # type: ignore[union-attr]
        elided += sum(m["content"].startswith("[result of turn ") for m in request["messages"]
                      if m["role"] == "tool")
    assert elided > 0
