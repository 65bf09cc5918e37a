"""Real model output, replayed: a test-server handler that answers as a recorded model did.

tests/data/teacher_replay/ holds what `make check-teacher` recorded against a real model
server, and tests/data/teacher_replay_reasoning/ what `make check-teacher ARGS=--reasoning`
recorded (its thinking split off by vLLM's reasoning parser); scripts/trim_replay.py trims
OUT/requests.jsonl to either:

    questions.jsonl      the questions the trajectories stage solved (`Question` rows)
    conversations.jsonl  per question: the model's answers in order (message, finish, usage)
    trajectories.jsonl   what the real run made of them (tid, termination, turns' calls)
    config.jsonl         the run's [trajectories] settings

`Replay` answers each request with the next recorded answer of the conversation whose question
the request asks, so the agent loop meets the model's real text with its real mistakes.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from tests.helpers.openai_server import Reply

REPLAY = Path(__file__).resolve().parents[1] / "data" / "teacher_replay"
REPLAY_REASONING = REPLAY.with_name("teacher_replay_reasoning")


def read_jsonl(name: str, folder: Path = REPLAY) -> list[dict[str, Any]]:
    """The rows of one file of a replay folder."""
    with (folder / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Replay:
    """A handler for `OpenAITestServer.set_handler`: recorded answers, per conversation, in order."""

    def __init__(self, conversations: list[dict[str, Any]]) -> None:
        self.answers = {c["question"]: deque(c["answers"]) for c in conversations}
        self.served = 0
        self.unmatched: list[str] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        asked = str(messages[1].get("content") or "") if len(messages) > 1 else ""
        queue = next((q for text, q in self.answers.items() if text in asked), None)
        if not queue:
            self.unmatched.append(asked[:200])
            return Reply.error(404, body={"error": {"message": "no recorded answer left"}})
        answer = queue.popleft()
        self.served += 1
        usage = answer.get("usage") or {}
        reply = Reply(message=answer["message"], finish_reason=answer.get("finish_reason", "stop"))
        if usage:
            reply = reply.with_usage(int(usage.get("prompt_tokens") or 0),
                                     int(usage.get("completion_tokens") or 0))
        return reply
