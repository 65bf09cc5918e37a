"""The agent's tools, listed once: adding a tool is one module and one line in `TOOLS`.

The toolbox runs them, the model teacher's tool list and the exported schemas are made from
them, and every stage that reads a call (annotation, fairness, faults, evaluation, export) asks
the call's tool here instead of testing its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopforge.corpus.tools.answer import Answer
from hopforge.corpus.tools.base import Tool
from hopforge.corpus.tools.find import Find
from hopforge.corpus.tools.grep import Grep
from hopforge.corpus.tools.page import Open
from hopforge.corpus.tools.search import Search

TOOLS: tuple[type[Tool], ...] = (Search, Open, Find, Grep, Answer)

_BY_NAME: dict[str, Tool] = {cls.name: cls() for cls in TOOLS}
READ_TOOLS: tuple[str, ...] = tuple(n for n, t in _BY_NAME.items() if t.reads)
FAULTABLE_TOOLS: tuple[str, ...] = tuple(n for n, t in _BY_NAME.items() if t.empty_text)
EMPTY_TEXTS: frozenset[str] = frozenset(t.empty_text for t in _BY_NAME.values() if t.empty_text)


def tools() -> tuple[Tool, ...]:
    """One instance of each tool, in the order of `TOOLS`."""
    return tuple(_BY_NAME.values())


def tool_named(name: str) -> Tool | None:
    """The tool called `name`, or None for a name no tool has."""
    return _BY_NAME.get(name)


def is_read(name: str) -> bool:
    """Whether a call of `name` reads the document its doc_id names (open, find)."""
    tool = _BY_NAME.get(name)
    return tool is not None and tool.reads


def is_final(name: str) -> bool:
    """Whether a call of `name` gives the final answer."""
    tool = _BY_NAME.get(name)
    return tool is not None and tool.final


def search_query(name: str, arguments: Mapping[str, Any]) -> Any:
    """The query a search call sent (as sent, any type), or None for a call that does not search."""
    tool = _BY_NAME.get(name)
    return arguments.get(tool.query) if tool is not None and tool.query else None


def is_search(name: str) -> bool:
    """Whether a call of `name` searches the collection with a query."""
    tool = _BY_NAME.get(name)
    return tool is not None and bool(tool.query)
