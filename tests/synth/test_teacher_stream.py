"""Streamed completions against the local test server: assembly, silence, stalls, retries."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hopforge.synth.teacher.chat import ModelUnavailable
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.recording import Recorder, prefix_reuse, read_recording
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.teacher.stream import StreamAssembler

from tests.helpers.openai_server import OpenAITestServer, Reply, stream_events

FAST = Backoff(base_s=0.01, cap_s=0.05)
MESSAGES = [{"role": "user", "content": "hi"}]


def _model(server: OpenAITestServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("backoff", FAST)
    return OpenAIChatModel(server.base_url, "test-model", seed=0, **kwargs)


async def _complete(model: OpenAIChatModel, **kwargs: Any) -> Any:
    async with model:
        return await model.complete(MESSAGES, **kwargs)


def test_requests_are_streamed_and_assembled(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("a longer answer in many pieces", reasoning="think first"))
    completion = asyncio.run(_complete(_model(openai_server)))
    assert completion.text == "a longer answer in many pieces"
    assert completion.reasoning == "think first"
    body = openai_server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert completion.prompt_tokens > 0 and completion.completion_tokens > 0


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_deltas_under_either_name(openai_server: OpenAITestServer, field: str) -> None:
    openai_server.enqueue(Reply.text("42", reasoning="step by step", reasoning_field=field))
    completion = asyncio.run(_complete(_model(openai_server)))
    assert (completion.text, completion.reasoning) == ("42", "step by step")


def test_tool_call_deltas_are_joined(openai_server: OpenAITestServer) -> None:
    args = {"query": "who designed the Grey Needle lighthouse", "k": 5}
    openai_server.enqueue(
        Reply.tool_calls([("search", args, "call_a"), ("open", {"doc_id": "x"}, "call_b")])
    )
    completion = asyncio.run(_complete(_model(openai_server), tools=[{"type": "function"}]))
    assert [(c.name, c.arguments, c.call_id) for c in completion.tool_calls] == [
        ("search", args, "call_a"),
        ("open", {"doc_id": "x"}, "call_b"),
    ]
    assert completion.finish_reason == "tool_calls"


def test_assembler_matches_the_non_streamed_payload() -> None:
    message = {"role": "assistant", "content": "hello there", "reasoning_content": "hmm",
               "tool_calls": [{"id": "c1", "type": "function",
                               "function": {"name": "find", "arguments": '{"pattern": "x"}'}}]}
    completion = {"id": "1", "created": 0, "model": "m", "usage": {"prompt_tokens": 3},
                  "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    assembler = StreamAssembler()
    for event in stream_events(completion, chunk_chars=3):
        assembler.feed_line(f"data: {event}")
    payload = assembler.payload()
    assert assembler.done
    assert payload["choices"][0]["message"] == message
    assert payload["choices"][0]["finish_reason"] == "tool_calls"
    assert payload["usage"] == {"prompt_tokens": 3} and payload["model"] == "m"


def test_a_slow_stream_outlives_the_read_timeout(openai_server: OpenAITestServer) -> None:
    # 12 events, 0.1 s apart: 1.2 s in all, four times the 0.3 s read timeout, never silent.
    text = "x" * 40
    openai_server.enqueue(Reply.text(text).slow_stream(0.1, chunk_chars=4))
    model = _model(openai_server, read_timeout=0.3)
    completion = asyncio.run(_complete(model))
    assert completion.text == text
    assert len(openai_server.requests) == 1  # never abandoned, never sent again
    assert model.stats()["timeouts"] == 0 and model.retries == 0


def test_without_streaming_the_same_answer_times_out_and_is_retried_as_a_stream(
    openai_server: OpenAITestServer,
) -> None:
    slow = Reply.delay(0.6, Reply.text("late"))
    openai_server.enqueue(slow, Reply.text("streamed").slow_stream(0.05))
    model = _model(openai_server, read_timeout=0.3, stream=False)
    completion = asyncio.run(_complete(model))
    assert completion.text == "streamed"
    first, second = openai_server.requests
    assert "stream" not in first and second["stream"] is True
    stats = model.stats()
    assert (stats["timeouts"], stats["retries"], stats["retries_after_timeout"]) == (1, 1, 1)


def test_a_stall_mid_stream_is_retried_once_then_given_up(openai_server: OpenAITestServer) -> None:
    stalled = Reply.text("some words and then nothing").stall(after_events=3, seconds=5)
    openai_server.enqueue(stalled, stalled, Reply.text("never reached"))
    model = _model(openai_server, read_timeout=0.3, max_retries=4, timeout_retries=1)
    with pytest.raises(ModelUnavailable, match="did not answer in time") as info:
        asyncio.run(_complete(model))
    assert "silent for 0.3s" in str(info.value)
    assert len(openai_server.requests) == 2  # not resent unchanged again and again
    stats = model.stats()
    assert (stats["timeouts"], stats["retries_after_timeout"]) == (2, 1)


def test_a_stream_cut_off_mid_answer_is_retried(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("cut off").stall(after_events=2, seconds=0), Reply.text("ok"))
    model = _model(openai_server)
    assert asyncio.run(_complete(model)).text == "ok"
    assert model.retries == 1 and model.stats()["timeouts"] == 0


def test_an_error_event_in_the_stream_is_retried(openai_server: OpenAITestServer) -> None:
    event = json.dumps({"error": {"message": "engine died", "code": 500}})
    openai_server.enqueue(
        Reply.raw(f"data: {event}\n\n", status=200).as_event_stream(), Reply.text("ok")
    )
    model = _model(openai_server)
    assert asyncio.run(_complete(model)).text == "ok"
    assert model.retries == 1


def test_a_server_that_ignores_stream_still_works(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("whole").ignoring_stream())
    assert asyncio.run(_complete(_model(openai_server))).text == "whole"


def test_retries_never_stack_requests_beyond_the_concurrency_limit(
    openai_server: OpenAITestServer,
) -> None:
    # Every first try stalls mid-stream and is abandoned; the server sees the hang-up, as vLLM
    # does, so at most `concurrency` requests are ever on it.
    stalled = Reply.text("partial answer here").stall(after_events=2, seconds=3)
    openai_server.enqueue(*[stalled] * 6)
    model = _model(openai_server, read_timeout=0.2, concurrency=3)

    async def main() -> list[str]:
        async with model:
            done = await asyncio.gather(*(model.complete(MESSAGES) for _ in range(6)))
        return [c.text for c in done]

    texts = asyncio.run(main())
    assert texts == ["echo: hi"] * 6
    assert openai_server.max_in_flight <= 3
    assert openai_server.hangups == 6
    assert model.stats()["retries_after_timeout"] == 6


def test_recording_and_prefix_reuse(tmp_path: Path, openai_server: OpenAITestServer) -> None:
    path = tmp_path / "rec.jsonl"
    model = _model(openai_server, recorder=Recorder(path))
    system = {"role": "system", "content": "You search."}
    first = [system, {"role": "user", "content": "q1"}]
    second = [*first, {"role": "assistant", "content": "a"}, {"role": "user", "content": "r"}]
    # context management that rewrites an early message loses what the server could reuse
    third = [*first, {"role": "assistant", "content": "(elided)"}, *second[3:], second[2]]

    async def main() -> None:
        async with model:
            for messages in (first, second, third):
                await model.complete(messages)

    asyncio.run(main())
    rows = list(read_recording(path))
    assert [r["status"] for r in rows] == [200, 200, 200]
    assert rows[0]["response"]["choices"][0]["message"]["content"] == "echo: q1"
    assert rows[1]["request"]["messages"] == second
    kept, rewritten = prefix_reuse(rows)
    head = "<system>You search.\n<user>q1"
    assert kept == pytest.approx(len(head) / len(head + "\n<assistant>a\n<user>r"))
    rewrite = head + "\n<assistant>(elided)\n<user>r\n<assistant>a"
    assert rewritten == pytest.approx(len(head + "\n<assistant>") / len(rewrite))
