"""The grep tool: a word's lines page by page, and every place a tool list is made picks it up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hopforge.corpus.http_app import ServiceServer, make_app
from hopforge.corpus.records import Document
from hopforge.corpus.remote import RemoteSearcher
from hopforge.corpus.search import Searcher
from hopforge.corpus.service import SearchService
from hopforge.corpus.tools import ToolBox, default_schemas, paginate, validate_arguments
from hopforge.export.rl import verl_tool_config
from hopforge.synth.annotate import normalize_call, read_key
from hopforge.synth.records import ToolCall
from hopforge.synth.trajectories.fairness import call_words
from hopforge.synth.trajectories.loop import system_prompt

from tests.helpers.tiny import load_tiny

_LISTED = re.compile(r"^  line (\d+): (.*)$")


def _docs(path: Path) -> list[Document]:
    text = "\n".join(f"Day {i}: the keeper logged the weather." for i in range(80))
    text += "\nDay 80: both KEEPERS left; the keeper's log ends.\nA keepsake was found."
    return [*load_tiny(path), Document(doc_id="logbook", title="Keeper's logbook", text=text,
                                       source="tiny")]


@pytest.fixture(scope="module")
def box(tiny_corpus_path: Path) -> ToolBox:
    return ToolBox(Searcher.from_documents(_docs(tiny_corpus_path)), page_chars=400)


def _pages_and_lines(text: str) -> list[tuple[int, int, str]]:
    """(page, line on the page, text) of each listed line of a grep result."""
    out, page = [], -1
    for row in text.splitlines()[1:]:
        if row.startswith("page "):
            page = int(row.removeprefix("page ").rstrip(":"))
        else:
            m = _LISTED.match(row)
            assert m, row
            out.append((page, int(m.group(1)), m.group(2)))
    return out


def test_grep_lists_whole_word_lines_under_the_page_open_shows(box: ToolBox) -> None:
    pages = paginate(box.searcher.documents["grey-needle"].text, 400)
    result = box.call("grep", {"doc_id": "grey-needle", "word": "lighthouse"})
    assert result.ok and result.doc_ids == ("grey-needle",)
    listed = _pages_and_lines(result.text)
    assert listed
    for page, number, line in listed:
        shown = line.strip("…")  # a long line is cut to the part around the word
        assert shown in pages[page].split("\n")[number - 1]
        assert shown in box.call("open", {"doc_id": "grey-needle", "page": page}).text
    total = sum(len(re.findall(r"(?i)(?<!\w)lighthouse(?:s|es|'s)?(?!\w)", ln) or ())
                > 0 for p in pages for ln in p.split("\n"))
    assert result.text.startswith(f"{total} line(s) on ")


def test_grep_counts_every_page_and_caps_what_it_lists(box: ToolBox) -> None:
    pages = box.pages("logbook")
    result = box.call("grep", {"doc_id": "logbook", "word": "keeper"})
    head = result.text.splitlines()[0]
    # "keeper" matches "keeper", "KEEPERS" and "keeper's" (whole word, plural, possessive),
    # never "keepsake": 81 lines, on every page that holds one of them
    hit = [n for n, p in enumerate(pages) if "keeper" in p.casefold()]
    assert len(hit) > 3
    assert head.startswith(f"81 line(s) on {len(hit)} page(s) of Keeper's logbook") and \
        "(showing the first 30)" in head
    listed = _pages_and_lines(result.text)
    assert len(listed) == 30 and [p for p, _, _ in listed] == sorted(p for p, _, _ in listed)
    tail = box.call("grep", {"doc_id": "logbook", "word": "keepers"})
    assert tail.text.startswith("1 line(s) on 1 page(s)") and "both KEEPERS left" in tail.text
    assert f"page {hit[-1]}:" in tail.text
    none = box.call("grep", {"doc_id": "logbook", "word": "keep"})
    assert none.ok and none.text == 'No line of Keeper\'s logbook [doc_id: logbook] contains "keep".'


def test_grep_refuses_what_the_model_can_fix(box: ToolBox) -> None:
    several = box.call("grep", {"doc_id": "logbook", "word": "the keeper"})
    assert not several.ok and "use find for a phrase" in several.error
    unknown = box.call("grep", {"doc_id": "Keeper's logbook", "word": "keeper"})
    assert not unknown.ok and "its doc_id is 'logbook'" in unknown.error
    assert validate_arguments("grep", {"doc_id": "logbook"}) == \
        "grep: missing required argument 'word'"


def test_grep_calls_are_keyed_read_and_checked_like_any_read() -> None:
    a = ToolCall(name="grep", arguments={"doc_id": "logbook", "word": "Keeper"})
    b = ToolCall(name="grep", arguments={"doc_id": " logbook", "word": "keeper "})
    assert normalize_call(a) == normalize_call(b) == "grep:logbook#keeper"
    assert read_key(a) == "logbook#grep:keeper"
    assert call_words(a) == (["keeper"], ["logbook"])


def test_every_tool_list_picks_grep_up(box: ToolBox, tiny_corpus_path: Path) -> None:
    names = [s["function"]["name"] for s in default_schemas()]
    assert "grep" in names and [s["function"]["name"] for s in box.schemas] == names
    assert '"name": "grep"' in system_prompt(box.schemas, text_calls=True)
    config = verl_tool_config(default_schemas(), "http://127.0.0.1:8900")
    assert [t["config"]["schema"]["function"]["name"] for t in config["tools"]] == names
    service = SearchService(box.searcher, page_chars=400)
    server = ServiceServer(make_app(service)).start()
    try:
        remote = RemoteSearcher(server.url)
        row = remote.tool("grep", {"doc_id": "logbook", "word": "keepers"})
        want = box.call("grep", {"doc_id": "logbook", "word": "keepers"})
        assert (row["text"], row["ok"], row["doc_ids"]) == (want.text, True, ["logbook"])
        remote.close()
    finally:
        server.stop()
        service.close()
