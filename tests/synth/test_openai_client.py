"""OpenAIChatModel against a real OpenAI-compatible server on 127.0.0.1 (tests/helpers/openai_server.py)."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.synth.records import ToolCall
from hopforge.synth.teacher.chat import (
    ChatModel,
    Completion,
    ModelResponseError,
    ModelUnavailable,
    ModelUnreachable,
)
from hopforge.synth.teacher.errors import ModelRequestError
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.pools import PoolSet
from hopforge.synth.teacher.replicas import ReplicaSet
from hopforge.synth.teacher.retry import Backoff
from hopforge.synth.teacher.wire import RAW_ARGUMENTS, completion_message, json_schema_format

from tests.helpers.openai_server import OpenAITestServer, Reply

FAST = Backoff(base_s=0.01, cap_s=0.05)
USER = [{"role": "user", "content": "Which mountain did Ilse Varro climb first?"}]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the corpus.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


def make(urls: list[str] | str, **kwargs: Any) -> OpenAIChatModel:
    options: dict[str, Any] = {"backoff": FAST, "read_timeout": 5.0, "seed": 0}
    options.update(kwargs)
    return OpenAIChatModel(urls, "test-model", **options)


def run(model: OpenAIChatModel, fn: Callable[[OpenAIChatModel], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        async with model as m:
            return await fn(m)

    return asyncio.run(go())


def one(model: OpenAIChatModel, **kwargs: Any) -> Completion:
    return run(model, lambda m: m.complete(USER, **kwargs))


def dead_url() -> str:
    """A URL on a port where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_is_a_chat_model() -> None:
    model: ChatModel = make("http://127.0.0.1:1/v1")
    assert model.name == "openai:test-model"


def test_text_and_request_body(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("Mount Fendle").with_usage(12, 3))
    c = one(make(openai_server.base_url), temperature=0.2, max_tokens=64, seed=7)
    assert (c.text, c.reasoning, c.tool_calls, c.finish_reason) == ("Mount Fendle", "", (), "stop")
    assert (c.prompt_tokens, c.completion_tokens, c.model) == (12, 3, "test-model")
    assert c.latency_s > 0
    body = openai_server.requests[0]
    assert body == {
        "model": "test-model",
        "messages": USER,
        "temperature": 0.2,
        "max_tokens": 64,
        "seed": 7,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_whole_answers_when_not_streaming(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("Mount Fendle", reasoning="first").with_usage(12, 3))
    c = one(make(openai_server.base_url, stream=False), max_tokens=64)
    assert (c.text, c.reasoning) == ("Mount Fendle", "first")
    assert (c.prompt_tokens, c.completion_tokens) == (12, 3)
    assert "stream" not in openai_server.requests[0]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_kept_apart_from_text(openai_server: OpenAITestServer, field: str) -> None:
    openai_server.enqueue(
        Reply.text("Quillon", reasoning="Varro trained at...", reasoning_field=field)
    )
    c = one(make(openai_server.base_url))
    assert c.text == "Quillon"
    assert c.reasoning == "Varro trained at..."


def test_native_tool_calls(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(
        Reply.tool_calls(
            [("search", {"query": "Ilse Varro"}, "call_1"), ("open", '{"doc_id": "d1"}', None)],
            content="Let me look.",
        )
    )
    c = one(make(openai_server.base_url), tools=[SEARCH_TOOL])
    assert c.finish_reason == "tool_calls"
    assert c.text == "Let me look."
    assert c.tool_calls[0] == ToolCall(
        name="search", arguments={"query": "Ilse Varro"}, call_id="call_1"
    )
    assert c.tool_calls[1].name == "open" and c.tool_calls[1].arguments == {"doc_id": "d1"}
    assert openai_server.requests[0]["tools"] == [SEARCH_TOOL]
    assert "tool_choice" not in openai_server.requests[0]
    message = completion_message(c)
    assert message["tool_calls"][0]["function"] == {
        "name": "search",
        "arguments": '{"query": "Ilse Varro"}',
    }


@pytest.mark.parametrize("arguments", ['{"query": "unterminated', "[1, 2]", '"just text"'])
def test_undecodable_tool_arguments_are_kept_raw(
    openai_server: OpenAITestServer, arguments: str
) -> None:
    openai_server.enqueue(Reply.tool_call("search", arguments))
    c = one(make(openai_server.base_url), tools=[SEARCH_TOOL])
    assert c.tool_calls[0].arguments == {RAW_ARGUMENTS: arguments}
    assert completion_message(c)["tool_calls"][0]["function"]["arguments"] == arguments


SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}


@pytest.mark.parametrize(
    ("mode", "key", "expected"),
    [
        ("response_format", "response_format", json_schema_format(SCHEMA, "qa")),
        ("guided_json", "guided_json", SCHEMA),
        ("structured_outputs", "structured_outputs", {"json": SCHEMA}),
    ],
)
def test_structured_output_request(
    openai_server: OpenAITestServer, mode: Any, key: str, expected: Any
) -> None:
    openai_server.enqueue(Reply.json({"question": "Who?", "answer": "Ilse Varro"}))
    model = make(openai_server.base_url, structured_output=mode, extra_body={"top_p": 0.9})
    c = one(model, response_format=json_schema_format(SCHEMA, "qa"))
    assert c.text == '{"question": "Who?", "answer": "Ilse Varro"}'
    body = openai_server.requests[0]
    assert body[key] == expected
    assert body["top_p"] == 0.9
    if mode != "response_format":
        assert "response_format" not in body


def test_server_error_then_success(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.error(500), Reply.error(503), Reply.text("ok"))
    model = make(openai_server.base_url)
    assert one(model).text == "ok"
    assert len(openai_server.requests) == 3
    assert model.retries == 2


def test_429_retry_after_is_honoured(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.error(429, retry_after=0.5), Reply.text("ok"))
    model = make(openai_server.base_url, backoff=Backoff(base_s=0.001, cap_s=0.002))
    assert one(model).text == "ok"
    assert len(openai_server.requests) == 2
    assert 0.45 <= model.backoff_seconds <= 0.7  # the computed backoff alone would be ~1 ms


def test_retry_after_is_capped(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.error(429, retry_after=3600), Reply.text("ok"))
    backoff = Backoff(base_s=0.001, cap_s=0.002, max_retry_after_s=0.01)
    assert one(make(openai_server.base_url, backoff=backoff)).text == "ok"


def test_other_4xx_is_not_retried(openai_server: OpenAITestServer) -> None:
    body = {"error": {"message": "This model's maximum context length is 4096 tokens."}}
    openai_server.enqueue(Reply.error(400, body=body))
    with pytest.raises(ModelRequestError) as info:
        one(make(openai_server.base_url))
    assert len(openai_server.requests) == 1
    assert info.value.status == 400 and info.value.context_limit
    assert openai_server.base_url in str(info.value) and "max-model-len" in str(info.value)


def test_404_names_the_model_and_the_fix(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.error(404, body={"error": {"message": "model not found"}}))
    with pytest.raises(ModelRequestError, match="HOPFORGE_TEACHER_MODEL") as info:
        one(make(openai_server.base_url))
    assert "'test-model'" in str(info.value) and not info.value.context_limit


def test_hang_times_out_then_unavailable(openai_server: OpenAITestServer) -> None:
    openai_server.set_handler(lambda request: Reply.hang(30))
    model = make(openai_server.base_url, read_timeout=0.2, max_retries=1)
    with pytest.raises(ModelUnavailable) as info:
        one(model)
    assert len(openai_server.requests) == 2
    text = str(info.value)
    assert openai_server.base_url in text and "did not answer in time" in text
    assert "--concurrency" in text
    assert not isinstance(info.value, ModelUnreachable)  # it answered once: a per-record failure


def test_dropped_connection_is_retried(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.hang(0), Reply.text("ok"))  # hangs up without an answer
    assert one(make(openai_server.base_url)).text == "ok"


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (Reply.raw("{not json"), "not JSON"),
        (Reply.raw("[1, 2]"), "JSON list"),
        (Reply.empty_choices(), "without choices"),
        (Reply.raw('{"choices": [{"index": 0}]}'), "no message"),
        (Reply.raw('{"choices": [{"message": {"content": 5}}]}'), "non-text content"),
        (Reply.raw('{"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]}'), "function name"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_unusable_answers_raise(
    openai_server: OpenAITestServer, reply: Reply, match: str, stream: bool
) -> None:
    openai_server.enqueue(reply)
    with pytest.raises(ModelResponseError, match=match) as info:
        one(make(openai_server.base_url, stream=stream))
    assert openai_server.base_url in str(info.value)
    assert isinstance(info.value, HopforgeError)
    assert len(openai_server.requests) == 1


def test_truncated_output_surfaces(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.truncated("The answer is Mount"))
    c = one(make(openai_server.base_url))
    assert c.finish_reason == "length" and c.text == "The answer is Mount"


def test_replicas_share_the_load() -> None:
    with OpenAITestServer() as a, OpenAITestServer() as b:
        model = make([a.base_url, b.base_url])

        async def ten(m: OpenAIChatModel) -> list[Completion]:
            return [await m.complete(USER) for _ in range(10)]

        assert len(run(model, ten)) == 10
        assert (len(a.requests), len(b.requests)) == (5, 5)


def test_failover_when_one_replica_is_dead(openai_server: OpenAITestServer) -> None:
    dead = dead_url()
    model = make([dead, openai_server.base_url], concurrency=4)

    async def many(m: OpenAIChatModel) -> list[Completion]:
        return await asyncio.gather(*(m.complete(USER) for _ in range(12)))

    assert [c.text for c in run(model, many)] == ["echo: " + USER[0]["content"]] * 12
    assert len(openai_server.requests) == 12
    stats = {r["url"]: r for r in model.stats()["replicas"]}
    assert stats[dead]["errors"] >= 1 and stats[dead]["requests"] == stats[dead]["errors"]


def test_all_replicas_dead_names_urls_and_fix() -> None:
    urls = [dead_url(), dead_url()]
    with pytest.raises(ModelUnreachable) as info:
        one(make(urls, max_retries=2))
    text = str(info.value)
    assert all(u in text for u in urls)
    assert "Could not reach a model server" in text
    assert "vllm serve MODEL" in text and "HOPFORGE_TEACHER_URL" in text


def test_api_key_sent_but_never_shown(
    openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-secret-0123456789"
    openai_server.enqueue(Reply.text("ok"))
    openai_server.set_handler(
        lambda request: Reply.error(503, body={"error": {"message": f"bad key {key}"}})
    )
    model = make(openai_server.base_url, api_key=key, max_retries=2)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ModelUnavailable) as info:
        run(model, lambda m: _two(m))
    assert all(h["Authorization"] == f"Bearer {key}" for h in openai_server.headers)
    assert key not in str(info.value) and "***" in str(info.value)
    assert key not in repr(model) and key not in str(model.stats())
    assert key not in caplog.text


async def _two(m: OpenAIChatModel) -> None:
    await m.complete(USER)
    await m.complete(USER)


def test_401_asks_for_the_key(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.error(401))
    with pytest.raises(ModelRequestError, match="HOPFORGE_API_KEY"):
        one(make(openai_server.base_url))
    assert "Authorization" not in openai_server.headers[0]


def test_concurrency_limit_is_respected(openai_server: OpenAITestServer) -> None:
    openai_server.set_handler(lambda request: Reply.delay(0.02, Reply.text("ok")))
    model = make(openai_server.base_url, concurrency=3)

    async def many(m: OpenAIChatModel) -> list[Completion]:
        return await asyncio.gather(*(m.complete(USER) for _ in range(24)))

    assert len(run(model, many)) == 24
    assert 1 <= openai_server.max_in_flight <= 3


def test_usage_is_summed_overall_and_per_stage(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(
        Reply.text("a").with_usage(10, 2),
        Reply.text("b").with_usage(7, 1),
        Reply.text("c").with_usage(100, 50),
    )
    model = make(openai_server.base_url)
    questions = model.for_stage("questions")
    trajectories = model.for_stage("trajectories")

    async def three(m: OpenAIChatModel) -> None:
        await questions.complete(USER)
        await questions.complete(USER)
        await trajectories.complete(USER)

    run(model, three)
    assert (model.usage.prompt_tokens, model.usage.completion_tokens) == (117, 53)
    assert (questions.usage.prompt_tokens, questions.usage.completion_tokens) == (17, 3)
    assert model.usage_by_stage["trajectories"].completion_tokens == 50
    assert model.usage.seconds > 0


def test_check_lists_models(openai_server: OpenAITestServer) -> None:
    served = run(make(openai_server.base_url), lambda m: m.check())
    assert served == {openai_server.base_url: ["test-model"]}
    with pytest.raises(ModelUnreachable, match="Could not reach"):
        run(make(dead_url()), lambda m: m.check())


def test_model_can_be_reused_after_close(openai_server: OpenAITestServer) -> None:
    model = make(openai_server.base_url)
    assert one(model).text.startswith("echo:")
    assert one(model).text.startswith("echo:")  # a second event loop, a fresh client


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_urls": []}, "HOPFORGE_TEACHER_URL"),
        ({"base_urls": ["localhost:8000/v1"]}, "http://"),
        ({"model": " "}, "HOPFORGE_TEACHER_MODEL"),
    ],
)
def test_bad_configuration_says_what_to_do(kwargs: dict[str, Any], match: str) -> None:
    options: dict[str, Any] = {"base_urls": ["http://127.0.0.1:8000/v1"], "model": "m"}
    options.update(kwargs)
    with pytest.raises(HopforgeError, match=match):
        OpenAIChatModel(options.pop("base_urls"), options.pop("model"))


def test_backoff_is_capped_and_jittered() -> None:
    rng = random.Random(0)
    backoff = Backoff(base_s=1.0, cap_s=8.0)
    delays = [backoff.delay(step, rng) for step in range(10)]
    assert all(0.5 <= d <= 1.0 for d in delays[:1])
    assert all(4.0 <= d <= 8.0 for d in delays[3:])
    assert len(set(delays)) == len(delays)
    assert 2.0 <= backoff.delay(0, rng, retry_after=2.0) <= 2.2


def test_connection_pools_are_sharded(openai_server: OpenAITestServer) -> None:
    pools = PoolSet(max_in_flight=40, timeout=httpx.Timeout(5.0), shard_size=16)
    assert pools.shards_per_url == 3
    peak: list[int] = []

    async def hold(release: asyncio.Event) -> None:
        async with pools.client(openai_server.base_url) as client:
            peak.append(id(client))
            await release.wait()

    async def go() -> None:
        release = asyncio.Event()
        tasks = [asyncio.create_task(hold(release)) for _ in range(40)]
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*tasks)
        async with pools.client(openai_server.base_url) as client:
            assert (await client.get(f"{openai_server.base_url}/models")).status_code == 200
        await pools.aclose()

    asyncio.run(go())
    assert pools.open_clients == 0
    assert sorted(peak.count(i) for i in set(peak)) == [13, 13, 14]


def test_replica_set_prefers_idle_and_counts_one_outage_once() -> None:
    replicas = ReplicaSet(
        ["http://a/v1", "http://b/v1"], Backoff(base_s=1, cap_s=8), random.Random(0)
    )
    a, b = replicas.replicas
    a.in_flight = 2
    assert replicas.pick(now=0.0) is b
    # three requests sent at t=0 all fail: one incident, so a's backoff is the first step (0.5-1 s)
    for now in (1.0, 1.1, 1.2):
        replicas.set_aside(a, started=0.0, now=now, retry_after=None)
    assert a.failures == 1 and a.errors == 3 and 1.5 <= a.down_until <= 2.2
    assert replicas.pick(now=1.3) is b and replicas.time_until_up(now=1.3) == 0.0
    replicas.set_aside(b, started=1.0, now=1.3, retry_after=5.0)  # Retry-After wins
    assert replicas.pick(now=1.4) is a  # both aside: a comes back first
    assert 6.3 <= b.down_until <= 6.8
    assert replicas.time_until_up(now=1.4) == a.down_until - 1.4
    replicas.set_aside(a, started=3.0, now=3.0, retry_after=None)  # a new incident: next step
    assert a.failures == 2
    replicas.answered(a)
    assert a.failures == 0
