"""An exported row as its trainer reads it: each message, and whether the trainer trains it.

Each turn layout says how (hopforge.export.layouts: `Layout.shown`, `Layout.trained_note`):
- `sft/openai` and `sft/hf`: a conversation; an assistant message is trained when its
  `weight` is 1 (TRL and the OpenAI fine-tuning format read the same field).
- `sft/trl` (prompt-completion): the completion is trained, the prompt is not.
- `sharegpt` (LLaMA-Factory with `mask_history: true`): only the last model turn is trained.
"""

from __future__ import annotations

import json
from typing import Any

from hopforge.export.layouts.registry import layout_named
from hopforge.flows.view.catalog import RowRef


def _message(role: str, content: Any, trained: bool | None, calls: Any = None) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": role, "content": text or "", "trained": trained,
            "calls": json.dumps(calls, ensure_ascii=False, indent=1) if calls else ""}


def row_messages(layout: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's messages in order; `trained` is True/False for model turns, None otherwise."""
    lay = layout_named(layout)
    if not lay.trained_note:
        raise ValueError(f"not a turn layout: {layout}")
    return [_message(role, content, trained, calls)
            for role, content, trained, calls in lay.shown(row)]


def row_view(ref: RowRef, row: dict[str, Any]) -> dict[str, Any]:
    """What the rows page shows of one exported row."""
    meta = row.get("metadata") or {}
    messages = row_messages(ref.layout, row)
    return {
        "layout": ref.layout, "split": ref.split, "file": ref.path.name, "offset": ref.offset,
        "window": meta.get("window") or {}, "turn": meta.get("turn"),
        "weight": meta.get("sample_weight"), "messages": messages,
        "trained": sum(1 for m in messages if m["trained"]),
        "note": layout_named(ref.layout).trained_note,
    }
