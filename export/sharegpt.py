"""ShareGPT rows for LLaMA-Factory, and the matching dataset_info.json entries.

`conversations` alternates a user side (`human`, `observation`) at even positions with a model
side (`gpt`, `function_call`) at odd ones, and ends on the model side, as LLaMA-Factory's
converter requires: the result of the last call, which the model never acted on, is left out.
A `function_call` value is `{"name", "arguments"}` JSON, preceded by the turn's thought in
`<think>` tags when there is one (LLaMA-Factory's default thought words). A turn whose call did
not parse is a `gpt` message with the raw text. `system` is the system prompt and `tools` the
tool schemas as a JSON string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hopforge.export.messages import feedback
from hopforge.export.records import Example
from hopforge.export.sft import example_weights, trajectory_metadata
from hopforge.synth.prompts import AGENT_QUESTION

THINK = re.compile(r"^<think>\n(.*?)\n</think>\n\n", re.DOTALL)
COLUMNS = {"messages": "conversations", "system": "system", "tools": "tools"}


def function_call_value(name: str, arguments: dict[str, Any], thought: str) -> str:
    """The value of a `function_call` message."""
    call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<think>\n{thought}\n</think>\n\n{call}" if thought else call


def sharegpt_record(ex: Example, tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One LLaMA-Factory ShareGPT row."""
    traj = ex.trajectory
    weights = example_weights(ex)
    conv = [{"from": "human", "value": AGENT_QUESTION.format(question=ex.question.question)}]
    model_weights: list[int] = []
    for turn, weight in zip(traj.turns, weights, strict=True):
        if turn.call is None:
            conv.append({"from": "gpt", "value": turn.raw})
            model_weights.append(0)
            conv.append({"from": "human", "value": feedback(turn)})
            continue
        value = function_call_value(turn.call.name, turn.call.arguments, turn.thought)
        conv.append({"from": "function_call", "value": value})
        model_weights.append(weight)
        conv.append({"from": "observation", "value": turn.result})
    if len(conv) % 2:
        conv.pop()  # end on the model side
    metadata = trajectory_metadata(ex, weights)
    metadata["weights"] = model_weights
    return {
        "conversations": conv,
        "system": traj.system_prompt,
        "tools": json.dumps(list(tools), ensure_ascii=False),
        "metadata": metadata,
    }


def parse_function_call(value: str) -> tuple[str, dict[str, Any], str]:
    """Read a `function_call` value back: name, arguments, thought."""
    thought = ""
    match = THINK.match(value)
    if match:
        thought, value = match.group(1), value[match.end() :]
    call = json.loads(value)
    return call["name"], call["arguments"], thought


def dataset_info(name: str, splits: Sequence[str]) -> dict[str, Any]:
    """LLaMA-Factory dataset_info.json entries, one per split folder (`NAME_train`, ...)."""
    return {
        f"{name}_{split}": {"file_name": split, "formatting": "sharegpt", "columns": dict(COLUMNS)}
        for split in splits
    }
