"""What an agent tool is: one class holding its name, schema, run, and how its calls are read.

A `Tool` subclass says everything the pipeline needs to know about one tool: the JSON schema the
model is given, how a call runs over a `ToolBox` (a `Box`), when two calls are "the same call", what a
call is trying to do (its intent), which words of a call the caller typed and which documents it
names (the fairness check), what an empty result reads like (the fault layer), and what a clean
read shows (evaluation). Code elsewhere asks the tool; it never dispatches on the tool's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns to the model; `doc_ids` are the documents it showed."""

    text: str
    ok: bool
    error: str = ""
    doc_ids: tuple[str, ...] = ()


class Box(Protocol):
    """What a tool runs over (a `ToolBox`): the searcher, its search settings, paged documents."""

    searcher: Searcher
    default_k: int
    mode: str

    def pages(self, doc_id: str) -> list[str]:
        """A known document's text as `open` pages it."""
        ...

    def page_starts(self, doc_id: str) -> list[int]:
        """The character offset at which each page of a known document starts."""
        ...

    def unknown_doc(self, tool: str, doc_id: str) -> ToolResult:
        """The refusal of a call on a doc_id the collection lacks."""
        ...

    def entries_named(self, doc_id: str, page: int) -> list[str]:
        """The names of other documents that page `page` of `doc_id` shows, as written there."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSettings:
    """How a toolbox pages documents and caps search results (what schemas may depend on)."""

    page_chars: int
    default_k: int
    max_k: int
    mode: str


def failure(message: str) -> ToolResult:
    """A refused call: the error text the model reads, `ok=False`."""
    return ToolResult(text=f"Error: {message}", ok=False, error=message)


def function_schema(name: str, description: str, properties: dict[str, Any],
                    required: list[str]) -> dict[str, Any]:
    """An OpenAI function-tool schema that refuses arguments it does not list."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


DOC_ID_PROPERTY: dict[str, Any] = {
    "type": "string", "minLength": 1, "description": "A doc_id exactly as shown in search results."}


_NON_WORD = re.compile(r"[^\w]+")
_WORD = re.compile(r"\w+")


def normalize_text(text: Any) -> str:
    """Lower-case words in sorted order: two queries BM25 reads the same normalize the same."""
    words = _NON_WORD.sub(" ", str(text or "").lower()).split()
    return " ".join(sorted(set(words)))


def doc_argument(arguments: Mapping[str, Any]) -> str:
    """The doc_id a call names, stripped ("" when it names none)."""
    return str(arguments.get("doc_id") or "").strip()


class Tool:
    """One agent tool. Subclasses set the class attributes and override what differs.

    - `reads`: the call reads one document named by its `doc_id` (it counts as opened);
    - `final`: the call gives the final answer and ends the trajectory; its result is never
      shown to the model again;
    - `query`: the argument that holds a search query ("" when the tool does not search);
    - `typed`: the arguments whose words the caller typed (checked against what it was shown);
    - `empty_text`: what an empty result reads like; "" when the fault layer never hits the tool;
    - `description` and `properties` make the schema; every property but the `optional` ones is
      required.
    """

    name: ClassVar[str] = ""
    reads: ClassVar[bool] = False
    final: ClassVar[bool] = False
    query: ClassVar[str] = ""
    typed: ClassVar[tuple[str, ...]] = ()
    empty_text: ClassVar[str] = ""
    description: ClassVar[str] = ""
    optional: ClassVar[tuple[str, ...]] = ()

    def schema(self, settings: ToolSettings) -> dict[str, Any]:
        """The OpenAI function-tool schema given to the model."""
        properties = self.properties(settings)
        return function_schema(self.name, self.description, properties,
                               [k for k in properties if k not in self.optional])

    def properties(self, settings: ToolSettings) -> dict[str, Any]:
        """The JSON schema of each argument, in the order the model sees them."""
        raise NotImplementedError(f"{type(self).__name__} must define properties()")

    def run(self, box: Box, arguments: dict[str, Any]) -> ToolResult:
        """Run a call whose arguments already fit the schema."""
        raise NotImplementedError(f"{type(self).__name__} must define run()")

    def key(self, arguments: Mapping[str, Any]) -> str:
        """The arguments normalized: two calls with the same key are the same call."""
        return json.dumps(dict(arguments), sort_keys=True, default=str)

    def intent(self, arguments: Mapping[str, Any]) -> str:
        """What the call is trying to do: a read looks at its document, anything else is the tool."""
        return f"doc:{doc_argument(arguments)}" if self.reads else self.name

    def read_key(self, arguments: Mapping[str, Any]) -> str:
        """What a read call looks at in its document (a page, a pattern)."""
        return f"{doc_argument(arguments)}#{self.name}:{self.key(arguments)}"

    def named_docs(self, arguments: Mapping[str, Any]) -> list[str]:
        """The doc_ids the call names."""
        doc = doc_argument(arguments) if self.reads else ""
        return [doc] if doc else []

    def typed_words(self, arguments: Mapping[str, Any]) -> list[str]:
        """The lower-cased words the caller typed into the call."""
        return [w for arg in self.typed for w in _WORD.findall(str(arguments.get(arg) or "").lower())]

    def shows(self, arguments: Mapping[str, Any], result: str, pattern: str) -> bool:
        """Whether a clean result of this read shows `pattern` (casefolded) to the reader."""
        return pattern in result.casefold()


class DocumentTool(Tool):
    """A read of one document for one typed text (find's pattern, grep's word).

    Subclasses set `argument` (the text's name), `description` and `argument_help` (the schema's
    words) and write `look`; the schema, the unknown-doc_id refusal and the call keys follow.
    """

    reads = True
    argument: ClassVar[str] = ""
    argument_help: ClassVar[str] = ""

    def typed_words(self, arguments: Mapping[str, Any]) -> list[str]:
        """The lower-cased words of the text looked for."""
        return _WORD.findall(str(arguments.get(self.argument) or "").lower())

    def properties(self, settings: ToolSettings) -> dict[str, Any]:
        """`doc_id` and the text, both required."""
        return {"doc_id": DOC_ID_PROPERTY,
                self.argument: {"type": "string", "minLength": 1,
                                "description": self.argument_help}}

    def run(self, box: Box, arguments: dict[str, Any]) -> ToolResult:
        """`look` at the document, or the refusal of a doc_id the collection lacks."""
        doc_id = arguments["doc_id"]
        if doc_id not in box.searcher.documents:
            return box.unknown_doc(self.name, doc_id)
        return self.look(box, box.searcher.documents[doc_id], arguments[self.argument].strip())

    def look(self, box: Box, doc: Document, text: str) -> ToolResult:
        """The result for `text` (stripped) in the known document `doc`."""
        raise NotImplementedError(f"{type(self).__name__} must define look()")

    def key(self, arguments: Mapping[str, Any]) -> str:
        """The text in the document, its words normalized."""
        return f"{doc_argument(arguments)}#{normalize_text(arguments.get(self.argument))}"

    def read_key(self, arguments: Mapping[str, Any]) -> str:
        """What the call looked for in the document."""
        return f"{doc_argument(arguments)}#{self.name}:{normalize_text(arguments.get(self.argument))}"

    def shows(self, arguments: Mapping[str, Any], result: str, pattern: str) -> bool:
        """A clean look checks the pattern when it looked for it."""
        return pattern in str(arguments.get(self.argument, "")).casefold()
