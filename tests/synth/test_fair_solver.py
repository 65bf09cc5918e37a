"""The scripted teacher plays fair over real builds of every family, and reads like a reader."""

import asyncio
import json
import random
import re
from typing import Any

import pytest
from hopforge.corpus.builtin import load_builtin_documents
from hopforge.corpus.search import Searcher
from hopforge.synth.answers import answers_match
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.stage import generate_questions
from hopforge.synth.records import NONE, NOT_FOUND, Question, ToolCall, Trajectory
from hopforge.synth.trajectories.fairness import Visible
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories
from hopforge.synth.trajectories.variety import top_share

from tests.helpers.spec_questions import SpecMaker


@pytest.fixture(scope="module")
def jargon() -> Searcher:
    return Searcher.from_documents(load_builtin_documents(), dense=False)


@pytest.fixture(scope="module")
def spec_questions(jargon: Searcher) -> list[Question]:
    out: list[Question] = []
    for seed in range(3):
        m = SpecMaker(list(jargon.documents.values()), seed=seed)
        made = [m.chain(2), m.chain(3), m.chain(2, unanswerable=True), m.aggregation(8),
                m.aggregation(30, scope="links2"), m.aggregation(8, unanswerable=True),
                m.intersection()]
        out += [q for q in made if q is not None]
    return out


def solve(questions: list[Question], searcher: Searcher, *, faults: float = 0.2,
          scripted: ScriptedConfig | None = None, **config: Any) -> list[Trajectory]:
    cfg = TrajectoryConfig(samples=2, max_turns=800,
                           faults=FaultConfig.uniform(faults, timeout_delay_s=0.0), **config)
    cfg_s = scripted or ScriptedConfig()

    def factory(q: Question, sample: int, seed: int) -> Any:
        return ScriptedTeacher(q, searcher.documents, seed=seed, config=cfg_s)

    return asyncio.run(run_trajectories(questions, searcher, factory, config=cfg))


@pytest.fixture(scope="module")
def generated(jargon: Searcher) -> list[Question]:
    """Questions from the question stage itself, every family, on the Jargon File."""
    docs = list(jargon.documents.values())
    made = asyncio.run(generate_questions(docs, jargon, config=QuestionConfig(), n=40,
                                          rng=random.Random(3)))
    return [q for q in made if not q.rejected]


@pytest.fixture(scope="module")
def wiki() -> Searcher:
    return Searcher.from_documents(load_builtin_documents("builtin:wiki"), dense=False)


@pytest.fixture(scope="module")
def wiki_generated(wiki: Searcher) -> list[Question]:
    """Comparisons and chains from the question stage on the Wikipedia paragraphs (the
    Jargon File dates too few events of its entries to compare them)."""
    docs = list(wiki.documents.values())
    made = asyncio.run(generate_questions(
        docs, wiki, config=QuestionConfig(kinds=("comparison", "chain")), n=10,
        rng=random.Random(3)))
    return [q for q in made if not q.rejected]


@pytest.mark.parametrize(("corpus", "kinds"), [
    ("jargon", {"chain", "intersection", "aggregation"}), ("wiki", {"comparison", "chain"})])
def test_every_call_on_generated_questions_is_justified(
        corpus: str, kinds: set[str], request: pytest.FixtureRequest) -> None:
    generated = request.getfixturevalue("generated" if corpus == "jargon" else "wiki_generated")
    searcher = request.getfixturevalue(corpus)
    assert kinds <= {q.kind for q in generated}
    runs = solve(generated, searcher, faults=0.1)
    calls = [x for t in runs for x in t.turns if x.call is not None]
    assert [(x.call, x.unseen) for x in calls if not x.justified] == []
    right = sum(answers_match(t.final_answer, q.answer, q.answer_aliases)
                for t, q in zip(runs, [q for q in generated for _ in range(2)]))
    assert right >= 0.7 * len(runs)


@pytest.fixture(scope="module")
def build(spec_questions: list[Question], jargon: Searcher) -> list[Trajectory]:
    return solve(spec_questions, jargon)


def test_every_call_of_every_family_is_justified(build: list[Trajectory],
                                                 spec_questions: list[Question]) -> None:
    kinds = {q.kind for q in spec_questions}
    assert {"chain", "aggregation", "intersection", "unanswerable"} <= kinds
    calls = [x for t in build for x in t.turns if x.call is not None]
    assert len(calls) > 500
    assert [(x.call, x.unseen) for x in calls if not x.justified] == []


def test_answers_are_right_and_unanswerable_ones_stop(build: list[Trajectory],
                                                      spec_questions: list[Question]) -> None:
    by = {q.qid: q for q in spec_questions}
    right = [t.final_answer == by[t.qid].answer for t in build]
    assert sum(right) >= 0.7 * len(build)
    stops = [t for t in build if by[t.qid].kind == "unanswerable"]
    said = [t for t in stops if t.final_answer == NOT_FOUND]
    assert len(said) >= 0.75 * len(stops)  # the rest jumped to a conclusion (early_answer)
    for t in said:  # the last thought says what the run checked, never the spec's reason
        last = t.turns[-1].thought
        assert by[t.qid].spec.unanswerable not in last  # type: ignore[union-attr]
        assert re.search(r"(\d+ of \d+|\d+ candidates?) checked, none matches", last) or (
            "names nothing that matches" in last), last


def test_persistent_faults_never_end_a_run_in_a_repetition_stop(
        generated: list[Question], jargon: Searcher) -> None:
    # heavy faults, a quarter persistent: a page that never comes through is given up on
    # (another way, or find), never asked for a fourth time
    runs = solve(generated, jargon, faults=0.3)
    assert [t.reason for t in runs if t.termination != "answer"] == []


def test_it_reads_on_checks_candidates_and_goes_back(build: list[Trajectory]) -> None:
    pages = [x for t in build for x in t.turns if x.call and x.call.name == "open"
             and x.call.arguments.get("page", 0) > 0]
    assert pages  # later pages of long documents are read
    backs = [x for t in build for x in t.turns if "back to" in x.thought.lower()
             or "returning to" in x.thought.lower() or "return to" in x.thought.lower()]
    assert backs  # a failed branch is left for the list it came from
    long = max(len(t.turns) for t in build)
    assert long >= 100


def test_first_searches_take_the_words_the_question_quotes(
        build: list[Trajectory], spec_questions: list[Question], jargon: Searcher) -> None:
    """Before the first page is opened, a query is the question itself or words of the start's
    name and of what the question quotes, never the words it is put in ("some", "tagged")."""
    by = {q.qid: q for q in spec_questions}
    checked = 0
    for t in build:
        question, spec = by[t.qid].question, by[t.qid].spec
        assert spec is not None
        said = {w.lower() for p in [*re.findall(r"“([^”]+)”|\"([^\"]+)\"", question),
                                    *[(d.title,) for d in jargon.documents.values()
                                      if d.doc_id == spec.start]]
                for w in re.findall(r"\w+", " ".join(p))}
        for x in t.turns:
            if x.call is None or x.call.name != "search":
                if x.call is not None:
                    break
                continue
            query = str(x.call.arguments["query"])
            if query.strip().rstrip("?") == question.strip().rstrip("?"):
                continue
            checked += 1
            assert {w.lower() for w in re.findall(r"\w+", query)} <= said, (query, question)
    assert checked


def test_a_page_opened_to_check_it_is_not_called_right(build: list[Trajectory]) -> None:
    """A candidate opened after `find` failed or showed no line is read, not announced as the
    one: no voice's `open` line ("X looks right; opening it") before it."""
    import tomllib
    from importlib.resources import files

    table = tomllib.loads(files("hopforge.synth.trajectories").joinpath("voices.toml").read_text())
    claims = [v["situations"]["open"].split("{title}") for v in table["voices"]]
    checked = 0
    for t in build:
        found: set[str] = set()
        for x in t.turns:
            if x.call is None:
                continue
            doc = str(x.call.arguments.get("doc_id", ""))
            if x.call.name == "find":  # the last find of a document: no line shown?
                if ((x.fault is not None and x.fault.kind in ("timeout", "empty"))
                        or x.result.startswith("No line of")):
                    found.add(doc)
                else:
                    found.discard(doc)
            elif x.call.name == "open" and not x.call.arguments.get("page") and doc in found:
                checked += 1
                line = x.thought.rsplit(". ", 1)[-1]
                assert not any(line.startswith(a.strip()) and line.endswith(b.strip())
                               for a, b in claims if (a + b).strip()), x.thought
    assert checked


def test_every_fault_kind_gets_a_visible_reaction(build: list[Trajectory]) -> None:
    seen = set()
    asked_again = 0
    for t in build:
        for i, (x, nxt) in enumerate(zip(t.turns, t.turns[1:])):
            if (x.fault is not None and x.fault.kind == "partial" and x.call is not None
                    and x.call.name == "search" and nxt.call == x.call):
                opened = next((y.call.arguments["doc_id"] for y in t.turns[i + 1:]
                               if y.call is not None and y.call.name == "open"), "")
                asked_again += opened != "" and opened in x.result  # it had come through
            if x.fault is None or x.call is None:
                continue
            seen.add(x.fault.kind)
            if x.fault.kind == "timeout":
                assert "30 s" in nxt.thought and "30 s" in x.result
            if x.fault.kind in ("timeout", "partial") and nxt.call == x.call:
                assert nxt.thought.split(".")[0] != x.thought.split(".")[0]
            if x.fault.kind == "format":  # all of it is there: read as it is, not asked again
                assert nxt.call != x.call
            if x.fault.kind == "empty" and x.call.name == "search":
                assert nxt.call != x.call  # rephrased, not repeated
    assert seen == {"empty", "timeout", "format", "partial"}
    assert asked_again == 0  # a cut list that shows the document wanted is read as it is


def test_thoughts_carry_state_and_vary(build: list[Trajectory]) -> None:
    agg = [t for t in build if len(t.turns) >= 30]
    assert any(any("checked" in x.thought or "/" in x.thought or "gone through" in x.thought
                   for x in t.turns) for t in agg)
    assert top_share(build, 30) <= 0.5
    for t in agg:
        for cp in t.checkpoints:
            assert cp.goal and cp.open_constraints


def test_the_checker_catches_unseen_words() -> None:
    seen = Visible("Question: Who founded the [doc_id: d1] Orvin Gallery?")
    assert seen.check(ToolCall(name="search", arguments={"query": "Orvin gallery"})) == (True, ())
    assert seen.check(ToolCall(name="open", arguments={"doc_id": "d1"})) == (True, ())
    ok, unseen = seen.check(ToolCall(name="find", arguments={"doc_id": "d2", "pattern": "Quaile"}))
    assert not ok and unseen == ("quaile", "d2")
    assert seen.check(ToolCall(name="answer", arguments={"text": "12"}))[0]
    assert seen.check(ToolCall(name="answer", arguments={"text": NOT_FOUND}))[0]
    assert json.dumps(seen.check(ToolCall(name="answer", arguments={"text": "Hesper"}))) == \
        json.dumps([False, ["hesper"]])


def test_a_set_is_counted_over_every_entry_its_start_s_pages_list(wiki: Searcher) -> None:
    """Wikipedia paragraphs name people and places that have no paragraph of their own; `open`
    lists under a page the ones that do. A run that counts or lists a set checks every name
    listed under the start's pages (read here from the raw results): it searches for it, or
    reads or looks inside the document of that title that an earlier result showed."""
    docs = list(wiki.documents.values())
    made = asyncio.run(generate_questions(
        docs, wiki, config=QuestionConfig(kinds=("aggregation",)), n=8, rng=random.Random(4)))
    questions = [q for q in made if not q.rejected and q.spec and q.spec.scope == "links"]
    runs = solve(questions, wiki, faults=0.0)
    counted = 0
    for t, q in zip(runs, [q for q in questions for _ in range(2)]):
        assert q.spec is not None
        if t.final_answer.lower() in (NOT_FOUND, NONE):
            continue
        listed = [name for x in t.turns if x.call is not None and x.call.name == "open"
                  and x.call.arguments["doc_id"] == q.spec.start
                  for line in (x.result or "").splitlines()
                  if line.startswith("Entries named here: ")
                  for name in line.removeprefix("Entries named here: ").split("; ")]
        searched = " | ".join(str(x.call.arguments["query"]) for x in t.turns
                              if x.call is not None and x.call.name == "search")
        headed = " | ".join((x.result or "").split("\n")[0] for x in t.turns
                            if x.call is not None and x.call.name in ("open", "find"))
        assert listed, q.question
        for entry in listed:  # "name" or "name → title"
            name, _, title = entry.partition(" → ")
            head = re.escape(title or name) + r"(?: \([^)]*\))? \[doc_id:"  # a result's head
            assert name in searched or re.search(head, headed), (q.question, entry)
        counted += 1
    assert counted >= 4


def test_the_tool_s_own_lines_are_no_page_text() -> None:
    """A page's header, its list of entries named and its "(more: open doc_id=... page=1)" line
    are the tool's words: an entry titled "open" is not a name that page shows."""
    from hopforge.synth.trajectories.fairness import page_body

    shown = ("SNAFU principle [doc_id: 069e] page 0 (pages 0-1)\n\nThe suits protect "
             "themselves.\n\nEntries named here: suit\n(more: open doc_id=069e page=1)")
    assert page_body(shown).split() == ["The", "suits", "protect", "themselves."]
    assert "open" not in page_body("x [doc_id: 1] page 1 (pages 0-1)\n\nCompare Conway's Law."
                                   "\n\n(end of document)")


def test_a_year_read_is_stated_while_its_result_is_still_shown(
        wiki: Searcher, wiki_generated: list[Question]) -> None:
    """A compared side's year is stated in a thought while the result that first showed it
    is still shown in full (the last `keep_results` results): later, when that result is cut
    down to a pointer, a row still shows the fact in the run's own words before the turn that
    compares the two."""
    comparisons = [q for q in wiki_generated if q.kind == "comparison"]
    assert comparisons
    runs = solve(comparisons, wiki, faults=0.0)
    keep = TrajectoryConfig().keep_results
    checked = 0
    for t, q in zip(runs, [q for q in comparisons for _ in range(2)], strict=True):
        for side in (s for s in q.spec.steps if s.relation == "compare"):  # type: ignore[union-attr]
            year = re.compile(rf"\b{re.escape(side.value)}\b")
            shown = [i for i, x in enumerate(t.turns) if x.call is not None
                     and x.call.arguments.get("doc_id") == side.doc
                     and year.search(x.result or "")]
            if not shown:
                continue
            checked += 1
            later = [x.thought for x in t.turns[shown[0] + 1:shown[-1] + 1 + keep]]
            assert any(year.search(x) for x in later), (q.question, side.value, later)
    assert checked >= len(comparisons)


def test_queries_take_no_word_of_the_tools_own_lines(
        build: list[Trajectory], wiki: Searcher, wiki_generated: list[Question]) -> None:
    """A query built from words read near a name holds no word of a page's header ("page 0
    (pages 0-3)"), its doc_id or its footer: those are the tool's, not the document's."""
    runs = [*build, *solve(wiki_generated, wiki, faults=0.4)]
    queries = [str(x.call.arguments.get("query", "")) for t in runs for x in t.turns
               if x.call is not None and x.call.name == "search"]
    assert len(queries) > 50
    tool_words = re.compile(r"\b\d+-\d+\b|\bdoc_id\b|\bpages\b|\bEntries named here\b")
    assert [q for q in queries if tool_words.search(q)] == []
