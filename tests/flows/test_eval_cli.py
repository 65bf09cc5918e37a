"""`hopforge eval` end to end: the scripted teacher on a build, a model over HTTP, bad input."""

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_part
from hopforge.corpus.store import write_corpus
from hopforge.flows.commands.cli import main

from tests.helpers.eval_data import aggregation_question
from tests.helpers.openai_server import OpenAITestServer, Reply

RUN_KEYS = ("budget", "faults", "tasks", "success", "valid_call_rate", "recovery_rate", "onset",
            "terminations", "tokens", "seconds")
DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")


@pytest.fixture
def build(tmp_path: Path, agent_documents: list, agent_questions: list) -> Path:
    b = BuildDir.at(tmp_path / "build")
    write_corpus(b, agent_documents)
    rows = [q.to_row() for q in [*agent_questions, aggregation_question(agent_documents)]]
    write_part(b.questions, 0, rows)
    return b.root


def test_scripted_eval_writes_summary_report_plots_and_trajectories(
        build: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "eval"
    code = main(["eval", str(build), "--teacher", "scripted", "--budgets", "10,20",
                 "--faults", "none,heavy", "-n", "3", "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    runs = summary["runs"]
    assert [(r["budget"], r["faults"]) for r in runs] == [(10, "none"), (10, "heavy"),
                                                          (20, "none"), (20, "heavy")]
    for r in runs:
        assert all(k in r for k in RUN_KEYS) and r["tasks"] == 3
        assert set(r["onset"]) >= {"schema_error", "bad_arguments", "repeat",
                                   "forgotten_constraint"}
        assert sum(r["terminations"].values()) == 3
    assert runs[0]["success"] >= 2 / 3 and runs[0]["valid_call_rate"] == 1.0
    assert runs[1]["faults_injected"] > 0 and runs[1]["recovery_rate"] is not None
    ladder20 = summary["ladders"][1]
    assert ladder20["tasks"] == 3 and "the nearest below" in ladder20["note"]
    report = (out / "report.md").read_text()
    assert "| budget | faults | tasks | success |" in report and "nearest below" in report
    for png in ("success.png", "onset.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (out / "trajectories" / "budget-10_faults-heavy.jsonl").read_text().splitlines()
    assert len(rows) == 3 and {json.loads(r)["teacher"] for r in rows} == {"scripted"}
    assert (out / "handoffs.jsonl").is_file() and (out / "tasks.jsonl").is_file()
    assert "budget    10  faults none" in capsys.readouterr().out


def _reader(request: dict[str, Any]) -> Reply:
    """A stateless model: search the gallery, open the first hit, answer."""
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if not results:
        return Reply.tool_call("search", {"query": "Orvin Gallery founder"})
    if len(results) == 1:
        ids = DOC_ID.findall(results[0]["content"]) or ["orvin-gallery"]
        return Reply.tool_call("open", {"doc_id": ids[0]})
    return Reply.tool_call("answer", {"text": "Quillon"})


def test_model_eval_over_http_with_an_injection(build: Path, tmp_path: Path,
                                                agent_questions: list,
                                                openai_server: OpenAITestServer) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(agent_questions[2].to_row()) + "\n")
    openai_server.set_handler(_reader)
    base = ["eval", str(build), "--teacher", "openai", "--teacher-url", openai_server.base_url,
            "--teacher-model", "test-model", "--budgets", "10", "--faults", "none",
            "--tasks", str(tasks)]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    (run,) = json.loads((tmp_path / "a" / "summary.json").read_text())["runs"]
    assert run["success"] == 1.0 and run["tokens"] > 0 and run["terminations"]["answer"] == 1
    assert openai_server.requests[0]["model"] == "test-model"
    assert main([*base, "--inject", "repeat@2", "--out", str(tmp_path / "b")]) == 0
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    (run,) = summary["runs"]
    assert run["success"] == 0.0 and run["handoffs"] == 1 and run["onset"]["repeat"] == 2.0
    assert summary["eval"]["injections"] == ["repeat@2"]
    (handoff,) = [json.loads(x) for x in (tmp_path / "b" / "handoffs.jsonl").read_text()
                  .splitlines()]
    assert handoff["termination"] == "repetition" and handoff["calls"] >= 4


def test_a_rerun_reuses_the_cells_that_finished_before_the_server_died(
        build: Path, tmp_path: Path, agent_questions: list,
        openai_server: OpenAITestServer) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(agent_questions[2].to_row()) + "\n")
    calls = {"n": 0}

    def dies_in_the_second_cell(request: dict[str, Any]) -> Reply:
        calls["n"] += 1
        if calls["n"] > 3:  # the first cell took three calls; then the engine is dead
            return Reply.error(500)
        return _reader(request)

    openai_server.set_handler(dies_in_the_second_cell)
    out = tmp_path / "e"
    base = ["eval", str(build), "--teacher", "openai", "--teacher-url", openai_server.base_url,
            "--teacher-model", "test-model", "--teacher-retries", "0", "--budgets", "10",
            "--faults", "none,light", "--tasks", str(tasks), "--out", str(out)]
    assert main(base) == 2
    first = out / "trajectories" / "budget-10_faults-none.jsonl"
    assert first.is_file() and first.with_suffix(".cell.json").is_file()
    assert not (out / "trajectories" / "budget-10_faults-light.cell.json").exists()
    openai_server.set_handler(_reader)  # the server is back
    served = len(openai_server.requests)
    assert main(base) == 0
    runs = json.loads((out / "summary.json").read_text())["runs"]
    assert [(r["faults"], r["success"]) for r in runs] == [("none", 1.0), ("light", 1.0)]
    asked = openai_server.requests[served:]
    assert asked and len(asked) <= 6  # only the light cell ran again
    assert main([*base[:-2], "--seed", "1", "--out", str(out)]) == 0  # other settings: run anew
    assert len(openai_server.requests) > served + len(asked)


def test_a_model_server_that_is_down_stops_with_a_message(build: Path, tmp_path: Path,
                                                          capsys: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    code = main(["eval", str(build), "--teacher", "openai", "--teacher-url", dead,
                 "--teacher-model", "m", "--teacher-retries", "0", "--budgets", "10",
                 "--faults", "none", "-n", "1", "--out", str(tmp_path / "e")])
    assert code == 2 and "Could not reach" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "message"), [
    (["--faults", "none,medium"], "unknown fault mix 'medium': use one of none, light, heavy"),
    (["--budgets", "10,ten"], "'ten' is not a whole number of tool calls"),
    (["--inject", "forget"], "forget needs the call number it starts at"),
    (["--tasks", "missing.jsonl"], "no such file"),
])
def test_bad_options_name_the_problem_and_the_fix(build: Path, tmp_path: Path, capsys: Any,
                                                  extra: list, message: str) -> None:
    code = main(["eval", str(build), "--out", str(tmp_path / "e"), *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_a_build_without_questions_says_what_to_run(tmp_path: Path, agent_documents: list,
                                                    capsys: Any) -> None:
    b = BuildDir.at(tmp_path / "empty")
    write_corpus(b, agent_documents)
    assert main(["eval", str(b.root), "--out", str(tmp_path / "e")]) == 2
    assert "hopforge questions" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "x", "question": "?"}\n')
    assert main(["eval", str(b.root), "--tasks", str(bad), "--out", str(tmp_path / "e")]) == 2
    assert "bad.jsonl:1: the question has no answer" in capsys.readouterr().err
