"""TRL trains on the exported rows: a tiny randomly initialised Qwen2 model, a few SFT steps on
`sft/trl`, with the loss mask checked against the rows' weights on every one of its 200-odd rows
(CPU, offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hopforge.export.records import ExportConfig
from hopforge.export.shards import read_shard
from hopforge.flows.stages.export import export_build

from tests.helpers.export_data import make_build
from tests.helpers.tiny_trainer import chatml_tokenizer, tiny_qwen2


def _rows(export: Path, kind: str) -> list[dict[str, Any]]:
    return [r for split in ("train", "validation")
            for p in sorted((export / kind / split).glob("part-*")) for r in read_shard(p)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An export of 13 questions (206 sft/trl rows), and a TRL SFTTrainer that ran 3 steps of
    one row each on them (rows of up to 2,500 tokens over a 30k vocabulary: a batch of 4 cost
    over a minute a step on 2 CPU cores)."""
    import torch
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    root = tmp_path_factory.mktemp("trl")
    tok = chatml_tokenizer()
    tok.save_pretrained(root / "tokenizer")  # the export counts row tokens with it
    build = make_build(root / "build", questions=13)
    export_build(build, ExportConfig(validation_fraction=0.2, tokenizer=str(root / "tokenizer")))
    manifest = json.loads((build.export / "manifest.json").read_text())
    rows = _rows(build.export, "sft/trl")
    files = [str(p) for split in ("train", "validation")
             for p in sorted((build.export / "sft/trl" / split).glob("part-*"))]
    data = load_dataset("json", data_files=files, split="train",
                        cache_dir=str(root / "cache")).remove_columns(["metadata"])
    torch.manual_seed(0)
    model = tiny_qwen2(tok)
    before = [p.detach().clone() for p in model.parameters()]
    max_length = manifest["stats"]["training"]["trl_max_length"]
    args = SFTConfig(output_dir=str(root / "out"), max_steps=3, per_device_train_batch_size=1,
                     learning_rate=1e-3, max_length=max_length, report_to=[], use_cpu=True,
                     logging_steps=1, save_strategy="no", dataloader_num_workers=0, seed=0,
                     activation_checkpointing=False)
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tok)
    result = trainer.train()
    changed = any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))
    return {"rows": rows, "hf": _rows(build.export, "sft/hf"), "trainer": trainer,
            "tokenizer": tok, "loss": result.training_loss, "changed": changed,
            "manifest": manifest, "max_length": max_length,
            "card": (build.export / "README.md").read_text()}


def test_a_tiny_model_trains_a_few_steps(trained: dict[str, Any]) -> None:
    import math

    assert len(trained["rows"]) >= 200  # the "200 rows"
    assert math.isfinite(trained["loss"]) and trained["loss"] > 0 and trained["changed"]


def test_every_row_fits_the_cards_max_length(trained: dict[str, Any]) -> None:
    """The card's max_length keeps every row: TRL truncates none of them."""
    processed = trained["trainer"].train_dataset
    assert len(processed) == len(trained["rows"])
    lengths = [len(ids) for ids in processed["input_ids"]]
    assert max(lengths) <= trained["max_length"]
    training = trained["manifest"]["stats"]["training"]
    assert training["tokens_counted_with"].endswith("tokenizer")
    assert max(lengths) <= training["trl_row_tokens"]["max"] <= trained["max_length"]
    assert f"SFTConfig(max_length={trained['max_length']}, completion_only_loss=True)" in trained[
        "card"]


def test_tokens_trained_are_the_rows_trained_turns(trained: dict[str, Any]) -> None:
    """The loss covers exactly each row's completion (its one weight-1 turn), nothing else."""
    tok, rows = trained["tokenizer"], trained["rows"]
    processed = trained["trainer"].train_dataset
    # one row per trained turn, its completion; sft/hf trains fewer (a turn that reads a result
    # its window elides has weight 0 there, while its one-turn row shows that result)
    trained_turns = sum(m.get("weight", 0) for r in trained["hf"] for m in r["messages"])
    assert len(rows) >= trained_turns > 0
    assert all(r["metadata"]["n_supervised"] == 1 and len(r["completion"]) == 1 for r in rows)
    total = 0
    for row, ids, labels in zip(rows, processed["input_ids"], processed["labels"], strict=True):
        prompt = tok.apply_chat_template(row["prompt"], tools=row["tools"], tokenize=False,
                                         add_generation_prompt=True)
        whole = tok.apply_chat_template(row["prompt"] + row["completion"], tools=row["tools"],
                                        tokenize=False)
        assert whole.startswith(prompt)
        want = tok(whole[len(prompt):], add_special_tokens=False)["input_ids"]
        got = [t for t, label in zip(ids, labels, strict=True) if label != -100]
        assert got == want  # the completion's tokens, the template's end-of-turn included
        assert [label for label in labels if label != -100] == want
        assert ids[: len(ids) - len(got)] == tok(prompt, add_special_tokens=False)["input_ids"]
        total += len(got)
    batch = trained["trainer"].data_collator([processed[i] for i in range(4)])
    for i in range(4):  # the collator pads, and keeps exactly the rows' trained tokens
        kept = [int(t) for t in batch["labels"][i] if t != -100]
        assert kept == [label for label in processed[i]["labels"] if label != -100]
    assert total == sum(sum(label != -100 for label in row) for row in processed["labels"]) > 0
