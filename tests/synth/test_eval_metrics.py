"""Eval measures on hand-made trajectories: success, validity, repeats, faults, onsets, stops."""

from typing import Any

import pytest
from hopforge.synth.evaluation.config import (
    FAULT_PRESETS,
    EvalInputError,
    parse_budgets,
    parse_faults,
)
from hopforge.synth.evaluation.metrics import is_success, measure
from hopforge.synth.evaluation.stops import handoff_state, plan_change_stop
from hopforge.synth.evaluation.summary import render_report, summarize_run
from hopforge.synth.evaluation.tasks import select_ladders
from hopforge.synth.records import NOT_FOUND, Fault, Question, Spec, ToolCall, Trajectory, Turn

CHAIN = Question(qid="c", question="Who?", answer="Dorran Pell", evidence=("quillon", "grey-needle"),
                 answer_doc="grey-needle")


def turn(name: str, fault: str = "", error: str = "", valid: bool = True, schema: bool = True,
         result: str = "", **args: Any) -> Turn:
    return Turn(index=0, raw="", call=ToolCall(name=name, arguments=args), result=result,
                fault=Fault(kind=fault) if fault else None, error=error,  # type: ignore[arg-type]
                args_valid=valid and schema, schema_valid=schema)


def traj(*turns: Turn, answer: str = "", termination: str = "answer") -> Trajectory:
    numbered = tuple(Turn(**{**t.to_row(), "index": i, "call": t.call, "fault": t.fault,
                             "new_evidence": (), "unseen": ()}) for i, t in enumerate(turns))
    return Trajectory(tid="t", qid="c", teacher="x", sample=0, turns=numbered,
                      final_answer=answer, termination=termination)  # type: ignore[arg-type]


def test_presets_and_lists_are_checked_with_messages_that_say_the_fix() -> None:
    assert parse_budgets("600, 10,50,10") == (10, 50, 600)
    assert parse_faults("none,heavy") == ("none", "heavy")
    assert FAULT_PRESETS["none"].total == 0 < FAULT_PRESETS["light"].total
    assert FAULT_PRESETS["light"].total < FAULT_PRESETS["heavy"].total
    for bad, match in (("10,x", "not a whole number"), ("0", "out of range"), ("", "no budget")):
        with pytest.raises(EvalInputError, match=match):
            parse_budgets(bad)
    with pytest.raises(EvalInputError, match="unknown fault mix 'medium': use one of none, light"):
        parse_faults("none,medium")


def test_ladders_take_tasks_that_fit_and_say_when_they_fill_from_below() -> None:
    qs = [Question(qid=f"q{m}", question="?", answer="a", min_calls=m) for m in (4, 6, 9, 30, 60)]
    short, long = select_ladders(qs, (10, 100), 2)
    assert sorted(q.min_calls for q in short.tasks) == [6, 9] and short.note == ""
    assert [q.min_calls for q in long.tasks] == [60, 30]
    assert "1 of 2 tasks have min_calls in [50, 100]; 1 more with min_calls 30" in long.note
    (none,) = select_ladders(qs, (2,), 2)
    assert none.tasks == () and "0 of 2 tasks have min_calls in [1, 2] and none needs fewer" \
        in none.note


def test_success_needs_the_answer_and_never_comes_from_a_handoff() -> None:
    done = traj(turn("search", query="x"), turn("answer", text="dorran pell."), answer="dorran pell.")
    assert is_success(done, CHAIN)
    assert not is_success(traj(*done.turns, answer="Dorran Pell", termination="repetition"), CHAIN)
    listed = Question(qid="l", question="?", answer="Quillon, Ambry",
                      spec=Spec(family="aggregation", answer_type="list", items=("a",)))
    assert is_success(traj(turn("answer", text="x"), answer="Ambry and Quillon"), listed)


def test_not_found_counts_only_as_a_justified_stop() -> None:
    none = Question(qid="u", question="?", answer=NOT_FOUND, kind="unanswerable", min_calls=4)
    searched = [turn("search", query=f"q{i}") for i in range(3)]
    assert is_success(traj(*searched, turn("answer", text="Not found"), answer="Not found"), none)
    assert not is_success(traj(searched[0], turn("answer", text=NOT_FOUND), answer=NOT_FOUND),
                          none)
    assert not is_success(traj(*searched, turn("answer", text=NOT_FOUND), answer=NOT_FOUND),
                          CHAIN)


def test_validity_repeats_and_onsets_are_counted_per_turn() -> None:
    t = traj(
        turn("search", query="a b"),
        turn("search", fault="timeout", query="grey needle"),
        turn("search", query="needle grey"),  # a retry after a fault: not a repeat
        turn("open", doc_id="grey-needle", result="Grey Needle ... (end of document)"),
        turn("open", valid=False, doc_id=5),
        turn("lookup", schema=False),
        turn("search", query="b a"),  # the same search as the first: a repeat
        turn("answer", text="Dorran Pell"),
        answer="Dorran Pell",
    )
    r = measure(t, CHAIN)
    assert r.success and r.turns == 8 and r.valid_calls == 6
    assert (r.argument_errors, r.schema_errors, r.repeated_calls) == (1, 1, 1)
    assert r.onset == {"schema_error": 6, "bad_arguments": 5, "repeat": 7,
                       "forgotten_constraint": None, "ignored_fault": None}
    assert (r.faults, r.recovered_faults, r.first_fault) == (1, 1, 2)


def test_an_unanswered_fault_is_ignored_and_a_failed_retry_is_not() -> None:
    t = traj(turn("open", fault="timeout", doc_id="quillon"),
             turn("open", fault="timeout", doc_id="quillon"),
             turn("search", query="x"),
             turn("find", fault="partial", doc_id="grey-needle", pattern="Pell"),
             turn("search", query="y"))
    r = measure(t, CHAIN)
    assert (r.faults, r.recovered_faults, r.ignored_faults) == (3, 0, 1)  # 1 retried, 2 a retry
    assert r.onset["ignored_fault"] == 4


def test_forgotten_constraints_going_back_and_in_the_answer() -> None:
    reads = [turn("open", doc_id="quillon", result="Quillon (end of document)"),
             turn("open", doc_id="grey-needle", result="Grey Needle"),
             turn("find", doc_id="quillon", pattern="lighthouse")]
    recheck = traj(*reads, turn("answer", text="Dorran Pell"), answer="Dorran Pell")
    assert measure(recheck, CHAIN).onset["forgotten_constraint"] is None  # a re-check
    titles = {"quillon": "Quillon", "grey-needle": "Grey Needle"}
    lost = traj(*reads, turn("answer", text="Quillon"), answer="Quillon")
    assert measure(lost, CHAIN, titles).onset["forgotten_constraint"] == 3
    wrong = traj(turn("open", doc_id="quillon", result="Quillon"),
                 turn("open", doc_id="grey-needle", result="Grey Needle"),
                 turn("answer", text="Quillon"), answer="Quillon")
    assert measure(wrong, CHAIN, titles).onset["forgotten_constraint"] == 3
    spec = Spec(family="aggregation", operation="count", items=("a", "b", "c"),
                matching=("a", "b"), pattern="Calden")
    count = Question(qid="n", question="?", answer="2", kind="aggregation", spec=spec)
    checks = [turn("find", doc_id=d, pattern="calden") for d in ("a", "b", "c")]
    r = measure(traj(*checks, turn("answer", text="1"), answer="1"), count)
    assert r.onset["forgotten_constraint"] == 4 and r.item_check_share == 1.0
    r = measure(traj(*checks[:2], turn("answer", text="3"), answer="3"), count)
    assert r.onset["forgotten_constraint"] is None and r.item_check_share == pytest.approx(2 / 3)


def test_plan_changes_without_new_evidence_end_the_run_as_a_handoff() -> None:
    wander = [turn("search", query=f"s{i}") if i % 2 else turn("open", doc_id=f"other-{i}")
              for i in range(12)]
    t = traj(turn("search", query="q", result="[doc_id: quillon] Quillon"), *wander,
             turn("answer", text="Dorran Pell"), answer="Dorran Pell")
    stopped = plan_change_stop(t, CHAIN, limit=5)
    assert stopped.termination == "no_progress" and stopped.final_answer == ""
    assert len(stopped.turns) == 7 and "6 plan changes" in stopped.reason
    assert not measure(stopped, CHAIN).success and measure(stopped, CHAIN).handoff
    state = handoff_state(stopped, CHAIN)
    assert state["task_documents_seen"] == ["quillon"] and state["calls"] == 7
    assert plan_change_stop(t, CHAIN, limit=20) is t


def test_the_summary_row_and_report_hold_the_contract_fields() -> None:
    results = [measure(traj(turn("search", query="x"), turn("answer", text="Dorran Pell"),
                            answer="Dorran Pell"), CHAIN),
               measure(traj(turn("search", query="x"), termination="max_turns"), CHAIN)]
    row = summarize_run(10, "none", results)
    for key in ("budget", "faults", "tasks", "success", "valid_call_rate", "recovery_rate",
                "onset", "terminations", "tokens", "seconds"):
        assert key in row
    assert set(row["onset"]) >= {"schema_error", "bad_arguments", "repeat",
                                 "forgotten_constraint"}
    assert row["success"] == 0.5 and row["recovery_rate"] is None
    assert row["terminations"]["answer"] == 1 and row["terminations"]["max_turns"] == 1
    report = render_report({"runs": [row]})
    assert "| 10 | none | 2 | 0.5 | 1 |" in report
