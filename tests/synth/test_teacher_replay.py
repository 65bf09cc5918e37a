"""The agent loop on real model output: a CPU model's recorded answers, replayed over HTTP.

The answers come from Qwen2.5-Coder-0.5B-Instruct served by vLLM (`make check-teacher`,
trimmed by scripts/trim_replay.py). They carry what such a model really writes: tool calls as
bare JSON in the text, invented doc_ids, repeated calls, early answers.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts, write_part
from hopforge.corpus.store import write_corpus
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth.records import Question
from hopforge.synth.teacher.chat import Completion
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.teacher.tool_calls import ToolCallParseError, parse_completion
from hopforge.synth.teacher.wire import parse_chat_response
from hopforge.synth.trajectories.stage import TrajectoryConfig

from tests.helpers.openai_server import OpenAITestServer
from tests.helpers.teacher_replay import Replay, read_jsonl

CONVERSATIONS = read_jsonl("conversations.jsonl")
EXPECTED = read_jsonl("trajectories.jsonl")
ANSWERS = [a for c in CONVERSATIONS for a in c["answers"]]


def _parsed(answer: dict[str, Any]) -> str:
    payload = {"choices": [{"message": answer["message"],
                            "finish_reason": answer["finish_reason"]}]}
    completion: Completion = parse_chat_response(payload)
    try:
        return parse_completion(completion).fmt
    except ToolCallParseError:
        return "none"


def test_the_recorded_answers_hold_the_real_mistakes() -> None:
    formats = Counter(_parsed(a) for a in ANSWERS)
    assert formats["json"] > 0  # bare JSON calls in the text: vLLM's parser found no tags
    assert sum(formats.values()) == len(ANSWERS) >= 10
    turns = [t for e in EXPECTED for t in e["turns"]]
    assert any(not t["args_valid"] or t["error"] for t in turns)  # calls that failed
    assert any(t["repeat_of"] is not None for t in turns)  # and calls repeated


def test_replaying_the_real_run_reproduces_its_trajectories(
    tmp_path: Path, tiny_corpus_path: Path
) -> None:
    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, ingest_paths([tiny_corpus_path]).documents)
    questions = [Question.from_row(r) for r in read_jsonl("questions.jsonl")]
    write_part(build.questions, 0, [q.to_row() for q in questions])
    config = TrajectoryConfig(**read_jsonl("config.jsonl")[0])
    replay = Replay(CONVERSATIONS)
    with OpenAITestServer(model="teacher", max_model_len=8192) as server:
        server.set_handler(replay)
        model = OpenAIChatModel(server.base_url, "teacher", backoff=Backoff(base_s=0.01))
        run_trajectories_build(build, config, teacher=model)
    assert replay.unmatched == [] and replay.served == len(ANSWERS)
    got = {r["tid"]: r for r in read_parts(build.trajectories)}
    for expected in EXPECTED:
        row = got[expected["tid"]]
        assert (row["termination"], row["final_answer"]) == (
            expected["termination"], expected["final_answer"])
        keys = ("call_format", "call", "schema_valid", "args_valid", "repeat_of")
        assert [{k: t[k] for k in keys} for t in row["turns"]] == [
            {k: t[k] for k in keys} for t in expected["turns"]]
    assert {e["termination"] for e in EXPECTED} <= {
        "answer", "max_turns", "repetition", "no_progress", "context_limit", "error"}


@pytest.mark.parametrize("answer", ANSWERS[:40], ids=lambda a: str(len(a["message"].get("content") or "")))
def test_every_recorded_answer_parses_or_says_why(answer: dict[str, Any]) -> None:
    payload = {"choices": [{"message": answer["message"], "finish_reason": "stop"}]}
    completion = parse_chat_response(payload)
    try:
        parsed = parse_completion(completion)
    except ToolCallParseError as exc:
        assert str(exc) and exc.raw == (completion.text or "")
    else:
        assert parsed.call.name and isinstance(parsed.call.arguments, dict)
