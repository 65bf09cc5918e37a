import math
import random
from collections import Counter

import pytest
from hopforge.filters.combine import score_all
from hopforge.filters.habits import (
    action_signature,
    copies_question,
    entropy_bits,
    reformulation,
)
from hopforge.filters.logodds import (
    drop_contained,
    log_odds_z,
    mask_names,
    merge_overlapping,
    words,
)
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.report import filter_report
from hopforge.filters.select import FilterConfig, cap_weights, filter_trajectories
from hopforge.filters.style import (
    StyleConfig,
    TrajectoryStyle,
    extract,
    fit_style,
    trajectory_style,
)

from tests.helpers.filter_data import TEMPLATE_PHRASE, population, reference_text


def test_log_odds_known_answer() -> None:
    # y_t = (3, 1), y_r = (1, 3), prior a = (1, 1), a0 = 2, n_t = n_r = 4:
    # delta_a = log(4 / 2) - log(2 / 4) = 2 log 2;  var = 1/4 + 1/2;  z = 2 log 2 / sqrt(3/4)
    z = log_odds_z({"a": 3, "b": 1}, {"a": 1, "b": 3}, prior={"a": 1.0, "b": 1.0})
    assert z["a"] == pytest.approx(2 * math.log(2) / math.sqrt(0.75))
    assert z["b"] == pytest.approx(-z["a"])
    # the default prior: the combined counts scaled to a0 = 0.1 * (n_t + n_r)
    same = log_odds_z({"x": 2, "y": 8}, {"x": 20, "y": 80})
    assert same["x"] == pytest.approx(0.0, abs=1e-9) and same["y"] == pytest.approx(0.0, abs=1e-9)
    skew = log_odds_z({"x": 8, "y": 2}, {"x": 20, "y": 80})
    assert skew["x"] > 3 and skew["y"] < 0


def test_names_are_masked_so_templates_show_their_slots() -> None:
    assert mask_names("Let me search for Ilse Varro, born 1815. I will check.") == \
        "Let me search for <e> , born <e> . I will check."
    assert words(mask_names("Opening Grey Needle.")) == ["opening", "<e>"]
    assert mask_names("ilse varro Quillon", sentences=False) == "ilse varro <e>"
    assert mask_names("Quillon harbour", sentences=False) == "<e> harbour"


def test_overlapping_ngrams_merge_into_a_phrase() -> None:
    counts = {"as a meticulous": 10, "a meticulous research": 10, "meticulous research aid": 9,
              "unrelated words here": 10}
    groups = merge_overlapping(list(counts), counts)
    assert "as a meticulous research aid" in groups
    assert sorted(groups["as a meticulous research aid"]) == sorted(list(counts)[:3])
    assert "unrelated words here" in groups
    assert drop_contained(["let me", "let me search", "me"], {"let me": 10, "let me search": 9,
                                                              "me": 30}) == ["let me search", "me"]


def _merge_reference(phrases: list[str], counts: dict[str, int], ratio: float = 0.8,
                     min_overlap: int = 2) -> dict[str, list[str]]:
    """The rule of merge_overlapping written plainly: every pair, every overlap, from the start."""
    groups = {p: [p] for p in phrases}
    count = {p: counts.get(p, 0) for p in phrases}
    while True:
        for a in sorted(groups):
            for b in sorted(groups):
                ta, tb = a.split(), b.split()
                lo, hi = sorted((count[a], count[b]))
                if a == b or hi == 0 or lo < ratio * hi:
                    continue
                k = next((k for k in range(min(len(ta), len(tb)) - 1, min_overlap - 1, -1)
                          if ta[-k:] == tb[:k]), 0)
                if k:
                    new = " ".join(ta + tb[k:])
                    groups[new] = groups.pop(a) + groups.pop(b)
                    count[new] = lo
                    break
            else:
                continue
            break
        else:
            return groups


def test_merging_matches_the_plain_rule_on_random_ngrams() -> None:
    rng = random.Random(7)
    vocab = ["a", "b", "c", "d", "e", "f"]
    for _ in range(60):
        grams = {" ".join(rng.choice(vocab) for _ in range(rng.randint(2, 4)))
                 for _ in range(rng.randint(2, 30))}
        counts = {g: rng.choice((5, 9, 10, 12, 40)) for g in grams}
        phrases = sorted(grams, key=lambda g: (-counts[g], g))
        assert merge_overlapping(phrases, counts) == _merge_reference(phrases, counts)


def test_search_habits() -> None:
    q = "Which port city is the birthplace of the cartographer who surveyed Mount Fendle?"
    assert copies_question("port city birthplace cartographer surveyed Mount Fendle", q)
    assert not copies_question("Mount Fendle", q)
    assert reformulation("grey needle", "grey needle") == "repeat"
    assert reformulation("grey needle", "grey needle engineer") == "narrow"
    assert reformulation("grey needle engineer", "grey needle") == "broaden"
    assert reformulation("grey needle engineer", "grey needle designer") == "edit"
    assert reformulation("grey needle", "dorran pell") == "new"
    assert action_signature(["search", "search", "open", "search", "answer"]) == \
        "search* open search answer"
    assert entropy_bits(Counter({"a": 1, "b": 1, "c": 1, "d": 1})) == pytest.approx(2.0)


def test_templated_habits_are_detected() -> None:
    qs, trajs = population(40, seed=3)
    cfg = StyleConfig()
    feats = [extract(t, qs[t.qid].question, cfg) for t in trajs]
    profile = fit_style(feats, reference_text(random.Random(1), 300), cfg)
    patterns = {f.pattern for f in profile.fingerprints}
    assert f"phrase:{TEMPLATE_PHRASE}" in patterns
    assert "opener:let me carefully" in patterns
    assert "query:copies-question" in patterns
    phrase = next(f for f in profile.fingerprints if f.pattern == f"phrase:{TEMPLATE_PHRASE}")
    assert phrase.share == pytest.approx(0.5) and (phrase.z or 0) > 5
    styles = {f.tid: trajectory_style(f, profile, cfg) for f in feats}
    templated = [styles[t.tid].score for t in trajs if t.teacher == "templated"]
    varied = [styles[t.tid].score for t in trajs if t.teacher == "varied"]
    assert min(templated) > 0.4 and max(varied) < 0.15
    assert not any(p.startswith(("phrase:", "opener:")) for t in trajs if t.teacher == "varied"
                   for p in styles[t.tid].patterns)


def test_filter_reduces_the_templated_habits_and_explains_every_drop() -> None:
    qs, trajs = population(40, seed=4)
    scores = {s.tid: s for s in score_all(qs, trajs, ScoreConfig()).scores}
    config = FilterConfig(dedup_questions=0.0, require_correct=False)  # style, not answers
    result = filter_trajectories(trajs, qs, scores, reference_text(random.Random(1), 300), config)
    assert len(result.decisions) == len(trajs)
    assert all(d.reason for d in result.decisions if not d.kept)
    report = filter_report(trajs, scores, result, reference="test")
    habits = [f"phrase:{TEMPLATE_PHRASE}", "opener:let me carefully", "query:copies-question"]
    for h in habits:
        assert report["after"]["pattern_shares"][h] < report["before"]["pattern_shares"][h]
        assert report["after"]["pattern_shares"][h] <= config.pattern_cap + 0.1
    assert report["after"]["self_bleu"] < report["before"]["self_bleu"]
    assert report["after"]["distinct"]["distinct-2"] > report["before"]["distinct"]["distinct-2"]
    kept = Counter(t.teacher for t in trajs if any(d.tid == t.tid and d.kept
                                                   for d in result.decisions))
    assert kept["varied"] >= 0.9 * 80 and kept["templated"] < 0.6 * 80
    reasons = report["decisions"]["reasons"]
    assert reasons.get("style", 0) + reasons.get("pattern-cap", 0) > 0


def _styles(carriers: dict[str, list[int]], n: int) -> dict[str, TrajectoryStyle]:
    pats = {i: tuple(sorted(p for p, ids in carriers.items() if i in ids)) for i in range(n)}
    return {f"t{i}": TrajectoryStyle(tid=f"t{i}", phrase=0, opener=0, query=0, actions=0,
                                     score=0, patterns=pats[i]) for i in range(n)}


def _weighted_share(pattern: str, styles: dict[str, TrajectoryStyle],
                    w: dict[str, float]) -> float:
    return sum(w[t] for t in w if pattern in styles[t].patterns) / sum(w.values())


def test_cap_weights_bring_a_dominant_pattern_to_the_cap() -> None:
    styles = _styles({"phrase:pet": list(range(7)), "opener:all": list(range(10))}, 10)
    kept = list(styles)
    ones = dict.fromkeys(kept, 1.0)
    free = cap_weights(kept, styles, ones, FilterConfig(pattern_cap=0.3, min_weight=0.1))
    # 7 of 10 carry it: f = 0.3 * 3 / (0.7 * 7); the universal pattern is left alone
    assert set(free) == {f"t{i}" for i in range(7)}
    assert all(w == pytest.approx(0.9 / 4.9, abs=1e-6) and p == "phrase:pet"
               for w, p in free.values())
    w = ones | {t: v for t, (v, _) in free.items()}
    assert _weighted_share("phrase:pet", styles, w) == pytest.approx(0.3, abs=1e-6)
    floored = cap_weights(kept, styles, ones, FilterConfig(pattern_cap=0.3, min_weight=0.25))
    assert {v for v, _ in floored.values()} == {0.25}  # no weight below min_weight
    w = ones | {t: v for t, (v, _) in floored.items()}
    assert _weighted_share("phrase:pet", styles, w) == pytest.approx(1.75 / 4.75)
    assert cap_weights(kept, styles, ones, FilterConfig(pattern_cap=0.7)) == {}
    only_universal = _styles({"opener:all": list(range(10))}, 10)
    assert cap_weights(kept, only_universal, ones, FilterConfig()) == {}


def test_cap_weights_never_drive_every_weight_to_the_floor() -> None:
    # two habits that together cover everyone: scaling one up-weights the other; nothing helps
    styles = _styles({"phrase:a": list(range(7)), "phrase:b": list(range(3, 10))}, 10)
    kept = list(styles)
    assert cap_weights(kept, styles, dict.fromkeys(kept, 1.0), FilterConfig()) == {}
    # a house cluster of correlated habits is brought down; the rest keeps its weight
    styles = _styles({"phrase:a": list(range(7)), "opener:a": list(range(1, 7)),
                      "query:b": [0, 7]}, 10)
    out = cap_weights(kept, styles, dict.fromkeys(kept, 1.0), FilterConfig(min_weight=0.05))
    w = dict.fromkeys(kept, 1.0) | {t: v for t, (v, _) in out.items()}
    assert all(w[f"t{i}"] == 1.0 for i in (8, 9))
    for p in ("phrase:a", "opener:a", "query:b"):
        assert _weighted_share(p, styles, w) <= FilterConfig().pattern_cap + 1e-6


def test_select_down_weights_what_the_cap_budget_left() -> None:
    qs, trajs = population(30, seed=5, teachers=("templated", "varied", "templated-2"))
    scores = {s.tid: s for s in score_all(qs, trajs, ScoreConfig()).scores}
    ref = reference_text(random.Random(1), 300)
    reports = {}
    for on in (True, False):
        config = FilterConfig(dedup_questions=0.0, balance_ratio=0.0, pattern_weights=on)
        result = filter_trajectories(trajs, qs, scores, ref, config)
        reports[on] = filter_report(trajs, scores, result, reference="test")
        kept = [d for d in result.decisions if d.kept]
        assert any("pattern-cap=" in d.reason for d in kept) == on
        assert all(config.min_weight <= d.weight <= 1 for d in kept)
    habit = f"phrase:{TEMPLATE_PHRASE}"
    shares = {on: {f["pattern"]: f for f in r["fingerprints"]}[habit] for on, r in reports.items()}
    assert shares[True]["share_before"] >= 0.6  # two of three teachers: dominant, not universal
    assert shares[True]["share_after"] == shares[False]["share_after"]  # the same selection
    assert shares[False]["weighted_share_after"] > FilterConfig().pattern_cap + 0.05
    assert shares[True]["weighted_share_after"] == pytest.approx(FilterConfig().pattern_cap,
                                                                 abs=0.01)


def test_the_style_filter_reads_reasoning_too() -> None:
    from hopforge.filters.style import thought_texts
    from hopforge.synth.records import ToolCall, Trajectory, Turn

    call = ToolCall(name="search", arguments={"query": "x"})
    turns = (Turn(index=0, raw="", thought="Searching.", reasoning="Okay, so the user wants x.",
                  call=call),
             Turn(index=1, raw="", reasoning="Hmm, wait.", call=call))
    traj = Trajectory(tid="t", qid="q", teacher="openai:m", sample=0, turns=turns)
    assert thought_texts(traj) == ["Okay, so the user wants x.\n\nSearching.", "Hmm, wait."]
