"""`make check-teacher` stays runnable: its script imports, and its table reads a real build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_part
from hopforge.corpus.store import write_corpus
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.recording import Recorder
from hopforge.synth.trajectories.stage import TrajectoryConfig

from tests.helpers.openai_server import OpenAITestServer, Reply

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_the_check_script_starts_and_says_what_it_needs() -> None:
    script = str(SCRIPTS / "check_teacher.py")
    help_text = subprocess.run([sys.executable, script, "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "TEACHER_URL" in help_text and "--serve DIR" in help_text
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    missing = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env,
                             check=False)
    assert missing.returncode != 0 and "set TEACHER_URL and TEACHER_MODEL" in missing.stderr


def test_the_table_counts_what_the_build_and_the_recording_hold(
    tmp_path: Path, openai_server: OpenAITestServer, agent_documents: list, agent_questions: list
) -> None:
    sys.path.insert(0, str(SCRIPTS))
    from teacher_table import print_table, summarize

    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, agent_documents)
    write_part(build.questions, 0, [q.to_row() for q in agent_questions[:2]])
    openai_server.enqueue(
        Reply.text('{"name": "search", "arguments": {"query": "Orvin Gallery"}}'),
        Reply.text('{"name": "answer", "arguments": {"text": "Hesper Quaile"}}'),
        Reply.tool_call("answer", {"text": "Quillon"}),
    )
    record = tmp_path / "requests.jsonl"
    model = OpenAIChatModel(openai_server.base_url, "test-model", recorder=Recorder(record))
    config = TrajectoryConfig(checkpoint_every=0, concurrency=1, part_questions=1)
    run_trajectories_build(build, config, teacher=model)
    summary = summarize(build.root, record, wall_s=10.0)
    t, r = summary["trajectories"], summary["requests"]
    assert t["trajectories"] == 2 and t["terminations"] == {"answer": 2}
    assert t["calls_by_format"] == {"json": {"valid": 2, "turns": 2},
                                    "native": {"valid": 1, "turns": 1}}
    assert r["requests"] == 3 and r["streamed"] == 3 and r["tokens_out"] > 0
    assert r["prefix_reuse_mean"] is not None and 0 < r["prefix_reuse_mean"] < 1
    print_table(summary, title="check")
