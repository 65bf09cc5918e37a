import asyncio
import json
import random
from collections import Counter
from typing import Any

import pytest
from hopforge.corpus.tools import ToolBox, ToolResult
from hopforge.synth.records import ToolCall
from hopforge.synth.trajectories.faults import (
    TRUNCATION_NOTE,
    FaultConfig,
    FaultyTools,
    relayout_result,
    truncate_result,
)
from hopforge.synth.trajectories.stage import BatchedTools, SearchBatcher

SEARCH = ToolCall(name="search", arguments={"query": "lighthouse engineer"})
OPEN = ToolCall(name="open", arguments={"doc_id": "grey-needle"})


class Plain:
    """The toolbox behind an awaitable `call`, counting how often each tool really ran."""

    def __init__(self, toolbox: ToolBox) -> None:
        self.toolbox = toolbox
        self.schemas = toolbox.schemas
        self.ran: Counter[str] = Counter()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.ran[name] += 1
        return self.toolbox.call(name, arguments)


@pytest.fixture
def plain(agent_searcher: Any) -> Plain:
    return Plain(ToolBox(agent_searcher))


def faulty(plain: Plain, seed: int = 0, **rates: Any) -> FaultyTools:
    return FaultyTools(plain, FaultConfig(timeout_delay_s=0.0, **rates), random.Random(seed))


def run(tools: FaultyTools, call: ToolCall) -> tuple[ToolResult, Any]:
    return asyncio.run(tools.call(call))


def test_no_rates_means_no_faults(plain: Plain) -> None:
    tools = faulty(plain)
    result, fault = run(tools, SEARCH)
    assert fault is None and result == plain.toolbox.call("search", SEARCH.arguments)


def test_empty_fault_shows_nothing_and_skips_the_tool(plain: Plain) -> None:
    result, fault = run(faulty(plain, empty=1.0, persistent=0.0), SEARCH)
    assert fault.kind == "empty" and not fault.persistent
    assert result.ok and result.doc_ids == () and "grey-needle" not in result.text
    assert plain.ran["search"] == 0


def test_timeout_fault_is_an_error_after_the_delay(plain: Plain) -> None:
    tools = FaultyTools(plain, FaultConfig(timeout=1.0, timeout_delay_s=0.01), random.Random(0))
    result, fault = run(tools, OPEN)
    assert fault.kind == "timeout" and not result.ok and result.error == "timeout"
    assert "timed out after 30 s" in result.text and plain.ran["open"] == 0


def test_format_fault_keeps_the_data_in_another_layout(plain: Plain) -> None:
    real = plain.toolbox.call("search", SEARCH.arguments)
    as_json = relayout_result("search", real, "json")
    lines = [ln.strip() for ln in real.text.splitlines() if ln.strip()]
    assert json.loads(as_json.text) == {"tool": "search", "output": lines}
    flat = relayout_result("search", real, "flat")
    assert "\n" not in flat.text and flat.text.split(" | ") == lines
    assert as_json.doc_ids == flat.doc_ids == real.doc_ids
    result, fault = run(faulty(plain, format=1.0), SEARCH)
    assert fault.kind == "format" and fault.detail in ("json", "flat")
    assert result.doc_ids == real.doc_ids and result.text != real.text


def test_an_old_result_in_another_layout_is_elided_to_the_same_pointer(plain: Plain) -> None:
    """What a row keeps of an old result (titles beside doc_ids, the names a page lists) does
    not depend on the layout it came back in."""
    from hopforge.synth.trajectories.loop import _pointer

    doc_id = plain.toolbox.call("search", SEARCH.arguments).doc_ids[0]
    for call in (SEARCH, ToolCall(name="open", arguments={"doc_id": doc_id})):
        real = plain.toolbox.call(call.name, call.arguments)
        want = _pointer(3, call, real)
        assert "(" in want and "{" not in want.split("it showed")[-1]
        for layout in ("json", "flat"):
            assert _pointer(3, call, relayout_result(call.name, real, layout)) == want, layout


def test_partial_fault_truncates_lists_and_text(plain: Plain) -> None:
    real = plain.toolbox.call("search", {"query": "Quillon", "k": 6})
    cut = truncate_result(real)
    assert cut.text.endswith(TRUNCATION_NOTE) and len(cut.text) < len(real.text)
    assert set(cut.doc_ids) < set(real.doc_ids)  # hits cut off are no longer shown
    assert all(d in cut.text for d in cut.doc_ids)
    one_line = truncate_result(ToolResult(text="x" * 100, ok=True))
    assert one_line.text == "x" * 40 + "\n" + TRUNCATION_NOTE
    result, fault = run(faulty(plain, partial=1.0), SEARCH)
    assert fault.kind == "partial" and TRUNCATION_NOTE in result.text


def test_transient_fault_clears_on_retry_persistent_one_does_not(plain: Plain) -> None:
    rates = {"timeout": 0.5, "persistent": 0.0}
    transient = faulty(plain, seed=3, **rates)
    seen = [run(transient, SEARCH)[1] for _ in range(40)]
    assert any(f is None for f in seen) and any(f is not None for f in seen)
    persistent = faulty(plain, seed=1, empty=0.5, persistent=1.0)
    first = None
    for _ in range(20):  # draw until the call is hit, then it stays hit
        first = run(persistent, SEARCH)[1]
        if first is not None:
            break
    assert first is not None and first.persistent
    assert all(run(persistent, SEARCH)[1] == first for _ in range(5))
    # the same call written differently is the same normalized call
    same = ToolCall(name="search", arguments={"query": "Engineer  LIGHTHOUSE"})
    assert run(persistent, same)[1] == first
    other = ToolCall(name="search", arguments={"query": "Dorran Pell"})
    assert any(run(persistent, other)[1] is None for _ in range(20))


def test_rates_are_per_kind_and_seeded(plain: Plain) -> None:
    def draws(seed: int) -> list[str]:
        tools = faulty(plain, seed=seed, empty=0.1, timeout=0.2, partial=0.3, persistent=0.0)
        return [getattr(tools.draw(OPEN), "kind", "none") for _ in range(4000)]

    kinds = draws(7)
    counts = Counter(kinds)
    assert counts["format"] == 0
    for kind, rate in (("empty", 0.1), ("timeout", 0.2), ("partial", 0.3), ("none", 0.4)):
        assert abs(counts[kind] / len(kinds) - rate) < 0.03
    assert draws(7) == kinds and draws(8) != kinds


def test_answer_and_real_errors_are_never_faulted(plain: Plain) -> None:
    tools = faulty(plain, format=1.0)
    answer = ToolCall(name="answer", arguments={"text": "x"})
    assert tools.draw(answer) is None
    result, fault = run(tools, ToolCall(name="open", arguments={"doc_id": "no-such-doc"}))
    assert fault is None and not result.ok and "unknown doc_id" in result.text


def test_uniform_splits_the_rate_and_config_is_validated() -> None:
    cfg = FaultConfig.uniform(0.2)
    assert cfg.empty == cfg.timeout == cfg.format == cfg.partial == pytest.approx(0.05)
    with pytest.raises(ValueError, match=r"empty\n.*less than or equal to 1"):
        FaultConfig(empty=1.5)
    with pytest.raises(ValueError, match="sum to 1.200"):
        FaultConfig(empty=0.6, partial=0.6)
    with pytest.raises(ValueError, match=r"timeout_delay_s\n.*greater than or equal to 0"):
        FaultConfig(timeout_delay_s=-1)


def test_faults_wrap_the_batched_tools(agent_searcher: Any) -> None:
    batched = BatchedTools(ToolBox(agent_searcher), SearchBatcher(agent_searcher))
    tools = FaultyTools(batched, FaultConfig(partial=1.0), random.Random(0))
    result, fault = run(tools, SEARCH)
    assert fault.kind == "partial" and result.ok and TRUNCATION_NOTE in result.text
