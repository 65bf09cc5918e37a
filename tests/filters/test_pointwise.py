import dataclasses

import pydantic
import pytest
from hopforge.corpus.settings import explain
from hopforge.filters.pointwise import (
    ScoreConfig,
    efficiency,
    opened_docs,
    score_trajectory,
    turn_rewards,
)
from hopforge.synth.records import Fault, Hop, Question, ToolCall, Trajectory, Turn

Q = Question(
    qid="q1",
    question="Who designed the lighthouse of the port where the surveyor of Mount Fendle was born?",
    answer="Dorran Pell",
    answer_aliases=("D. Pell",),
    hops=(
        Hop(from_doc="mount-fendle", to_doc="ilse-varro", clue="c1", bridge="Ilse Varro"),
        Hop(from_doc="ilse-varro", to_doc="quillon", clue="c2", bridge="Quillon"),
        Hop(from_doc="quillon", to_doc="grey-needle", clue="c3", bridge="Grey Needle"),
    ),
    evidence=("mount-fendle", "ilse-varro", "quillon", "grey-needle"),
    answer_doc="grey-needle",
)


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(name=name, arguments=dict(args))


def trajectory() -> Trajectory:
    """Opens 3 of 4 gold docs; one invalid turn, one timeout recovered by a repeat."""
    turns = (
        Turn(index=0, raw="", call=call("search", query="Mount Fendle"), result="[doc_id: ...]"),
        Turn(index=1, raw="", call=call("open", doc_id="mount-fendle"), result="surveyed by Ilse",
             new_evidence=("mount-fendle",)),
        Turn(index=2, raw="{bad json", call=None, schema_valid=False, args_valid=False),
        Turn(index=3, raw="", call=call("open", doc_id="ilse-varro"), result="",
             fault=Fault(kind="timeout"), error="timed out"),
        Turn(index=4, raw="", call=call("open", doc_id="ilse-varro"), result="born in Quillon",
             repeat_of=3, recovered=True, new_evidence=("ilse-varro",)),
        Turn(index=5, raw="", call=call("find", doc_id="grey-needle", pattern="designed"),
             result="It was designed by the engineer Dorran Pell.",
             new_evidence=("grey-needle",)),
        Turn(index=6, raw="", call=call("answer", text="Dorran Pell"), result="Dorran Pell"),
    )
    return Trajectory(tid="t1", qid="q1", teacher="scripted", sample=0, turns=turns,
                      final_answer="Dorran Pell")


def test_components_match_their_formulas() -> None:
    cfg = ScoreConfig()
    t = trajectory()
    s = score_trajectory(t, Q, cfg)
    assert (s.exact_match, s.f1) == (1.0, 1.0)
    assert s.correctness == pytest.approx(1.0) and s.correct
    assert opened_docs(t) == {"mount-fendle", "ilse-varro", "grey-needle"}  # the timeout is not
    assert s.evidence_recall == pytest.approx(3 / 4)
    assert s.answer_in_evidence  # from the find result, not from the answer echo
    assert s.evidence == pytest.approx(0.75 * 0.75 + 0.25 * 1.0)
    assert s.format == pytest.approx(6 / 7)
    # ideal = 2 * max(3 + 1, 4) + 1 = 9 >= 7 turns; one repeat: 1 - 0.5 * 1 / 7
    assert s.efficiency == pytest.approx(1 - 0.5 / 7, abs=1e-6)
    assert s.recovery == pytest.approx(1.0)  # one fault, one recovered turn
    parts = [s.correctness, s.evidence, s.format, s.efficiency, s.recovery]
    weights = [0.5, 0.2, 0.1, 0.1, 0.1]
    assert s.pointwise == pytest.approx(sum(w * p for w, p in zip(weights, parts)), abs=1e-5)
    assert (s.n_turns, s.n_chars) == (7, len("{bad json"))


def test_turn_rewards_are_aligned_with_turns() -> None:
    cfg = ScoreConfig()
    r = turn_rewards(trajectory(), cfg)
    assert len(r) == 7
    assert r == (0.0, 0.5, -0.5, 0.0, 0.5 + 0.25 - 0.25, 0.5, 0.0)


def test_wrong_answer_and_judge_blend() -> None:
    t = trajectory()
    wrong = dataclasses.replace(t, final_answer="Pell")
    s = score_trajectory(wrong, Q, ScoreConfig())
    assert s.exact_match == 0.0 and s.f1 == pytest.approx(2 / 3)  # P = 1, R = 1/2
    assert not s.correct
    judged = score_trajectory(wrong, Q, ScoreConfig(judge_weight=0.5), judge=1.0)
    assert judged.judge == 1.0
    assert judged.correctness == pytest.approx(0.5 * (0.5 * 0 + 0.5 * 2 / 3) + 0.5)


def test_efficiency_penalizes_long_and_repetitive_runs() -> None:
    cfg = ScoreConfig()
    long = Trajectory(tid="t", qid="q1", teacher="x", sample=0, turns=tuple(
        Turn(index=i, raw="", call=call("search", query=f"q{i}")) for i in range(18)))
    assert efficiency(long, Q, cfg) == pytest.approx(9 / 18)
    reps = Trajectory(tid="t", qid="q1", teacher="x", sample=0, turns=tuple(
        Turn(index=i, raw="", call=call("search", query="q"), repeat_of=0 if i else None)
        for i in range(18)))
    assert efficiency(reps, Q, cfg) == pytest.approx(max(0.0, 9 / 18 - 0.5 * 17 / 18))
    assert efficiency(Trajectory(tid="t", qid="q1", teacher="x", sample=0), Q, cfg) == 0.0


def test_no_faults_gives_the_configured_recovery() -> None:
    t = Trajectory(tid="t", qid="q1", teacher="x", sample=0,
                   turns=(Turn(index=0, raw="", call=call("answer", text="x")),))
    assert score_trajectory(t, Q, ScoreConfig(no_fault_recovery=0.3)).recovery == 0.3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weight_format": -1.0},
         "ScoreConfig.weight_format = -1.0 is out of range: expected at least 0"),
        ({"em_weight": 1.5}, "ScoreConfig.em_weight = 1.5 is out of range: expected at most 1.0"),
        ({"weight_correctness": 0, "weight_evidence": 0, "weight_format": 0,
          "weight_efficiency": 0, "weight_recovery": 0}, "weights are all 0"),
        ({"pairs_require_correct": 1},
         "ScoreConfig.pairs_require_correct = 1: Input should be a valid boolean"),
        ({"judge_urls": ("http://x/v1",)}, "judge_model is empty"),
        ({"judge_urls": ("ftp://x",), "judge_model": "m"}, "use http(s) base URLs"),
    ],
)
def test_config_names_the_bad_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        ScoreConfig(**kwargs)  # type: ignore[arg-type]
    assert message in explain(caught.value, "ScoreConfig")


@pytest.mark.parametrize(("gold", "said", "right"), [
    ("none", "none", True), ("none", "None of them.", True), ("not found", "none", True),
    ("none", "Dorran Pell", False)])
def test_a_question_with_no_answer_is_right_only_when_the_run_says_so(
        gold: str, said: str, right: bool) -> None:
    """A list no item belongs to ("none") or an unanswerable chain ("not found"): any stop for
    lack of evidence is the answer, and there are no tokens to half-match."""
    q = dataclasses.replace(Q, kind="unanswerable", answer=gold, answer_aliases=())
    t = dataclasses.replace(trajectory(), final_answer=said, turns=(
        *trajectory().turns[:-1],
        Turn(index=6, raw="", call=call("answer", text=said), result=said)))
    s = score_trajectory(t, q, ScoreConfig())
    assert (s.exact_match, s.f1, s.correct) == ((1.0, 1.0, True) if right else (0.0, 0.0, False))
