"""The harness sees each scripted failure mode at the call where it was injected."""

import asyncio
from typing import Any

import pytest
from hopforge.synth.evaluation.config import EvalConfig, parse_injection
from hopforge.synth.evaluation.metrics import TaskResult, measure
from hopforge.synth.evaluation.runner import run_cells
from hopforge.synth.evaluation.tasks import Ladder
from hopforge.synth.records import Question
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedConfig

from tests.helpers.eval_data import aggregation_question

CLEAN = ScriptedConfig(early_answer=0.0, wrong_doc=0.0)
TIMEOUTS = {"timeouts": FaultConfig(timeout=0.35, persistent=0.0, timeout_delay_s=0.0)}


def run(questions: list[Question], searcher: Any, *inject: str, budget: int = 60,
        faults: str = "none") -> list[TaskResult]:
    return run_logged(questions, searcher, *inject, budget=budget, faults=faults)[0]


def run_logged(questions: list[Question], searcher: Any, *inject: str, budget: int = 60,
               faults: str = "none") -> tuple[list[TaskResult], list[int | None]]:
    """The measures of each task, and the call at which an injection first acted on it."""
    presets = {"none": FaultConfig(), **TIMEOUTS}
    config = EvalConfig(budgets=(budget,), faults=(faults,), scripted=CLEAN, presets=presets,
                        injections=tuple(parse_injection(i) for i in inject), concurrency=4)
    ladder = Ladder(budget=budget, tasks=tuple(questions), low=1)
    (cell,) = asyncio.run(run_cells([ladder], searcher, None, config))
    by_qid = {q.qid: q for q in questions}
    titles = {d.doc_id: d.title for d in searcher.documents.values()}
    first = [cell.injected[t.tid][0][0] if cell.injected.get(t.tid) else None
             for t in cell.trajectories]
    return [measure(t, by_qid[t.qid], titles) for t in cell.trajectories], first


@pytest.fixture(scope="module")
def tasks(agent_questions: list, agent_documents: list) -> list[Question]:
    return [*agent_questions, aggregation_question(agent_documents),
            aggregation_question(agent_documents, operation="list")]


def test_the_clean_scripted_teacher_solves_every_task(tasks: list, agent_searcher: Any) -> None:
    results = run(tasks, agent_searcher)
    assert all(r.success for r in results)
    assert all(r.onset[k] is None for r in results for k in r.onset)
    assert all(r.valid_calls == r.turns for r in results)
    agg = [r for r in results if r.kind == "aggregation"]
    assert agg and all(r.item_check_share == 1.0 for r in agg)


def broken_and_untouched(tasks: list, searcher: Any, mode: str, n: int
                         ) -> list[tuple[TaskResult, int]]:
    """(injected result, call it was first injected at) of the tasks whose clean run reaches
    call `n`; the others must come out as they were."""
    clean = run(tasks, searcher)
    broken, first = run_logged(tasks, searcher, f"{mode}@{n}")
    for c, b, at in zip(clean, broken, first):
        if c.turns < n:  # answered before call n: nothing was injected
            assert at is None and b.success == c.success
            assert all(v is None for v in b.onset.values())
    pairs = [(b, at) for c, b, at in zip(clean, broken, first) if c.turns >= n]
    assert len(pairs) >= 3 and all(at is not None and at >= n for _, at in pairs)
    return pairs  # type: ignore[return-value]


@pytest.mark.parametrize("n", [2, 4])
def test_repeat_is_seen_where_injected_and_ends_as_a_handoff(tasks: list, agent_searcher: Any,
                                                             n: int) -> None:
    for r, at in broken_and_untouched(tasks, agent_searcher, "repeat", n):
        assert at == n and r.onset["repeat"] is not None and n <= r.onset["repeat"] <= n + 2, r
        assert r.termination == "repetition" and r.handoff and not r.success


@pytest.mark.parametrize("n", [2, 4])
def test_bad_arguments_are_seen_where_injected(tasks: list, agent_searcher: Any, n: int) -> None:
    for r, at in broken_and_untouched(tasks, agent_searcher, "bad-args", n):
        assert at == n and r.onset["bad_arguments"] == n and r.onset["schema_error"] is None
        assert r.argument_errors >= 1 and r.valid_calls == n - 1
        assert r.termination == "error" and not r.success


@pytest.mark.parametrize("n", [3, 5])
def test_forget_is_seen_where_injected_and_the_answer_drops_the_item(
        tasks: list, agent_searcher: Any, n: int) -> None:
    for r, at in broken_and_untouched(tasks, agent_searcher, "forget", n):
        onset = r.onset["forgotten_constraint"]  # at: n, or later when nothing was read yet
        assert onset is not None and at <= onset <= at + 2, r
        assert not r.success and r.termination == "answer"


def test_injections_past_the_end_of_a_run_change_nothing(tasks: list, agent_searcher: Any) -> None:
    clean = run(tasks, agent_searcher)
    longest = max(r.turns for r in clean)
    for mode in ("repeat", "bad-args", "forget"):
        late = run(tasks, agent_searcher, f"{mode}@{longest + 1}")
        assert [r.success for r in late] == [r.success for r in clean]
        assert all(r.onset[k] is None for r in late for k in r.onset)


def test_ignore_faults_is_seen_at_the_first_fault_and_success_falls(
        tasks: list, agent_searcher: Any) -> None:
    reacting = run(tasks, agent_searcher, faults="timeouts")
    ignoring = run(tasks, agent_searcher, "ignore-faults", faults="timeouts")
    assert sum(r.faults for r in reacting) > 0
    assert all(r.onset["ignored_fault"] is None for r in reacting)
    # a fault on a call the plan could do without (a candidate it moved past, another path to a
    # task document right after) is not ignored; every other fault is
    hit = [r for r in ignoring if r.faults > r.recovered_faults]
    assert hit and all(r.ignored_faults for r in hit)
    for r in hit:
        onset, first = r.onset["ignored_fault"], r.first_fault
        assert onset is not None and first is not None and first <= onset <= first + 2, r
    recovery = [sum(r.recovered_faults for r in rs) / max(1, sum(r.faults for r in rs))
                for rs in (reacting, ignoring)]
    assert recovery[1] < recovery[0]
    assert sum(r.success for r in ignoring) < sum(r.success for r in reacting)
    nothing = run(tasks, agent_searcher, "ignore-faults")
    assert all(r.success for r in nothing)  # with no fault there is nothing to ignore
