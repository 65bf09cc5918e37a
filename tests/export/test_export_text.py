"""`sft/text`: the sft/trl rows rendered by the student's chat template, as TRL reads them.

TRL renders a conversational prompt-completion row itself (`maybe_apply_chat_template`); an
`sft/text` row must be that rendering, and TRL's SFTTrainer must train exactly its completion.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.export.card import contents_text
from hopforge.export.records import ExportConfig
from hopforge.export.shards import read_shard
from hopforge.flows.stages.export import export_build

from tests.helpers.export_data import make_build
from tests.helpers.tiny_trainer import chatml_tokenizer, tiny_qwen2


def _rows(export: Path, kind: str, split: str) -> list[dict[str, Any]]:
    return [r for p in sorted((export / kind / split).glob("part-*")) for r in read_shard(p)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A build exported as sft and text, rendered with the offline MiniLM tokenizer and a
    tool-capable ChatML template (saved as a tokenizer folder, as a user gives one)."""
    from tokenizers.processors import TemplateProcessing

    root = tmp_path_factory.mktemp("text")
    tok = chatml_tokenizer()
    # text in, ids out, as a decoder model's tokenizer does it: no [CLS] ... [SEP] around it
    tok.backend_tokenizer.post_processor = TemplateProcessing(single="$A", pair="$A $B")
    tok.save_pretrained(root / "tokenizer")
    build = make_build(root / "build", questions=8)
    export_build(build, ExportConfig(formats=("sft", "text"), validation_fraction=0.25,
                                     tokenizer=str(root / "tokenizer")))
    return {"export": build.export, "tokenizer": tok, "root": root}


def test_datasets_loads_the_text_rows_and_they_are_trls_rendering(
    exported: dict[str, Any], tmp_path: Path
) -> None:
    from datasets import load_dataset
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    export, tok = exported["export"], exported["tokenizer"]
    ds = load_dataset("json", data_dir=str(export / "sft/text"), cache_dir=str(tmp_path))
    assert set(ds) == {"train", "validation"}
    for split in ("train", "validation"):
        text, trl_rows = ds[split].to_list(), _rows(export, "sft/trl", split)
        assert text and len(text) == len(trl_rows)
        for row, conv in zip(text, trl_rows, strict=True):
            assert set(row) == {"prompt", "completion", "metadata"}
            assert not is_conversational(row)
            assert row["metadata"] == conv["metadata"]
            rendered = maybe_apply_chat_template(
                {"prompt": conv["prompt"], "completion": conv["completion"]}, tok,
                tools=conv["tools"])
            assert (row["prompt"], row["completion"]) == (
                rendered["prompt"], rendered["completion"])
            assert row["prompt"].endswith("<|im_start|>assistant\n")
            assert row["completion"].count("<tool_call>") == len(
                conv["completion"][0].get("tool_calls") or ())
            assert '"name": "search"' in row["prompt"]  # the tool schemas, rendered once
    manifest = json.loads((export / "manifest.json").read_text())
    assert manifest["counts"]["sft/text"] == manifest["counts"]["sft/trl"]
    assert "`sft_text`" in (export / "README.md").read_text()
    assert (export / "schemas" / "sft_text.schema.json").is_file()


def test_sft_trainer_trains_the_completion_of_each_text_row(exported: dict[str, Any]) -> None:
    """TRL's SFTTrainer tokenizes the rows as a standard prompt-completion dataset: the tokens
    in its loss (labels other than -100) are exactly the completion and the EOS it appends, the
    rest is the whole prompt; two steps change the model."""
    import torch
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    export, tok, root = exported["export"], exported["tokenizer"], exported["root"]
    files = sorted(str(p) for p in (export / "sft/text" / "train").glob("part-*"))
    data = load_dataset("json", data_files=files, split="train",
                        cache_dir=str(root / "cache")).remove_columns(["metadata"])
    shortest = sorted(range(len(data)), key=lambda i: len(data[i]["prompt"]))[:2]
    data = data.select(shortest)
    torch.manual_seed(0)
    model = tiny_qwen2(tok)
    before = [p.detach().clone() for p in model.parameters()]
    args = SFTConfig(output_dir=str(root / "out"), max_steps=2, per_device_train_batch_size=1,
                     learning_rate=1e-3, max_length=None, report_to=[], use_cpu=True,
                     save_strategy="no", dataloader_num_workers=0, seed=0,
                     activation_checkpointing=False)
    trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tok)
    for row, done in zip(data, trainer.train_dataset, strict=True):
        trained = [t for t, label in zip(done["input_ids"], done["labels"], strict=True)
                   if label != -100]
        want = tok(row["completion"] + tok.eos_token, add_special_tokens=False)["input_ids"]
        assert trained == want
        context = done["input_ids"][: len(done["input_ids"]) - len(trained)]
        assert context == tok(row["prompt"])["input_ids"]  # all of the prompt, none trained
    result = trainer.train()
    assert result.training_loss > 0
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))


def test_text_needs_a_tokenizer_and_is_not_in_default_exports() -> None:
    with pytest.raises(HopforgeError, match=r"sft/text .*set \[export\] tokenizer"):
        ExportConfig(formats=("sft", "text"))
    assert "text" not in ExportConfig().formats and "sft/text" not in ExportConfig().kinds
    assert "`sft_text`" not in contents_text({"counts": {"sft/hf": {"train": 1}}})
