"""Command-line flags made from the settings declarations (corpus/settings.py).

A stage command adds a flag per setting with `add_setting`: its type, help and default come from
the setting's `Field` (the default shown in brackets is the class's), and its value is None
unless given, so the command's settings are the build's [stage] table (or the defaults) with
the given flags over them (`given`). A setting that needs its own syntax (a range such as
`--hops 2-4`) keeps a parser of its own and still names the field it sets.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args, get_origin

from hopforge.corpus.settings import described


def add_setting(parser: argparse._ActionsContainer, cls: type, name: str, *flags: str,
                metavar: str | None = None, kind: Callable[[str], Any] | None = None) -> None:
    """Add the flag of setting `name` of `cls` (default `--name-with-dashes`).

    A boolean setting that is on by default gets `--no-NAME`, one that is off `--NAME`.
    """
    info = described(cls)[name]
    default = info.get_default(call_default_factory=True)
    help_text = f"{info.description} [{_shown(default)}]"
    if info.annotation in (bool, "bool"):
        flag = flags or (f"--{'no-' if default else ''}{name.replace('_', '-')}",)
        parser.add_argument(*flag, dest=name, default=None, help=help_text,
                            action="store_false" if default else "store_true")
        return
    choices = _choices(info.annotation)
    kind = kind or _kind(info.annotation)
    metavar = metavar or {int: "N", float: "X"}.get(kind, name.upper())  # type: ignore[call-overload]
    parser.add_argument(*(flags or (f"--{name.replace('_', '-')}",)), dest=name, default=None,
                        type=kind, choices=choices, metavar=None if choices else metavar,
                        help=help_text)


def given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The settings among `names` whose flags were given (name -> value)."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def _kind(annotation: Any) -> Callable[[str], Any]:
    tp = {"int": int, "float": float, "str": str}.get(annotation, annotation)
    return tp if tp in (int, float, str) else str  # type: ignore[no-any-return]


def _choices(annotation: Any) -> list[str] | None:
    if get_origin(annotation) is Literal:
        return [a for a in get_args(annotation) if a]
    return None


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value)) or "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value) if value != "" else "none"
