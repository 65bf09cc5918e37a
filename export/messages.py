"""Trajectories as OpenAI-style chat messages, with a 0/1 training weight per assistant turn.

The conversation is: system (the trajectory's system prompt, when it has one), user (the
question), then per turn an assistant message (the thought as `content`, the parsed call as one
`tool_calls` entry) followed by a `tool` message with the result. A turn whose call failed to
parse is an assistant message with its raw text and weight 0, followed by the feedback the model
got as a `user` message. The conversation ends on the last assistant message: the result of the
final call (for `answer`, an echo) was never acted on, so it is left out.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Literal

from hopforge.corpus.tools import default_schemas
from hopforge.synth import prompts
from hopforge.synth.annotate import sft_weight
from hopforge.synth.records import ToolCall, Trajectory, Turn

log = logging.getLogger(__name__)

Arguments = Literal["string", "object"]


def turn_weight(turn: Turn, reward: float | None = None) -> int:
    """1 when the turn is worth imitating, else 0 (see hopforge.synth.annotate.sft_weight)."""
    return sft_weight(turn, reward)


def turn_weights(traj: Trajectory, turn_rewards: Sequence[float] = ()) -> list[int]:
    """Weights of every turn; rewards are ignored when they do not align with the turns."""
    rewards: Sequence[float | None] = turn_rewards
    if len(turn_rewards) != len(traj.turns):
        if turn_rewards:
            log.warning(
                "trajectory %s has %d turns but %d turn rewards; weighting by validity only",
                traj.tid,
                len(traj.turns),
                len(turn_rewards),
            )
        rewards = [None] * len(traj.turns)
    return [turn_weight(t, r) for t, r in zip(traj.turns, rewards, strict=True)]


def without_tool_schemas(system_prompt: str) -> str:
    """The system prompt without the tool schemas (and call-format note) written into it.

    A row that carries `tools` leaves the schemas to the chat template, which renders them once
    in its own call format.
    """
    text = system_prompt.replace(prompts.AGENT_TEXT_CALLS, "")
    span = tool_list_span(text)
    if span is None:
        return text
    start, end = span
    head = text.rfind("\n\n", 0, start)
    lead = text[head + 2 if head >= 0 else 0 : start]
    if lead.strip().endswith(":") and "\n" not in lead.strip():
        start = head + 2 if head >= 0 else 0  # the "Tools (JSON schemas):" line goes too
    rest = text[end:].lstrip("\n")
    return (text[:start].rstrip("\n") + "\n\n" + rest).strip()


def prompt_messages(
    system_prompt: str, question: str, *, with_tools: bool = False
) -> list[dict[str, Any]]:
    """The messages before the first assistant turn, worded as the teacher saw them.

    `with_tools`: the row carries `tools`, so the schemas are left out of the system prompt.
    """
    head: list[dict[str, Any]] = []
    system = without_tool_schemas(system_prompt) if with_tools else system_prompt
    if system:
        head.append({"role": "system", "content": system})
    head.append({"role": "user", "content": prompts.AGENT_QUESTION.format(question=question)})
    return head


def feedback(turn: Turn) -> str:
    """What the model was told after a turn whose call did not parse."""
    return turn.result or prompts.AGENT_INVALID_CALL.format(error=turn.error or "no tool call")


def call_ids(traj: Trajectory) -> list[str]:
    """A call id per turn: the recorded one, or `call_<index>`; unique within the trajectory."""
    seen: set[str] = set()
    ids = []
    for turn in traj.turns:
        cid = (turn.call.call_id if turn.call else "") or f"call_{turn.index}"
        base, n = cid, 1
        while cid in seen:
            cid = f"{base}_{n}"
            n += 1
        seen.add(cid)
        ids.append(cid)
    return ids


def turn_message_pair(
    turn: Turn,
    weight: int,
    cid: str,
    *,
    arguments: Arguments = "object",
    tool_names: bool = True,
    with_weights: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A turn's assistant message and what followed it (the tool result, or a correction)."""
    if turn.call is None:
        msg: dict[str, Any] = {"role": "assistant", "content": turn.raw}
        if turn.reasoning:
            msg["reasoning_content"] = turn.reasoning
        if with_weights:
            msg["weight"] = 0
        return msg, {"role": "user", "content": feedback(turn)}
    args: Any = turn.call.arguments
    if arguments == "string":
        args = json.dumps(args, ensure_ascii=False, sort_keys=True)
    call = {"id": cid, "type": "function", "function": {"name": turn.call.name, "arguments": args}}
    msg = {"role": "assistant", "content": turn.thought, "tool_calls": [call]}
    if turn.reasoning:
        msg["reasoning_content"] = turn.reasoning  # what reasoning chat templates render
    if with_weights:
        msg["weight"] = weight
    tool: dict[str, Any] = {"role": "tool", "tool_call_id": cid, "content": turn.result}
    if tool_names:
        tool["name"] = turn.call.name
    return msg, tool


def completion_messages(
    traj: Trajectory,
    weights: Sequence[int],
    *,
    arguments: Arguments = "object",
    tool_names: bool = True,
    with_weights: bool = True,
) -> list[dict[str, Any]]:
    """The assistant, tool and feedback messages of a trajectory, in order."""
    out: list[dict[str, Any]] = []
    for turn, weight, cid in zip(traj.turns, weights, call_ids(traj), strict=True):
        out += turn_message_pair(turn, weight, cid, arguments=arguments, tool_names=tool_names,
                                 with_weights=with_weights)
    while out and out[-1]["role"] != "assistant":
        out.pop()  # the model never acted on what followed its last message
    return out


def trajectory_messages(
    traj: Trajectory,
    question: str,
    weights: Sequence[int],
    *,
    arguments: Arguments = "object",
    tool_names: bool = True,
    with_weights: bool = True,
) -> list[dict[str, Any]]:
    """The whole conversation of a trajectory."""
    return prompt_messages(traj.system_prompt, question) + completion_messages(
        traj, weights, arguments=arguments, tool_names=tool_names, with_weights=with_weights
    )


def turns_from_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Read exported messages back as turns: thought, call (or raw text), result, weight."""
    turns: list[dict[str, Any]] = []
    for msg in messages:
        role = msg["role"]
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            turn: dict[str, Any] = {"weight": msg.get("weight"), "result": ""}
            if calls:
                fn = calls[0]["function"]
                args = fn["arguments"]
                turn["thought"] = msg.get("content") or ""
                turn["call"] = ToolCall(
                    name=fn["name"],
                    arguments=json.loads(args) if isinstance(args, str) else dict(args),
                    call_id=calls[0].get("id") or "",
                )
            else:
                turn["raw"] = msg.get("content") or ""
                turn["call"] = None
            turns.append(turn)
        elif role in ("tool", "user") and turns:
            turns[-1]["result"] = msg.get("content") or ""
    return turns


def normalize_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool: `{"type": "function", "function": {...}}`."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return tool
    return {"type": "function", "function": tool}


def _is_tool_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, dict) and "name" in normalize_tool(t)["function"] for t in value)
    )


def tools_from_prompt(prompt: str) -> list[dict[str, Any]]:
    """Tool schemas written into a system prompt (a JSON list, or one object per line in <tools>)."""
    decoder = json.JSONDecoder()
    if "<tools>" in prompt and "</tools>" in prompt:
        block = prompt.split("<tools>", 1)[1].split("</tools>", 1)[0].strip()
        try:
            lines = [json.loads(line) for line in block.splitlines() if line.strip()]
        except json.JSONDecodeError:
            lines = []
        if len(lines) == 1 and isinstance(lines[0], list):
            lines = lines[0]
        if _is_tool_list(lines):
            return [normalize_tool(t) for t in lines]
    span = tool_list_span(prompt)
    if span is None:
        return []
    value, _ = decoder.raw_decode(prompt, span[0])
    return [normalize_tool(t) for t in value]


def tool_list_span(prompt: str) -> tuple[int, int] | None:
    """Where a JSON list of tool schemas sits in a prompt, as (start, end); None when absent."""
    decoder = json.JSONDecoder()
    start = prompt.find("[")
    while start != -1:
        try:
            value, end = decoder.raw_decode(prompt, start)
        except json.JSONDecodeError:
            value = None
        if _is_tool_list(value):
            return start, end
        start = prompt.find("[", start + 1)
    return None


def resolve_tools(
    configured: Sequence[dict[str, Any]] = (),
    system_prompts: Sequence[str] = (),
    *,
    default_k: int = 5,
    max_k: int = 20,
) -> tuple[list[dict[str, Any]], str]:
    """The tool schemas to export and where they came from.

    In order: the configured ones; those written into the trajectories' system prompt (what the
    teacher saw); those of hopforge.corpus.tools for the build's settings.
    """
    if configured:
        return [normalize_tool(dict(t)) for t in configured], "config"
    for prompt in dict.fromkeys(system_prompts):
        found = tools_from_prompt(prompt)
        if found:
            return found, "system prompt"
    return default_schemas(default_k=default_k, max_k=max_k), "hopforge.corpus.tools"
