"""JSON Schemas of the export layouts' rows: every record is validated against its layout's
schema before it is written (each layout picks its schema: hopforge.export.layouts).

The same schema gives the Parquet layout: objects with `properties` become structs in the order
declared, arrays become lists. Values marked `"x-json": true` have no fixed shape (tool
arguments, tool schemas); Parquet stores them as JSON text tagged with Arrow's `arrow.json`
type, which Hugging Face `datasets` decodes back into objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import fastjsonschema
import jsonschema
from hopforge.corpus.tools import is_final
from hopforge.synth.records import TURN_LABELS
from jsonschema.exceptions import best_match

STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
OPT_NUM = {"type": ["number", "null"]}
STR_LIST = {"type": "array", "items": STR}
JSON_OBJECT = {"type": "object", "x-json": True}
ROLES = ("system", "user", "assistant", "tool")


def obj(properties: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    """A closed object: every key declared, the listed ones (default: all) required."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


def tool_call_schema(arguments: str) -> dict[str, Any]:
    """One entry of `tool_calls`; `arguments` is "string" (OpenAI) or "object" (Hugging Face)."""
    args = STR if arguments == "string" else JSON_OBJECT
    function = obj({"name": {"type": "string", "minLength": 1}, "arguments": args})
    return obj({"id": STR, "type": {"const": "function"}, "function": function})


def message_schema(arguments: str, *, weights: bool, names: bool) -> dict[str, Any]:
    """A chat message of any role, with the keys each role needs."""
    props: dict[str, Any] = {
        "role": {"enum": list(ROLES)},
        "content": STR,
        "tool_calls": {"type": "array", "items": tool_call_schema(arguments), "minItems": 1},
        "tool_call_id": STR,
    }
    if names:
        props["name"] = STR
    if weights:
        props["weight"] = {"enum": [0, 1]}
    schema = obj(props, ["role", "content"])
    # Two if/then/else rules (forbidding a key with a `false` schema) keep validation fast.
    assistant_only = {k: False for k in ("tool_calls", "weight") if k in props}
    tool_only = {k: False for k in ("tool_call_id", "name") if k in props}
    schema["allOf"] = [
        {
            "if": _role("assistant"),
            "then": {"required": ["weight"] if weights else []},
            "else": {"properties": assistant_only},
        },
        {
            "if": _role("tool"),
            "then": {"required": ["tool_call_id"]},
            "else": {"properties": tool_only},
        },
    ]
    return schema


def _role(role: str) -> dict[str, Any]:
    return {"properties": {"role": {"const": role}}}


TOOLS = {"type": "array", "items": JSON_OBJECT}
# what every row's metadata opens with: its question, split, evidence chain, hops and kind
ROW_KEYS = {"qid": STR, "split": {"enum": ["train", "validation"]}, "chain": STR, "hops": INT,
            "kind": STR}
REWARDS = obj(
    {
        "combined": OPT_NUM,
        "pointwise": OPT_NUM,
        "exact_match": OPT_NUM,
        "f1": OPT_NUM,
        "judge": OPT_NUM,
        "evidence_recall": OPT_NUM,
        "format": OPT_NUM,
        "efficiency": OPT_NUM,
        "recovery": OPT_NUM,
        "strength": OPT_NUM,
        "length_controlled": OPT_NUM,
        "correctness": OPT_NUM,
        "evidence": OPT_NUM,
        "correct": {"type": ["boolean", "null"]},
        "turn_rewards": {"type": "array", "items": NUM},
    }
)
TRAJECTORY_METADATA = obj(
    {
        "tid": STR,
        **ROW_KEYS,
        "teacher": STR,
        "sample": INT,
        "termination": STR,
        "final_answer": STR,
        "answer": STR,
        "n_turns": INT,
        "n_supervised": INT,
        "sample_weight": NUM,
        "filter_reason": STR,
        "useful_share": NUM,
        "labels": obj({label: INT for label in TURN_LABELS}),
        "rewards": REWARDS,
        "window": obj(
            {
                "index": INT,
                "count": INT,
                "checkpoint": INT,
                "first_turn": INT,
                "last_turn": INT,
                "tokens": INT,
            }
        ),
    }
)


def turn_metadata() -> dict[str, Any]:
    """The metadata of a row that trains one turn: a window's, plus that turn's index."""
    meta = dict(TRAJECTORY_METADATA)
    meta["properties"] = {**TRAJECTORY_METADATA["properties"], "turn": INT}
    meta["required"] = list(meta["properties"])
    return meta


def sft_schema(arguments: str) -> dict[str, Any]:
    """An SFT row: messages with per-assistant weights, tools, metadata."""
    names = arguments == "object"
    message = message_schema(arguments, weights=True, names=names)
    props: dict[str, Any] = {
        "messages": {"type": "array", "items": message, "minItems": 3},
        "tools": TOOLS,
    }
    if arguments == "string":
        props["parallel_tool_calls"] = BOOL
    props["metadata"] = TRAJECTORY_METADATA
    return obj(props)


def sharegpt_schema() -> dict[str, Any]:
    """A LLaMA-Factory ShareGPT row; `tools` is a JSON string."""
    turn = obj({"from": {"enum": ["human", "gpt", "function_call", "observation"]}, "value": STR})
    return obj(
        {
            "conversations": {"type": "array", "items": turn, "minItems": 2},
            "system": STR,
            "tools": STR,
            "metadata": turn_metadata(),
        }
    )


def trl_schema() -> dict[str, Any]:
    """A TRL prompt-completion row: the context, then one trained assistant message."""
    message = message_schema("object", weights=False, names=True)
    assistant = {**message, "properties": {**message["properties"], "role": {"const": "assistant"}}}
    return obj(
        {
            "prompt": {"type": "array", "items": message, "minItems": 1},
            "completion": {"type": "array", "items": assistant, "minItems": 1, "maxItems": 1},
            "tools": TOOLS,
            "metadata": turn_metadata(),
        }
    )


def preference_schema() -> dict[str, Any]:
    """A TRL preference row in the conversational format."""
    message = message_schema("object", weights=False, names=True)
    conversation = {"type": "array", "items": message, "minItems": 1}
    meta = obj(
        {
            **ROW_KEYS,
            "chosen_tid": STR,
            "rejected_tid": STR,
            "chosen_teacher": STR,
            "rejected_teacher": STR,
            "chosen_reward": OPT_NUM,
            "rejected_reward": OPT_NUM,
            "margin": NUM,
            "source": STR,
        }
    )
    return obj(
        {
            "prompt": conversation,
            "chosen": conversation,
            "rejected": conversation,
            "tools": TOOLS,
            "metadata": meta,
        }
    )


QUESTION_METADATA = obj(
    {
        **ROW_KEYS,
        "composer": STR,
        "answer_doc": STR,
        "evidence": STR_LIST,
        "n_trajectories": INT,
        "teacher_pass_rate": OPT_NUM,
        "mean_reward": OPT_NUM,
    }
)
PROMPT = {
    "type": "array",
    "items": obj({"role": {"enum": ["system", "user"]}, "content": STR}),
    "minItems": 1,
}
ANSWER_TYPE = {"enum": ["", "title", "year", "count", "list", "not_found"]}
GROUND_TRUTH = obj({"target": {"type": "array", "items": STR, "minItems": 1},
                    "answer_type": ANSWER_TYPE})


def verl_schema(tool_names: Sequence[str]) -> dict[str, Any]:
    """A verl RL row; `tools_kwargs` has one entry per tool, so the schema names the tools."""
    answer = obj(
        {"create_kwargs": obj({"qid": STR, "question": STR, "ground_truth": GROUND_TRUTH})}
    )
    other = obj({"create_kwargs": obj({"qid": STR})})
    settings = obj(
        {"page_chars": INT, "default_k": INT, "max_k": INT, "mode": STR, "corpus_fingerprint": STR}
    )
    extra = obj(
        {
            "split": {"enum": ["train", "validation"]},
            "index": INT,
            "qid": STR,
            "question": STR,
            "answer": STR,
            "aliases": STR_LIST,
            "need_tools_kwargs": BOOL,
            "tools_kwargs": obj({n: answer if is_final(n) else other for n in tool_names}),
            "tool_settings": settings,
        }
    )
    return obj(
        {
            "data_source": STR,
            "agent_name": STR,
            "prompt": PROMPT,
            "ability": STR,
            "reward_model": obj({"style": {"const": "rule"}, "ground_truth": GROUND_TRUTH}),
            "extra_info": extra,
            "metadata": QUESTION_METADATA,
        }
    )


def plain_rl_schema() -> dict[str, Any]:
    """A plain RL row: prompt messages, the answer and its aliases."""
    return obj(
        {
            "prompt": PROMPT,
            "answer": STR,
            "aliases": STR_LIST,
            "answer_type": ANSWER_TYPE,
            "qid": STR,
            "metadata": QUESTION_METADATA,
        }
    )


class RecordValidator:
    """Validates records of one kind; `problem(record)` is "" for a valid record.

    A compiled validator (fastjsonschema, ~6x faster on SFT rows) answers for valid records;
    a record it rejects is checked again by jsonschema, which words the problem, so every
    verdict against a record comes from the reference implementation.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        jsonschema.Draft202012Validator.check_schema(schema)
        self._validator = jsonschema.Draft202012Validator(schema)
        self._fast = fastjsonschema.compile(schema)

    def problem(self, record: dict[str, Any]) -> str:
        try:
            self._fast(record)
            return ""
        except fastjsonschema.JsonSchemaValueException:
            pass
        error = best_match(self._validator.iter_errors(record))
        if error is None:
            return ""
        where = "/".join(str(p) for p in error.absolute_path) or "(record)"
        return f"{where}: {error.message}"
