import asyncio
import copy
import json
import random
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from hopforge.corpus.settings import explain
from hopforge.corpus.tools import ToolBox
from hopforge.synth import prompts
from hopforge.synth.records import Checkpoint, Question, ToolCall
from hopforge.synth.teacher.chat import Completion, Message, ModelResponseError, ModelUnavailable
from hopforge.synth.trajectories.context import (
    CheckpointParseError,
    Context,
    parse_checkpoint_json,
    render_checkpoint,
)
from hopforge.synth.trajectories.faults import FaultConfig, FaultyTools
from hopforge.synth.trajectories.loop import run_agent, system_prompt
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import (
    BatchedTools,
    SearchBatcher,
    TrajectoryConfig,
    run_trajectories,
)

Step = Callable[[int, list[Message], dict[str, Any]], Completion]


class Teacher:
    """A ChatModel whose next completion comes from `step(call_number, messages, kwargs)`."""

    name = "test"

    def __init__(self, step: Step) -> None:
        self.step = step
        self.calls: list[tuple[list[Message], dict[str, Any]]] = []

    async def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        self.calls.append((messages, kwargs))
        return self.step(len(self.calls) - 1, messages, kwargs)


class Recording:
    """Wraps a teacher and keeps every prompt it was sent."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[tuple[list[Message], dict[str, Any]]] = []

    async def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        self.calls.append(([dict(m) for m in messages], kwargs))
        return await self.inner.complete(messages, **kwargs)


def call(name: str, **arguments: Any) -> Completion:
    return Completion(text="", tool_calls=(ToolCall(name=name, arguments=arguments),),
                      completion_tokens=5)


def fails_on_third_call(error: Exception) -> Step:
    """A teacher's steps: a search on each of its first two calls, then `error` raised."""
    def step(n: int, messages: list[Message], kwargs: dict[str, Any]) -> Completion:
        if n == 2:
            raise error
        return call("search", query=f"Quillon {n}")

    return step


def agent(question: Question, teacher: Any, searcher: Any, **config: Any) -> Any:
    cfg = TrajectoryConfig(**{"checkpoint_every": 0, **config})
    tools = FaultyTools(BatchedTools(ToolBox(searcher), SearchBatcher(searcher)), cfg.faults,
                        random.Random(0))
    return asyncio.run(run_agent(question, teacher, tools, config=cfg, tid="t", sample=0, seed=1))


def test_scripted_teacher_solves_every_chain(agent_questions: list, agent_searcher: Any) -> None:
    def factory(q: Question, sample: int, seed: int) -> Any:
        return ScriptedTeacher(q, agent_searcher.documents, seed=seed,
                               config=ScriptedConfig(early_answer=0.0))

    config = TrajectoryConfig(samples=2, concurrency=4)
    trajectories = asyncio.run(run_trajectories(agent_questions, agent_searcher, factory,
                                                config=config))
    assert [t.tid for t in trajectories] == [f"q{i}-s{s}" for i in range(5) for s in range(2)]
    by_qid = {q.qid: q for q in agent_questions}
    for t in trajectories:
        q = by_qid[t.qid]
        assert t.termination == "answer" and t.final_answer == q.answer, t.reason
        assert t.teacher == "scripted" and t.usage.completion_tokens > 0
        seen = {d for turn in t.turns for d in turn.new_evidence}
        assert seen == set(q.evidence)
        assert all(turn.schema_valid and turn.args_valid for turn in t.turns)
        assert t.turns[-1].call.name == "answer"
        assert '"search"' not in t.system_prompt  # the schemas go in the request's tools
    pairs = list(zip(trajectories[::2], trajectories[1::2], strict=True))
    assert all(a.qid == b.qid and a.seed != b.seed for a, b in pairs)
    # the sample's seed steers the teacher: some question's two samples call different tools
    assert any([t.call for t in a.turns] != [t.call for t in b.turns] for a, b in pairs)


def test_max_turns(agent_questions: list, agent_searcher: Any) -> None:
    teacher = Teacher(lambda n, m, k: call("search", query=f"zzz{n}"))
    t = agent(agent_questions[0], teacher, agent_searcher, max_turns=7, no_progress_turns=100)
    assert t.termination == "max_turns" and len(t.turns) == 7 and "max_turns=7" in t.reason


def test_repetition(agent_questions: list, agent_searcher: Any) -> None:
    teacher = Teacher(lambda n, m, k: call("search", query="Grey Needle" if n % 2 else "grey needle!"))
    t = agent(agent_questions[0], teacher, agent_searcher, repeat_limit=3, repeat_window=10)
    assert t.termination == "repetition" and len(t.turns) == 4
    assert [turn.repeat_of for turn in t.turns] == [None, 0, 1, 2]
    assert "4 times" in t.reason


def test_no_progress(agent_questions: list, agent_searcher: Any) -> None:
    teacher = Teacher(lambda n, m, k: call("search", query=f"nothing{n} here"))
    t = agent(agent_questions[2], teacher, agent_searcher, no_progress_turns=5)
    assert t.termination == "no_progress" and len(t.turns) == 5
    assert all(not turn.new_evidence for turn in t.turns)


def test_context_limit_forces_a_final_answer(agent_questions: list, agent_searcher: Any) -> None:
    docs = list(agent_searcher.documents)

    def step(n: int, messages: list[Message], kwargs: dict[str, Any]) -> Completion:
        if messages[-1]["content"] == prompts.AGENT_FORCE_ANSWER:
            return call("answer", text="Quillon")
        return call("open", doc_id=docs[n % len(docs)])

    teacher = Teacher(step)
    t = agent(agent_questions[2], teacher, agent_searcher, context_tokens=1600, max_tokens=100,
              keep_results=50, no_progress_turns=100)
    assert t.termination == "context_limit" and t.final_answer == "Quillon"
    assert t.turns[-1].call.name == "answer" and "prompt reached" in t.reason
    forced_tools = teacher.calls[-1][1]["tools"]
    assert [s["function"]["name"] for s in forced_tools] == ["answer"]
    assert len(teacher.calls[-1][0]) < len(teacher.calls[-2][0])  # a compacted prompt


def test_an_unusable_answer_ends_the_trajectory_and_never_becomes_a_message(
    agent_questions: list, agent_searcher: Any
) -> None:
    teacher = Teacher(fails_on_third_call(
        ModelResponseError("server sent: SECRET-TEXT without choices")))
    t = agent(agent_questions[2], teacher, agent_searcher)
    assert t.termination == "error" and "SECRET-TEXT" in t.reason and len(t.turns) == 2
    assert "ModelResponseError" in t.reason
    assert not any("SECRET-TEXT" in json.dumps(turn.to_row()) for turn in t.turns)


def test_a_server_that_keeps_failing_stops_the_run(
    agent_questions: list, agent_searcher: Any
) -> None:
    failing = Teacher(fails_on_third_call(ModelUnavailable("server said: HTTP 500 after 4 retries")))
    with pytest.raises(ModelUnavailable, match="after 4 retries"):
        agent(agent_questions[2], failing, agent_searcher)


def test_garbage_gets_feedback_then_ends_in_error(agent_questions: list, agent_searcher: Any) -> None:
    teacher = Teacher(lambda n, m, k: Completion(text=f"I think it is Quillon ({n})."))
    t = agent(agent_questions[2], teacher, agent_searcher, max_invalid_turns=2)
    assert t.termination == "error" and "no usable tool call in 3 turns" in t.reason
    assert [turn.schema_valid for turn in t.turns] == [False, False, False]
    assert t.turns[0].raw == "I think it is Quillon (0)." and "no tool call" in t.turns[0].error
    second_prompt = teacher.calls[1][0]
    assert second_prompt[-2] == {"role": "assistant", "content": "I think it is Quillon (0)."}
    assert second_prompt[-1]["content"].startswith("Your last message could not be used")


def test_invalid_arguments_and_unknown_tools_are_reported(
    agent_questions: list, agent_searcher: Any
) -> None:
    script = [
        call("search", query=""),
        call("browse", url="x"),
        call("search", query="Quillon", k=99),
        call("answer", text="Quillon"),
    ]
    teacher = Teacher(lambda n, m, k: script[n])
    t = agent(agent_questions[2], teacher, agent_searcher)
    assert t.termination == "answer" and t.final_answer == "Quillon"
    assert [(x.schema_valid, x.args_valid) for x in t.turns] == [
        (True, False), (False, False), (True, False), (True, True)]
    assert "must not be empty" in t.turns[0].result
    assert "no tool named 'browse'" in t.turns[1].result
    tool_messages = [m for m in teacher.calls[3][0] if m["role"] == "tool"]
    assert "between" in tool_messages[-1]["content"] or "from 1 to 20" in tool_messages[-1]["content"]


def test_checkpoints_are_kept_and_old_results_elided(agent_questions: list, agent_searcher: Any) -> None:
    q = agent_questions[0]
    # a seed whose last turn does not follow a checkpoint: its prompt has results to elide
    teacher = Recording(ScriptedTeacher(q, agent_searcher.documents, seed=0))
    t = agent(q, teacher, agent_searcher, checkpoint_every=3, keep_results=2)
    assert t.termination == "answer"
    assert [c.turn for c in t.checkpoints] == list(range(2, len(t.turns) - 1, 3))
    assert t.checkpoints[-1].goal == q.question and t.checkpoints[-1].facts
    assert all(src in q.evidence for _, src in t.checkpoints[-1].facts)
    cp_requests = [k for _, k in teacher.calls if k.get("response_format")]
    assert len(cp_requests) == len(t.checkpoints)
    for messages, kwargs in teacher.calls:
        tool_msgs = [m for m in messages if m["role"] == "tool"]
        verbatim = [m for m in tool_msgs if not m["content"].startswith("[result of turn")]
        assert len(verbatim) <= 2
    last_prompt = teacher.calls[-1][0]
    assert "Your checkpoint at turn" in last_prompt[1]["content"]
    assert any(m["content"].startswith("[result of turn") for m in last_prompt if m["role"] == "tool")
    # the assistant's tool calls and the tool results still pair up by id
    ids = [c["id"] for m in last_prompt if m.get("tool_calls") for c in m["tool_calls"]]
    assert ids == [m["tool_call_id"] for m in last_prompt if m["role"] == "tool"]


def test_dropping_the_oldest_step_equals_feeding_the_later_steps_alone() -> None:
    """The export's windows start one turn later by dropping a step, not by replaying."""
    rng = random.Random(7)
    cps = {3: Checkpoint(turn=3, goal="g3"), 6: Checkpoint(turn=6, goal="g6", facts=(("f", "d"),))}
    steps = [(i, {"role": "assistant", "content": f"a{i}" * rng.randint(1, 30)},
              {"role": "user", "content": "r" * rng.randint(10, 900)},
              None if i == 4 else f"[pointer {i}]") for i in range(10)]

    def fed(part: list[Any]) -> Context:
        ctx = Context("sys", "Q?", keep_results=2, context_tokens=700, reserve_tokens=50)
        for turn, a, r, pointer in part:
            ctx.add_step(turn, a, r, pointer)
            if turn in cps:
                ctx.set_checkpoint(cps[turn])
        return ctx

    for budget in (300, 700, 5000):
        dropping = fed(steps)
        for k in range(1, len(steps)):
            dropping.drop_oldest()
            fresh = fed(steps[k:])
            for ctx in (dropping, fresh):
                ctx.context_tokens = budget
            view = copy.copy(dropping)  # render a copy, as the windows do
            assert view.render() == fresh.render(), (budget, k)
            assert view.estimate_tokens() == fresh.estimate_tokens(), (budget, k)
            assert view.render(compact=True) == fresh.render(compact=True), (budget, k)
            assert dropping.checkpoint == fresh.checkpoint, (budget, k)


def test_context_renders_budget_and_calibrates() -> None:
    ctx = Context("sys", "Q?", keep_results=1, context_tokens=1000, reserve_tokens=100)
    for i in range(3):
        a = {"role": "assistant", "content": f"a{i}"}
        ctx.add_step(i, a, {"role": "user", "content": "r" * 400}, f"[pointer {i}]")
    messages = ctx.render()
    assert [m["content"][:9] for m in messages[2:]] == ["a0", "[pointer ", "a1", "[pointer ",
                                                        "a2", "r" * 9]
    before = ctx.estimate_tokens()
    ctx.calibrate(before * 2)
    assert ctx.estimate_tokens() == pytest.approx(before * 2, rel=0.05)
    ctx.set_checkpoint(Checkpoint(turn=2, goal="g", facts=(("f", "d1"),)))
    messages = ctx.render()  # every turn is still shown while it fits
    assert len(messages) == 8 and "Your checkpoint at turn 2" in messages[1]["content"]
    assert not ctx.over_budget()
    shown = set()
    for budget in range(200, 1000, 5):  # a smaller window leaves out summarized turns, oldest first
        ctx.context_tokens = budget
        messages = ctx.render()
        assert [m["content"][:2] for m in messages[-2:]] == ["a2", "rr"]
        shown.add(len(messages))
    assert shown == {4, 6, 8}
    ctx.context_tokens = 150
    ctx.render()
    assert ctx.over_budget()


def test_parse_checkpoint_json() -> None:
    text = json.dumps({"goal": "g", "facts": [{"fact": "x was born in y", "source": "d1"}],
                       "open_constraints": ["z"], "queries_tried": ["q1"]})
    cp = parse_checkpoint_json(f"```json\n{text}\n```", 9)
    assert cp == Checkpoint(turn=9, goal="g", facts=(("x was born in y", "d1"),),
                            open_constraints=("z",), queries_tried=("q1",))
    assert "x was born in y (source: d1)" in render_checkpoint(cp)
    with pytest.raises(CheckpointParseError, match="not valid JSON"):
        parse_checkpoint_json("the state is fine", 1)
    with pytest.raises(CheckpointParseError, match='"goal"'):
        parse_checkpoint_json("[]", 1)
    with pytest.raises(CheckpointParseError, match="fact"):
        parse_checkpoint_json('{"goal": "g", "facts": [3]}', 1)


def test_prompts_render() -> None:
    system = system_prompt([{"function": {"name": "search"}}], text_calls=True)
    assert "<tool_call>" in system and '"search"' in system
    assert "{" not in prompts.AGENT_CHECKPOINT_BLOCK.format(
        turn=1, goal="g", facts="- f", open_constraints="- c", queries_tried="q")
    assert prompts.AGENT_ELIDED_RESULT.format(turn=3, shown="; it showed d1", again="open()").startswith("[result")
    assert json.loads(prompts.AGENT_CHECKPOINT.split("object: ", 1)[1].split(". Only")[0])
    assert prompts.AGENT_TOOL_RESPONSE.format(result="r") == "<tool_response>\nr\n</tool_response>"
    assert "browse" in prompts.AGENT_UNKNOWN_TOOL.format(name="browse", names="search")
    assert "k" in prompts.AGENT_INVALID_ARGUMENTS.format(name="search", problem="k")
    assert "oops" in prompts.AGENT_INVALID_CALL.format(error="oops")
    assert "answer" in prompts.AGENT_FORCE_ANSWER and "Question: x" == prompts.AGENT_QUESTION.format(question="x")


def test_config_is_validated() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        TrajectoryConfig(max_turns=0)
    assert explain(caught.value, "TrajectoryConfig") == (
        "TrajectoryConfig.max_turns = 0 is out of range: expected at least 1")
    with pytest.raises(ValueError, match="max_tokens = 20000 leaves too little room"):
        TrajectoryConfig(max_tokens=20000)
    with pytest.raises(ValueError, match="call_format"):
        TrajectoryConfig(call_format="xml")  # type: ignore[arg-type]
    assert TrajectoryConfig(max_turns=1000).max_turns == 1000
    assert TrajectoryConfig(faults=FaultConfig.uniform(0.2)).faults.total == pytest.approx(0.2)


def test_search_batcher_coalesces_concurrent_searches(agent_searcher: Any) -> None:
    batcher = SearchBatcher(agent_searcher, max_batch=4)
    queries = ["Quillon", "lighthouse", "gallery", "Dorran Pell", "salt cod", "observatory"]

    async def main() -> list[Any]:
        return await asyncio.gather(*(batcher.search(q, 3, "bm25") for q in queries))

    results = asyncio.run(main())
    assert results == [agent_searcher.search(q, k=3, mode="bm25") for q in queries]
    assert batcher.queries == 6 and batcher.batches == 2
    threaded = SearchBatcher(agent_searcher, threaded=True, wait_s=0.001)

    async def main2() -> list[Any]:
        return await asyncio.gather(*(threaded.search(q, 2, "bm25") for q in queries))

    assert asyncio.run(main2()) == [agent_searcher.search(q, k=2, mode="bm25") for q in queries]
    assert threaded.batches == 1
    threaded.close()


def test_batched_tools_give_the_toolbox_results(agent_searcher: Any) -> None:
    toolbox = ToolBox(agent_searcher)
    batched = BatchedTools(toolbox, SearchBatcher(agent_searcher))
    calls = [("search", {"query": "Quillon"}), ("search", {"query": "lighthouse", "k": 2}),
             ("open", {"doc_id": "quillon"}), ("search", {"query": ""}),
             ("find", {"doc_id": "quillon", "pattern": "Grey"})]

    async def main() -> list[Any]:
        return await asyncio.gather(*(batched.call(n, a) for n, a in calls))

    assert asyncio.run(main()) == [toolbox.call(n, a) for n, a in calls]
    assert batched.batcher.batches == 1 and batched.batcher.queries == 2
    assert batched._primed.primed == {}  # every prefetched search was used
