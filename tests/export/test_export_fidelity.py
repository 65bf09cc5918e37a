"""One-turn SFT rows against the prompts a model teacher was really sent (a local HTTP server
logging every request), compared after real chat templates (Qwen2.5's and Qwen3's, from TRL)."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import trl
from hopforge.corpus.tools import ToolBox
from hopforge.export.messages import tools_from_prompt, turn_weights
from hopforge.export.sft import context_only
from hopforge.export.windows import WindowSettings, turn_windows
from hopforge.synth import prompts
from hopforge.synth.annotate import label_trajectory
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.trajectories.faults import FaultyTools
from hopforge.synth.trajectories.loop import run_agent
from hopforge.synth.trajectories.stage import BatchedTools, SearchBatcher, TrajectoryConfig
from transformers.utils.chat_template_utils import render_jinja_template

from tests.helpers.openai_server import OpenAITestServer, Reply

DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")
DOC_LIST = re.compile(r"; it showed (.*); to see it again")
TITLED = re.compile(r"\S+ \(.+\)")
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
        reply = move(turns[0] - 1, [m for m in request["messages"] if m["role"] == "tool"])
        assert reply.message is not None
        reply.message["reasoning_content"] = f"Turn {turns[0] - 1}: what the results show."
        return reply

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


def _solve(server: OpenAITestServer, question: Question, searcher: Any
           ) -> tuple[Trajectory, list[dict[str, Any]]]:
    cfg = TrajectoryConfig(checkpoint_every=4, keep_results=KEEP, max_turns=20, reasoning=True)
    tools = FaultyTools(BatchedTools(ToolBox(searcher), SearchBatcher(searcher)), cfg.faults,
                        random.Random(0))

    async def go() -> Trajectory:
        options: dict[str, Any] = {"backoff": Backoff(base_s=0.01, cap_s=0.02),
                                   "read_timeout": 5.0, "max_retries": 2}
        async with OpenAIChatModel(server.base_url, "test-model", **options) as m:
            return await run_agent(question, m, tools, config=cfg, tid="t", sample=0, seed=3)

    return asyncio.run(go()), tools.schemas


def _template(name: str) -> str:
    """A chat template TRL ships (Qwen2.5's with tools; Qwen3's also renders reasoning)."""
    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text("utf-8")


def _rendered(messages: list[dict[str, Any]], tools: list[dict[str, Any]], template: str) -> str:
    """The text a server renders from a request: string arguments decoded first, as vLLM does."""
    decoded = []
    for m in messages:
        if m.get("tool_calls"):
            m = {**m, "tool_calls": [
                {**c, "function": {**c["function"], "arguments": json.loads(a) if isinstance(
                    a := c["function"]["arguments"], str) else a}} for c in m["tool_calls"]]}
        decoded.append(m)
    texts, _ = render_jinja_template([decoded], tools=tools or None, chat_template=template)
    return texts[0]


def test_each_one_turn_row_is_the_prompt_the_teacher_was_sent(
    openai_server: OpenAITestServer, agent_questions: list, agent_searcher: Any
) -> None:
    openai_server.set_handler(teacher())
    question = agent_questions[2]
    traj, schemas = _solve(openai_server, question, agent_searcher)
    traj = label_trajectory(traj, question)
    assert traj.termination == "answer" and traj.checkpoints
    sent = [r for r in openai_server.requests
            if r["messages"][-1].get("content") != prompts.AGENT_CHECKPOINT]
    assert len(sent) == len(traj.turns)
    for request in sent:  # the schemas once: in `tools`, never again in the system text
        assert request["tools"] == schemas and tools_from_prompt(request["messages"][0]["content"]) == []
        assert "short sentence" not in request["messages"][0]["content"]  # reasoning not limited
    assert all(t.reasoning == f"Turn {t.index}: what the results show." for t in traj.turns)
    invented = next(t for t in traj.turns if t.call and t.call.arguments.get("doc_id") == "doc123")
    assert invented.label == "off_track"
    weights = turn_weights(traj)
    assert weights[invented.index] == 0 and sum(weights) > 5
    rows = turn_windows(traj, question.question, weights, schemas,
                        WindowSettings(keep_results=KEEP, max_seq_tokens=32_768))
    assert {w.trained[0] for w in rows} == {i for i, w in enumerate(weights) if w}
    templates = [_template("qwen2_5"), _template("qwen3")]
    elided = 0
    for w in rows:
        ((turn, prompt, completion),) = list(context_only(w))
        request = sent[turn]
        for template in templates:  # byte for byte, as the server's chat template renders it
            assert _rendered(prompt, schemas, template) == _rendered(request["messages"], schemas,
                                                                     template)
        assert completion["reasoning_content"] == traj.turns[turn].reasoning
        assert completion["tool_calls"][0]["function"]["name"] == traj.turns[turn].call.name  # type: ignore[union-attr]
        pointers = [m["content"] for m in request["messages"]
                    if m["role"] == "tool" and m["content"].startswith("[result of turn ")]
        elided += len(pointers)
        for text in pointers:  # an elided result keeps each doc_id's title beside it
            shown = DOC_LIST.search(text)
            assert shown is None or all(TITLED.fullmatch(d) for d in shown.group(1).split(", "))
    assert elided > 0


def test_reasoning_is_kept_dropped_or_kept_last_in_every_layout() -> None:
    """keep: every assistant message; last: the trained one; drop: none; ShareGPT: <think>."""
    from hopforge.export.sharegpt import conversation
    from hopforge.synth.records import ToolCall, Trajectory, Turn

    turns = tuple(
        Turn(index=i, raw="", thought=f"Step {i}.", reasoning=f"Why {i}.",
             call=ToolCall(name="search", arguments={"query": f"Orvin {i}"}),
             result=f"Results for \"Orvin {i}\":\n1. [doc_id: d{i}] Orvin {i}\n   text")
        for i in range(3))
    traj = Trajectory(tid="t", qid="q", teacher="openai:m", sample=0, turns=turns,
                      system_prompt="S")
    seen = {}
    for mode in ("keep", "last", "drop"):
        (*_, last) = turn_windows(traj, "Orvin 0, 1 or 2?", [1, 1, 1], [],
                                  WindowSettings(keep_results=KEEP, reasoning=mode))
        seen[mode] = [m.get("reasoning_content") for m in last.messages if m["role"] == "assistant"]
    assert seen == {"keep": ["Why 0.", "Why 1.", "Why 2."], "last": [None, None, "Why 2."],
                    "drop": [None, None, None]}
    (*_, last) = turn_windows(traj, "Orvin 0, 1 or 2?", [1, 1, 1], [], WindowSettings(keep_results=KEEP))
    _, conv = conversation(list(last.messages))
    assert conv[-1]["value"].startswith("<think>\nWhy 2.\n\nStep 2.\n</think>\n\n{")


def test_a_window_after_the_first_shows_every_turn_the_teacher_saw() -> None:
    """A run with no checkpoint, cut into windows of at most keep_results trained turns: every
    later window's prompt is the teacher's, from the first turn on (old results elided), not
    the last few turns with no word of the ones before."""
    from hopforge.export.windows import windows
    from hopforge.synth.records import ToolCall, Trajectory, Turn

    turns = tuple(
        Turn(index=i, raw="", thought=f"Searching Orvin {i}.",
             call=ToolCall(name="search", arguments={"query": f"Orvin {i}"}),
             result=f"Results for \"Orvin {i}\":\n1. [doc_id: d{i}] Orvin {i}\n   text")
        for i in range(9))
    traj = Trajectory(tid="t", qid="q", teacher="openai:m", sample=0, turns=turns,
                      system_prompt="S")
    made = windows(traj, "Which Orvin?", [1] * 9, [], WindowSettings(keep_results=KEEP))
    assert len(made) > 2
    for w in made:
        assert w.checkpoint == -1 and w.turns[0] == 0, w.turns
        shown = [m["content"] for m in w.messages if m["role"] == "assistant"]
        assert shown[0] == "Searching Orvin 0." and len(shown) == w.turns[-1] + 1
    assert sorted(t for w in made for t in w.trained) == list(range(9))
