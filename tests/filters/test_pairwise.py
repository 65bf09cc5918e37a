import dataclasses
import itertools
import random

import numpy as np
import pytest
from hopforge.filters.combine import group_length, length_control, pearson, score_all, zscore
from hopforge.filters.pairwise import (
    Comparison,
    preference_pairs,
    rule_compare,
    rule_comparisons,
    strengths,
)
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.records import Score

from tests.helpers.filter_data import make_question, make_trajectory


def score(tid: str, **kw: object) -> Score:
    base: dict[str, object] = {"tid": tid, "qid": "q", "correct": True, "evidence": 1.0,
                               "efficiency": 1.0, "n_turns": 5, "n_chars": 100}
    return Score(**{**base, **kw})  # type: ignore[arg-type]


def test_rules_order_correct_evidence_efficiency_brevity() -> None:
    good = score("a")
    assert rule_compare(good, score("b", correct=False, evidence=1.0, n_turns=2)) == (1.0, "correct")
    assert rule_compare(good, score("b", evidence=0.5)) == (1.0, "evidence")
    assert rule_compare(score("b", evidence=0.5, efficiency=1.0), good) == (0.0, "evidence")
    assert rule_compare(good, score("b", efficiency=0.4)) == (1.0, "efficiency")
    assert rule_compare(good, score("b", n_turns=9)) == (1.0, "brevity:turns")
    assert rule_compare(good, score("b", n_chars=101)) == (1.0, "brevity:chars")
    assert rule_compare(good, score("b")) == (0.5, "tie")


def test_all_pairs_of_a_question_are_compared_and_fitted() -> None:
    group = [score("a"), score("b", efficiency=0.5), score("c", correct=False), score("d")]
    comps = rule_comparisons(group)
    assert len(comps) == 6 and {(c.a, c.b) for c in comps} >= {("a", "b"), ("c", "d")}
    st = strengths([s.tid for s in group], comps, prior=0.1)
    assert st["a"] == pytest.approx(st["d"])  # they tie with each other, win the same games
    assert st["a"] > st["b"] > st["c"]


def test_pairs_have_a_real_margin_and_the_chosen_side_scores_higher() -> None:
    group = [score("a", combined=1.0, pointwise=0.9), score("b", combined=0.8, pointwise=0.85),
             score("c", combined=-0.2, pointwise=0.7),
             score("w", correct=False, combined=-1.0), score("x", correct=False, combined=1.5),
             score("y", correct=False, combined=-1.2)]
    pairs = preference_pairs(group, pair_margin=0.5, source="rules")
    got = {(p.chosen, p.rejected): p.basis for p in pairs}
    assert got == {("a", "w"): "correctness", ("b", "w"): "correctness",
                   ("c", "w"): "correctness", ("a", "y"): "correctness",
                   ("b", "y"): "correctness", ("c", "y"): "correctness",
                   ("a", "c"): "margin", ("b", "c"): "margin"}
    # a-b differ by 0.2 only; x is wrong yet out-scores the correct ones: no pair either way
    by = {s.tid: s.combined for s in group}
    assert all(p.margin == pytest.approx(by[p.chosen] - by[p.rejected]) and p.margin > 0
               for p in pairs)
    both_wrong = preference_pairs(group, pair_margin=0.5, source="rules", require_correct=False)
    assert ("x", "y") in {(p.chosen, p.rejected) for p in both_wrong}
    assert len(preference_pairs(group, pair_margin=0.0, source="rules", max_pairs=2)) == 2
    # b-c: a combined margin of 1.0 but point-wise totals only 0.15 apart
    close = preference_pairs(group, pair_margin=0.5, source="rules", min_gap=0.18)
    assert ("a", "c") in {(p.chosen, p.rejected) for p in close}
    assert ("b", "c") not in {(p.chosen, p.rejected) for p in close}


def test_zscore_and_pearson_edge_cases() -> None:
    assert zscore([2.0, 2.0]).tolist() == [0.0, 0.0]
    assert zscore([1.0, 3.0]).tolist() == [-1.0, 1.0]
    assert np.isnan(pearson([1.0, 1.0], [1.0, 2.0]))


def test_length_control_removes_the_length_term_but_keeps_correctness() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    correct = (rng.random(400) < 0.5).astype(float)
    r = 0.8 * x + 1.5 * correct + rng.normal(scale=0.1, size=400)
    lc, b = length_control(r, x, correct)
    assert b == pytest.approx(0.8, abs=0.05)
    assert abs(pearson(lc, x)) < 0.05
    assert pearson(lc, correct) > 0.9


def test_score_all_normalizes_per_question_and_keeps_legitimate_length_effects() -> None:
    rng = random.Random(0)
    qs, trajs = {}, []
    for i in range(30):
        q = make_question(i, rng, hops=2)
        qs[q.qid] = q
        # the longer trajectories are the less efficient and the wrong ones
        trajs += [make_trajectory(q, "varied", 0, rng, correct=True),
                  make_trajectory(q, "varied", 1, rng, correct=True, detours=1),
                  make_trajectory(q, "varied", 2, rng, correct=False, detours=3)]
    res = score_all(qs, trajs, ScoreConfig())
    by_q: dict[str, list[Score]] = {}
    for s in res.scores:
        by_q.setdefault(s.qid, []).append(s)
    for group in by_q.values():
        assert sum(s.combined for s in group) == pytest.approx(0.0, abs=1e-5)
        assert max(group, key=lambda s: s.combined).tid.endswith("-0")
        assert max(group, key=lambda s: s.length_controlled or 0.0).tid.endswith("-0")
    lc = res.stats["length_correlation"]
    assert lc["corrected"] and lc["before"] < -0.3
    # correctness and efficiency explain the correlation: nothing is regressed away
    assert lc["after"] == pytest.approx(lc["before"], abs=0.05)
    assert res.stats["comparisons"] == 90 and res.stats["pairs"] > 0
    assert all(p.chosen.split("-")[-1] in ("0", "1") for p in res.pairs)  # chosen are correct


def test_verbosity_preference_is_length_controlled() -> None:
    rng = random.Random(5)
    qs, trajs, judged = {}, [], {}
    for i in range(40):
        q = make_question(i, rng, hops=1)
        qs[q.qid] = q
        group = []
        for s in range(3):
            t = make_trajectory(q, "varied", s, rng)
            pad = " and so on" * (8 * s + rng.randint(0, 3))
            group.append(dataclasses.replace(t, turns=tuple(
                dataclasses.replace(x, thought=x.thought + pad) for x in t.turns)))
        trajs += group
        # a judge that prefers the wordier trajectory most of the time
        judged[q.qid] = [
            Comparison(qid=q.qid, a=a.tid, b=b.tid, source="judge:m",
                       outcome=1.0 if (len(a.turns[0].thought) > len(b.turns[0].thought))
                       != (rng.random() < 0.2) else 0.0)
            for a, b in itertools.combinations(group, 2)]
    res = score_all(qs, trajs, ScoreConfig(pointwise_share=0.2), judge_comparisons=judged,
                    judge_source="judge:m")
    lc = res.stats["length_correlation"]
    assert lc["corrected"] and lc["before"] > 0.3
    assert abs(lc["after"]) < 0.05
    assert all(s.length_controlled is not None for s in res.scores)
    assert pearson([s.length_controlled or 0.0 for s in res.scores],
                   group_length(res.scores)) == pytest.approx(lc["after"], abs=1e-4)


def test_judge_comparisons_replace_the_rules_for_their_question() -> None:
    rng = random.Random(1)
    q = make_question(0, rng)
    trajs = [make_trajectory(q, "varied", s, rng) for s in range(2)]
    a, b = sorted(t.tid for t in trajs)
    judged = {q.qid: [Comparison(qid=q.qid, a=a, b=b, outcome=0.0, source="judge:m")]}
    res = score_all({q.qid: q}, trajs, ScoreConfig(pair_margin=0.1, pair_min_gap=0.0),
                    judge_comparisons=judged, judge_source="judge:m")
    st = {s.tid: s.strength for s in res.scores}
    assert st[b] > st[a]
    assert [(p.chosen, p.source) for p in res.pairs] == [(b, "judge:m")]


def test_missing_questions_are_counted_not_scored() -> None:
    rng = random.Random(2)
    q = make_question(0, rng)
    t = make_trajectory(q, "varied", 0, rng)
    res = score_all({}, [t], ScoreConfig())
    assert res.scores == () and res.stats["skipped"] == {"question-missing": 1}
