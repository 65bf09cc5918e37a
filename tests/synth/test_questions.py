"""The question stage on the built-in Jargon File: every property that matters, over a real run."""

import argparse
import asyncio
import dataclasses
import json
import random
import re
import zlib
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hopforge.corpus.builtin import load_builtin_documents
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.corpus.settings import explain
from hopforge.flows.stages.questions import TurnLimits
from hopforge.synth import prompts
from hopforge.synth.questions.checks import probe_queries
from hopforge.synth.questions.config import QuestionConfig, Rung
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.model import (
    QUESTION_SCHEMA,
    READING_SCHEMA,
    QuestionParseError,
    Reading,
    ReadingParseError,
    describe,
    misread,
    parse_question_json,
    parse_reading,
)
from hopforge.synth.questions.stage import generate_questions, split_reasons
from hopforge.synth.records import Question
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from rank_bm25 import BM25Okapi

from tests.helpers.openai_server import OpenAITestServer, Reply
from tests.helpers.rederive import Reader, rederive


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    return load_builtin_documents()


@pytest.fixture(scope="module")
def searcher(docs: list[Document]) -> Searcher:
    return Searcher.from_documents(docs, dense=False)


@pytest.fixture(scope="module")
def graph(docs: list[Document]) -> CorpusGraph:
    return CorpusGraph(docs)


def generate(docs: list[Document], searcher: Searcher, graph: CorpusGraph, seed: int, n: int,
             **config: Any) -> list[Question]:
    return asyncio.run(generate_questions(docs, searcher, config=QuestionConfig(**config),
                                          rng=random.Random(seed), n=n, graph=graph))


@pytest.fixture(scope="module")
def questions(docs: list[Document], searcher: Searcher, graph: CorpusGraph) -> list[Question]:
    return generate(docs, searcher, graph, seed=0, n=40)


@pytest.fixture(scope="module")
def accepted(questions: list[Question]) -> list[Question]:
    return [q for q in questions if not q.rejected]


def test_config_errors_name_field_value_and_range() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        QuestionConfig(max_hops=13)
    assert explain(caught.value, "QuestionConfig") == (
        "QuestionConfig.max_hops = 13 is out of range: expected at most 12")
    with pytest.raises(ValueError, match=r"max_hops=3 is below min_hops=4"):
        QuestionConfig(min_hops=4, max_hops=3)
    with pytest.raises(ValueError, match=r"Unexpected keyword argument"):
        QuestionConfig(hops=3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"kinds=\('chain', 'riddle'\)"):
        QuestionConfig(kinds=("chain", "riddle"))
    with pytest.raises(ValueError, match=r"max_calls=10 is below min_calls=50"):
        QuestionConfig(min_calls=50, max_calls=10)
    assert QuestionConfig(min_hops=12, max_hops=12).max_hops == 12


def test_every_family_is_made_and_every_record_has_text_and_spec(
        questions: list[Question], accepted: list[Question]) -> None:
    assert len(accepted) == 40 and not questions[-1].rejected
    # a glossary dates few events of its own entries: comparisons come from the Wikipedia
    # paragraphs (test_wikipedia_comparisons_order_one_event_of_each_subject)
    assert {"chain", "intersection", "aggregation", "unanswerable"} <= {q.kind for q in accepted}
    assert len(accepted) / len(questions) >= 0.3
    for q in questions:
        assert q.question.strip(), "no record has an empty question"
        assert q.spec is not None and q.min_calls >= 2
        assert q.rejected or q.checks.passed
    assert len({q.qid for q in questions}) == len(questions)


def test_same_seed_same_questions(docs: list[Document], searcher: Searcher, graph: CorpusGraph,
                                  questions: list[Question]) -> None:
    assert generate(docs, searcher, graph, seed=0, n=40) == questions
    other = generate(docs, searcher, graph, seed=1, n=10)
    assert {q.qid for q in other} != {q.qid for q in questions[:len(other)]}


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def test_no_single_search_finds_the_answer_with_rank_bm25(
        docs: list[Document], graph: CorpusGraph, accepted: list[Question]) -> None:
    """The reference library, over whole documents: the whole text, each sentence, clause and
    phrase searched alone ranks no document that answers it in its top 5 (at most 10%)."""
    ids = [d.doc_id for d in docs]
    bm25 = BM25Okapi([_tokens(f"{d.title} {d.text}") for d in docs])
    found = 0
    for q in accepted:
        spec = q.spec
        assert spec is not None
        names_answer = {q.answer_doc} - {""}
        both = {s.doc for s in spec.steps if s.relation == "compare"}
        if spec.family == "comparison":
            names_answer = set()
        elif spec.answer_type == "title":
            names_answer |= {e for e in q.evidence
                             if graph.title(q.answer_doc).lower() in graph.lower[e]}
        for query in probe_queries(q.question):
            scores = bm25.get_scores(_tokens(query))
            top = {ids[i] for i in sorted(range(len(ids)), key=lambda i: -scores[i])[:5]}
            if names_answer & top or (both and both <= top):
                found += 1
                break
    assert found <= 0.1 * len(accepted), f"{found} of {len(accepted)} found by one search"


def test_wikipedia_comparisons_order_one_event_of_each_subject() -> None:
    """On the built-in Wikipedia paragraphs: comparisons are made, of one event kind on both
    sides, each side's date stated in a sentence about that side, and re-derived."""
    wiki = load_builtin_documents("builtin:wiki")
    made = generate(wiki, Searcher.from_documents(wiki, dense=False), CorpusGraph(wiki),
                    seed=0, n=12, kinds=("comparison",))
    ok = [q for q in made if not q.rejected]
    assert len(ok) >= 6
    reader = Reader(d.to_row() for d in wiki)
    by_id = {d.doc_id: d for d in wiki}
    for q in ok:
        assert rederive(q.to_row(), reader) == (q.answer, ""), q.question
        key = q.spec.condition.key
        for side in (s for s in q.spec.steps if s.relation == "compare"):
            title = by_id[side.doc].title
            text = by_id[side.doc].text
            said = [m for m in re.finditer(rf"[^.]*\b{key}\b[^.]*\b{side.value}\b", text)]
            life = key in ("born", "died") and re.match(  # "Name (1916 – 1996) was ..."
                rf"{re.escape(title)}[^.(]*\([^()]*\b{side.value}\b[^()]*\)|"
                rf"[^.(]*\([^()]*\b{side.value}\b[^()]*\)", text)
            assert said or life, (title, key, side.value)
    assert len({q.answer_doc for q in ok}) == len(ok)  # one question per answer document


def test_answers_follow_from_the_corpus(docs: list[Document], accepted: list[Question]) -> None:
    """Each answer re-derived from the raw documents by independent code (visible names, the
    reader's fact rules), not by the stage's code."""
    reader = Reader(d.to_row() for d in docs)
    for q in accepted:
        answer, problem = rederive(q.to_row(), reader)
        assert not problem, (q.qid, q.question, problem)
        assert answer == q.answer, (q.qid, q.question, answer, q.answer)


def test_clues_are_facts(accepted: list[Question]) -> None:
    """Every clue is a typed fact shown as the question states it; phrases are the fallback."""
    clues = [s.fact for q in accepted for s in q.spec.steps if s.fact]  # type: ignore[union-attr]
    clues += [q.spec.condition for q in accepted if q.spec and q.spec.condition]
    kinds = {c.kind for c in clues}
    assert len(kinds - {"phrase"}) >= 2, kinds
    assert sum(c.kind == "phrase" for c in clues) <= 0.3 * len(clues)
    for q in accepted:
        for s in q.spec.steps:  # type: ignore[union-attr]
            if s.fact and s.relation in ("link", "compare"):
                assert s.fact.shown in q.question, (q.question, s.fact.shown)
                if s.fact.kind in ("date", "number"):
                    assert s.fact.value.split()[0] not in q.question, "the value is blurred"


def test_questions_name_no_hidden_document_and_read_plainly(
        graph: CorpusGraph, accepted: list[Question]) -> None:
    for q in accepted:
        spec = q.spec
        assert spec is not None
        named = {s.doc for s in spec.steps if s.relation == "start"}
        hidden = [*q.evidence, q.answer_doc]
        if spec.family == "aggregation":  # only the items its answer names are hidden
            hidden = list(spec.matching) if spec.operation == "list" else [q.answer_doc]
        for doc_id in hidden:
            if doc_id and doc_id not in named:
                title = graph.title(doc_id).lower()
                assert len(title) < 4 or title not in q.question.lower(), (q.qid, title)
        for s in spec.steps:
            assert s.phrase.lower() in q.question.lower()
            assert not s.fact or s.fact.shown in q.question
        assert q.question.rstrip().endswith(("?", "."))
        unquoted = re.sub(r"“[^”]+”", "", q.question)  # quoted titles are the corpus's words
        assert "entrys" not in q.question and not re.search(r"\b[XYZW]\b", unquoted)
    chains = [len(q.question.split()) for q in accepted if q.kind in ("chain", "intersection")]
    assert sorted(chains)[len(chains) // 2] <= 35


def test_most_drafts_pass_the_checks(questions: list[Question]) -> None:
    """Clues are blurred before the checks, not by them: a clue whose own words find the answer
    (or a page naming it) is not chosen, so most drafts are kept (40 of 116 were, when the
    shortcut check alone turned such drafts away)."""
    kept = sum(not q.rejected for q in questions)
    assert kept == 40 and kept / len(questions) >= 0.45, f"{kept} of {len(questions)}"


def test_a_rung_of_the_whole_mix_fills_with_the_kind_that_reaches_it(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph) -> None:
    """The demo's rungs keep every kind; only aggregations reach 50 calls on the Jargon File,
    and the kinds that cannot must not take every draw of the wave before it is tried."""
    rung = generate(docs, searcher, graph, seed=0, n=2, min_calls=50, max_calls=150)
    accepted = [q for q in rung if not q.rejected]
    assert len(accepted) == 2 and all(50 <= q.min_calls <= 150 for q in accepted)
    # the next rung: the kinds made above are ahead of their share, yet they are the ones
    # that reach 100 calls; a wave draws until every kind has failed its fill
    longer = asyncio.run(generate_questions(
        docs, searcher, config=QuestionConfig(min_calls=100, max_calls=300),
        rng=random.Random(1), n=1, graph=graph, accepted_so_far=accepted))
    assert [q.min_calls >= 100 for q in longer if not q.rejected] == [True]


def test_min_calls_ladder_for_aggregation(docs: list[Document], searcher: Searcher,
                                          graph: CorpusGraph) -> None:
    ladder = generate(docs, searcher, graph, seed=3, n=4, kinds=("aggregation",), min_calls=50,
                      max_calls=120)
    accepted = [q for q in ladder if not q.rejected]
    assert len(accepted) == 4
    for q in accepted:
        assert 50 <= q.min_calls <= 120 and q.spec is not None
        assert q.min_calls > 2 * len(q.spec.items), "a search and a find per item, at least"
    mixed = [q for q in generate(docs, searcher, graph, seed=5, n=6, min_calls=30, max_calls=90)
             if not q.rejected]  # every family honours the range, not aggregation alone
    assert len(mixed) == 6 and all(30 <= q.min_calls <= 90 for q in mixed)


def test_reasons_split_at_top_level_commas_only() -> None:
    assert split_reasons("shortcut,parse_error(reply is not JSON (',' at 8)),leakage") == [
        "shortcut", "parse_error(reply is not JSON (',' at 8))", "leakage"]


def test_parse_question_json() -> None:
    assert parse_question_json('```json\n{"question": " Which  one? "}\n```') == "Which one?"
    for bad in ('{"question": ""}', "[1]", "nope", '{"q": 1}'):
        with pytest.raises(QuestionParseError):
            parse_question_json(bad)


def test_describe_says_how_every_family_relates(graph: CorpusGraph,
                                                 accepted: list[Question]) -> None:
    """The task a model composer gets names every relation: what the answer is mentioned by
    (intersection) and which set an aggregation counts, with its start."""
    for q in accepted:
        assert q.spec is not None
        told = describe(q.spec, graph)
        assert 'contains ""' not in told and "entrys" not in told
        if q.spec.family == "intersection":
            assert told.endswith("ask for the one entry that each entry reached by a "
                                 '"go to" step mentions')
        if q.spec.family == "aggregation":
            assert f'set: the entries that "{graph.title(q.spec.start)}" mentions' in told or \
                q.spec.scope == "links2"


def run_model(docs: list[Document], searcher: Searcher, graph: CorpusGraph,
              server: OpenAITestServer, n: int, **config: Any) -> list[Question]:
    async def go() -> list[Question]:
        async with OpenAIChatModel([server.base_url], "test-model", max_retries=0) as model:
            return await generate_questions(
                docs, searcher, config=QuestionConfig(**config), rng=random.Random(0), n=n,
                teacher=model, graph=graph)
    return asyncio.run(go())


def _plain(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    m = re.search(r"A plain wording of the same task:\n(.+?)\n\nRewrite", user, re.DOTALL)
    assert m, user
    return m.group(1)


def _task_reading(user: str) -> dict[str, Any]:
    """What the task of a compose prompt asks, as a reader that gets it right writes it down."""
    task = user.split("\nA plain wording", 1)[0]
    family = re.match(r"Task \((\w+)\)", task)
    assert family, task
    asks = next((a for words, a in ((" earlier\n", "earlier"), (" later\n", "later"),
                                    ("did it earliest", "earlier"), ("did it latest", "later"),
                                    ("how many", "count"), ("the titles of", "list"),
                                    ("ask in what year", "year")) if words in task + "\n"),
                "title")
    return {"named": re.findall(r'start at the \w+ "([^"]*)"', task),
            "clues": [{"phrase": p, "direction": "mentioned_by_source"}
                      for p in re.findall(r"go to the \w+ it mentions (.+)", task)
                      + re.findall(r"; condition: (.+?); ask for", task)],
            "answer_relation": "mentioned_by_clues" if family.group(1) == "intersection"
            else "none", "asks": asks}


class Composer:
    """A model that writes the plain wording as its question, answers with the evidence as
    `answers` says, and reads its questions back as `read_back` makes of the right reading."""

    def __init__(self, answers: dict[str, str], read_back: Any = lambda right: right) -> None:
        self.answers, self.read_back = answers, read_back
        self.readings: dict[str, dict[str, Any]] = {}
        self.read_requests: list[dict[str, Any]] = []
        self.oracle_asked: list[str] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        user = request["messages"][-1]["content"]
        if user.startswith("Answer the question from these documents"):
            self.oracle_asked.append(user.rsplit("Question: ", 1)[1].strip())
            return Reply.text(self.answers.get(self.oracle_asked[-1], "not found"))
        if user.startswith("Answer this question from memory"):
            return Reply.text("unknown")
        if user.startswith("Read this question"):
            self.read_requests.append(request)
            asked = re.search(r"\nQuestion: (.+?)\n\nReply with", user, re.DOTALL)
            assert asked, user
            reply = self.read_back(self.readings[asked.group(1)])
            return Reply.json(reply) if isinstance(reply, dict) else Reply.text(reply)
        plain = _plain(request)
        self.readings[plain] = _task_reading(user)
        return Reply.json({"question": plain})


def test_model_composer_renders_specs_and_is_checked(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph,
        openai_server: OpenAITestServer) -> None:
    """A model that rewrites well, drops a phrase, writes garbage, or cannot answer with the
    evidence: each outcome lands as an accepted question or a rejection with its reason."""
    calls = {"compose": 0}
    reader = Composer({})  # reads the questions back right

    def handler(request: dict[str, Any]) -> Reply:
        user = request["messages"][-1]["content"]
        if user.startswith("Answer the question from these documents"):
            return Reply.text("I could not tell.")  # the oracle-context check fails
        if user.startswith("Read this question"):
            return reader(request)
        calls["compose"] += 1
        plain = _plain(request)
        # the outcome follows the draft (its first quoted name), not the call count, so that
        # a draft composed again after a failed check meets the same model
        first = re.search(r"“[^”]+”", plain)
        outcome = zlib.crc32((first.group(0) if first else plain).encode()) % 3
        if outcome == 0:
            reader.readings[plain] = _task_reading(user)
            return Reply.json({"question": plain})
        if outcome == 1:
            return Reply.text('{"question": ')
        dropped = plain.replace(first.group(0), "“something”") if first else plain  # a name
        # dropped wherever the task quotes it
        reader.readings[dropped] = _task_reading(user)  # it reads its own question as the task
        return Reply.json({"question": dropped})

    openai_server.set_handler(handler)
    made = run_model(docs, searcher, graph, openai_server, n=1, attempts_per_question=24,
                     concurrency=1)
    reasons = {r.split("(")[0] for q in made for r in split_reasons(q.rejected)}
    assert {"parse_error", "not_answerable_with_evidence"} <= reasons
    assert "ungrounded" in reasons or "leakage" in reasons
    for q in made:
        assert q.question and q.composer == "openai:test-model"
    body = openai_server.requests[0]
    assert body["response_format"]["json_schema"]["schema"] == QUESTION_SCHEMA
    assert body["messages"][0]["content"] == prompts.QUESTION_SYSTEM


@pytest.fixture(scope="module")
def answers(docs: list[Document], searcher: Searcher, graph: CorpusGraph,
            questions: list[Question]) -> dict[str, str]:
    """The answer of each scripted wording (what a model with the evidence would reply), for the
    runs the model tests repeat (how many are wanted changes which drafts are drawn)."""
    runs = [questions, *(generate(docs, searcher, graph, seed=0, n=n) for n in (1, 3))]
    return {q.question: q.answer for run in runs for q in run}


def test_model_composer_accepts_answerable_questions(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph,
        openai_server: OpenAITestServer, answers: dict[str, str]) -> None:
    """A model that words the task right and reads it back right: accepted, after a read-back
    request with the reading schema for each question that passed the cheap checks."""
    model = Composer(answers)
    openai_server.set_handler(model)
    made = run_model(docs, searcher, graph, openai_server, n=3, closed_book=True)
    good = [q for q in made if not q.rejected]
    assert len(good) == 3
    assert all(q.checks.answerable and q.checks.probe_pass == 0.0 for q in good)
    assert all(q.checks.misread == "" for q in good)
    asked = [r["messages"][-1]["content"] for r in model.read_requests]
    for q in good:
        assert prompts.QUESTION_READ_BACK_PROMPT.format(
            question=q.question, noun="entry", nouns="entries") in asked
    assert all(r["response_format"]["json_schema"]["schema"] == READING_SCHEMA
               for r in model.read_requests)


def _reversed(right: dict[str, Any]) -> dict[str, Any]:
    """The reading with its first relation turned round (as the real model wrote them)."""
    if right["answer_relation"] == "mentioned_by_clues":
        return {**right, "answer_relation": "mentions_clues"}
    first, *rest = right["clues"]
    return {**right, "clues": [{**first, "direction": "mentions_source"}, *rest]}


def test_a_reversed_reading_is_rejected_as_misread(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph,
        openai_server: OpenAITestServer, answers: dict[str, str]) -> None:
    model = Composer(answers, read_back=_reversed)
    openai_server.set_handler(model)
    made = run_model(docs, searcher, graph, openai_server, n=1, attempts_per_question=4)
    misreads = [q for q in made if q.rejected.startswith("misread(")]
    assert misreads and not any(not q.rejected for q in made)
    for q in misreads:
        assert q.spec is not None
        first = next((s.fact.shown for s in q.spec.steps if s.fact),
                     q.spec.condition.shown if q.spec.condition else "")
        want = ("misread(answer_relation mentions_clues)" if q.spec.family == "intersection"
                else f"misread(reversed “{first.lower()}”")
        assert q.rejected.startswith(want), (q.rejected, want)
        assert q.checks.misread and q.rejected == f"misread({_detail_of(q.checks.misread)})"
        assert q.question not in model.oracle_asked, "rejected before the oracle check"


def test_an_unparsable_reading_is_rejected_with_its_raw_reply(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph,
        openai_server: OpenAITestServer, answers: dict[str, str]) -> None:
    model = Composer(answers, read_back=lambda right: "It asks for an entry, I think.")
    openai_server.set_handler(model)
    made = run_model(docs, searcher, graph, openai_server, n=1, attempts_per_question=6)
    misreads = [q for q in made if q.rejected == "misread(unparsable)"]
    assert misreads and not any(not q.rejected for q in made)
    assert all(q.raw == "It asks for an entry, I think." for q in misreads)
    off = Composer(answers, read_back=lambda right: "never asked")
    openai_server.set_handler(off)
    made = run_model(docs, searcher, graph, openai_server, n=1, round_trip=False)
    assert not off.read_requests and sum(not q.rejected for q in made) == 1


def test_scripted_questions_are_not_read_back(questions: list[Question]) -> None:
    """The scripted frames are right by construction: no round trip (and no model) for them."""
    assert all(q.checks.misread is None for q in questions)
    assert not any(r.startswith("misread") for q in questions for r in split_reasons(q.rejected))
    with pytest.raises(pydantic.ValidationError, match=r"round_trip\n.*valid boolean"):
        QuestionConfig(round_trip="no")  # type: ignore[arg-type]


def _detail_of(text: str) -> str:
    return " ".join(text.replace(",", ";").replace("(", "[").replace(")", "]").split())[:200]


def test_misread_names_what_differs(graph: CorpusGraph, accepted: list[Question]) -> None:
    """The comparison on the two wordings the real 0.5B model wrote backwards."""
    inter = next(q.spec for q in accepted if q.spec and q.spec.family == "intersection")
    starts = [graph.title(s.doc) for s in inter.steps if s.relation == "start"]
    clues = tuple((s.fact.shown, "mentioned_by_source") for s in inter.steps
                  if s.fact and s.relation == "link")
    right = Reading(named=tuple(starts), clues=clues, answer_relation="mentioned_by_clues",
                    asks="title")
    assert misread(inter, right, graph) == ""
    backwards = dataclasses.replace(right, answer_relation="mentions_clues")
    assert misread(inter, backwards, graph) == "answer_relation mentions_clues"
    agg = next(q.spec for q in accepted if q.spec and q.spec.family == "aggregation"
               and q.spec.operation == "count" and q.spec.condition
               and q.spec.condition.kind in ("phrase", "entity"))
    assert agg.condition is not None
    word = (agg.condition.value if agg.condition.kind == "phrase"
            else graph.title(agg.condition.target)).lower()
    reading = Reading(named=(f"“{graph.title(agg.start)}”",),
                      clues=((agg.condition.shown.upper(), "mentions_source"),),
                      answer_relation="none", asks="list")
    assert misread(agg, reading, graph) == (f"reversed “{agg.condition.shown.lower()}”; "
                                            "asks list not count")
    assert misread(agg, dataclasses.replace(reading, named=("other",), clues=()), graph) == (
        f"start “{graph.title(agg.start).lower()}” missing; extra start “other”; "
        f"0 clues read, the task has 1; clue “{word}” missing; asks list not count")


def test_parse_reading() -> None:
    reply = ('```json\n{"named": ["magic"], "clues": [{"phrase": "works", "direction": '
             '"mentions_source"}], "answer_relation": "none", "asks": "count"}\n```')
    assert parse_reading(reply) == Reading(named=("magic",), clues=(("works", "mentions_source"),),
                                           answer_relation="none", asks="count")
    for bad in ("nope", "[]",
                '{"named": "magic", "clues": [], "answer_relation": "none", "asks": "title"}',
                ('{"named": [], "clues": [{"phrase": "w", "direction": "up"}], '
                 '"answer_relation": "none", "asks": "title"}'),
                '{"named": [], "clues": [], "answer_relation": "none", "asks": "why"}'):
        with pytest.raises(ReadingParseError):
            parse_reading(bad)


def make_build(root: Path, docs: list[Document]) -> BuildDir:
    from hopforge.corpus.store import write_corpus

    build = BuildDir.at(root)
    write_corpus(build, docs)
    return build


def part_files(build: BuildDir) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(build.questions.glob("part-*"))}


def test_runner_resumes_after_a_kill(tmp_path: Path, docs: list[Document]) -> None:
    from hopforge.flows.stages.questions import run_questions_build

    # (attempts to spare: the test is about resuming, not about how many drafts pass)
    config = QuestionConfig(n=6, part_size=2, seed=5, attempts_per_question=30)
    whole = make_build(tmp_path / "whole", docs)
    report = run_questions_build(whole, config)
    assert report["accepted"] == 6 and report["run"]["parts_written"] == 3
    killed = make_build(tmp_path / "killed", docs)
    run_questions_build(killed, config, stop_after_parts=1)
    (killed.questions / "part-00001.jsonl").write_text('{"half": "a part cut short"')
    again = run_questions_build(killed, config)
    assert again["run"]["parts_already_done"] == 1 and again["run"]["parts_written"] == 2
    assert part_files(killed) == part_files(whole)
    rows = [json.loads(line) for p in sorted(whole.questions.glob("part-*.jsonl"))
            for line in p.read_text().splitlines()]
    assert len({r["qid"] for r in rows}) == len(rows)
    assert all(r["spec"] and r["min_calls"] >= 2 for r in rows)
    with pytest.raises(Exception, match="other settings"):
        run_questions_build(whole, QuestionConfig(n=8, part_size=2, seed=6))


def test_cli_questions(tmp_path: Path, docs: list[Document], capsys: Any) -> None:
    from hopforge.flows.commands.cli import main

    build = make_build(tmp_path / "b", docs)
    assert main(["questions", str(build.root), "-n", "3", "--kinds", "aggregation",
                 "--min-calls", "20-80", "--seed", "3", "--no-round-trip"]) == 0
    assert re.search(r"3 accepted of \d+ tried", capsys.readouterr().out)
    rows = [json.loads(line) for p in build.questions.glob("part-*.jsonl")
            for line in p.read_text().splitlines()]
    assert {r["kind"] for r in rows} == {"aggregation"}
    assert all(20 <= r["min_calls"] <= 80 for r in rows if not r["rejected"])
    with pytest.raises(SystemExit):
        main(["questions", str(build.root), "--min-calls", "80-20"])
    assert main(["questions", str(tmp_path / "nothing"), "-n", "2"]) == 2
    assert "hopforge ingest" in capsys.readouterr().err


def test_ladder_rungs_come_before_the_mix_and_resume(tmp_path: Path, docs: list[Document]) -> None:
    from hopforge.flows.config.build_file import parse_config_text
    from hopforge.flows.stages.questions import run_questions_build

    text = ('[build]\nname = "l"\n[corpus]\nsources = ["builtin:jargon"]\n[questions]\nn = 2\n'
            'part_size = 2\nseed = 4\nladder = [{min_calls = 30, max_calls = 90, n = 2}]\n')
    config = parse_config_text(text, base_dir=tmp_path, default_name="l", out=tmp_path / "o",
                               env={}, origin="test").stages["questions"]
    assert config.ladder == (Rung(min_calls=30, max_calls=90, n=2),) and config.total == 4
    whole = make_build(tmp_path / "whole", docs)
    report = run_questions_build(whole, config)
    assert report["accepted"] == 4 and not report["run"]["shortfalls"]
    rows = [json.loads(line) for p in sorted(whole.questions.glob("part-*.jsonl"))
            for line in p.read_text().splitlines()]
    ok = [r for r in rows if not r["rejected"]]
    assert all(30 <= r["min_calls"] <= 90 for r in ok[:2])  # the rung's two, before the mix's
    assert sum(30 <= r["min_calls"] <= 90 for r in ok) >= 2
    killed = make_build(tmp_path / "killed", docs)
    run_questions_build(killed, config, stop_after_parts=1)
    assert run_questions_build(killed, config)["run"]["parts_already_done"] == 1
    assert part_files(killed) == part_files(whole)
    more = run_questions_build(whole, dataclasses.replace(config, n=4))  # -n grows the mix only
    assert more["accepted"] == 6 and more["run"]["parts_already_done"] == 2
    grown = part_files(whole)
    assert len(grown) > len(part_files(killed))
    assert all(grown[name] == data for name, data in part_files(killed).items())
    with pytest.raises(ValueError, match="below min_calls"):
        Rung(min_calls=50, max_calls=10)


def test_cli_ladder_argument() -> None:
    from hopforge.flows.commands.questions import ladder_list

    assert ladder_list("50-150:4, 300-:2") == ((50, 150, 4), (300, 0, 2))
    for bad in ("50-150", "50-150:0", "x:2", "150-50:1"):
        with pytest.raises(argparse.ArgumentTypeError):
            ladder_list(bad)


def test_cli_says_which_families_the_corpus_cannot_make(tmp_path: Path, docs: list[Document],
                                                        capsys: Any) -> None:
    """The built-in dictionary states no dated events: comparisons cannot be made, and the
    command and the build summary say so with what the family needs."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.flows.build.summary import question_lines
    from hopforge.flows.commands.cli import main

    build = make_build(tmp_path / "b", docs)
    assert main(["questions", str(build.root), "-n", "2", "--kinds", "comparison,aggregation",
                 "--seed", "3", "--no-round-trip"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"not made: comparison: none made \(no draft\); it needs two documents", out)
    assert "not made: aggregation" not in out
    lines = question_lines(BuildDir.at(build.root))
    assert lines[0] == "questions: families not made"
    assert lines[1].strip().startswith("comparison: none made")


def test_a_target_the_attempts_ran_out_before_is_in_the_build_summary(
        tmp_path: Path, docs: list[Document], capsys: Any) -> None:
    """A rung no task of the corpus can meet: the command warns, and the build summary says which
    target fell short and what to change."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.flows.build.summary import question_lines
    from hopforge.flows.commands.cli import main

    build = make_build(tmp_path / "b", docs)
    assert main(["questions", str(build.root), "-n", "2", "--kinds", "chain",
                 "--ladder", "90000-:1", "--seed", "3", "--no-round-trip"]) == 0
    assert "warning: short of the target: 0 of 1" in capsys.readouterr().err
    lines = question_lines(BuildDir.at(build.root))
    assert lines[0].startswith("questions: short of the target: 0 of 1 (min_calls 90000-")
    assert "attempts_per_question" in lines[0]


def test_the_mix_leaves_room_for_the_retries_of_faulted_calls() -> None:
    """With tool faults a run needs more turns than its plan has calls (each fault met costs a
    retry, a persistent one up to three): the mix asks for no task a run cannot finish."""
    plain = TurnLimits(max_turns=64, no_progress=40).mix(QuestionConfig())
    faulted = TurnLimits(max_turns=64, no_progress=40, faults=0.1).mix(QuestionConfig())
    assert (plain.max_calls, faulted.max_calls) == (64, 49)
    asked = TurnLimits(max_turns=64, no_progress=40, faults=0.1).mix(
        QuestionConfig(min_calls=55))  # a range asked for above the room: kept as asked
    assert asked.max_calls == 55


def test_a_short_mix_keeps_the_unanswerable_share_of_what_was_accepted(
        docs: list[Document], searcher: Searcher, graph: CorpusGraph) -> None:
    """When the attempts run out before `n`, the unanswerable questions are their share of the
    accepted ones, not of `n` (30% of 30 wanted would be most of a short build)."""
    made = generate(docs, searcher, graph, seed=0, n=30, attempts_per_question=1,
                    unanswerable_share=0.3)
    ok = [q for q in made if not q.rejected]
    assert len(ok) < 30  # the attempts ran out
    unanswerable = sum(q.kind == "unanswerable" for q in ok)
    assert unanswerable >= 1
    assert abs(unanswerable / len(ok) - 0.3) <= 0.5 / len(ok) + 0.02
    assert any(q.rejected == "over_share(unanswerable)" for q in made)


def test_a_dated_set_holds_no_item_a_reader_cannot_decide() -> None:
    """"Which of the people X mentions were born before 1990?" over a set with a person whose
    page gives no year is a guess. On the Wikipedia paragraphs, every item of a set under a
    birth or death condition gives that year in its text, or opens dated as another kind of
    thing ("is a 2019 Indian film"): read here from the raw text."""
    wiki = load_builtin_documents("builtin:wiki")
    made = generate(wiki, Searcher.from_documents(wiki, dense=False), CorpusGraph(wiki),
                    seed=4, n=16, kinds=("aggregation",))
    by_id = {d.doc_id: d for d in wiki}
    year = r"\b(?:1[5-9]\d\d|20[0-4]\d)\b"
    checked = 0
    for q in made:
        if q.rejected or q.spec.condition is None or q.spec.condition.key not in ("born", "died"):
            continue
        for item in q.spec.items:
            text = by_id[item].text
            lead = re.split(r"(?<=[a-z0-9)]{2}\.)\s", text, maxsplit=1)[0]  # "a.k.a." goes on
            life = re.search(rf"\([^()]*{year}[^()]*\)", lead)
            stated = life or re.search(rf"\b{q.spec.condition.key}\b[^.]*{year}", text)
            assert stated or re.search(year, lead), (q.question, by_id[item].title)
        checked += 1
    assert checked >= 2


def test_an_answer_alias_names_no_other_document() -> None:
    """Grading takes an answer's aliases: a name two documents share ("Mercury" for
    "Mercury (planet)" and "Mercury (element)") is none of them; a name of its own is."""
    from hopforge.synth.questions.families.base import alias_forms

    docs = [Document(doc_id="p", title="Mercury (planet)", text="The smallest planet.",
                     source="t", aliases=("Hermes star",)),
            Document(doc_id="e", title="Mercury (element)", text="A liquid metal.", source="t"),
            Document(doc_id="v", title="Venus", text="Next to Mercury (planet).", source="t")]
    graph = CorpusGraph(docs)
    assert alias_forms(graph, "p", "") == ("Hermes star",)
    assert "Mercury" not in alias_forms(graph, "e", "Mercury")
