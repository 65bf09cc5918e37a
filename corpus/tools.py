"""The agent's tools: search, open, find and answer, each with its OpenAI function schema.

Every tool returns a `ToolResult`; bad arguments and unknown doc ids come back as `ok=False`
with an error the model can act on, never as an exception. Output text is deterministic.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.matching import INFLECTIONS_TEXT, pattern_regex
from hopforge.corpus.search import Searcher

MAX_FIND_LINES = 20
FIND_CONTEXT_CHARS = 160
# The toolbox's defaults, which every stage runs with (no build-file key changes them).
PAGE_CHARS = 1200
DEFAULT_K, MAX_K = 5, 20
SEARCH_MODE = "hybrid"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns to the model; `doc_ids` are the documents it showed."""

    text: str
    ok: bool
    error: str = ""
    doc_ids: tuple[str, ...] = ()


def _failure(message: str) -> ToolResult:
    return ToolResult(text=f"Error: {message}", ok=False, error=message)


def _function(name: str, description: str, properties: dict[str, Any],
              required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


def search_schema(default_k: int = DEFAULT_K, max_k: int = MAX_K) -> dict[str, Any]:
    """Schema of `search(query, k)`."""
    return _function(
        "search",
        "Search the document collection. Returns up to k documents, best first, each with its "
        "doc_id, title and a snippet. Use the doc_id with open or find.",
        {"query": {"type": "string", "minLength": 1,
                   "description": "Keywords or a question, e.g. a name plus what you want to know."},
         "k": {"type": "integer", "minimum": 1, "maximum": max_k,
               "description": f"Number of results (1-{max_k}, default {default_k})."}},
        ["query"])


def open_schema() -> dict[str, Any]:
    """Schema of `open(doc_id, page)`."""
    return _function(
        "open",
        "Read a document by doc_id, one page at a time. Pages are numbered from 0; the reply "
        "says how many pages the document has.",
        {"doc_id": {"type": "string", "minLength": 1,
                    "description": "A doc_id exactly as shown in search results."},
         "page": {"type": "integer", "minimum": 0, "description": "Page number, from 0 (default 0)."}},
        ["doc_id"])


def find_schema() -> dict[str, Any]:
    """Schema of `find(doc_id, pattern)`."""
    return _function(
        "find",
        "Find the lines of a document that contain a text pattern (case-insensitive, literal, "
        f"{INFLECTIONS_TEXT}). Returns each matching line with its line number, character "
        "offset and page.",
        {"doc_id": {"type": "string", "minLength": 1,
                    "description": "A doc_id exactly as shown in search results."},
         "pattern": {"type": "string", "minLength": 1,
                     "description": "Text to look for, e.g. a name or a year."}},
        ["doc_id", "pattern"])


def answer_schema() -> dict[str, Any]:
    """Schema of `answer(text)`."""
    return _function(
        "answer",
        "Give the final answer to the question and stop. Use a short answer: a name, a date, a "
        "number or a few words.",
        {"text": {"type": "string", "minLength": 1, "description": "The final answer."}},
        ["text"])


def default_schemas(default_k: int = DEFAULT_K, max_k: int = MAX_K) -> list[dict[str, Any]]:
    """The four tool schemas in OpenAI function-tool format."""
    return [search_schema(default_k, max_k), open_schema(), find_schema(), answer_schema()]


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
                 default_k: int = DEFAULT_K, max_k: int = MAX_K, mode: str = SEARCH_MODE) -> None:
        if page_chars < 100:
            raise HopforgeError(f"page_chars={page_chars} is too small: use at least 100")
        if not 1 <= default_k <= max_k:
            raise HopforgeError(f"default_k={default_k} must be between 1 and max_k={max_k}")
        self.searcher = searcher
        self.page_chars, self.default_k, self.max_k, self.mode = page_chars, default_k, max_k, mode
        self.schemas: list[dict[str, Any]] = default_schemas(default_k, max_k)
        self._pages: dict[str, list[str]] = {}

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
                return _failure(f"{name}: arguments are not valid JSON ({exc.msg} at char "
                                f"{exc.pos}); send a JSON object such as {{\"query\": \"...\"}}")
        problem = self.validate(name, arguments)
        if problem:
            return _failure(problem)
        args = dict(arguments)
        if name == "search":
            return self.search(args["query"], args.get("k"))
        if name == "open":
            return self.open(args["doc_id"], args.get("page", 0))
        if name == "find":
            return self.find(args["doc_id"], args["pattern"])
        return self.answer(args["text"])

    def search(self, query: str, k: int | None = None) -> ToolResult:
        """Search; lists doc_id, title and snippet of each hit."""
        k = self.default_k if k is None else k
        problem = self.validate("search", {"query": query, "k": k})
        if problem:
            return _failure(problem)
        try:
            hits = self.searcher.search(query, k=k, mode=self.mode)
        except HopforgeError as exc:
            return _failure(f"search failed: {exc}")
        if not hits:
            return ToolResult(text=f"No results for {json.dumps(query, ensure_ascii=False)}. "
                                   "Try fewer or different words, or another spelling of a name.",
                              ok=True)
        lines = [f"Results for {json.dumps(query, ensure_ascii=False)}:"]
        for h in hits:
            lines.append(f"{h.rank}. [doc_id: {h.doc_id}] {h.title}")
            lines.append(f"   {h.snippet}")
        return ToolResult(text="\n".join(lines), ok=True, doc_ids=tuple(h.doc_id for h in hits))

    def _unknown_doc(self, tool: str, doc_id: str) -> ToolResult:
        wanted = doc_id.strip().strip("[]\"'").removeprefix("doc_id:").strip()
        if wanted in self.searcher.documents:
            return _failure(f"{tool}: unknown doc_id {doc_id!r}; did you mean {wanted!r}? "
                            "Pass the doc_id alone, exactly as shown in search results")
        docs = self.searcher.documents
        lookup = getattr(docs, "doc_ids_by_title", None)  # a remote service answers it itself
        by_title = (lookup(wanted) if lookup is not None else
                    [d.doc_id for d in docs.values() if d.title.casefold() == wanted.casefold()])
        if by_title:
            return _failure(f"{tool}: {doc_id!r} is a title, not a doc_id; its doc_id is "
                            f"{by_title[0]!r}")
        return _failure(f"{tool}: unknown doc_id {doc_id!r}. Use a doc_id exactly as shown in "
                        "search results ([doc_id: ...]); search first if you have none")

    def _doc_pages(self, doc_id: str) -> list[str]:
        pages = self._pages.get(doc_id)
        if pages is None:
            pages = paginate(self.searcher.documents[doc_id].text, self.page_chars)
            self._pages[doc_id] = pages
        return pages

    def open(self, doc_id: str, page: int = 0) -> ToolResult:
        """One page of a document, with a header saying which page of how many."""
        problem = self.validate("open", {"doc_id": doc_id, "page": page})
        if problem:
            return _failure(problem)
        if doc_id not in self.searcher.documents:
            return self._unknown_doc("open", doc_id)
        doc = self.searcher.documents[doc_id]
        pages = self._doc_pages(doc_id)
        if page >= len(pages):
            return _failure(f"open: page {page} is out of range; {doc.title} [doc_id: {doc_id}] "
                            f"has {len(pages)} page(s), numbered 0 to {len(pages) - 1}")
        footer = (f"(more: open doc_id={doc_id} page={page + 1})" if page + 1 < len(pages)
                  else "(end of document)")
        head = f"{doc.title} [doc_id: {doc_id}] page {page} (pages 0-{len(pages) - 1})"
        text = f"{head}\n\n{pages[page].strip()}\n\n{footer}"
        return ToolResult(text=text, ok=True, doc_ids=(doc_id,))

    def find(self, doc_id: str, pattern: str) -> ToolResult:
        """Lines of a document containing `pattern` (case-insensitive), with positions and pages."""
        problem = self.validate("find", {"doc_id": doc_id, "pattern": pattern})
        if problem:
            return _failure(problem)
        if doc_id not in self.searcher.documents:
            return self._unknown_doc("find", doc_id)
        doc = self.searcher.documents[doc_id]
        page_starts, offset = [], 0
        for p in self._doc_pages(doc_id):
            page_starts.append(offset)
            offset += len(p)
        regex = pattern_regex(pattern.strip())
        matches: list[str] = []
        line_start = 0
        total = 0
        for number, line in enumerate(doc.text.split("\n"), start=1):
            hits = [m.start() for m in regex.finditer(line)]
            if hits:
                total += 1
                if len(matches) < MAX_FIND_LINES:
                    pos = line_start + hits[0]
                    page = bisect.bisect_right(page_starts, pos) - 1
                    more = f", {len(hits)} matches" if len(hits) > 1 else ""
                    matches.append(f"[line {number}, char {pos}, page {page}{more}] "
                                   f"{_around(line, hits[0], len(pattern.strip()))}")
            line_start += len(line) + 1
        quoted = json.dumps(pattern.strip(), ensure_ascii=False)
        if not matches:
            return ToolResult(text=f"No match for {quoted} in {doc.title} [doc_id: {doc_id}]. "
                                   "Try a shorter pattern or another word form, or open the "
                                   "document.", ok=True, doc_ids=(doc_id,))
        shown = f" (showing the first {len(matches)})" if total > len(matches) else ""
        head = f"{total} line(s) match {quoted} in {doc.title} [doc_id: {doc_id}]{shown}:"
        return ToolResult(text="\n".join([head, *matches]), ok=True, doc_ids=(doc_id,))

    def answer(self, text: str) -> ToolResult:
        """The final answer, echoed back."""
        problem = self.validate("answer", {"text": text})
        if problem:
            return _failure(problem)
        return ToolResult(text=text, ok=True)


def _around(line: str, pos: int, length: int) -> str:
    """The line itself when short, else about FIND_CONTEXT_CHARS characters around a match."""
    line = line.strip("\r")
    if len(line) <= FIND_CONTEXT_CHARS:
        return line.strip()
    half = (FIND_CONTEXT_CHARS - length) // 2
    start = max(0, pos - half)
    end = min(len(line), start + FIND_CONTEXT_CHARS)
    start = max(0, end - FIND_CONTEXT_CHARS)
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")
