"""An exported row as its trainer reads it: each message, and whether the trainer trains it.

- `sft/openai` and `sft/hf`: a conversation; an assistant message is trained when its
  `weight` is 1 (TRL and the OpenAI fine-tuning format read the same field).
- `sft/trl` (prompt-completion): the completion is trained, the prompt is not.
- `sharegpt` (LLaMA-Factory with `mask_history: true`): only the last model turn is trained.
"""

from __future__ import annotations

import json
from typing import Any

from hopforge.flows.view.catalog import RowRef

TRAINED_NOTE = {
    "sft/openai": "assistant messages with weight 1 are trained",
    "sft/hf": "assistant messages with weight 1 are trained",
    "sft/trl": "the completion is trained; the prompt is context",
    "sharegpt": "trained with mask_history: true, so only the last model turn is trained",
}
_MODEL_SIDES = ("gpt", "function_call")


def _message(role: str, content: Any, trained: bool | None, calls: Any = None) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": role, "content": text or "", "trained": trained,
            "calls": json.dumps(calls, ensure_ascii=False, indent=1) if calls else ""}


def row_messages(layout: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's messages in order; `trained` is True/False for model turns, None otherwise."""
    if layout in ("sft/openai", "sft/hf"):
        return [_message(m["role"], m.get("content"),
                         bool(m.get("weight", 1)) if m["role"] == "assistant" else None,
                         m.get("tool_calls")) for m in row.get("messages") or ()]
    if layout == "sft/trl":
        return ([_message(m["role"], m.get("content"), False if m["role"] == "assistant"
                          else None, m.get("tool_calls")) for m in row.get("prompt") or ()]
                + [_message(m["role"], m.get("content"), True, m.get("tool_calls"))
                   for m in row.get("completion") or ()])
    if layout == "sharegpt":
        turns = row.get("conversations") or []
        last = max((i for i, m in enumerate(turns) if m.get("from") in _MODEL_SIDES),
                   default=-1)
        head = [_message("system", row.get("system", ""), None)] if row.get("system") else []
        return head + [_message(m.get("from", ""), m.get("value", ""),
                                (i == last) if m.get("from") in _MODEL_SIDES else None)
                       for i, m in enumerate(turns)]
    raise ValueError(f"not a turn layout: {layout}")


def row_view(ref: RowRef, row: dict[str, Any]) -> dict[str, Any]:
    """What the rows page shows of one exported row."""
    meta = row.get("metadata") or {}
    messages = row_messages(ref.layout, row)
    return {
        "layout": ref.layout, "split": ref.split, "file": ref.path.name, "offset": ref.offset,
        "window": meta.get("window") or {}, "turn": meta.get("turn"),
        "weight": meta.get("sample_weight"), "messages": messages,
        "trained": sum(1 for m in messages if m["trained"]),
        "note": TRAINED_NOTE[ref.layout],
    }
