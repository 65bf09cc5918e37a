"""The toolbox: the tools of `registry.TOOLS` over one `Searcher`, called by name.

Every tool returns a `ToolResult`; bad arguments and unknown doc ids come back as `ok=False`
with an error the model can act on, never as an exception. Output text is deterministic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.names import NameIndex, index_for
from hopforge.corpus.rawdocs import name_key
from hopforge.corpus.search import Searcher
from hopforge.corpus.tools.base import Tool, ToolResult, ToolSettings, failure
from hopforge.corpus.tools.registry import tools

# The toolbox's defaults, which every stage runs with (no build-file key changes them).
PAGE_CHARS = 1200
DEFAULT_K, MAX_K = 5, 20
SEARCH_MODE = "hybrid"


def default_schemas(default_k: int = DEFAULT_K, max_k: int = MAX_K) -> list[dict[str, Any]]:
    """The schema of every tool in `TOOLS`, in OpenAI function-tool format."""
    settings = ToolSettings(page_chars=PAGE_CHARS, default_k=default_k, max_k=max_k,
                            mode=SEARCH_MODE)
    return [tool.schema(settings) for tool in tools()]


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def validate_arguments(name: str, arguments: Any,
                       schemas: list[dict[str, Any]] | None = None) -> str:
    """"" when `arguments` fit tool `name`'s schema, else what is wrong (for the model to read)."""
    by_name = {s["function"]["name"]: s["function"] for s in (schemas or default_schemas())}
    if name not in by_name:
        return f"unknown tool {name!r}: available tools are {', '.join(by_name)}"
    if not isinstance(arguments, Mapping):
        return f"{name}: arguments must be a JSON object, got {_type_name(arguments)}"
    params = by_name[name]["parameters"]
    props: dict[str, Any] = params["properties"]
    for key in params["required"]:
        if key not in arguments:
            return f"{name}: missing required argument {key!r}"
    for key, value in arguments.items():
        if key not in props:
            return (f"{name}: unknown argument {key!r}; {name} takes "
                    f"{', '.join(repr(k) for k in props)}")
        spec = props[key]
        if spec["type"] == "string":
            if not isinstance(value, str):
                return f"{name}: argument {key!r} must be a string, got {_type_name(value)}"
            if len(value.strip()) < spec.get("minLength", 0):
                return f"{name}: argument {key!r} must not be empty"
        elif spec["type"] == "integer":
            lo, hi = spec.get("minimum"), spec.get("maximum")
            bounds = f" from {lo} to {hi}" if hi is not None else f" >= {lo}"
            if isinstance(value, bool) or not isinstance(value, int):
                return (f"{name}: argument {key!r} must be an integer{bounds}, got {value!r} "
                        f"({_type_name(value)})")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                return f"{name}: argument {key!r} must be an integer{bounds}, got {value}"
    return ""


def paginate(text: str, page_chars: int) -> list[str]:
    """Split text into pages of at most `page_chars`, breaking at whitespace where possible."""
    pages: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + page_chars)
        if end < len(text):
            cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
            if cut > start + page_chars // 2:
                end = cut + 1
        pages.append(text[start:end])
        start = end
    return pages or [""]


class ToolBox:
    """The tools over one `Searcher`: call them by name with a dict of arguments."""

    def __init__(self, searcher: Searcher, *, page_chars: int = PAGE_CHARS,
                 default_k: int = DEFAULT_K, max_k: int = MAX_K, mode: str = SEARCH_MODE,
                 names: NameIndex | None = None) -> None:
        """`names`: the `NameIndex` by which `open` lists the entries a page names (by default
        the searcher's corpus's, built at the first `open`)."""
        if page_chars < 100:
            raise HopforgeError(f"page_chars={page_chars} is too small: use at least 100")
        if not 1 <= default_k <= max_k:
            raise HopforgeError(f"default_k={default_k} must be between 1 and max_k={max_k}")
        self.searcher = searcher
        self.page_chars, self.default_k, self.max_k, self.mode = page_chars, default_k, max_k, mode
        self.names = names
        settings = ToolSettings(page_chars=page_chars, default_k=default_k, max_k=max_k, mode=mode)
        self.tools: dict[str, Tool] = {tool.name: tool for tool in tools()}
        self.schemas: list[dict[str, Any]] = [t.schema(settings) for t in self.tools.values()]
        self._pages: dict[str, list[str]] = {}
        self._starts: dict[str, list[int]] = {}
        self._named: dict[str, list[tuple[int, str]]] = {}

    def settings(self) -> dict[str, Any]:
        """How this toolbox pages, searches and caps k (the `tool_settings` of an RL row)."""
        return {"page_chars": self.page_chars, "default_k": self.default_k, "max_k": self.max_k,
                "mode": self.mode}

    def validate(self, name: str, arguments: Any) -> str:
        """`validate_arguments` against this toolbox's schemas (its max_k)."""
        return validate_arguments(name, arguments, self.schemas)

    def call(self, name: str, arguments: Mapping[str, Any] | str) -> ToolResult:
        """Run tool `name`; any problem with the call comes back as ok=False, never raised."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return failure(f"{name}: arguments are not valid JSON ({exc.msg} at char "
                               f"{exc.pos}); send a JSON object such as {{\"query\": \"...\"}}")
        problem = self.validate(name, arguments)
        if problem:
            return failure(problem)
        return self.tools[name].run(self, dict(arguments))  # type: ignore[arg-type]

    def search(self, query: str, k: int | None = None) -> ToolResult:
        """`search(query, k)`: doc_id, title and snippet of each hit."""
        return self.call("search", {"query": query, "k": self.default_k if k is None else k})

    def open(self, doc_id: str, page: int = 0) -> ToolResult:
        """`open(doc_id, page)`: one page of a document."""
        return self.call("open", {"doc_id": doc_id, "page": page})

    def find(self, doc_id: str, pattern: str) -> ToolResult:
        """`find(doc_id, pattern)`: lines of a document containing `pattern`."""
        return self.call("find", {"doc_id": doc_id, "pattern": pattern})

    def answer(self, text: str) -> ToolResult:
        """`answer(text)`: the final answer, echoed back."""
        return self.call("answer", {"text": text})

    def unknown_doc(self, tool: str, doc_id: str) -> ToolResult:
        """The refusal of a call on a doc_id the collection lacks, with the likely fix."""
        wanted = doc_id.strip().strip("[]\"'").removeprefix("doc_id:").strip()
        if wanted in self.searcher.documents:
            return failure(f"{tool}: unknown doc_id {doc_id!r}; did you mean {wanted!r}? "
                           "Pass the doc_id alone, exactly as shown in search results")
        docs = self.searcher.documents
        lookup = getattr(docs, "doc_ids_by_title", None)  # a remote service answers it itself
        by_title = (lookup(wanted) if lookup is not None else
                    [d.doc_id for d in docs.values() if d.title.casefold() == wanted.casefold()])
        if by_title:
            return failure(f"{tool}: {doc_id!r} is a title, not a doc_id; its doc_id is "
                           f"{by_title[0]!r}")
        return failure(f"{tool}: unknown doc_id {doc_id!r}. Use a doc_id exactly as shown in "
                       "search results ([doc_id: ...]); search first if you have none")

    def pages(self, doc_id: str) -> list[str]:
        """A known document's text as `open` pages it (cached)."""
        pages = self._pages.get(doc_id)
        if pages is None:
            pages = paginate(self.searcher.documents[doc_id].text, self.page_chars)
            self._pages[doc_id] = pages
        return pages

    def entries_named(self, doc_id: str, page: int) -> list[str]:
        """The documents that a reader can follow (`NameIndex.entries`) which the document
        first names on this page, as written there, and "name → title" where the title is
        another ("PyModuleDef → Module Objects"). The question stage reads the same names off
        the whole text, so a name's page is where it first appears."""
        if self.names is None:
            self.names = index_for(self.searcher.documents)
        found = self._named.get(doc_id)
        if found is None:
            docs = self.searcher.documents
            found = []
            for h in self.names.entries(docs[doc_id].text, exclude=doc_id):
                title = docs[h.doc].title
                same = name_key(h.surface) == name_key(title)
                found.append((h.start, h.surface if same else f"{h.surface} → {title}"))
            self._named[doc_id] = found
        starts = self.page_starts(doc_id)
        end = starts[page + 1] if page + 1 < len(starts) else math.inf
        return [surface for at, surface in found if starts[page] <= at < end]

    def page_starts(self, doc_id: str) -> list[int]:
        """The character offset at which each page of a known document starts."""
        starts = self._starts.get(doc_id)
        if starts is None:
            starts, offset = [], 0
            for page in self.pages(doc_id):
                starts.append(offset)
                offset += len(page)
            self._starts[doc_id] = starts
        return starts
