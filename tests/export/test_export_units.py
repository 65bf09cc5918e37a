"""Splits by evidence chain, decontamination, and shard writing and reading."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.export.decontam import find_contaminated, load_eval_sets, ngrams, normalize_tokens
from hopforge.export.records import EvalItem
from hopforge.export.schemas import sft_schema
from hopforge.export.shards import json_line, read_shard, write_shards
from hopforge.export.splits import chain_key, shared_chains, split_questions
from hopforge.synth.records import Question

from tests.helpers.export_data import make_question


def _questions(n: int, seed: int = 0) -> list[Question]:
    rng = random.Random(seed)
    qs = [make_question(i, rng) for i in range(n)]
    # every fifth question reuses an earlier question's chain, in another order
    return [
        dataclasses.replace(q, evidence=tuple(reversed(qs[i - 3].evidence))) if i % 5 == 4 else q
        for i, q in enumerate(qs)
    ]


@pytest.mark.parametrize(("fraction", "seed"), [(0.1, 0), (0.3, 1), (0.5, 7), (0.02, 3)])
def test_split_keeps_every_chain_on_one_side(fraction: float, seed: int) -> None:
    qs = _questions(60, seed)
    splits = split_questions(qs, validation_fraction=fraction, seed=seed)
    assert shared_chains(qs, splits) == set()
    assert set(splits.values()) == {"train", "validation"}
    assert chain_key(qs[4]) == chain_key(qs[1])  # same documents, other order: one chain
    assert splits[qs[4].qid] == splits[qs[1].qid]


def test_split_is_stable_when_questions_are_added() -> None:
    qs = _questions(80)
    before = split_questions(qs[:40], validation_fraction=0.2, seed=5)
    after = split_questions(qs, validation_fraction=0.2, seed=5)
    assert all(after[qid] == side for qid, side in before.items())
    assert split_questions(qs, validation_fraction=0.0)[qs[0].qid] == "train"
    assert "validation" in split_questions(qs[:3], validation_fraction=0.01).values()


def test_normalization_and_ngrams() -> None:
    assert normalize_tokens("The Mount-Fendle, an old peak!") == ["mount", "fendle", "old", "peak"]
    assert ngrams(["a", "b"], 3) == {("a", "b")}
    assert len(ngrams(list("abcdef"), 3)) == 4


def test_decontamination_flags_question_and_answer_overlap() -> None:
    rng = random.Random(1)
    qs = [make_question(i, rng) for i in range(6)]
    evals = [
        EvalItem(question=f"Tell me: {qs[0].question.upper()}", answers=("x",), source="a.jsonl"),
        # same answer, and the question shares a 3-gram ("the mentor of") with qs[1]
        EvalItem(
            question="Who was the mentor of the painter?", answers=(qs[1].answer,), source="b"
        ),
        # same answer as qs[2] but an unrelated question: not contaminated
        EvalItem(question="Name a river in the north.", answers=(qs[2].answer,), source="b"),
        EvalItem(question="born", answers=(), source="c"),  # too short to match anything
    ]
    if qs[2].answer == qs[1].answer:  # keep the third item a pure negative
        evals[2] = EvalItem(question="Name a river.", answers=("nowhere at all",), source="b")
    hits = {h.qid: h for h in find_contaminated(qs, evals)}
    assert hits[qs[0].qid].reason == "question" and hits[qs[0].qid].source == "a.jsonl"
    assert hits[qs[1].qid].reason == "answer"
    assert set(hits) == {qs[0].qid, qs[1].qid} | {q.qid for q in qs if q.answer == qs[1].answer}
    short = [EvalItem(question="works number 3 born", source="s")]
    assert [h.qid for h in find_contaminated(qs, short)] == [qs[3].qid]


def test_eval_sets_load_from_common_layouts(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"question": "Q one here?", "golden_answers": ["A", "B"]})
        + "\n"
        + json.dumps({"query": "Q two here?", "answer": "C"})
        + "\n"
    )
    (tmp_path / "b.json").write_text(
        json.dumps({"version": 1, "data": [{"question": "Q three?", "answer": "D"}]})
    )
    (tmp_path / "c.txt").write_text("Q four here?\n\n")
    import polars as pl

    pl.DataFrame({"problem": ["Q five?"], "answers": [["E"]]}).write_parquet(tmp_path / "d.parquet")
    items = load_eval_sets([tmp_path / n for n in ("a.jsonl", "b.json", "c.txt", "d.parquet")])
    assert [(i.question, i.answers) for i in items] == [
        ("Q one here?", ("A", "B")),
        ("Q two here?", ("C",)),
        ("Q three?", ("D",)),
        ("Q four here?", ()),
        ("Q five?", ("E",)),
    ]
    (tmp_path / "empty.jsonl").write_text(json.dumps({"text": "no question"}) + "\n")
    with pytest.raises(HopforgeError, match="no evaluation items"):
        load_eval_sets([tmp_path / "empty.jsonl"])
    with pytest.raises(HopforgeError, match="does not exist"):
        load_eval_sets([tmp_path / "missing.jsonl"])


def test_shards_respect_both_bounds(tmp_path: Path) -> None:
    sizes = [10, 10, 10, 50, 200, 10, 10]  # bytes of each JSON line
    rows = [{"x": "a" * (n - 10)} for n in sizes]
    assert [len(json_line(r)) for r in rows] == sizes
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    infos = write_shards(tmp_path, "k", "train", rows, schema=schema, max_records=3, max_bytes=60)
    assert [i.records for i in infos] == [3, 1, 1, 2]
    assert [i.bytes for i in infos] == [30, 50, 200, 20]
    assert (
        write_shards(tmp_path, "k", "validation", [], schema=schema, max_records=3, max_bytes=60)
        == []
    )


def _rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        args = {"query": f"q{i}", "k": 3} if i % 2 else {"doc_id": f"d{i}", "page": i}
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "search" if i % 2 else "open", "arguments": args},
        }
        rows.append(
            {
                "messages": [
                    {"role": "user", "content": f"question {i} ✓"},
                    {"role": "assistant", "content": "", "tool_calls": [call], "weight": i % 2},
                    {
                        "role": "tool",
                        "tool_call_id": f"c{i}",
                        "content": "result",
                        "name": call["function"]["name"],
                    },
                ],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "search", "parameters": {"properties": {"q": {}}}},
                    }
                ],
                "metadata": {"qid": f"q{i}", "judge": None if i < 10 else 0.5},  # set only late
            }
        )
    return rows


@pytest.mark.parametrize(("parquet", "zstd"), [(False, False), (False, True), (True, False)])
def test_shards_round_trip(tmp_path: Path, parquet: bool, zstd: bool) -> None:
    rows = _rows(13)
    schema = sft_schema("object")
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"qid": {"type": "string"}, "judge": {"type": ["number", "null"]}},
    }
    infos = write_shards(
        tmp_path,
        "sft/hf",
        "train",
        rows,
        schema=schema,
        max_records=5,
        max_bytes=1 << 20,
        parquet=parquet,
        zstd=zstd,
    )
    suffix = ".parquet" if parquet else ".jsonl.zst" if zstd else ".jsonl"
    assert [i.path for i in infos] == [f"sft/hf/train/part-{n:05d}{suffix}" for n in range(3)]
    assert [i.records for i in infos] == [5, 5, 3]
    back = [r for i in infos for r in read_shard(tmp_path / i.path)]
    if parquet:  # Parquet columns are the union of every message's keys: absent keys read as null
        for r in back:
            r["messages"] = [{k: v for k, v in m.items() if v is not None} for m in r["messages"]]
    assert back == rows
    assert back[12]["metadata"]["judge"] == 0.5


def test_read_shard_rejects_other_files(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text("a\n")
    with pytest.raises(HopforgeError, match="not a shard"):
        list(read_shard(tmp_path / "x.csv"))


def test_a_wrong_final_answer_is_never_a_target() -> None:
    from hopforge.export.records import Example
    from hopforge.export.sft import example_weights
    from hopforge.synth.records import NOT_FOUND, Spec, ToolCall

    from tests.helpers.export_data import make_trajectory

    rng = random.Random(3)
    q = make_question(0, rng)
    traj = make_trajectory(q, 0, rng)

    def answered(text: str, question: Question) -> int:
        last = dataclasses.replace(traj.turns[-1], call=ToolCall(name="answer",
                                                                 arguments={"text": text}))
        t = dataclasses.replace(traj, turns=(*traj.turns[:-1], last), final_answer=text)
        ex = Example(trajectory=t, question=question, split="train", chain="c")
        return example_weights(ex)[-1]

    assert answered(q.answer, q) == 1 and answered(f"The {q.answer.upper()}", q) == 1
    assert answered("Somewhere Else", q) == 0
    assert answered(NOT_FOUND, q) == 0  # "not found" on a question that has an answer
    unanswerable = dataclasses.replace(q, answer=NOT_FOUND, kind="unanswerable")
    assert answered(NOT_FOUND, unanswerable) == 1 and answered(q.answer, unanswerable) == 0
    listed = dataclasses.replace(q, answer="Alder; Brisk", spec=Spec(family="aggregation",
                                                                    answer_type="list"))
    assert answered("Brisk; Alder", listed) == 1 and answered("Brisk", listed) == 0
