import json
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus import parts
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.store import write_corpus
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.records import Decision, PreferencePair, Score
from hopforge.filters.select import FilterConfig
from hopforge.flows.commands.cli import main
from hopforge.flows.stages.filters import filter_build, read_reference, score_build

from tests.helpers.filter_data import (
    TEMPLATE_PHRASE,
    HashingEmbedder,
    population,
    reference_text,
)


@pytest.fixture
def build(tmp_path: Path) -> BuildDir:
    qs, trajs = population(24, seed=7)
    b = BuildDir.at(tmp_path / "b")
    rows = [q.to_row() for q in qs.values()]
    parts.write_part(b.questions, 0, rows[:12])
    parts.write_part(b.questions, 1, rows[12:])
    parts.write_part(b.trajectories, 0, [t.to_row() for t in trajs[:50]])
    parts.write_part(b.trajectories, 1, [t.to_row() for t in trajs[50:]])
    return b


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    import random

    path = tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n"
                            for t in reference_text(random.Random(0), 300)))
    return path


def test_score_then_filter_writes_parts_and_reports(build: BuildDir, reference: Path) -> None:
    report = score_build(build, ScoreConfig(rows_per_part=40))
    scores = [Score.from_row(r) for r in parts.read_parts(build.scores)]
    assert len(scores) == 96 == report["trajectories"]
    assert len(parts.done_parts(build.scores)) == 3
    pairs = [PreferencePair.from_row(r) for r in parts.read_parts(build.pairs)]
    assert pairs and all(p.margin >= ScoreConfig().pair_margin or p.basis == "correctness" for p in pairs)
    assert (build.reports / "scores.json").is_file() and (build.reports / "scores.png").is_file()
    assert all(len(s.turn_rewards) == s.n_turns for s in scores)

    config = FilterConfig(dedup_questions=0.95)
    freport = filter_build(build, config, reference=reference, embedder=HashingEmbedder())
    decisions = [Decision.from_row(r) for r in parts.read_parts(build.filtered)]
    assert [d.tid for d in decisions] == [s["tid"] for s in parts.read_parts(build.trajectories)]
    assert all(d.reason for d in decisions if not d.kept)
    assert all(0 < d.weight <= 1 for d in decisions if d.kept)
    assert freport["kept"] == sum(d.kept for d in decisions) < 96
    assert freport["reference"] == f"file:{reference}"
    assert freport["duplicates"]["question_check"] == "embedder hashing"
    for name in ("filter.json", "filter.png", "filter_patterns.png"):
        assert (build.reports / name).is_file()
    on_disk = json.loads((build.reports / "filter.json").read_text())
    shares = {f["pattern"]: f for f in on_disk["fingerprints"]}
    habit = shares[f"phrase:{TEMPLATE_PHRASE}"]
    assert habit["share_after"] < habit["share_before"]
    assert on_disk["before"]["distributions"]["turns"]["hist"]["edges"] == \
        on_disk["after"]["distributions"]["turns"]["hist"]["edges"]


def test_reruns_are_idempotent_and_config_changes_recompute(build: BuildDir,
                                                            reference: Path) -> None:
    score_build(build)
    first = (build.scores / "part-00000.jsonl").read_bytes()
    assert score_build(build)["up_to_date"] is True
    assert (build.scores / "part-00000.jsonl").read_bytes() == first
    assert "up_to_date" not in score_build(build, ScoreConfig(weight_format=0.3))
    kw: dict[str, Any] = {"reference": reference, "embedder": HashingEmbedder()}
    filter_build(build, FilterConfig(), **kw)
    before = (build.filtered / "part-00000.jsonl").read_bytes()
    assert filter_build(build, FilterConfig(), **kw)["up_to_date"] is True
    again = filter_build(build, FilterConfig(), force=True, **kw)
    assert "up_to_date" not in again
    assert (build.filtered / "part-00000.jsonl").read_bytes() == before
    assert again["decisions"]["reasons"].get("incorrect", 0) > 0  # wrong runs are no lesson
    lenient = filter_build(build, FilterConfig(require_correct=False), **kw)
    assert "incorrect" not in lenient["decisions"]["reasons"]


def test_filter_needs_scores_and_reference_files_must_exist(build: BuildDir,
                                                            tmp_path: Path) -> None:
    from hopforge.corpus.errors import HopforgeError

    with pytest.raises(HopforgeError, match="run `hopforge score"):
        filter_build(build, FilterConfig(dedup_questions=0))
    with pytest.raises(HopforgeError, match="does not exist"):
        read_reference(tmp_path / "missing.txt")
    text = tmp_path / "ref.txt"
    text.write_text("one paragraph\nstill one\n\nanother one\n")
    assert read_reference(text) == ["one paragraph\nstill one", "another one\n"]
    js = tmp_path / "ref.json"
    js.write_text(json.dumps({"Title": ["s1.", "s2."], "Other": ["s3."]}))
    assert read_reference(js) == ["s1. s2.", "s3."]


def test_cli_score_and_filter(build: BuildDir, reference: Path, capsys: Any) -> None:
    assert main(["score", str(build.root), "--set", "weight_format=0.2"]) == 0
    out = capsys.readouterr().out
    assert "pointwise" in out and "preference pairs" in out
    assert main(["filter", str(build.root), "--threshold", "0.6", "--reference", str(reference),
                 "--no-question-dedup"]) == 0
    out = capsys.readouterr().out
    assert "self-BLEU" in out and "kept" in out and "phrase:" in out
    assert main(["filter", str(build.root), "--threshold", "0.6", "--reference", str(reference),
                 "--no-question-dedup"]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["score", str(build.root), "--set", "em_weight=3"]) == 2
    assert "em_weight" in capsys.readouterr().err
    assert main(["filter", str(build.root / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "filter"])
def test_help(command: str, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    flags = {"score": ("--judge-url", "--judge-model", "--set"),
             "filter": ("--threshold", "--reference", "--no-require-correct")}[command]
    assert all(f in text for f in flags)


def _house_pattern(pattern: str) -> bool:
    """True for a fingerprint of the scripted teacher's house style (synth/trajectories/voice.py)."""
    from hopforge.filters.logodds import mask_names, words
    from hopforge.synth.trajectories.voice import FACTS, HOUSE, HOUSE_QUERIES

    kind, key = pattern.split(":", 1)
    if kind == "query":
        return key == "copies-question" and HOUSE_QUERIES.first == "question"
    slots = {"title": "Grey Needle", "pattern": "Dorran Pell", "other": "Salt Cod",
             "answer": "Dorran Pell"}
    texts = [HOUSE.say(s, **slots) for s in HOUSE.lines if s not in ("first", "search")]
    texts += [HOUSE.say("search", what=HOUSE.say("first", **slots)),
              HOUSE.say("search", what="Grey Needle")]
    # the state notes hold facts and open questions, each worded in the house voice too
    texts += [HOUSE.say("todo", open=(f, slots)) for f in FACTS if f.startswith("o_")]
    texts += [HOUSE.say("known", known=[(f, slots)]) for f in FACTS if f.startswith("f_")]
    return any(f" {key} " in f" {' '.join(words(mask_names(t)))} " for t in texts)


@pytest.mark.slow
def test_scripted_teacher_habits_show_up_and_are_reduced(
    tmp_path: Path, agent_documents: list, agent_questions: list
) -> None:
    from hopforge.flows.stages.trajectories import run_trajectories_build
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.stage import TrajectoryConfig

    b = BuildDir.at(tmp_path / "scripted")
    write_corpus(b, agent_documents)
    parts.write_part(b.questions, 0, [q.to_row() for q in agent_questions])
    run_trajectories_build(b, TrajectoryConfig(
        samples=12, faults=FaultConfig.uniform(0.1, timeout_delay_s=0.0)))
    score_build(b)
    config = FilterConfig()
    report = filter_build(b, config)
    assert report["trajectories"] == 60 and report["reference"] == "corpus"
    assert report["duplicates"]["question_check"].startswith("off (the build has no dense index")
    prints = report["fingerprints"]
    # the report names the house style's openers, phrases and query habit as its top patterns
    dominant = [f for f in prints if f["share_before"] >= 0.5]
    assert dominant and all(_house_pattern(f["pattern"]) for f in dominant), [f["pattern"] for f in dominant if not _house_pattern(f["pattern"])]
    # openers and the query habit; the house voice's search line names the query it sends, so
    # its words differ run to run and no house phrase need reach half the runs
    assert {"opener", "query"} <= {f["pattern"].split(":")[0] for f in dominant}
    assert "query:copies-question" in {f["pattern"] for f in dominant}  # openers: checked above
    assert max(f["share_before"] for f in prints if not _house_pattern(f["pattern"])) < 0.5
    # dominant but not universal, and reduced among the kept trajectories; in what a trainer
    # reads (the trained turns, unweighted) every pattern is at most at the cap
    top = [f for f in dominant if f["share_before"] >= 0.6]
    # the scripted thoughts carry state notes beside the house phrases (synth/trajectories/voice.py),
    # so fewer patterns pass 60% and removal alone reaches a little less than with bare templates;
    # the search line names its query, so the opener and the query habit are the two that always do
    assert len(top) >= 2 and all(f["share_before"] <= 0.9 for f in top)
    assert {f["pattern"].split(":")[0] for f in top} >= {"opener", "query"}
    for f in top:
        assert f["share_after"] <= 0.88 * f["share_before"], f
        assert f["trained_share_before"] >= 0.5, f
    assert all(f["trained_share_after"] <= config.pattern_cap + 1e-9 for f in prints)
    copied = next(f for f in prints if f["pattern"] == "query:copies-question")
    assert copied["trained_share_before"] >= 0.5 and copied["trained_share_after"] == 0.0
    before = sum(f["share_before"] for f in top)
    assert sum(f["share_after"] for f in top) <= 0.87 * before  # removal has a budget ...
    b_, a_ = report["before"], report["after"]
    assert a_["distinct"]["distinct-2"] > 1.3 * b_["distinct"]["distinct-2"]
    assert a_["self_bleu"] < b_["self_bleu"] - 0.02
    decisions = list(parts.read_parts(b.filtered))
    assert report["decisions"]["reasons"].get("pattern-cap", 0) > 0
    assert all(d["reason"] for d in decisions if not d["kept"])
    assert any(d["context_turns"] for d in decisions if d["kept"])  # turns kept as context only
