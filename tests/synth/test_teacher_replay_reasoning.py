"""A real model's thinking, replayed: kept on every turn, sent back, and exported as reasoning.

The answers come from Qwen2.5-Coder-0.5B-Instruct served by vLLM under
scripts/think_template.jinja (its chat template made to open each reply inside `<think>`, as
DeepSeek-R1's does) with `--reasoning-parser olmo3`, which moved the thinking to the message's
`reasoning` field (`make check-teacher ARGS="--serve DIR --reasoning --scripted-questions"`,
trimmed by scripts/trim_replay.py into tests/data/teacher_replay_reasoning/). It is an instruct
model told to think, not a trained reasoning model: the recording proves the path (the server's
split, the turn, the next request, the rows), not the quality of the thinking. It holds what
such a model really does: replies that never close `</think>` (all reasoning, no call), and
calls written as text after the thinking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts, write_part
from hopforge.corpus.store import write_corpus
from hopforge.export.sharegpt import conversation
from hopforge.export.windows import WindowSettings, turn_windows
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth import prompts
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.trajectories.stage import TrajectoryConfig

from tests.helpers.openai_server import OpenAITestServer
from tests.helpers.teacher_replay import REPLAY_REASONING, Replay, read_jsonl

CONVERSATIONS = read_jsonl("conversations.jsonl", REPLAY_REASONING)
EXPECTED = read_jsonl("trajectories.jsonl", REPLAY_REASONING)
ANSWERS = [a for c in CONVERSATIONS for a in c["answers"]]


def _thinking(answer: dict[str, Any]) -> str:
    """The reasoning vLLM's parser split off, under whichever field name the server used."""
    message = answer["message"]
    return str(message.get("reasoning_content") or message.get("reasoning") or "")


def test_the_recording_holds_a_real_parsers_split() -> None:
    assert len(ANSWERS) >= 10
    assert all(_thinking(a) for a in ANSWERS)  # every reply opened inside <think>
    unclosed = [a for a in ANSWERS if not (a["message"].get("content") or "").strip()]
    assert unclosed  # replies that never wrote </think>: all thinking, nothing to call
    assert any("<think>" not in _thinking(a) and "</think>" not in _thinking(a) for a in ANSWERS)


def _replayed(tmp_path: Path, tiny_corpus_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Question]]:
    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, ingest_paths([tiny_corpus_path]).documents)
    questions = [Question.from_row(r) for r in read_jsonl("questions.jsonl", REPLAY_REASONING)]
    write_part(build.questions, 0, [q.to_row() for q in questions])
    config = TrajectoryConfig(**read_jsonl("config.jsonl", REPLAY_REASONING)[0])
    assert config.reasoning
    replay = Replay(CONVERSATIONS)
    with OpenAITestServer(model="teacher", max_model_len=8192) as server:
        server.set_handler(replay)
        model = OpenAIChatModel(server.base_url, "teacher", backoff=Backoff(base_s=0.01))
        run_trajectories_build(build, config, teacher=model)
        requests = list(server.requests)
    assert replay.unmatched == [] and replay.served == len(ANSWERS)
    return list(read_parts(build.trajectories)), requests, questions


def test_each_turn_keeps_the_thinking_and_the_next_request_carries_it(
    tmp_path: Path, tiny_corpus_path: Path
) -> None:
    rows, requests, _ = _replayed(tmp_path, tiny_corpus_path)
    got = {r["tid"]: r for r in rows}
    for expected in EXPECTED:
        turns = got[expected["tid"]]["turns"]
        assert [t["reasoning"] for t in turns] == [t["reasoning"] for t in expected["turns"]]
        assert all(t["reasoning"] for t in turns)  # kept also where the text is empty
    said = {_thinking(a).strip() for a in ANSWERS}
    for request in requests:
        assert "short sentence" not in request["messages"][0]["content"]  # not limited
        assert request["messages"][0]["content"] != prompts.AGENT_BRIEF
    sent_back = [m["reasoning_content"] for r in requests for m in r["messages"]
                 if m["role"] == "assistant" and m.get("reasoning_content")]
    assert sent_back and {s.strip() for s in sent_back} <= said  # the model's own, as it wrote


def test_the_rows_carry_the_recorded_thinking(tmp_path: Path, tiny_corpus_path: Path) -> None:
    rows, _, questions = _replayed(tmp_path, tiny_corpus_path)
    asked = {q.qid: q.question for q in questions}
    said = {_thinking(a).strip() for a in ANSWERS}
    thought_rows, calls = 0, 0
    for row in rows:
        traj = Trajectory.from_row(row)
        calls += sum(t.call is not None for t in traj.turns)
        weights = [1] * len(traj.turns)  # every turn, trained or not, as a window shows it
        for w in turn_windows(traj, asked[traj.qid], weights, [],
                              WindowSettings(max_seq_tokens=32_768, reasoning="keep")):
            assistants = [m for m in w.messages if m["role"] == "assistant"]
            assert all(m.get("reasoning_content", "").strip() in said for m in assistants)
            _, conv = conversation(w.messages)
            model_side = [c["value"] for c in conv if c["from"] in ("gpt", "function_call")]
            assert model_side and all(v.startswith("<think>\n") for v in model_side)
            thought_rows += 1
    assert thought_rows == calls > 0  # a row per turn that made a call
