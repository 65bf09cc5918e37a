"""Turn judgments in the filter over real scripted builds: failures, low-step and padded runs."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts
from hopforge.filters.records import Decision
from hopforge.filters.select import FilterConfig
from hopforge.synth.annotate import label_trajectory, tool_calls, useful_share
from hopforge.synth.records import TURN_LABELS, Question, Trajectory

from tests.helpers.tiny import scored_build


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory, agent_documents: list,
          agent_questions: list) -> BuildDir:
    """Scripted trajectories with faults; a turn budget short enough that some never answer."""
    return scored_build(tmp_path_factory.mktemp("turns") / "b", agent_documents,
                        agent_questions, max_turns=9)


def _labelled(build: BuildDir) -> list[Trajectory]:
    qs = {q["qid"]: Question.from_row(q) for q in read_parts(build.questions)}
    return [label_trajectory(Trajectory.from_row(r), qs[r["qid"]])
            for r in read_parts(build.trajectories)]


def _filter(build: BuildDir, config: FilterConfig) -> tuple[dict, dict[str, Decision]]:
    from hopforge.flows.stages.filters import filter_build

    report = filter_build(build, config, force=True)
    return report, {d["tid"]: Decision.from_row(d) for d in read_parts(build.filtered)}


def test_every_turn_has_a_label_with_a_reason(build: BuildDir) -> None:
    trajs = _labelled(build)
    labels = Counter(t.label for tr in trajs for t in tr.turns)
    assert set(labels) <= set(TURN_LABELS) and labels["progress"] and labels["recovery"]
    assert all(t.label_reason for tr in trajs for t in tr.turns)
    for tr in trajs:
        for t in tr.turns:
            if t.recovered:
                assert t.label == "recovery"
            if t.new_evidence:
                assert t.label in ("progress", "recovery")


def test_failed_runs_are_dropped_and_counted(build: BuildDir) -> None:
    trajs = _labelled(build)
    unanswered = [t.tid for t in trajs if not t.final_answer]
    assert unanswered  # max_turns=9 is too short for the longest chains
    report, decisions = _filter(build, FilterConfig(min_tool_calls=0, min_useful_share=0.0,
                                                    dedup_questions=0.0))
    for tid in unanswered:
        assert not decisions[tid].kept and decisions[tid].reason.startswith("no-answer:")
    turns = report["turns"]
    assert sum(turns["failed"].values()) == len(unanswered) and turns["failed_kept"] == 0
    assert report["decisions"]["reasons"]["no-answer"] == len(unanswered)
    kept, _ = _filter(build, FilterConfig(min_tool_calls=0, min_useful_share=0.0,
                                          dedup_questions=0.0, keep_failed=True, balance_ratio=0,
                                          require_correct=False,
                                          dedup_trajectories=0.0, pattern_cap_budget=0.0,
                                          threshold=1.0))
    assert kept["turns"]["failed_kept"] == len(unanswered)


def test_min_tool_calls_and_min_useful_share_drop_with_reasons(build: BuildDir) -> None:
    trajs = [t for t in _labelled(build) if t.final_answer]
    calls = sorted(tool_calls(t) for t in trajs)
    shares = sorted(useful_share(t) for t in trajs)
    few, low = calls[len(calls) // 2], shares[len(shares) // 2]
    _, decisions = _filter(build, FilterConfig(min_tool_calls=few, min_useful_share=0.0,
                                               dedup_questions=0.0))
    for t in trajs:
        assert (decisions[t.tid].reason.startswith("few-tool-calls:")) == (tool_calls(t) < few)
    report, decisions = _filter(build, FilterConfig(min_tool_calls=0, min_useful_share=low,
                                                    dedup_questions=0.0))
    padded = [t for t in trajs if useful_share(t) < low]
    assert padded and report["decisions"]["reasons"]["low-useful-share"] == len(padded)
    assert all(decisions[t.tid].reason.startswith("low-useful-share:") for t in padded)
    assert report["turns"]["useful_share_kept"]["n"] == report["kept"]


def test_config_messages_name_field_value_and_range() -> None:
    with pytest.raises(ValueError, match=r"min_useful_share\n.*less than or equal to 1"):
        FilterConfig(min_useful_share=1.5)
    with pytest.raises(ValueError, match=r"min_tool_calls\n.*greater than or equal to 0"):
        FilterConfig(min_tool_calls=-1)
    with pytest.raises(HopforgeError, match="downweight_from=0.9 must not exceed threshold"):
        FilterConfig(downweight_from=0.9)
    assert dataclasses.replace(FilterConfig(), min_tool_calls=3).min_tool_calls == 3


def test_build_toml_tables_accept_the_new_keys(tmp_path: Path) -> None:
    from hopforge.flows.config.build_file import parse_config_text

    text = """[build]\nname = "t"\n[corpus]\nsources = ["builtin:jargon"]\n
[filter]\nmin_tool_calls = 4\nmin_useful_share = 0.3\n[score]\npair_margin = 0.8\n
[export]\nmax_seq_tokens = 8192\ntokenizer = "some/tokenizer"\n"""
    config = parse_config_text(text, base_dir=tmp_path, default_name="t", out=tmp_path / "b",
                               env={}, origin="a test")
    assert config.stages["filter"].min_tool_calls == 4
    assert config.stages["filter"].min_useful_share == 0.3
    assert config.stages["score"].pair_margin == 0.8
    assert config.stages["export"].max_seq_tokens == 8192
    assert config.stages["export"].tokenizer == "some/tokenizer"


def test_a_search_that_pastes_the_question_is_never_trained(build: BuildDir) -> None:
    """Every kept run's search that copies the question (by the independent word-share rule
    below) is context only; with `never_trained` empty some stay trained."""
    import re

    qs = {q["qid"]: Question.from_row(q) for q in read_parts(build.questions)}
    runs = {t.tid: t for t in _labelled(build)}

    def pasted(tid: str, decision: Decision) -> list[int]:
        """Trained turns whose search holds 70% or more of the question's words."""
        t = runs[tid]
        asked = set(re.findall(r"\w+", qs[t.qid].question.lower()))
        out = []
        for turn in t.turns:
            query = (turn.call.arguments.get("query") if turn.call is not None
                     and turn.call.name == "search" else None)
            if not isinstance(query, str) or turn.index in decision.context_turns:
                continue
            if len(set(re.findall(r"\w+", query.lower())) & asked) >= 0.7 * len(asked):
                out.append(turn.index)
        return out

    _, decisions = _filter(build, FilterConfig())
    kept = {tid: d for tid, d in decisions.items() if d.kept}
    assert kept and not any(pasted(tid, d) for tid, d in kept.items())
    _, decisions = _filter(build, FilterConfig(never_trained=()))
    assert any(pasted(tid, d) for tid, d in decisions.items() if d.kept)
