"""The tool registry: each tool's class answers for its calls, and the lists derive from `TOOLS`."""

from __future__ import annotations

import pytest
from hopforge.corpus.tools import (
    EMPTY_TEXTS,
    FAULTABLE_TOOLS,
    READ_TOOLS,
    TOOLS,
    default_schemas,
    is_final,
    is_read,
    is_search,
    search_query,
    tool_named,
)
from hopforge.synth.annotate import call_intent, normalize_call, read_key
from hopforge.synth.records import NOT_FOUND, ToolCall
from hopforge.synth.trajectories.fairness import Visible, call_words
from hopforge.synth.trajectories.faults import empty_result


def test_the_registry_lists_each_tool_once_and_the_schemas_follow_it() -> None:
    names = [cls.name for cls in TOOLS]
    assert len(set(names)) == len(names)
    assert [s["function"]["name"] for s in default_schemas()] == names
    assert {"search", "open", "find", "answer"} <= set(names)
    assert READ_TOOLS == tuple(n for n in names if tool_named(n).reads)  # type: ignore[union-attr]
    assert "answer" not in FAULTABLE_TOOLS and {"search", "open", "find"} <= set(FAULTABLE_TOOLS)
    assert [n for n in names if is_final(n)] == ["answer"]
    assert tool_named("grep_all") is None and not is_read("grep_all") and not is_final("")


def test_same_call_keys_are_normalized_by_the_tool() -> None:
    a = ToolCall(name="search", arguments={"query": "Grey Needle, designer?", "k": 3})
    b = ToolCall(name="search", arguments={"query": "designer grey needle"})
    assert normalize_call(a) == normalize_call(b) == "search:designer grey needle"
    assert normalize_call(ToolCall(name="open", arguments={"doc_id": " d1 "})) == "open:d1#0"
    assert normalize_call(ToolCall(name="open", arguments={"doc_id": "d1", "page": 2})) \
        == "open:d1#2"
    assert normalize_call(ToolCall(name="find", arguments={"doc_id": "d1", "pattern": "B a"})) \
        == "find:d1#a b"
    assert normalize_call(ToolCall(name="answer", arguments={"text": "Dorran Pell"})) \
        == "answer:dorran pell"
    odd = ToolCall(name="lookup", arguments={"z": 1, "a": [2]})
    assert normalize_call(odd) == 'lookup:{"a": [2], "z": 1}'


def test_intents_and_read_keys() -> None:
    page = ToolCall(name="open", arguments={"doc_id": "d1", "page": 1})
    find = ToolCall(name="find", arguments={"doc_id": "d1", "pattern": "Keeper"})
    assert call_intent(page) == call_intent(find) == "doc:d1"
    assert call_intent(ToolCall(name="search", arguments={"query": "x"})) == "search"
    assert read_key(page) == "d1#page1" and read_key(find) == "d1#find:keeper"


def test_fairness_reads_the_words_each_tool_types() -> None:
    assert call_words(ToolCall(name="search", arguments={"query": "Grey Needle"})) \
        == (["grey", "needle"], [])
    assert call_words(ToolCall(name="find", arguments={"doc_id": "d1", "pattern": "1901 Keeper"})) \
        == (["1901", "keeper"], ["d1"])
    assert call_words(ToolCall(name="open", arguments={"doc_id": "d1"})) == ([], ["d1"])
    # an answer's count is computed, not read; the not-found marker is no reading either
    assert call_words(ToolCall(name="answer", arguments={"text": "3 lighthouses"})) \
        == (["lighthouses"], [])
    assert call_words(ToolCall(name="answer", arguments={"text": NOT_FOUND})) == ([], [])
    seen = Visible("Results for the lighthouse: [doc_id: d1] Grey Needle")
    assert seen.check(ToolCall(name="open", arguments={"doc_id": "d1"})) == (True, ())
    assert seen.check(ToolCall(name="find", arguments={"doc_id": "d2", "pattern": "grey"})) \
        == (False, ("d2",))


@pytest.mark.parametrize("name", FAULTABLE_TOOLS)
def test_an_empty_fault_reads_as_the_tools_empty_result(name: str) -> None:
    result = empty_result(name)
    assert result.ok and result.text in EMPTY_TEXTS
    assert result.text == tool_named(name).empty_text  # type: ignore[union-attr]
    assert empty_result("answer").text == "(no output)"


def test_a_search_call_gives_its_query() -> None:
    assert is_search("search") and not is_search("open")
    assert search_query("search", {"query": "grey needle"}) == "grey needle"
    assert search_query("find", {"doc_id": "d1", "pattern": "grey"}) is None
