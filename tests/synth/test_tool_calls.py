import re
from collections.abc import Callable
from typing import Any

import pytest
from hopforge.synth.records import ToolCall
from hopforge.synth.teacher.chat import Completion
from hopforge.synth.teacher.tool_calls import (
    CALL_FORMATS,
    MalformedToolCall,
    NoToolCall,
    ToolCallParseError,
    parse_bare_json_call,
    parse_completion,
    parse_fenced_json_call,
    parse_native_tool_calls,
    parse_tagged_tool_call,
)
from hopforge.synth.teacher.wire import RAW_ARGUMENTS


def test_native_takes_the_first_call_and_counts_the_rest() -> None:
    calls = (
        ToolCall(name="search", arguments={"query": "Quillon"}, call_id="c1"),
        ToolCall(name="open", arguments={"doc_id": "quillon"}, call_id="c2"),
    )
    parsed = parse_native_tool_calls(calls)
    assert parsed.call == ToolCall(name="search", arguments={"query": "Quillon"}, call_id="c1")
    assert parsed.fmt == "native" and parsed.extra_calls == 1


def test_native_decodes_string_arguments_and_rejects_broken_ones() -> None:
    parsed = parse_native_tool_calls([ToolCall(name="open", arguments='{"doc_id": "x"}')])  # type: ignore[arg-type]
    assert parsed.call.arguments == {"doc_id": "x"}
    raw = ToolCall(name="search", arguments={RAW_ARGUMENTS: '{"query": "unterminated'})
    with pytest.raises(MalformedToolCall, match="not valid JSON"):
        parse_native_tool_calls([raw])
    with pytest.raises(MalformedToolCall, match="not an object"):
        parse_native_tool_calls([ToolCall(name="search", arguments={RAW_ARGUMENTS: "[1, 2]"})])
    with pytest.raises(MalformedToolCall, match="no function name"):
        parse_native_tool_calls([ToolCall(name=" ", arguments={})])
    with pytest.raises(NoToolCall):
        parse_native_tool_calls([])


def test_tagged_call_with_thought_around_it() -> None:
    text = 'I should look up the port.\n<tool_call>\n{"name": "search", "arguments": {"query": "Quillon port"}}\n</tool_call>'
    parsed = parse_tagged_tool_call(text)
    assert parsed.call.name == "search" and parsed.call.arguments == {"query": "Quillon port"}
    assert parsed.thought == "I should look up the port." and parsed.fmt == "tagged"


def test_tagged_accepts_parameters_key_and_double_encoded_arguments() -> None:
    a = parse_tagged_tool_call('<tool_call>{"name": "open", "parameters": {"doc_id": "d"}}</tool_call>')
    b = parse_tagged_tool_call('<tool_call>{"name": "open", "arguments": "{\\"doc_id\\": \\"d\\"}"}</tool_call>')
    c = parse_tagged_tool_call(
        '<tool_call>{"function": {"name": "open", "arguments": {"doc_id": "d"}}}</tool_call>'
    )
    assert a.call.arguments == b.call.arguments == c.call.arguments == {"doc_id": "d"}


@pytest.mark.parametrize(
    ("parse", "text", "error", "match"),
    [
        (parse_tagged_tool_call, "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": 1}",
         MalformedToolCall, "never closed"),
        (parse_tagged_tool_call, "<tool_call>{name: search}</tool_call>", MalformedToolCall,
         "not valid JSON"),
        (parse_tagged_tool_call, "<tool_call>[\"search\"]</tool_call>", MalformedToolCall,
         "not an object"),
        (parse_tagged_tool_call, "<tool_call>{\"arguments\": {}}</tool_call>", MalformedToolCall,
         "no \"name\""),
        (parse_tagged_tool_call, "just prose", NoToolCall, "no <tool_call>"),
        (parse_fenced_json_call, '```json\n{"name": "open"}', MalformedToolCall, "never closed"),
        (parse_fenced_json_call, "```json\n{'name': 'open'}\n```", MalformedToolCall,
         "not valid JSON"),
        (parse_fenced_json_call, "no code here", NoToolCall, "no ```json block"),
        (parse_bare_json_call, '{"query": "Quillon"}', MalformedToolCall, 'no "name"'),
        (parse_bare_json_call, '{"name": "search", "arguments": {"query": "Quillon"}',
         MalformedToolCall, "not valid JSON"),
        (parse_bare_json_call, '{"name": "search", "arguments": ["Quillon"]}', MalformedToolCall,
         "arguments are a JSON list"),
        (parse_bare_json_call, "no JSON here", NoToolCall, "no tool call"),
    ],
)
def test_text_call_errors_are_typed_and_say_how_to_fix(
    parse: Callable[[str], Any], text: str, error: type[ToolCallParseError], match: str
) -> None:
    with pytest.raises(error, match=match) as info:
        parse(text)
    assert info.value.raw == text
    assert re.search(r"\b(Write|Pass)\b", str(info.value))


def test_fenced_json_block() -> None:
    text = 'Let me open it.\n```json\n{"name": "open", "arguments": {"doc_id": "quillon", "page": 0}}\n```\nThanks.'
    parsed = parse_fenced_json_call(text)
    assert parsed.call == ToolCall(name="open", arguments={"doc_id": "quillon", "page": 0})
    assert parsed.thought == "Let me open it.\n\nThanks." and parsed.fmt == "fenced"
    plain = parse_fenced_json_call('```\n{"name": "answer", "arguments": {"text": "x"}}\n```')
    assert plain.call.name == "answer"


def test_parse_completion_dispatches_on_format() -> None:
    native = Completion(text="Thinking.", tool_calls=(ToolCall(name="search", arguments={"query": "q"}),))
    assert parse_completion(native).fmt == "native"
    assert parse_completion(native).thought == "Thinking."
    tagged = Completion(text='<tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>',
                        reasoning="why")
    assert parse_completion(tagged).fmt == "tagged" and parse_completion(tagged).thought == ""
    fenced = Completion(text='```json\n{"name": "search", "arguments": {"query": "q"}}\n```')
    assert parse_completion(fenced).fmt == "fenced"
    with pytest.raises(NoToolCall, match="answer"):
        parse_completion(Completion(text="The answer is Quillon."))
    with pytest.raises(NoToolCall):
        parse_completion(Completion(text=""))


def test_bare_json_object_in_the_text() -> None:
    text = '{"name": "open", "arguments": {"doc_id": "grey-needle", "page": 10}}'
    parsed = parse_bare_json_call(text)
    assert parsed.call == ToolCall(name="open", arguments={"doc_id": "grey-needle", "page": 10})
    assert parsed.fmt == "json" and parsed.thought == "" and parsed.extra_calls == 0


def test_bare_json_with_text_around_it_and_string_arguments() -> None:
    text = ('I will look it up.\n{"name": "search", "arguments": "{\\"query\\": \\"Quillon\\"}"}\n'
            'Then {"name": "open", "arguments": {"doc_id": "quillon"}}')
    parsed = parse_bare_json_call(text)
    assert parsed.call == ToolCall(name="search", arguments={"query": "Quillon"})
    assert parsed.thought.startswith("I will look it up.") and parsed.extra_calls == 1


def test_parse_completion_reads_bare_json_and_says_so() -> None:
    bare = Completion(text='{"name": "search", "arguments": {"query": "q"}}', reasoning="r")
    parsed = parse_completion(bare)
    assert parsed.fmt == "json" and parsed.thought == ""  # reasoning is not the visible text
    assert parsed.fmt in CALL_FORMATS
    # A fence without a JSON object in it does not hide a bare object elsewhere.
    mixed = Completion(text='```\nsome code\n```\n{"name": "answer", "arguments": {"text": "x"}}')
    assert parse_completion(mixed).fmt == "json"


def test_arguments_written_beside_the_name_are_read() -> None:
    # Qwen2.5-Coder-0.5B on vLLM wrote this answer four times in a row (check-teacher)
    parsed = parse_bare_json_call('{"name": "answer", "text": "177d3c9bd1485c28 contains products"}')
    assert parsed.call == ToolCall(name="answer", arguments={"text": "177d3c9bd1485c28 contains products"},
                                   call_id=parsed.call.call_id)
    nested = parse_bare_json_call('{"name": "search", "arguments": {"query": "x"}, "k": 3}')
    assert nested.call.arguments == {"query": "x"}  # an arguments object wins over stray keys
