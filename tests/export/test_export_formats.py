"""Export records per format: layout, weights, round trips and schema validation."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from hopforge.corpus.tools import default_schemas
from hopforge.export.layouts.registry import schemas_for
from hopforge.export.messages import (
    resolve_tools,
    tools_from_prompt,
    turn_weight,
    turns_from_messages,
    without_tool_schemas,
)
from hopforge.export.preference import preference_record
from hopforge.export.records import Example
from hopforge.export.rl import (
    Task,
    compute_score,
    extract_answer,
    grpo_reward,
    plain_record,
    verl_record,
)
from hopforge.export.schemas import RecordValidator
from hopforge.export.selection import with_windows
from hopforge.export.sft import sft_records
from hopforge.export.sharegpt import dataset_info, parse_function_call, sharegpt_records
from hopforge.export.windows import WindowSettings
from hopforge.filters.records import Decision, PreferencePair
from hopforge.synth import prompts
from hopforge.synth.records import Turn
from hopforge.synth.trajectories.loop import system_prompt

from tests.helpers.export_data import SYSTEM, make_question, make_score, make_trajectory

TOOLS = default_schemas()
NAMES = [t["function"]["name"] for t in TOOLS]
SCHEMAS = schemas_for(NAMES)


@pytest.fixture
def example() -> Example:
    rng = random.Random(3)
    q = make_question(1, rng)
    t = make_trajectory(q, 0, rng, flaws=True)
    score = make_score(t, rng, negative_turn=1)
    ex = Example(
        trajectory=t,
        question=q,
        split="train",
        chain="c1",
        score=score,
        decision=Decision(tid=t.tid, qid=q.qid, kept=True, weight=0.5),
    )
    return with_windows(ex, TOOLS, WindowSettings(keep_results=100))[0]


def sft_record(ex: Example, tools: list, flavour: str) -> dict:
    """The row of the example's only window."""
    rows = [row for _, row in sft_records(ex, tools, flavour)]  # type: ignore[arg-type]
    assert len(rows) == 1
    return rows[0]


def sharegpt_record(ex: Example, tools: list) -> dict:
    """The ShareGPT row that trains the example's last trained turn (the whole conversation)."""
    return [row for _, row in sharegpt_records(ex, tools)][-1]


def _expected_weights(ex: Example) -> list[int]:
    out = []
    for turn, reward in zip(ex.trajectory.turns, ex.score.turn_rewards, strict=True):  # type: ignore[union-attr]
        bad = turn.call is None or not turn.args_valid or turn.repeat_of is not None or reward < 0
        out.append(0 if bad else 1)
    return out


def test_turn_weight_rules() -> None:
    ok = Turn(index=0, raw="", call=None)
    assert turn_weight(ok) == 0
    from hopforge.synth.records import ToolCall

    call = ToolCall(name="search", arguments={"query": "x"})
    assert turn_weight(Turn(index=0, raw="", call=call)) == 1
    assert turn_weight(Turn(index=0, raw="", call=call), -0.1) == 0
    assert turn_weight(Turn(index=0, raw="", call=call), 0.0) == 1
    assert turn_weight(Turn(index=0, raw="", call=call, args_valid=False)) == 0
    assert turn_weight(Turn(index=0, raw="", call=call, schema_valid=False)) == 0
    assert turn_weight(Turn(index=2, raw="", call=call, repeat_of=1)) == 0


@pytest.mark.parametrize("flavour", ["openai", "hf"])
def test_sft_record_round_trips_and_weights_bad_turns_zero(example: Example, flavour: str) -> None:
    row = sft_record(example, TOOLS, flavour)  # type: ignore[arg-type]
    assert RecordValidator(SCHEMAS[f"sft/{flavour}"]).problem(row) == ""
    msgs = row["messages"]
    assert msgs[0] == {"role": "system", "content": without_tool_schemas(SYSTEM)}
    assert "JSON schemas" not in msgs[0]["content"] and tools_from_prompt(msgs[0]["content"]) == []
    assert msgs[1] == {
        "role": "user",
        "content": prompts.AGENT_QUESTION.format(question=example.question.question),
    }
    assert msgs[-1]["role"] == "assistant"  # the echo of the final answer is left out
    turns = turns_from_messages(msgs)
    traj = example.trajectory
    assert len(turns) == len(traj.turns)
    assert [t["weight"] for t in turns] == _expected_weights(example)
    assert 0 in _expected_weights(example) and 1 in _expected_weights(example)
    for i, (got, turn) in enumerate(zip(turns, traj.turns, strict=True)):
        if turn.call is None:
            assert got["call"] is None and got["raw"] == turn.raw and got["weight"] == 0
            assert got["result"] == prompts.AGENT_INVALID_CALL.format(error=turn.error)
            continue
        assert got["call"] == turn.call and got["thought"] == turn.thought
        assert got["result"] == (turn.result if i < len(traj.turns) - 1 else "")
    calls = [m for m in msgs if m.get("tool_calls")]
    args = [c["tool_calls"][0]["function"]["arguments"] for c in calls]
    assert all(isinstance(a, str if flavour == "openai" else dict) for a in args)
    assert ("parallel_tool_calls" in row) == (flavour == "openai")
    meta = row["metadata"]
    assert (
        meta["tid"] == traj.tid
        and meta["sample_weight"] == 0.5
        and meta["hops"] == example.question.n_hops
    )
    assert meta["rewards"]["turn_rewards"] == list(example.score.turn_rewards)  # type: ignore[union-attr]
    assert set(row) - {"metadata"} <= {"messages", "tools", "parallel_tool_calls"}


def test_tool_messages_answer_the_call_before_them(example: Example) -> None:
    msgs = sft_record(example, TOOLS, "hf")["messages"]
    for prev, msg in itertools.pairwise(msgs):
        if msg["role"] == "tool":
            call = prev["tool_calls"][0]
            assert msg["tool_call_id"] == call["id"] and msg["name"] == call["function"]["name"]
    ids = [m["tool_calls"][0]["id"] for m in msgs if m.get("tool_calls")]
    assert len(ids) == len(set(ids))


def test_sharegpt_alternates_and_round_trips(example: Example) -> None:
    row = sharegpt_record(example, TOOLS)
    assert RecordValidator(SCHEMAS["sharegpt"]).problem(row) == ""
    conv = row["conversations"]
    assert len(conv) % 2 == 0
    for i, msg in enumerate(conv):
        assert msg["from"] in (("human", "observation") if i % 2 == 0 else ("gpt", "function_call"))
    model = [m for m in conv if m["from"] in ("gpt", "function_call")]
    assert row["metadata"]["turn"] == example.trajectory.turns[-1].index
    assert len(model) == len(example.trajectory.turns)
    rows = [r for _, r in sharegpt_records(example, TOOLS)]
    assert len(rows) == sum(_expected_weights(example))  # one row per trained turn
    for msg, turn in zip(model, example.trajectory.turns, strict=True):
        if turn.call is None:
            assert msg == {"from": "gpt", "value": turn.raw}
        else:
            assert parse_function_call(msg["value"]) == (
                turn.call.name,
                turn.call.arguments,
                turn.thought,
            )
    assert json.loads(row["tools"]) == TOOLS and row["system"] == without_tool_schemas(SYSTEM)
    info = dataset_info("demo", ["train", "validation"])
    assert (
        info["demo_train"]["file_name"] == "train"
        and info["demo_train"]["formatting"] == "sharegpt"
    )


def test_rl_rows_follow_verl_and_plain_layouts(example: Example) -> None:
    q = example.question
    task = Task(
        question=q,
        split="validation",
        chain="c1",
        system_prompt=SYSTEM,
        scores=(example.score,),
        n_trajectories=2,
        final_answers=(example.trajectory.final_answer, "somewhere else"),
    )  # type: ignore[arg-type]
    settings = {
        "page_chars": 1200,
        "default_k": 5,
        "max_k": 20,
        "mode": "hybrid",
        "corpus_fingerprint": "fp",
    }
    row = verl_record(task, index=4, tool_names=NAMES, tool_settings=settings)
    assert RecordValidator(SCHEMAS["rl/verl"]).problem(row) == ""
    assert list(row)[:6] == [
        "data_source",
        "agent_name",
        "prompt",
        "ability",
        "reward_model",
        "extra_info",
    ]
    assert row["reward_model"] == {
        "style": "rule",
        "ground_truth": {"target": [q.answer, *q.answer_aliases], "answer_type": ""},
    }
    assert row["extra_info"]["index"] == 4 and row["extra_info"]["split"] == "validation"
    assert (
        row["extra_info"]["tools_kwargs"]["answer"]["create_kwargs"]["ground_truth"]["target"][0]
        == q.answer
    )
    assert row["metadata"]["teacher_pass_rate"] == 0.5  # one right answer of two
    assert row["metadata"]["mean_reward"] == example.score.pointwise > 0  # type: ignore[union-attr]
    system = row["prompt"][0]["content"]
    # the SFT rows' system prompt; the schemas come once, with the tools (verl's tool config)
    assert system == SYSTEM and '"name": "search"' not in system
    plain = plain_record(task)
    assert RecordValidator(SCHEMAS["rl/plain"]).problem(plain) == ""
    assert plain["prompt"] == row["prompt"] and plain["answer"] == q.answer


def test_compute_score_reads_the_answer_call() -> None:
    truth = {"target": ["Sallow Reach", "Sallow Reach town"]}
    rollout = 'Found it.\n<tool_call>\n{"name": "answer", "arguments": {"text": "the sallow reach"}}\n</tool_call>'
    assert extract_answer(rollout) == "the sallow reach"
    assert compute_score("hopforge", rollout, truth) == 1.0
    assert compute_score("hopforge", rollout.replace("sallow", "brack"), truth) == 0.0
    assert compute_score("hopforge", "<answer>Sallow Reach town</answer>", truth) == 1.0
    string_args = '{"name": "answer", "arguments": "{\\"text\\": \\"Sallow Reach\\"}"}'
    assert compute_score("hopforge", string_args, ["Sallow Reach"]) == 1.0
    assert compute_score("hopforge", "", truth) == 0.0


def test_reward_grades_lists_as_sets_and_not_found_only_when_unanswerable() -> None:
    listed = {"target": ["Alpha; Beta; Gamma"], "answer_type": "list"}
    for said in ("Gamma; Alpha; Beta", "beta, gamma and the alpha", "Alpha;Beta;Gamma"):
        assert compute_score("hopforge", f"<answer>{said}</answer>", listed) == 1.0
    for said in ("Alpha; Beta", "Alpha; Beta; Gamma; Delta", "not found"):
        assert compute_score("hopforge", f"<answer>{said}</answer>", listed) == 0.0
    # rows without answer_type: a target with ";" is read as a list
    assert compute_score("hopforge", "<answer>B; A</answer>", ["A; B"]) == 1.0
    aliased = {"target": ["Alpha; Beta", "Alpha; Beta town"], "answer_type": "list"}
    assert compute_score("hopforge", "<answer>beta town; alpha</answer>", aliased) == 1.0
    none = {"target": ["not found"], "answer_type": "not_found"}
    for said in ("not found", "None of them.", "No such document", "none"):
        assert compute_score("hopforge", f"<answer>{said}</answer>", none) == 1.0
    empty = {"target": ["none"], "answer_type": "not_found"}  # a list no item belongs to
    assert compute_score("hopforge", "<answer>none</answer>", empty) == 1.0
    assert compute_score("hopforge", "<answer>none</answer>", ["none"]) == 1.0  # untyped
    assert compute_score("hopforge", "<answer>Alpha</answer>", none) == 0.0
    titled = {"target": ["Sallow Reach"], "answer_type": "title"}
    assert compute_score("hopforge", "<answer>not found</answer>", titled) == 0.0
    assert grpo_reward(
        [[{"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "answer", "arguments": {"text": "B; A"}}}]}],
         "<answer>A</answer>"],
        answer=["A; B", "A; B"], aliases=[[], []], answer_type=["list", "list"],
    ) == [1.0, 0.0]


def test_preference_record_is_trl_conversational(example: Example) -> None:
    rng = random.Random(5)
    worse = make_trajectory(example.question, 1, rng, flaws=False)
    pair = PreferencePair(
        qid=example.question.qid, chosen=example.trajectory.tid, rejected=worse.tid, margin=0.3
    )
    row = preference_record(
        pair,
        question=example.question,
        chosen=example.trajectory,
        rejected=worse,
        split="train",
        chain="c1",
        tools=TOOLS,
    )
    assert RecordValidator(SCHEMAS["preference"]).problem(row) == ""
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    for side in ("chosen", "rejected"):
        assert row[side][0]["role"] == "assistant" and row[side][-1]["role"] == "assistant"
        assert all("weight" not in m for m in row[side])
    assert (
        row["metadata"]["chosen_tid"] == example.trajectory.tid and row["metadata"]["margin"] == 0.3
    )


@pytest.mark.parametrize(
    ("kind", "change", "where"),
    [
        (
            "sft/hf",
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(arguments="{}"),
            "arguments",
        ),
        (
            "sft/openai",
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(arguments={}),
            "arguments",
        ),
        ("sft/hf", lambda r: r["messages"][3].pop("tool_call_id"), "messages/3"),
        ("sft/hf", lambda r: r["messages"][2].update(weight=2), "weight"),
        ("sft/hf", lambda r: r["messages"][1].update(weight=1), "messages/1"),
        ("sft/hf", lambda r: r.update(extra=1), "(record)"),
        ("sft/hf", lambda r: r["metadata"].pop("qid"), "metadata"),
        (
            "sharegpt",
            lambda r: r["conversations"][0].update({"from": "user"}),
            "conversations/0/from",
        ),
    ],
)
def test_schemas_reject_broken_records(example: Example, kind: str, change, where: str) -> None:  # type: ignore[no-untyped-def]
    row = (
        sharegpt_record(example, TOOLS)
        if kind == "sharegpt"
        else sft_record(example, TOOLS, kind.split("/")[1])
    )  # type: ignore[arg-type]
    change(row)
    problem = RecordValidator(SCHEMAS[kind]).problem(row)
    assert problem and where in problem


def test_tools_come_from_the_system_prompt_then_the_toolbox() -> None:
    assert tools_from_prompt(SYSTEM) == []  # native calls: the schemas went in `tools`
    text_calls = system_prompt(default_schemas(), text_calls=True)
    assert tools_from_prompt(text_calls) == TOOLS
    assert tools_from_prompt("no tools here [1, 2]") == []
    tagged = "<tools>\n" + "\n".join(json.dumps(t["function"]) for t in TOOLS) + "\n</tools>"
    assert tools_from_prompt(tagged) == TOOLS
    assert resolve_tools((), [SYSTEM, text_calls]) == (TOOLS, "system prompt")
    assert resolve_tools((), [""], max_k=7)[0] == default_schemas(max_k=7)
    custom = [{"name": "search", "parameters": {"type": "object", "properties": {}}}]
    assert resolve_tools(custom, [text_calls])[0][0]["type"] == "function"


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    """Paths into a record: every dict key and the first list items, places to break it."""
    found: list[tuple] = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            found += _paths(v, (*path, i))
    return found


@pytest.mark.parametrize("kind", ["sft/openai", "sft/hf", "sharegpt"])
def test_the_fast_validator_agrees_with_jsonschema(example: Example, kind: str) -> None:
    import copy

    import fastjsonschema
    import jsonschema

    row = (sharegpt_record(example, TOOLS) if kind == "sharegpt"
           else sft_record(example, TOOLS, kind.split("/")[1]))  # type: ignore[arg-type]
    fast = fastjsonschema.compile(SCHEMAS[kind])
    reference = jsonschema.Draft202012Validator(SCHEMAS[kind])
    validator = RecordValidator(SCHEMAS[kind])
    paths = _paths(row)
    replacements = [None, 7, "x", [], {"extra": 1}]
    rejected = 0
    for path in paths:
        for new in replacements:
            broken = copy.deepcopy(row)
            target = broken
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = new
            try:
                fast(broken)
                fast_ok = True
            except fastjsonschema.JsonSchemaValueException:
                fast_ok = False
            assert fast_ok == reference.is_valid(broken), (path, new)
            assert (validator.problem(broken) == "") == fast_ok
            rejected += not fast_ok
    assert rejected > len(paths)  # most breakages are caught, by both
