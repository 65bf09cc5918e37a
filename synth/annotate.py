"""Turn annotations: validity, repeats, new gold evidence and recovery after faults."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from hopforge.synth.records import Fault, ToolCall, Turn

_NON_WORD = re.compile(r"[^\w]+")


def normalize_text(text: Any) -> str:
    """Lower-case words in sorted order: two queries BM25 reads the same normalize the same."""
    words = _NON_WORD.sub(" ", str(text or "").lower()).split()
    return " ".join(sorted(set(words)))


def normalize_call(call: ToolCall) -> str:
    """A key for "the same call": tool name plus its arguments, normalized per tool."""
    args = call.arguments
    if call.name == "search":
        key = normalize_text(args.get("query"))
    elif call.name == "open":
        key = f"{str(args.get('doc_id', '')).strip()}#{args.get('page') or 0}"
    elif call.name == "find":
        key = f"{str(args.get('doc_id', '')).strip()}#{normalize_text(args.get('pattern'))}"
    elif call.name == "answer":
        key = normalize_text(args.get("text"))
    else:
        key = json.dumps(args, sort_keys=True, default=str)
    return f"{call.name}:{key}"


def call_intent(call: ToolCall) -> str:
    """What a call is trying to do: any search looks for something; open and find read a doc."""
    if call.name in ("open", "find"):
        return f"doc:{str(call.arguments.get('doc_id', '')).strip()}"
    return call.name


class Annotator:
    """Annotates the turns of one trajectory in order; holds what has been seen so far."""

    def __init__(self, gold: Iterable[str]) -> None:
        self.gold = frozenset(gold)
        self.seen: set[str] = set()
        self._last_index: dict[str, int] = {}
        self._faulted: set[str] = set()  # intents with a fault not yet followed by a success

    def annotate(
        self,
        *,
        index: int,
        raw: str,
        thought: str,
        call: ToolCall | None,
        result: str,
        ok: bool = True,
        doc_ids: Sequence[str] = (),
        fault: Fault | None = None,
        schema_valid: bool = True,
        args_valid: bool = True,
        tokens: int = 0,
        latency_s: float = 0.0,
        error: str = "",
    ) -> Turn:
        """Build the `Turn` for one step and update the trajectory's state."""
        repeat_of: int | None = None
        recovered = False
        new: list[str] = []
        if call is not None and schema_valid:
            key = normalize_call(call)
            repeat_of = self._last_index.get(key)
            self._last_index[key] = index
            if args_valid:
                intent = call_intent(call)
                if fault is not None:
                    self._faulted.add(intent)
                elif ok and intent in self._faulted:
                    self._faulted.discard(intent)
                    recovered = True
        if fault is None or fault.kind not in ("empty", "timeout"):
            for doc_id in doc_ids:
                if doc_id in self.gold and doc_id not in self.seen:
                    self.seen.add(doc_id)
                    new.append(doc_id)
        return Turn(
            index=index,
            raw=raw,
            thought=thought,
            call=call,
            result=result,
            fault=fault,
            schema_valid=schema_valid,
            args_valid=args_valid,
            repeat_of=repeat_of,
            new_evidence=tuple(new),
            recovered=recovered,
            tokens=tokens,
            latency_s=latency_s,
            error=error,
        )
