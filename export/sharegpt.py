"""ShareGPT rows for LLaMA-Factory, and the matching dataset_info.json entries.

LLaMA-Factory trains every model turn of a conversation, or with `mask_history: true` only the
last one; it has no per-turn weight. So untrained turns are context only here: one row per
trained turn, the conversation exactly the prompt the teacher had for it (see
export/windows.py) and ending on that turn, to be trained with `mask_history: true`. `conversations` alternates a user side (`human`, `observation`) at even positions with a model
side (`gpt`, `function_call`) at odd ones, and ends on the model side, as LLaMA-Factory's
converter requires: the result of the last call, which the model never acted on, is left out.
A `function_call` value is `{"name", "arguments"}` JSON, preceded by the turn's reasoning and
visible thought in `<think>` tags when it has either (LLaMA-Factory's default thought words; its
function formatter reads JSON after them); a `gpt` message starts with its reasoning in `<think>`
tags the same way. A turn whose call did
not parse is a `gpt` message with the raw text. `system` is the system prompt and `tools` the
tool schemas as a JSON string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.export.sft import context_only, window_metadata

if TYPE_CHECKING:  # records.py imports the layouts, which import this module
    from hopforge.export.records import Example

THINK = re.compile(r"^<think>\n(.*?)\n</think>\n\n", re.DOTALL)
COLUMNS = {"messages": "conversations", "system": "system", "tools": "tools"}


def function_call_value(name: str, arguments: dict[str, Any], thought: str) -> str:
    """The value of a `function_call` message."""
    call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<think>\n{thought}\n</think>\n\n{call}" if thought else call


def think(reasoning: str, thought: str) -> str:
    """The text inside `<think>`: the reasoning, then the visible thought, either may be empty."""
    return "\n\n".join(t for t in (reasoning.strip(), thought.strip()) if t)


def conversation(messages: Sequence[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """Chat messages (Hugging Face layout) as a ShareGPT system prompt and conversation."""
    system = ""
    conv: list[dict[str, str]] = []
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            system = content
        elif role == "user":
            conv.append({"from": "human", "value": content})
        elif role == "tool":
            conv.append({"from": "observation", "value": content})
        elif m.get("tool_calls"):
            fn = m["tool_calls"][0]["function"]
            thought = think(m.get("reasoning_content") or "", content)
            conv.append({"from": "function_call",
                         "value": function_call_value(fn["name"], fn["arguments"], thought)})
        else:
            reasoning = (m.get("reasoning_content") or "").strip()
            value = f"<think>\n{reasoning}\n</think>\n\n{content}" if reasoning else content
            conv.append({"from": "gpt", "value": value})
    return system, conv


def sharegpt_records(ex: Example, tools: Sequence[dict[str, Any]]
                     ) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record id, row) for each trained turn of each window: the conversation up to it."""
    for k, window in enumerate(ex.turn_windows):
        meta = window_metadata(ex, k, window, count=len(ex.turn_windows))
        for turn, context, message in context_only(window):
            system, conv = conversation([*context, message])
            yield f"{ex.trajectory.tid}#t{turn}", {
                "conversations": conv,
                "system": system,
                "tools": json.dumps(list(tools), ensure_ascii=False),
                "metadata": {**meta, "n_supervised": 1, "turn": turn},
            }


def parse_function_call(value: str) -> tuple[str, dict[str, Any], str]:
    """Read a `function_call` value back: name, arguments, thought."""
    thought = ""
    match = THINK.match(value)
    if match:
        thought, value = match.group(1), value[match.end() :]
    call = json.loads(value)
    return call["name"], call["arguments"], thought


_SHAREGPT_ROLES = {"human": "user", "observation": "tool", "gpt": "assistant"}


def sharegpt_messages(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A ShareGPT row as chat messages (its `<think>` text stays out of the visible content)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": row.get("system") or ""}]
    for turn in row["conversations"]:
        if turn["from"] == "function_call":
            name, arguments, _ = parse_function_call(turn["value"])
            call = {"type": "function", "function": {"name": name, "arguments": arguments}}
            out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        else:
            out.append({"role": _SHAREGPT_ROLES[turn["from"]], "content": turn["value"]})
    return out


def dataset_info(name: str, splits: Sequence[str]) -> dict[str, Any]:
    """LLaMA-Factory dataset_info.json entries, one per split folder (`NAME_train`, ...)."""
    return {
        f"{name}_{split}": {"file_name": split, "formatting": "sharegpt", "columns": dict(COLUMNS)}
        for split in splits
    }
