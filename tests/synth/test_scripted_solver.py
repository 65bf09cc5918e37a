import asyncio
import json
import re
from collections import Counter
from typing import Any

import pydantic
import pytest
from hopforge.corpus.settings import explain
from hopforge.synth import prompts
from hopforge.synth.records import NOT_FOUND, Question, Trajectory
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories
from hopforge.synth.trajectories.voice import FACTS, NOTES, SITUATIONS, VOICES


def solve(questions: list[Question], searcher: Any, *, samples: int = 1,
          scripted: ScriptedConfig | None = None, **config: Any) -> list[Trajectory]:
    cfg = TrajectoryConfig(samples=samples, **config)

    def factory(q: Question, sample: int, seed: int) -> Any:
        return ScriptedTeacher(q, searcher.documents, seed=seed,
                               config=scripted or ScriptedConfig(early_answer=0.0))

    return asyncio.run(run_trajectories(questions, searcher, factory, config=cfg))


def calls(t: Trajectory) -> list[tuple[str, str]]:
    return [(x.call.name, json.dumps(x.call.arguments, sort_keys=True)) for x in t.turns if x.call]


def test_deterministic_for_a_seed_and_varied_across_seeds(
    agent_questions: list, agent_searcher: Any
) -> None:
    noisy = ScriptedConfig(wrong_doc=0.6)
    faults = FaultConfig.uniform(0.2, timeout_delay_s=0.0)
    a = solve(agent_questions, agent_searcher, samples=4, scripted=noisy, faults=faults)
    b = solve(agent_questions, agent_searcher, samples=4, scripted=noisy, faults=faults)
    strip = [t.to_row() | {"usage": None} for t in a]
    for row in strip:
        for turn in row["turns"]:
            turn["latency_s"] = 0
    again = [t.to_row() | {"usage": None} for t in b]
    for row in again:
        for turn in row["turns"]:
            turn["latency_s"] = 0
    assert strip == again
    per_question: dict[str, set[tuple[tuple[str, str], ...]]] = {}
    for t in a:
        per_question.setdefault(t.qid, set()).add(tuple(calls(t)))
    assert all(len(v) >= 2 for v in per_question.values())
    thoughts = {x.thought for t in a for x in t.turns}
    assert len(thoughts) > 20 and all(th for th in thoughts)


def test_early_answers_name_an_intermediate_entity(agent_questions: list,
                                                   agent_searcher: Any) -> None:
    trajectories = solve(agent_questions, agent_searcher,
                         scripted=ScriptedConfig(early_answer=1.0))
    for t, q in zip(trajectories, agent_questions):
        middle = {agent_searcher.documents[d].title for d in q.evidence[1:-1]}
        assert t.termination == "answer" and t.final_answer in middle


def test_retries_after_a_transient_fault(agent_questions: list, agent_searcher: Any) -> None:
    trajectories = solve(agent_questions, agent_searcher, samples=3,
                         faults=FaultConfig(timeout=0.3, persistent=0.0, timeout_delay_s=0.0))
    retried = [(t, x) for t in trajectories for x in t.turns
               if x.repeat_of is not None and t.turns[x.repeat_of].fault is not None]
    assert retried and all("30 s" in x.thought for _, x in retried)  # says what happened
    assert any(x.recovered for t in trajectories for x in t.turns)
    assert sum(t.final_answer == q.answer for t, q in zip(
        trajectories, [q for q in agent_questions for _ in range(3)])) >= 12


def test_moves_on_after_a_persistent_fault(agent_questions: list, agent_searcher: Any) -> None:
    trajectories = solve(agent_questions, agent_searcher, samples=3,
                         faults=FaultConfig(empty=0.25, timeout=0.25, persistent=1.0,
                                            timeout_delay_s=0.0))
    for t in trajectories:
        for x in t.turns:  # never more than max_retries repeats of a persistently failing call
            if x.fault is not None and x.fault.persistent:
                same = [y for y in t.turns if y.call == x.call]
                assert len(same) <= 1 + ScriptedConfig().max_retries
    assert sum(t.termination == "answer" for t in trajectories) == len(trajectories)


@pytest.mark.parametrize("kind", ["empty", "timeout", "format", "partial"])
def test_each_fault_kind_is_recorded_and_survived(
    kind: str, agent_questions: list, agent_searcher: Any
) -> None:
    faults = FaultConfig(**{kind: 0.3}, timeout_delay_s=0.0)
    trajectories = solve(agent_questions, agent_searcher, samples=2, faults=faults)
    hit = [x for t in trajectories for x in t.turns if x.fault is not None]
    assert hit and {x.fault.kind for x in hit} == {kind}
    assert all(x.call.name in ("search", "open", "find") for x in hit)
    correct = sum(t.final_answer == t_q.answer for t, t_q in
                  zip(trajectories, [q for q in agent_questions for _ in range(2)]))
    assert correct >= 6  # a persistent fault on a page the chain needs ends it fairly


def test_gives_up_when_nothing_can_be_found(agent_questions: list, agent_searcher: Any) -> None:
    [t] = solve(agent_questions[:1], agent_searcher,
                faults=FaultConfig(empty=1.0, persistent=1.0))
    assert t.termination == "answer" and t.final_answer == NOT_FOUND
    searches = [x for x in t.turns if x.call.name == "search"]
    tried = [(x.call.arguments["query"], x.call.arguments.get("k", 5)) for x in searches]
    assert len(tried) == len(set(tried)) >= 3 and tried[-1][1] == ScriptedConfig().wide_k


@pytest.mark.parametrize("fmt", ["tagged", "fenced"])
def test_text_formats_give_the_same_calls(fmt: str, agent_questions: list, agent_searcher: Any) -> None:
    native = solve(agent_questions[:2], agent_searcher)
    text = solve(agent_questions[:2], agent_searcher,
                 scripted=ScriptedConfig(call_format=fmt, early_answer=0),
                 call_format="text")
    assert [calls(t) for t in text] == [calls(t) for t in native]
    assert all(("<tool_call>" if fmt == "tagged" else "```json") in x.raw
               for t in text for x in t.turns)


def test_checkpoint_state_and_forced_answer(agent_questions: list, agent_searcher: Any) -> None:
    q = agent_questions[1]
    teacher = ScriptedTeacher(q, agent_searcher.documents, seed=0)

    async def go() -> tuple[Any, Any]:
        cp = await teacher.complete([{"role": "user", "content": "x"}],
                                    response_format={"type": "json_schema"})
        forced = await teacher.complete([{"role": "user", "content": prompts.AGENT_FORCE_ANSWER}])
        return cp, forced

    cp, forced = asyncio.run(go())
    state = json.loads(cp.text)
    assert set(state) == {"goal", "facts", "open_constraints", "queries_tried"}
    assert state["goal"] == q.question and state["open_constraints"]
    assert forced.tool_calls[0].name == "answer"
    assert forced.tool_calls[0].arguments == {"text": NOT_FOUND}


def test_scripted_config_is_validated() -> None:
    for bad, message in (
            ({"wrong_doc": 2}, "ScriptedConfig.wrong_doc = 2 is out of range: expected at most 1.0"),
            ({"max_wrong": -1}, "ScriptedConfig.max_wrong = -1 is out of range: expected at least 0"),
            ({"call_format": "xml"}, "ScriptedConfig.call_format = \"xml\": Input should be"),
            ({"house_style": 1.5}, "ScriptedConfig.house_style = 1.5 is out of range"),
            ({"style_drift": -0.1}, "ScriptedConfig.style_drift = -0.1 is out of range")):
        with pytest.raises(pydantic.ValidationError) as caught:
            ScriptedConfig(**bad)  # type: ignore[arg-type]
        assert explain(caught.value, "ScriptedConfig").startswith(message)


def _template_patterns() -> dict[str, re.Pattern[str]]:
    """voice name -> a regex for a whole thought: note lines, then a situation line."""

    def alternation(lines: list[str]) -> str:
        return "|".join(re.sub(r"\\\{\w+\\\}", ".+?", re.escape(x)) for x in lines)

    return {v.name: re.compile(
        f"^(?:(?:{alternation([v.lines[n] for n in NOTES])}) )*"
        f"(?:{alternation([v.lines[s] for s in SITUATIONS if s != 'first'])})$") for v in VOICES}


def _voice_of(thought: str, patterns: dict[str, re.Pattern[str]]) -> str:
    names = [n for n, p in patterns.items() if p.match(thought)]
    assert names, thought
    return names[0]


def test_every_voice_covers_every_situation_and_note() -> None:
    patterns = _template_patterns()
    assert len(VOICES) >= 5 and len({v.name for v in VOICES}) == len(VOICES)
    for v in VOICES:
        assert set(v.lines) == set(SITUATIONS) | set(NOTES) | set(FACTS), v.name
        for situation in SITUATIONS:
            if situation != "first":
                text = v.say(situation, what="Zed Qor", title="Zed Qor", pattern="Zed Qor",
                             answer="Zed Qor", page="2", why="none has it")
                assert patterns[v.name].match(text), (v.name, text)


def test_house_style_dominates_but_is_not_universal(agent_questions: list,
                                                    agent_searcher: Any) -> None:
    trajectories = solve(agent_questions, agent_searcher, samples=12)
    patterns = _template_patterns()
    house_share = []
    for t in trajectories:
        voices = Counter(_voice_of(x.thought, patterns) for x in t.turns)
        house_share.append(voices["house"] / sum(voices.values()))
    house = [s for s in house_share if s >= 0.5]
    assert 0.55 <= len(house) / len(trajectories) <= 0.85  # house_style = 0.65
    assert sum(house) / len(house) >= 0.8  # a house trajectory is in the house voice throughout
    assert sum(s == 1.0 for s in house_share) < len(trajectories)  # ... but not every one
    others = Counter(Counter(_voice_of(x.thought, patterns) for x in t.turns).most_common(1)[0][0]
                     for t, s in zip(trajectories, house_share) if s < 0.5)
    assert len(others) >= 3 and "house" not in others
    by_q = {q.qid: q for q in agent_questions}
    copied = [json.loads(calls(t)[0][1])["query"] == by_q[t.qid].question.rstrip("?")
              for t in trajectories]
    assert 0.5 <= sum(copied) / len(copied) <= 0.9  # the house query habit: copy the question


def test_style_rates_at_their_ends(agent_questions: list, agent_searcher: Any) -> None:
    patterns = _template_patterns()
    by_q = {q.qid: q for q in agent_questions}
    for rate in (0.0, 1.0):
        cfg = ScriptedConfig(early_answer=0, house_style=rate, style_drift=0)
        trajectories = solve(agent_questions, agent_searcher, samples=4, scripted=cfg)
        house = [_voice_of(x.thought, patterns) == "house" for t in trajectories for x in t.turns]
        assert all(house) if rate else not any(house)
        first = [json.loads(calls(t)[0][1])["query"] for t in trajectories]
        copied = [q == by_q[t.qid].question.rstrip("?") for q, t in zip(first, trajectories)]
        assert all(copied) if rate else not any(copied)
        assert all(t.final_answer == by_q[t.qid].answer for t in trajectories)


def test_no_query_is_sent_twice_in_other_words(agent_questions: list,
                                                agent_searcher: Any) -> None:
    from hopforge.corpus.tools import normalize_text

    faults = FaultConfig(empty=0.5, persistent=1.0)
    for t in solve(agent_questions, agent_searcher, samples=4, faults=faults):
        keys = [normalize_text(x.call.arguments["query"]) for x in t.turns
                if x.call.name == "search" and x.repeat_of is None]
        assert len(keys) == len(set(keys)), t.tid


def test_every_family_names_a_plan_the_scripted_teacher_has() -> None:
    """A family says which plan the scripted teacher follows for its specs (no dispatch table)."""
    from hopforge.synth.questions.families import FAMILIES
    from hopforge.synth.trajectories.families import Plans

    plans = {f.name: f.plan for f in FAMILIES}
    assert {"chain": "chain", "comparison": "comparison", "intersection": "intersection",
            "aggregation": "aggregation", "unanswerable": "chain"}.items() <= plans.items()
    for f in FAMILIES:
        assert callable(getattr(Plans, f.plan)), f.name
