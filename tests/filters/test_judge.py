import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus import parts
from hopforge.corpus.layout import BuildDir
from hopforge.filters.judge import (
    JudgeConfig,
    JudgeVerdictError,
    judge_all,
    judge_pair,
    parse_verdict,
    render_trajectory,
    swap_outcome,
)
from hopforge.filters.pointwise import ScoreConfig
from hopforge.flows.stages.filters import score_build
from hopforge.synth import prompts
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.openai_client import OpenAIChatModel

from tests.helpers.filter_data import make_question, make_trajectory
from tests.helpers.openai_server import OpenAITestServer, Reply

TEACHER = "secret-model-7"


@pytest.mark.parametrize(
    ("text", "score", "winner"),
    [
        ('{"score": 1, "reason": "same entity"}', 1.0, None),
        ('Here is my verdict:\n```json\n{"score": 0.5}\n```', 0.5, None),
        ('{"score": true}', 1.0, None),
        ('{"score": "0.25"}', 0.25, None),
        ('{"winner": "A", "reason": "correct"}', None, "A"),
        ('{"winner": "response b"}', None, "B"),
        ('{"winner": "Tie"}', None, "tie"),
    ],
)
def test_parse_verdict_accepts_the_verdict_json(text: str, score: float | None,
                                                winner: str | None) -> None:
    v = parse_verdict(text)
    assert (v.score, v.winner) == (score, winner)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A is better", "no JSON object"),
        ('{"winner": A}', "not valid JSON"),
        ('{"winner": "C"}', '"winner" must be'),
        ('{"score": 3}', '"score" must be a number in [0, 1]'),
        ('{"verdict": "A"}', 'neither "score" nor "winner"'),
    ],
)
def test_parse_verdict_raises_a_typed_error_keeping_the_raw_text(text: str, message: str) -> None:
    with pytest.raises(JudgeVerdictError, match=re.escape(message)) as err:
        parse_verdict(text)
    assert err.value.raw == text


def test_swap_outcome_needs_agreement_across_orders() -> None:
    assert swap_outcome("A", "B") == (1.0, "agreed")  # a first, then a second
    assert swap_outcome("B", "A") == (0.0, "agreed")
    assert swap_outcome("tie", "tie") == (0.5, "tie")
    assert swap_outcome("A", "A")[0] == 0.5  # position bias: a disagreement is a tie
    assert "disagreement" in swap_outcome("A", "A")[1]
    assert swap_outcome("A", "unparsable verdict: x") == (0.5, "unparsable verdict: x")


def test_prompts_render() -> None:
    q = make_question(0, random.Random(0))
    t = make_trajectory(q, TEACHER, 0, random.Random(0))
    text = prompts.JUDGE_PAIRWISE_PROMPT.format(question=q.question, reference=q.answer,
                                                response_a=render_trajectory(t, JudgeConfig()),
                                                response_b="B")
    assert "Response A:" in text and q.answer in text and "{" in text
    assert prompts.JUDGE_POINTWISE_PROMPT.format(question="Q", reference="R", response="S")
    assert prompts.JUDGE_SYSTEM


def _pair() -> tuple[Question, Trajectory, Trajectory]:
    rng = random.Random(3)
    q = make_question(0, rng)
    good = make_trajectory(q, TEACHER, 0, rng, correct=True)
    bad = make_trajectory(q, TEACHER, 1, rng, correct=False)
    return q, good, bad


def _user(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def _first_answer(request: dict[str, Any]) -> str:
    """The final answer of Response A in a pair-wise prompt."""
    a = _user(request).split("Response A:", 1)[1].split("Response B:", 1)[0]
    return a.rsplit("Final answer:", 1)[1].strip()


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _judge_pair(url: str, q: Question, a: Trajectory, b: Trajectory) -> Any:
    async with OpenAIChatModel([url], "judge-model", max_retries=0) as m:
        return await judge_pair(m, q, a, b, JudgeConfig())


def test_position_biased_judge_gives_a_tie(openai_server: OpenAITestServer) -> None:
    q, good, bad = _pair()
    openai_server.set_handler(lambda r: Reply.json({"winner": "A", "reason": "first"}))
    c = _run(_judge_pair(openai_server.base_url, q, good, bad))
    assert c.outcome == 0.5 and "position-swap disagreement" in c.reason
    reqs = openai_server.requests
    assert len(reqs) == 2
    # both orders were shown: each trajectory's answer came first once
    assert sorted(_first_answer(r) for r in reqs) == sorted([good.final_answer + "",
                                                              bad.final_answer])
    for r in reqs:  # authorship hidden
        body = json.dumps(r)
        assert TEACHER not in body and good.tid not in body and bad.tid not in body


def test_consistent_judge_decides_the_pair(openai_server: OpenAITestServer) -> None:
    q, good, bad = _pair()

    def handler(r: dict[str, Any]) -> Reply:
        return Reply.json({"winner": "A" if _first_answer(r) == q.answer else "B"})

    openai_server.set_handler(handler)
    c = _run(_judge_pair(openai_server.base_url, q, bad, good))
    assert (c.a, c.b, c.outcome, c.reason) == (bad.tid, good.tid, 0.0, "agreed")
    assert c.source == "judge:openai:judge-model"


def test_unparsable_verdict_is_a_tie(openai_server: OpenAITestServer) -> None:
    q, good, bad = _pair()
    openai_server.set_handler(lambda r: Reply.text("I prefer the first one."))
    c = _run(_judge_pair(openai_server.base_url, q, good, bad))
    assert c.outcome == 0.5 and c.reason.startswith("unparsable verdict")


def _verdicts(q: Question) -> Any:
    def handler(r: dict[str, Any]) -> Reply:
        text = _user(r)
        if "Response A:" not in text:
            answer = text.rsplit("Final answer:", 1)[1].split("\n", 1)[0].strip()
            return Reply.json({"score": 1 if answer == q.answer else 0, "reason": "r"})
        return Reply.json({"winner": "A" if _first_answer(r) == q.answer else "B"})
    return handler


def test_judge_all_resumes_from_done_results(openai_server: OpenAITestServer) -> None:
    q, good, bad = _pair()
    openai_server.set_handler(_verdicts(q))
    seen: dict[str, Any] = {}

    async def go(done: dict[str, Any]) -> Any:
        async with OpenAIChatModel([openai_server.base_url], "j", max_retries=0) as m:
            return await judge_all(m, {q.qid: q}, [good, bad], JudgeConfig(), done=done,
                                   on_result=seen.__setitem__)

    scores, comps = _run(go({}))
    assert scores == {good.tid: 1.0, bad.tid: 0.0}
    assert [c.outcome for c in comps[q.qid]] == [1.0]  # good (sample 0) sorts first
    assert len(openai_server.requests) == 4  # two point-wise, two orders of the pair
    again = _run(go(dict(seen)))
    assert again == (scores, comps) and len(openai_server.requests) == 4


def test_score_build_with_a_judge_server_caches_verdicts(
    openai_server: OpenAITestServer, tmp_path: Path
) -> None:
    q, good, bad = _pair()
    build = BuildDir.at(tmp_path / "b")
    parts.write_part(build.questions, 0, [q.to_row()])
    parts.write_part(build.trajectories, 0, [good.to_row(), bad.to_row()])
    openai_server.set_handler(_verdicts(q))
    config = ScoreConfig(judge_urls=(openai_server.base_url,), judge_model="j",
                         pair_margin=0.1, pair_min_gap=0.0)
    report = score_build(build, config)
    assert report["judge_scored"] == 2 and report["pair_sources"] == {"judge:openai:j": 1}
    pairs = list(parts.read_parts(build.pairs))
    assert [(p["chosen"], p["rejected"]) for p in pairs] == [(good.tid, bad.tid)]
    n = len(openai_server.requests)
    score_build(build, config, force=True)  # recomputed, but every verdict comes from the cache
    assert len(openai_server.requests) == n
