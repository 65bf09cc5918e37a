"""The agent tools: output, paging, find positions, schemas, and errors the model can act on."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.corpus.tools import TOOLS, ToolBox, ToolResult, paginate, validate_arguments

from tests.helpers.tiny import load_tiny


def _docs(path: Path) -> list[Document]:
    docs = load_tiny(path)
    long_text = "\n".join(f"Line {i}: the keeper logged the weather at dawn." for i in range(60))
    long_text += "\nLine 60: the KEEPER retired in 1901."
    return [*docs, Document(doc_id="logbook", title="Keeper's logbook", text=long_text,
                            source="tiny")]


@pytest.fixture(scope="module")
def tools(tiny_corpus_path: Path) -> ToolBox:
    return ToolBox(Searcher.from_documents(_docs(tiny_corpus_path)), page_chars=500)


def test_search_lists_doc_ids_titles_and_snippets(tools: ToolBox) -> None:
    result = tools.call("search", {"query": "who designed the Grey Needle lighthouse", "k": 3})
    assert result.ok and result.error == ""
    assert result.doc_ids[0] == "grey-needle" and len(result.doc_ids) == 3
    assert "1. [doc_id: grey-needle] Grey Needle" in result.text
    assert "Dorran Pell" in result.text
    assert result == tools.call("search", {"query": "who designed the Grey Needle lighthouse",
                                           "k": 3})


def test_search_default_k_and_empty_results(tools: ToolBox) -> None:
    assert len(tools.call("search", {"query": "Calden"}).doc_ids) == 5
    empty = tools.call("search", {"query": "qwertyuiop"})
    assert empty.ok and empty.doc_ids == () and "No results" in empty.text


def test_open_pages_through_a_long_document(tools: ToolBox) -> None:
    first = tools.call("open", {"doc_id": "logbook"})
    assert first.ok and first.doc_ids == ("logbook",)
    n_pages = len(paginate(tools.searcher.documents["logbook"].text, 500))
    assert n_pages > 3
    assert f"page 0 (pages 0-{n_pages - 1})" in first.text and "open doc_id=logbook page=1" in first.text
    last = tools.open("logbook", n_pages - 1)
    assert last.ok and "end of document" in last.text and "retired in 1901" in last.text
    beyond = tools.open("logbook", n_pages)
    assert not beyond.ok and f"numbered 0 to {n_pages - 1}" in beyond.error


def test_pages_cover_the_text_exactly_and_break_at_spaces() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    pages = paginate(text, 120)
    assert "".join(pages) == text
    assert all(len(p) <= 120 for p in pages)
    assert all(p.endswith(" ") for p in pages[:-1])
    assert paginate("", 100) == [""]


def test_find_reports_lines_positions_and_pages(tools: ToolBox) -> None:
    result = tools.find("logbook", "keeper retired")
    assert result.ok and result.doc_ids == ("logbook",)
    text = tools.searcher.documents["logbook"].text
    pos = text.lower().index("keeper retired")
    page = len(paginate(text[: pos + 1], 500)) - 1
    assert f"[line 61, char {pos}, page {page}]" in result.text
    many = tools.find("logbook", "keeper")
    assert many.text.startswith("61 line(s) match") and "showing the first 20" in many.text
    assert many.text.count("\n[line ") == 20
    none = tools.find("logbook", "lighthouse")
    assert none.ok and "No match" in none.text


def test_find_pattern_is_literal_not_regex(tools: ToolBox) -> None:
    assert "No match" in tools.find("logbook", "Line .*").text
    assert tools.find("quillon", "(1799)").ok


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search", {}, "missing required argument 'query'"),
        ("search", {"query": "  "}, "'query' must not be empty"),
        ("search", {"query": "x", "k": "3"}, "'k' must be an integer from 1 to 20, got '3'"),
        ("search", {"query": "x", "k": 0}, "from 1 to 20, got 0"),
        ("search", {"query": "x", "k": 21}, "from 1 to 20, got 21"),
        ("search", {"query": "x", "k": True}, "got True (a boolean)"),
        ("search", {"query": "x", "n": 3}, "unknown argument 'n'"),
        ("open", {"doc_id": "quillon", "page": -1}, "'page' must be an integer >= 0"),
        ("open", {"doc_id": 7}, "'doc_id' must be a string, got an integer"),
        ("open", {"doc_id": "no-such-doc"}, "unknown doc_id 'no-such-doc'"),
        ("open", {"doc_id": "Grey Needle"}, "is a title, not a doc_id; its doc_id is 'grey-needle'"),
        ("find", {"doc_id": "[doc_id: quillon]", "pattern": "x"}, "did you mean 'quillon'"),
        ("find", {"doc_id": "quillon"}, "missing required argument 'pattern'"),
        ("browse", {"url": "x"}, "unknown tool 'browse': available tools are search, open"),
        ("search", "{not json", "arguments are not valid JSON"),
        ("search", ["query"], "arguments must be a JSON object, got a list"),
    ],
)
def test_bad_calls_return_errors_not_exceptions(
    tools: ToolBox, name: str, arguments: object, message: str
) -> None:
    result = tools.call(name, arguments)  # type: ignore[arg-type]
    assert isinstance(result, ToolResult)
    assert not result.ok and message in result.error
    assert result.text == f"Error: {result.error}" and result.doc_ids == ()


def test_json_string_arguments_and_answer(tools: ToolBox) -> None:
    assert tools.call("open", '{"doc_id": "quillon"}').doc_ids == ("quillon",)
    assert tools.call("answer", {"text": "Dorran Pell"}) == ToolResult("Dorran Pell", True)


def test_schemas_are_valid_openai_tools_and_agree_with_validation(tools: ToolBox) -> None:
    names = [s["function"]["name"] for s in tools.schemas]
    assert names == [cls.name for cls in TOOLS] and names[:3] == ["search", "open", "find"]
    assert names[-1] == "answer"
    cases = [("search", {"query": "a", "k": 5}), ("search", {"query": "a", "k": 50}),
             ("open", {"doc_id": "x", "page": 2}), ("open", {"doc_id": "x", "page": "2"}),
             ("find", {"doc_id": "x", "pattern": "y", "extra": 1}), ("answer", {"text": "z"}),
             ("answer", {})]
    for schema in tools.schemas:
        assert schema["type"] == "function"
        jsonschema.Draft202012Validator.check_schema(schema["function"]["parameters"])
    for name, args in cases:
        params = next(s for s in tools.schemas if s["function"]["name"] == name)["function"]
        valid = jsonschema.Draft202012Validator(params["parameters"]).is_valid(args)
        assert valid == (validate_arguments(name, args) == ""), (name, args)


def test_toolbox_max_k_is_in_its_schema(tiny_corpus_path: Path) -> None:
    small = ToolBox(Searcher.from_documents(_docs(tiny_corpus_path)), default_k=2, max_k=3)
    assert small.call("search", {"query": "Calden", "k": 4}).error.endswith("from 1 to 3, got 4")
    assert len(small.call("search", {"query": "Calden"}).doc_ids) == 2
