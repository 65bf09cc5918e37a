import asyncio
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.synth import prompts
from hopforge.synth.chains import LinkGraph
from hopforge.synth.model_questions import (
    QUESTION_SCHEMA,
    QuestionParseError,
    parse_question_json,
    render_prompt,
)
from hopforge.synth.openai_client import OpenAIChatModel
from hopforge.synth.plans import Planner, QuestionPlan
from hopforge.synth.question_checks import contains_name
from hopforge.synth.questions import QuestionConfig, generate_questions
from hopforge.synth.scripted_questions import ScriptedComposer

from tests.openai_server import OpenAITestServer, Reply
from tests.tiny import load_tiny


@pytest.fixture(scope="module")
def docs(tiny_corpus_path: Path) -> list[Document]:
    return load_tiny(tiny_corpus_path)


@pytest.fixture(scope="module")
def searcher(docs: list[Document]) -> Searcher:
    return Searcher.from_documents(docs, dense=False)


def generate(docs: list[Document], searcher: Searcher, seed: int, n: int = 8, **kw: Any) -> list:
    config = QuestionConfig(**({"shortcut_rank": 1} | kw.pop("config", {})))
    return asyncio.run(generate_questions(docs, searcher, config=config, rng=random.Random(seed),
                                          n=n, **kw))


def test_config_errors_name_field_value_and_range() -> None:
    with pytest.raises(ValueError, match=r"QuestionConfig.max_hops=9 is out of range: expected "
                                         r"min_hops=2..8"):
        QuestionConfig(max_hops=9)
    with pytest.raises(ValueError, match=r"max_hops=2 .*min_hops=3"):
        QuestionConfig(min_hops=3, max_hops=2)
    with pytest.raises(ValueError, match=r"kinds=\('chain', 'riddle'\)"):
        QuestionConfig(kinds=("chain", "riddle"))
    with pytest.raises(ValueError, match=r"near_duplicate=1.5 is out of range"):
        QuestionConfig(near_duplicate=1.5)
    assert QuestionConfig(min_hops=8, max_hops=8).max_hops == 8


def test_scripted_questions_are_deterministic_and_checked(
    docs: list[Document], searcher: Searcher
) -> None:
    a = generate(docs, searcher, seed=1)
    assert a == generate(docs, searcher, seed=1)
    assert [q.question for q in a] != [q.question for q in generate(docs, searcher, seed=2)]
    accepted = [q for q in a if not q.rejected]
    assert len(accepted) == 8
    assert not a[-1].rejected, "the run stops at the n-th accepted question"
    assert {q.kind for q in accepted} == {"chain", "comparison", "intersection"}
    for q in a:
        assert q.composer == "scripted"
        assert q.rejected or q.checks.passed
        assert q.question.endswith("?")
        assert not re.search(r"\b1[0-9]{3}\b", q.question), "years are blurred to decades"
    for q in accepted:
        hidden = q.evidence[1:] if q.kind == "chain" else q.evidence
        for doc_id in hidden:
            assert searcher.documents[doc_id].title.lower() not in q.question.lower()
    assert len({q.qid for q in a}) == len(a)


def test_rejected_questions_carry_reasons(docs: list[Document], searcher: Searcher) -> None:
    questions = generate(docs, searcher, seed=3, n=8, config={"shortcut_rank": 5})
    rejected = [q for q in questions if q.rejected]
    assert rejected
    for q in rejected:
        assert set(q.rejected.split(",")) <= {"leakage", "shortcut", "not_unique"} | {
            r for r in q.rejected.split(",") if r.startswith(("malformed(", "unreadable("))
        }
        if "shortcut" in q.rejected:
            assert q.checks.shortcut_rank is not None and q.checks.shortcut_rank <= 5


def test_accepted_so_far_is_never_repeated(docs: list[Document], searcher: Searcher) -> None:
    first = generate(docs, searcher, seed=4, n=5)
    more = generate(docs, searcher, seed=4, n=5, accepted_so_far=[q for q in first
                                                                   if not q.rejected],
                    seen_qids=[q.qid for q in first])
    assert not {q.qid for q in first} & {q.qid for q in more}


def test_scripted_phrasings_vary(docs: list[Document]) -> None:
    graph = LinkGraph(docs)
    composer = ScriptedComposer(graph)
    plans = Planner(graph, random.Random(0)).plans(60, set())
    texts = [composer.compose(p) for p in plans]
    endings = {" ".join(t.split()[-3:]) for t in texts}
    openings = {" ".join(t.split()[:2]) for t in texts}
    assert len(endings) >= 10 and len(openings) >= 15


def test_scripted_chain_hides_intermediates(docs: list[Document]) -> None:
    graph = LinkGraph(docs)
    path = ["mount-fendle", "ilse-varro", "quillon", "grey-needle"]
    hops = tuple(graph.hop(a, b) for a, b in itertools.pairwise(path))
    plan = QuestionPlan(qid="q", kind="chain", hops=hops, evidence=tuple(path),  # type: ignore[arg-type]
                        answer="Grey Needle", answer_aliases=(), answer_doc="grey-needle", seed=0)
    composer = ScriptedComposer(graph)
    for seed in range(8):
        text = composer.compose(QuestionPlan(**{**{f: getattr(plan, f) for f in plan.__slots__},
                                                "seed": seed}))
        for name in ("Ilse Varro", "Quillon", "Grey Needle", "1847", "1815"):
            assert name not in text
        assert "1840s" in text and "cartographer" in text and "lighthouse" in text


def test_parse_question_json() -> None:
    assert parse_question_json('{"question": "Which port?", "answer": "Quillon"}') == (
        "Which port?", "Quillon")
    fenced = '```json\n{"question": " Which  year? ", "answer": 1823}\n```'
    assert parse_question_json(fenced) == ("Which year?", "1823")
    assert parse_question_json('Sure! {"question": "Q?", "answer": "A"} Hope it helps.')[1] == "A"
    for bad, why in [("{not json", "not JSON"), ("[1, 2]", "JSON list"),
                     ('{"question": "Q?"}', "lacks answer"), ('{"question": "", "answer": "A"}',
                                                              "empty or non-string question")]:
        with pytest.raises(QuestionParseError, match=why) as info:
            parse_question_json(bad)
        assert info.value.raw == bad


def test_prompts_render(docs: list[Document]) -> None:
    graph = LinkGraph(docs)
    planner = Planner(graph, random.Random(0))
    by_kind = {}
    for _ in range(60):
        for kind in ("chain", "comparison", "intersection"):
            plan = planner.plan(kind)
            if plan is not None:
                by_kind.setdefault(kind, plan)
    assert set(by_kind) == {"chain", "comparison", "intersection"}
    for plan in by_kind.values():
        text = render_prompt(plan, graph.docs)
        assert plan.answer in text and "{" not in text.replace('{"question"', "")
        assert plans_clues_in(plan, text)
    assert "Question: Why?" in prompts.CLOSED_BOOK_PROMPT.format(question="Why?")
    assert prompts.QUESTION_SYSTEM and QUESTION_SCHEMA["required"] == ["question", "answer"]


def plans_clues_in(plan: QuestionPlan, text: str) -> bool:
    clues = [h.clue for h in plan.hops] + [f.sentence for f in plan.compared]
    return all(c in text for c in clues)


def answer_from_prompt(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    m = re.search(r"^Answer: (.+)$", user, re.MULTILINE) or re.search(r"Answer: (.+)\n", user)
    assert m, user
    return m.group(1).strip()


def run_model(docs: list[Document], searcher: Searcher, server: OpenAITestServer, n: int,
              **config: Any) -> list:
    async def go() -> list:
        async with OpenAIChatModel([server.base_url], "test-model", max_retries=0) as model:
            return await generate_questions(
                docs, searcher, config=QuestionConfig(shortcut_rank=0, **config),
                rng=random.Random(0), n=n, teacher=model)
    return asyncio.run(go())


def test_model_composer_against_a_real_server(
    docs: list[Document], searcher: Searcher, openai_server: OpenAITestServer
) -> None:
    def handler(request: dict[str, Any]) -> Reply:
        answer = answer_from_prompt(request)
        return Reply.json({"question": f"Which entity, reached through several documents, "
                                       f"is meant here (variant {len(answer)})?",
                           "answer": answer})

    openai_server.set_handler(handler)
    questions = run_model(docs, searcher, openai_server, n=3, near_duplicate=1.0)
    assert [q for q in questions if not q.rejected]
    for q in questions:
        assert q.composer == "openai:test-model"
        assert q.answer_doc in q.evidence
    body = openai_server.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == QUESTION_SCHEMA
    assert body["messages"][0]["content"] == prompts.QUESTION_SYSTEM


def test_model_failures_become_rejected_questions(
    docs: list[Document], searcher: Searcher, openai_server: OpenAITestServer
) -> None:
    replies = iter([Reply.text('{"question": "Which port city is it?", "answer": '),
                    Reply.json({"question": "Which lost city is meant by all this?",
                                "answer": "Atlantis"})])
    openai_server.set_handler(lambda request: next(replies, Reply.text("not json at all")))
    questions = run_model(docs, searcher, openai_server, n=1, concurrency=1,
                          attempts_per_question=3)
    assert len(questions) == 3 and all(q.rejected for q in questions)
    first, second, third = questions
    assert first.rejected.startswith("parse_error(") and first.raw.endswith('"answer": ')
    assert second.rejected == "unsupported_answer" and second.answer == "Atlantis"
    assert third.rejected.startswith("parse_error(") and third.raw == "not json at all"


def test_closed_book_check(
    docs: list[Document], searcher: Searcher, openai_server: OpenAITestServer
) -> None:
    def handler(request: dict[str, Any]) -> Reply:
        user = request["messages"][-1]["content"]
        if user.startswith("Answer this question from memory"):
            return Reply.text(" or ".join(planned))  # the teacher knows them all by heart
        planned.append(answer_from_prompt(request))
        return Reply.json({"question": "Which entity, found through several documents, is "
                                       "meant by this puzzle?", "answer": planned[-1]})

    planned: list[str] = []
    openai_server.set_handler(handler)
    questions = run_model(docs, searcher, openai_server, n=1, concurrency=1, closed_book=True,
                          attempts_per_question=2)
    assert questions and all(q.rejected == "closed_book" for q in questions)
    assert all(q.checks.closed_book is True for q in questions)


def make_build(root: Path, docs: list[Document]) -> BuildDir:
    from hopforge.corpus.store import write_corpus

    build = BuildDir.at(root)
    write_corpus(build, docs)
    return build


def part_files(build: BuildDir) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(build.questions.glob("part-*"))}


def test_runner_resumes_after_a_kill(tmp_path: Path, docs: list[Document]) -> None:
    from hopforge.flows.run_questions import run_questions_build

    config = QuestionConfig(n=9, part_size=3, shortcut_rank=1, seed=5)
    whole = make_build(tmp_path / "whole", docs)
    report = run_questions_build(whole, config)
    assert report["accepted"] == 9 and report["run"]["parts_written"] == 3
    assert set(part_files(whole)) == {f"part-0000{i}.{s}" for i in range(3)
                                      for s in ("jsonl", "done")}

    killed = make_build(tmp_path / "killed", docs)
    run_questions_build(killed, config, stop_after_parts=1)  # stopped after its first part
    (killed.questions / "part-00001.jsonl").write_text('{"half": "a part cut short"')
    (killed.questions / ".part-00001.jsonl.tmp-999").write_text("debris of a kill")
    again = run_questions_build(killed, config)
    assert again["run"]["parts_already_done"] == 1 and again["run"]["parts_written"] == 2
    assert part_files(killed) == part_files(whole)

    rows = [json.loads(line) for p in sorted(whole.questions.glob("part-*.jsonl"))
            for line in p.read_text().splitlines()]
    assert len({r["qid"] for r in rows}) == len(rows), "no question is written twice"
    saved = json.loads((whole.reports / "questions.json").read_text())
    assert saved["accepted"] == 9 and saved["attempted"] == len(rows)
    assert set(saved) >= {"acceptance_rate", "rejection_reasons", "hops_accepted",
                          "shortcut_rank_all", "diversity_accepted"}

    more = run_questions_build(whole, QuestionConfig(n=12, part_size=3, shortcut_rank=1, seed=5))
    assert more["accepted"] >= 11 and more["run"]["parts_already_done"] == 3
    with pytest.raises(Exception, match="other settings"):
        run_questions_build(whole, QuestionConfig(n=12, part_size=3, shortcut_rank=1, seed=6))
    fresh = run_questions_build(whole, QuestionConfig(n=3, part_size=3, seed=6), force=True)
    assert fresh["accepted"] == 3 and fresh["run"]["parts_already_done"] == 0


def test_cli_questions(tmp_path: Path, docs: list[Document], capsys: Any) -> None:
    from hopforge.flows.cli import main

    build = make_build(tmp_path / "b", docs)
    assert main(["questions", str(build.root), "-n", "4", "--hops", "2-3",
                 "--kinds", "chain,intersection", "--seed", "3", "--shortcut-rank", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"4 accepted of \d+ tried", out)
    rows = [json.loads(line) for p in build.questions.glob("part-*.jsonl")
            for line in p.read_text().splitlines()]
    assert {r["kind"] for r in rows} <= {"chain", "intersection"}
    assert all(2 <= len(r["hops"]) <= 3 for r in rows if r["kind"] == "chain")
    with pytest.raises(SystemExit):
        main(["questions", str(build.root), "--hops", "3-9"])
    assert main(["questions", str(tmp_path / "nothing"), "-n", "2"]) == 2
    assert "hopforge ingest" in capsys.readouterr().err


def test_cli_with_a_model_teacher(
    tmp_path: Path, docs: list[Document], openai_server: OpenAITestServer, capsys: Any
) -> None:
    from hopforge.flows.cli import main

    def handler(request: dict[str, Any]) -> Reply:
        answer = answer_from_prompt(request)
        return Reply.json({"question": f"Which one, found by reading {len(answer)} clues, is "
                                       "meant by this riddle?", "answer": answer})

    openai_server.set_handler(handler)
    build = make_build(tmp_path / "b", docs)
    assert main(["questions", str(build.root), "-n", "2", "--teacher", "openai",
                 "--teacher-url", openai_server.base_url, "--teacher-model", "test-model",
                 "--shortcut-rank", "0", "--teacher-retries", "0"]) == 0
    rows = [json.loads(line) for p in build.questions.glob("part-*.jsonl")
            for line in p.read_text().splitlines()]
    assert rows and {r["composer"] for r in rows} == {"openai:test-model"}
    assert "2 accepted" in capsys.readouterr().out


@pytest.mark.slow
def test_jargon_file_questions(shared_data: Path) -> None:
    from hopforge.corpus.ingest import ingest_paths

    docs = ingest_paths([shared_data / "dictd" / "jargon.index"]).documents
    searcher = Searcher.from_documents(docs, dense=False)
    questions = asyncio.run(generate_questions(docs, searcher, config=QuestionConfig(),
                                               rng=random.Random(0), n=30))
    accepted = [q for q in questions if not q.rejected]
    assert len(accepted) == 30 and len(accepted) / len(questions) > 0.4
    graph = LinkGraph(docs)
    for q in accepted:
        assert q.checks.passed
        assert q.n_hops >= 2 or (q.kind == "comparison" and len(q.evidence) == 2)
        for hop in q.hops:
            assert hop.to_doc in graph.out[hop.from_doc]
        for doc_id in q.evidence[1:] if q.kind == "chain" else q.evidence:
            assert not contains_name(q.question, graph.docs[doc_id].title)
