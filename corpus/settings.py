"""Stage settings declared once: each setting's type, default, range and meaning in one place.

A stage's settings class is a frozen pydantic dataclass made with `SETTINGS`, which
refuses unknown keys and checks every field's `Field` constraints (`ge`, `le`) when it is made,
with a `description` per field. The build file loader, its frozen copy, the settings hash and
the command-line flags (flows/config) all read these declarations (and
`operational` the settings that a settings hash leaves out), so a stage command and a
build cannot disagree on a default or a range. Checks that tie two fields together stay in the
class's `__post_init__`.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
from pydantic import ConfigDict, Field

# what every settings class is made with:
#   @pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
SETTINGS = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


# the `json_schema_extra` of a setting that changes how fast a stage runs or where it sends
# requests, never what it makes: the stage's settings hash leaves it out
OPERATIONAL: dict[str, Any] = {"operational": True}


def operational(cls: type | None) -> frozenset[str]:
    """The operational settings of a settings class (see OPERATIONAL)."""
    return frozenset(name for name, info in described(cls).items()
                     if isinstance(info.json_schema_extra, dict)
                     and info.json_schema_extra.get("operational"))


def described(cls: type | None) -> dict[str, pydantic.fields.FieldInfo]:
    """The declared fields of a settings class (name -> pydantic FieldInfo)."""
    return dict(getattr(cls, "__pydantic_fields__", {}))


def explain(exc: pydantic.ValidationError, owner: str = "") -> str:
    """A pydantic error as one line per problem: the key, the value and what is allowed."""
    lines = []
    for err in exc.errors(include_url=False):
        key = ".".join(str(p) for p in err.get("loc", ()))
        where = f"{owner}.{key}" if owner and key else owner or key
        value = shown(err.get("input"))
        ctx = err.get("ctx") or {}
        kind = err.get("type", "")
        if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = {"greater_than_equal": "at least", "greater_than": "more than",
                     "less_than_equal": "at most", "less_than": "less than"}[kind]
            limit = next(iter(ctx.values()), "")
            lines.append(f"{where} = {value} is out of range: expected {bound} {limit}")
        elif kind == "extra_forbidden":
            lines.append(f"{where} is not a setting of {owner or 'this table'}")
        elif kind == "value_error":
            lines.append(str(ctx.get("error", err.get("msg", ""))))
        else:
            lines.append(f"{where} = {value}: {err.get('msg', '')}")
    return "; ".join(lines)


def shown(value: Any) -> str:
    """A value as a build file writes it (JSON), or its repr when JSON cannot hold it."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def share(default: float, description: str) -> Any:
    """A setting that is a share or probability, in [0, 1]."""
    return Field(default=default, ge=0.0, le=1.0, description=description)


def amount(default: float, description: str, *, most: float | None = None) -> Any:
    """A setting that is a count or weight, at least 0 (and at most `most`)."""
    return Field(default=default, ge=0, le=most, description=description)
