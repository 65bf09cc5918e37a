import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes, read_parts, write_part
from hopforge.corpus.store import write_corpus
from hopforge.flows.commands.cli import main
from hopforge.flows.stages.trajectories import run_trajectories_build
from hopforge.synth.records import Trajectory
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.stage import TrajectoryConfig

REPO = Path(__file__).resolve().parents[2]


def make_build(root: Path, documents: list, questions: list) -> BuildDir:
    build = BuildDir.at(root)
    write_corpus(build, documents)
    rejected = replace(questions[0], qid="qx", rejected="leakage: answer in question")
    rows = [q.to_row() for q in questions[:3]] + [rejected.to_row()]
    write_part(build.questions, 0, rows)
    write_part(build.questions, 1, [q.to_row() for q in questions[3:]])
    return build


def rows_without_timing(build: BuildDir) -> list[dict[str, Any]]:
    out = []
    for row in read_parts(build.trajectories):
        row["usage"]["seconds"] = 0
        for turn in row["turns"]:
            turn["latency_s"] = 0
        out.append(row)
    return out


CONFIG = TrajectoryConfig(samples=2, part_questions=2, concurrency=3,
                          faults=FaultConfig.uniform(0.2, timeout_delay_s=0.0))


def test_runner_writes_parts_report_and_skips_rejected(
    tmp_path: Path, agent_documents: list, agent_questions: list
) -> None:
    build = make_build(tmp_path / "b", agent_documents, agent_questions)
    seen: list[tuple[int, int]] = []
    report = run_trajectories_build(build, CONFIG, progress=lambda d, t: seen.append((d, t)))
    assert done_indexes(build.trajectories) == {0, 1, 2}
    rows = list(read_parts(build.trajectories))
    assert [r["tid"] for r in rows] == [f"q{i}-s{s}" for i in range(5) for s in range(2)]
    assert all(Trajectory.from_row(r).qid != "qx" for r in rows)
    assert seen[0] == (0, 10) and seen[-1] == (10, 10)
    assert report["trajectories"] == 10 and sum(report["terminations"].values()) == 10
    assert report["annotations"]["answer_matches"] >= 8
    assert report["turns"]["max"] >= report["turns"]["p50"] >= report["turns"]["min"] > 0
    assert sum(b["trajectories"] for b in report["turns"]["histogram"]) == 10
    assert set(report["faults"]) <= {f"{k}:{p}" for k in ("empty", "timeout", "format", "partial")
                                     for p in ("transient", "persistent")}
    on_disk = json.loads((build.reports / "trajectories.json").read_text())
    assert on_disk["terminations"] == report["terminations"] and on_disk["run"]["parts_written"] == 3
    before = (build.trajectories / "part-00001.jsonl").read_bytes()
    again = run_trajectories_build(build, CONFIG)
    assert again["run"]["parts_written"] == 0 and again["run"]["parts_already_done"] == 3
    assert (build.trajectories / "part-00001.jsonl").read_bytes() == before


@pytest.fixture(scope="module")
def whole(
    tmp_path_factory: pytest.TempPathFactory, agent_documents: list, agent_questions: list
) -> BuildDir:
    """The trajectories of a build run without interruption, for resumed ones to match."""
    build = make_build(tmp_path_factory.mktemp("whole"), agent_documents, agent_questions)
    run_trajectories_build(build, CONFIG)
    return build


def test_crash_after_some_trajectories_then_resume_equals_uninterrupted(
    tmp_path: Path, agent_documents: list, agent_questions: list, whole: BuildDir
) -> None:
    broken = make_build(tmp_path / "broken", agent_documents, agent_questions)

    def crash(done: int, total: int) -> None:
        if done >= 5:
            raise RuntimeError("injected crash")

    with pytest.raises(RuntimeError, match="injected crash"):
        run_trajectories_build(broken, CONFIG, progress=crash)
    journals = sorted(broken.trajectories.glob(".part-*.journal.jsonl"))
    kept = [line for j in journals for line in j.read_text().splitlines()]
    done_before = done_indexes(broken.trajectories)
    assert done_before and len(done_before) < 3
    with open(journals[0], "a") as fh:  # a line cut short by the crash is ignored
        fh.write('{"tid": "q4-s1", "turns": [')
    report = run_trajectories_build(broken, CONFIG)
    assert report["run"]["parts_already_done"] == len(done_before)
    assert report["run"]["trajectories_reused_from_journal"] == len(kept)
    assert rows_without_timing(broken) == rows_without_timing(whole)
    final = (broken.trajectories / "part-00002.jsonl").read_text() + (
        broken.trajectories / "part-00001.jsonl").read_text()
    assert all(line in final for line in kept)  # journaled trajectories were not run again
    assert not list(broken.trajectories.glob(".part-*"))


def test_a_fully_journaled_part_is_written_without_rerunning(
    tmp_path: Path, agent_documents: list, agent_questions: list, whole: BuildDir
) -> None:
    cut = make_build(tmp_path / "cut", agent_documents, agent_questions)
    cut.trajectories.mkdir(parents=True)
    part = (whole.trajectories / "part-00001.jsonl").read_text()
    (cut.trajectories / ".part-00001.journal.jsonl").write_text(part)  # killed before the rename
    seen: list[tuple[int, int]] = []
    report = run_trajectories_build(cut, CONFIG, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (4, 10) and len(seen) == 1 + 6
    assert report["run"]["trajectories_reused_from_journal"] == 4
    assert (cut.trajectories / "part-00001.jsonl").read_text() == part
    assert rows_without_timing(cut) == rows_without_timing(whole)


def test_sigkill_mid_run_then_resume(tmp_path: Path, agent_documents: list,
                                     agent_questions: list) -> None:
    args = ["trajectories", "--samples", "4", "--part-questions", "1", "--faults", "0.6",
            "--persistent-faults", "0", "--concurrency", "1"]
    killed = make_build(tmp_path / "killed", agent_documents, agent_questions)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hopforge.flows.commands.cli", *args, str(killed.root)],
            env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if (killed.trajectories / "part-00000.done").exists():
            break
        time.sleep(0.02)
    finished_early = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not finished_early, log.read_text()
    parts_before = done_indexes(killed.trajectories)
    assert 0 in parts_before and len(parts_before) < 5
    assert main([*args, str(killed.root)]) == 0
    whole = make_build(tmp_path / "whole", agent_documents, agent_questions)
    assert main([*args, "--concurrency", "8", str(whole.root)]) == 0
    assert rows_without_timing(killed) == rows_without_timing(whole)
    assert len({r["tid"] for r in rows_without_timing(killed)}) == 20


def test_other_settings_need_force(tmp_path: Path, agent_documents: list,
                                   agent_questions: list, capsys: Any) -> None:
    build = make_build(tmp_path / "b", agent_documents, agent_questions)
    assert main(["trajectories", "--samples", "1", str(build.root)]) == 0
    out = capsys.readouterr().out
    assert "5 trajectories" in out and "answer 5" in out
    with pytest.raises(HopforgeError, match="pass --force"):
        run_trajectories_build(build, TrajectoryConfig(samples=2))
    assert main(["trajectories", "--samples", "2", str(build.root)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["trajectories", "--samples", "2", "--force", str(build.root)]) == 0
    assert len(list(read_parts(build.trajectories))) == 10
    # speed settings do not change what is written, so they need no --force
    assert main(["trajectories", "--samples", "2", "--concurrency", "2", str(build.root)]) == 0


def test_missing_questions_is_a_clear_error(tmp_path: Path, capsys: Any) -> None:
    assert main(["trajectories", str(tmp_path / "nothing")]) == 2
    assert "run `hopforge questions" in capsys.readouterr().err


def test_help_lists_the_contract_flags(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["trajectories", "--help"])
    text = capsys.readouterr().out
    for flag in ("--teacher", "--teacher-url", "--teacher-model", "--samples", "--max-turns",
                 "--faults", "--concurrency"):
        assert flag in text
