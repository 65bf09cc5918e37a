"""Hashes of build settings: which settings shape a stage's output, and their digest."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hopforge.flows.build.registry import find_stage
from hopforge.flows.config.sections import dataclass_to_table


def shaping_settings(stage: str, obj: Any) -> dict[str, Any]:
    """The settings of a stage that differ from its defaults, without speed-only ones.

    Leaving defaults out keeps a build's hash when a new hopforge adds a setting (with a
    default that keeps the old behaviour); speed knobs and server addresses never change data.
    """
    table = as_table(obj)
    try:
        default = as_table(type(obj)())
    except (TypeError, ValueError):
        default = {}
    skip = find_stage(stage).operational
    return _differences({k: v for k, v in table.items() if k not in skip}, default)


def _differences(table: Mapping[str, Any], default: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        base = default.get(key, _MISSING)
        if isinstance(value, dict) and isinstance(base, dict):
            sub = _differences(value, base)
            if sub:
                out[key] = sub
        elif value != base:
            out[key] = value
    return out


_MISSING = object()


def as_table(obj: Any) -> dict[str, Any]:
    """A stage config object as a plain JSON-ready table."""
    to_dict = getattr(obj, "to_dict", None)
    table = to_dict() if callable(to_dict) else dataclass_to_table(obj)
    return _plain_table(table)


def _plain_table(table: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(table, default=_json_default))


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclass_to_table(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot write {value!r} into a build file")


def digest(obj: Any) -> str:
    """A short sha256 of the canonical JSON of `obj`."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
