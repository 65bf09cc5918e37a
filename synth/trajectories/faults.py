"""A seeded fault layer around the tools: empty results, timeouts, new layouts, partial results.

A fault is drawn per tool call from per-kind rates. A transient fault hits one attempt only; a
persistent one hits every later call with the same normalized arguments, so retrying does not
help and the agent has to reformulate or move on. Every injected fault is returned beside the
result, and the agent records it on its turn.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from typing import Any, Protocol

import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import SETTINGS, share
from hopforge.corpus.tools import FAULTABLE_TOOLS, ToolResult, tool_named
from hopforge.synth.annotate import normalize_call
from hopforge.synth.records import Fault, ToolCall
from pydantic import Field

FAULT_KINDS: tuple[str, ...] = ("empty", "timeout", "format", "partial")
TRUNCATION_NOTE = "[... output truncated]"


class AsyncTools(Protocol):
    """What the agent executes calls on: tool schemas plus an awaitable `call`."""

    schemas: list[dict[str, Any]]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class FaultConfig:
    """Per-kind probabilities that a tool call is hit; `persistent` is the share that persists."""

    empty: float = share(0.0, "share of calls that get an empty result")
    timeout: float = share(0.0, "share of calls that time out")
    format: float = share(0.0, "share of calls whose result comes back re-laid (other format)")
    partial: float = share(0.0, "share of calls whose result is cut short")
    persistent: float = share(0.25, "share of injected faults that repeat on the same call")
    timeout_s: float = Field(default=30.0, gt=0.0, le=3600.0, description=(
        "the tool's deadline, which a timed-out call's error states"))
    timeout_delay_s: float = Field(default=0.05, ge=0.0, le=600.0, description=(
        "how long a timed-out call hangs here before its error"))

    def __post_init__(self) -> None:
        if self.total > 1.0:
            raise ValueError(
                f"FaultConfig rates sum to {self.total:.3f} (empty + timeout + format + partial); "
                "lower them so the sum is at most 1."
            )

    @property
    def total(self) -> float:
        return self.empty + self.timeout + self.format + self.partial

    @classmethod
    def uniform(cls, rate: float, **kwargs: Any) -> FaultConfig:
        """Split an overall fault `rate` evenly across the four kinds (the `--faults` option)."""
        if not 0.0 <= rate <= 1.0:
            raise HopforgeError(f"fault rate {rate!r} is out of range: use a number in [0, 1].")
        share = rate / len(FAULT_KINDS)
        return cls(empty=share, timeout=share, format=share, partial=share, **kwargs)


class FaultyTools:
    """Wraps `AsyncTools`; `call` returns the (possibly faulted) result and the fault, if any."""

    def __init__(self, tools: AsyncTools, config: FaultConfig, rng: random.Random) -> None:
        self.tools = tools
        self.schemas = tools.schemas
        self.config = config
        self._rng = rng
        self._persistent: dict[str, Fault] = {}

    async def call(self, call: ToolCall) -> tuple[ToolResult, Fault | None]:
        """Execute `call` through the wrapped tools, injecting a fault when one is drawn."""
        fault = self.draw(call)
        if fault is None:
            return await self.tools.call(call.name, call.arguments), None
        if fault.kind == "timeout":
            if self.config.timeout_delay_s > 0:
                await asyncio.sleep(self.config.timeout_delay_s)
            return timeout_result(call.name, self.config.timeout_s), fault
        if fault.kind == "empty":
            return empty_result(call.name), fault
        result = await self.tools.call(call.name, call.arguments)
        if not result.ok:  # a real error is shown as it is
            return result, None
        if fault.kind == "format":
            return relayout_result(call.name, result, fault.detail), fault
        return truncate_result(result), fault

    def draw(self, call: ToolCall) -> Fault | None:
        """Decide whether `call` is hit: a persistent fault on the same call always repeats."""
        if call.name not in FAULTABLE_TOOLS or self.config.total <= 0.0:
            return None
        key = normalize_call(call)
        held = self._persistent.get(key)
        if held is not None:
            return held
        u = self._rng.random()
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += getattr(self.config, kind)
            if u < edge:
                break
        else:
            return None
        persistent = self._rng.random() < self.config.persistent
        detail = self._rng.choice(("json", "flat")) if kind == "format" else ""
        fault = Fault(kind=kind, persistent=persistent, detail=detail)  # type: ignore[arg-type]
        if persistent:
            self._persistent[key] = fault
        return fault


def timeout_result(name: str, deadline_s: float) -> ToolResult:
    """The error a call returns when the tool missed its deadline of `deadline_s` seconds."""
    text = (f"Error: {name} timed out after {deadline_s:g} s without a reply. The service is "
            "slow; try again.")
    return ToolResult(text=text, ok=False, error="timeout")


def empty_result(name: str) -> ToolResult:
    """A successful call that returned nothing."""
    tool = tool_named(name)
    return ToolResult(text=tool.empty_text if tool is not None and tool.empty_text
                      else "(no output)", ok=True)


def relayout_result(name: str, result: ToolResult, layout: str) -> ToolResult:
    """The same data in another layout: a JSON object of lines, or one flat line."""
    lines = [ln.strip() for ln in result.text.splitlines() if ln.strip()]
    if layout == "json":
        text = json.dumps({"tool": name, "output": lines}, ensure_ascii=False)
    else:
        text = " | ".join(lines)
    return ToolResult(text=text, ok=result.ok, error=result.error, doc_ids=result.doc_ids)


def relaid(text: str) -> bool:
    """Whether `text` is a result in another layout (what `relayout_result` makes): a JSON
    object of its lines, or all of them on one line between " | " marks."""
    return text.startswith('{"tool"') or ("\n" not in text and " | " in text)


def unlaid(text: str) -> str:
    """A re-laid result back in the usual layout, one line per line (what a reader reads off
    it): the JSON object's `output` lines, or a single line split at its " | " marks; any
    other text as it is."""
    if not relaid(text):
        return text
    if text.startswith('{"tool"'):
        try:
            lines = json.loads(text).get("output", [])
        except (ValueError, AttributeError):
            return text
        return "\n".join(str(line) for line in lines)
    return text.replace(" | ", "\n")


def truncate_result(result: ToolResult) -> ToolResult:
    """Keep the first half of the blocks (or lines, or characters) and say it was cut."""
    text = result.text.strip()
    for sep in ("\n\n", "\n"):
        pieces = [p for p in text.split(sep) if p.strip()]
        if len(pieces) >= 2:
            kept = sep.join(pieces[: math.ceil(len(pieces) / 2)])
            break
    else:
        kept = text[: max(1, len(text) * 2 // 5)]
    kept = f"{kept}\n{TRUNCATION_NOTE}"
    doc_ids = tuple(d for d in result.doc_ids if d in kept)
    return ToolResult(text=kept, ok=result.ok, error=result.error, doc_ids=doc_ids)
