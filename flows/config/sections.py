"""TOML tables <-> stage config dataclasses, with errors that name the key, value and allowed set.

Every stage owns a frozen config dataclass that validates itself on construction. This module
turns one table of the build file into such a dataclass: unknown keys are refused (the message
lists the allowed ones), values are checked against the field's annotation by pydantic
(int, float, bool, str, tuples, Literal choices) and nested tables become their dataclasses,
and any error the dataclass raises is prefixed with the table's name (a settings class's own
range checks, declared as pydantic `Field`s, read as `[section] key = value is out of range`).
`dump_toml` writes the resolved config back as TOML (tomli-w).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

import pydantic
import tomli_w
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.settings import explain, shown

T = TypeVar("T")


class ConfigError(HopforgeError, ValueError):
    """A build file names an unknown key, a value of the wrong type, or a value out of range."""


def _where(section: str, key: str) -> str:
    return f"[{section}] {key}" if section else key


def check_keys(section: str, table: Mapping[str, Any], allowed: typing.Iterable[str]) -> None:
    """Refuse keys of `table` that are not in `allowed`, listing the allowed ones."""
    allowed = sorted(allowed)
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        name = f"[{section}]" if section else "the top level"
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
            f"{name}: allowed keys are {', '.join(allowed)}"
        )


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in get_args(tp))
    if origin in (tuple, list):
        args = [a for a in get_args(tp) if a is not Ellipsis]
        return f"a list of {_type_name(args[0])}" if args else "a list"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(tp) if a is not type(None))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"a table of {tp.__name__} settings"
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
             dict: "a table"}
    return names.get(tp, getattr(tp, "__name__", str(tp)))


def convert_value(section: str, key: str, value: Any, tp: Any) -> Any:
    """`value` as the annotated type `tp`, or a ConfigError naming key, value and type.

    Tables (nested config dataclasses, alone or in a list) go through `table_to_dataclass`, so
    unknown keys are refused and errors name the table; every other value is checked by
    pydantic in strict JSON mode: TOML's arrays become tuples where the annotation says so, an
    integer is a number, but a number is never an integer, a string never a number, a number
    never a boolean.
    """
    if tp is Any:
        return value
    table = _table_class(tp)
    if table is not None:
        where = _where(section, key).strip("[]").replace("] ", ".")
        if isinstance(value, Mapping):
            return table_to_dataclass(where, value, table)
        if get_origin(tp) is tuple and isinstance(value, list | tuple):
            return tuple(table_to_dataclass(f"{where}[{i}]", v, table)
                         for i, v in enumerate(value))
    elif not (isinstance(value, float) and math.isnan(value)):
        try:
            return _adapter(tp).validate_json(json.dumps(value), strict=True)
        except (pydantic.ValidationError, TypeError, ValueError):
            pass
    raise ConfigError(
        f"{_where(section, key)} = {shown(value)} is not allowed: expected {_type_name(tp)}")


def _table_class(tp: Any) -> type | None:
    """The config dataclass that `tp` is, or holds a variable-length tuple of; else None."""
    if get_origin(tp) is tuple:
        args = get_args(tp)
        tp = args[0] if len(args) == 2 and args[1] is Ellipsis else None
    return tp if isinstance(tp, type) and dataclasses.is_dataclass(tp) else None


@cache
def _adapter(tp: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(tp)


def table_to_dataclass(section: str, table: Mapping[str, Any], cls: type[T]) -> T:
    """Build the config dataclass `cls` from a TOML table; errors name `[section] key`."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"[{section}] must be a table of settings, not {shown(table)}")
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    check_keys(section, table, [f.name for f in fields])
    hints = get_type_hints(cls)
    kwargs = {f.name: convert_value(section, f.name, table[f.name], hints.get(f.name, Any))
              for f in fields if f.name in table}
    try:
        return cls(**kwargs)
    except pydantic.ValidationError as exc:
        raise ConfigError(f"[{section}] {explain(exc)}") from None
    except HopforgeError as exc:
        raise ConfigError(f"[{section}] {exc}") from None
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"[{section}] {exc}") from None


def dataclass_to_table(obj: Any) -> dict[str, Any]:
    """A config dataclass as a TOML-ready table (tuples become lists, None values are left out)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = _plain(getattr(obj, f.name))
        if value is not None:
            out[f.name] = value
    return out


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclass_to_table(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    return value


def dump_toml(doc: Mapping[str, Mapping[str, Any]], header: str = "") -> str:
    """A document of tables as TOML text (written by tomli-w), under `header` as comments."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    text = tomli_w.dumps({name: dict(table) for name, table in doc.items()})
    return "\n".join(lines) + ("\n\n" if lines else "") + text
