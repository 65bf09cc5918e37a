"""A per-stage command (`hopforge questions BUILD`, ...) on a build keeps the engine's
done-markers: with the build's settings it skips a stage the build finished, and the build
skips a stage the command finished; with other settings it runs as before and the build
runs the stage again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.flows.build.engine import prepare_build, run_stage
from hopforge.flows.build.markers import read_marker
from hopforge.flows.commands.cli import main
from hopforge.flows.config.build_file import load_config

# Only settings the commands' flags can say, so that flags can repeat them.
BUILD = """\
[build]
name = "cmd"
seed = 3

[corpus]
sources = ["builtin:jargon"]

[index]
dense = false

[questions]
n = 4
part_size = 2
"""
QUESTION_FLAGS = ["-n", "4", "--part-size", "2", "--seed", "3"]


@pytest.fixture
def indexed(tmp_path: Path) -> BuildDir:
    """A build directory with its corpus and index made by the engine."""
    path = tmp_path / "cmd.toml"
    path.write_text(BUILD, encoding="utf-8")
    build = prepare_build(load_config(path, out=tmp_path / "build"))
    for stage in ("ingest", "index"):
        assert run_stage(build.root, stage).status == "ran"
    return build


def _parts(build: BuildDir) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(build.questions.glob("part-*"))}


def test_the_command_skips_questions_the_build_made(indexed: BuildDir,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stage(indexed.root, "questions").status == "ran"
    made = _parts(indexed)
    assert made
    assert main(["questions", str(indexed.root), *QUESTION_FLAGS]) == 0
    out = capsys.readouterr().out
    assert "questions: done already with these settings" in out
    assert _parts(indexed) == made


def test_the_build_skips_questions_the_command_made(indexed: BuildDir,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["questions", str(indexed.root), *QUESTION_FLAGS]) == 0
    assert "accepted of" in capsys.readouterr().out  # the command's own summary, as before
    done = read_marker(indexed, "questions", "done")
    assert done is not None and done["stats"]["accepted"] >= 1
    made = _parts(indexed)
    assert run_stage(indexed.root, "questions").status == "skipped"
    assert _parts(indexed) == made
    report = json.loads((indexed.reports / "questions.json").read_text("utf-8"))
    assert done["stats"]["accepted"] == report["accepted"]


def test_other_flags_run_as_before_and_the_build_runs_the_stage_again(
        indexed: BuildDir, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stage(indexed.root, "questions").status == "ran"
    made = _parts(indexed)
    flags = [*QUESTION_FLAGS[:-1], "4", "--force"]  # another seed
    assert main(["questions", str(indexed.root), *flags]) == 0
    assert "accepted of" in capsys.readouterr().out
    assert read_marker(indexed, "questions", "done") is None
    assert run_stage(indexed.root, "questions").status == "ran"
    assert _parts(indexed) == made  # the build's settings make the build's questions again


def test_trajectories_command_and_build_share_the_marker(
        indexed: BuildDir, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stage(indexed.root, "questions").status == "ran"
    flags = ["--seed", "3"]  # [trajectories] is left at its defaults; the seed is the build's
    assert main(["trajectories", str(indexed.root), *flags]) == 0
    assert "trajectories in" in capsys.readouterr().out
    made = {p.name: p.read_bytes() for p in indexed.trajectories.glob("part-*")}
    assert made
    assert run_stage(indexed.root, "trajectories").status == "skipped"
    assert main(["trajectories", str(indexed.root), *flags]) == 0
    assert "trajectories: done already with these settings" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in indexed.trajectories.glob("part-*")} == made


def test_trajectories_command_reads_the_builds_settings_and_a_flag_overrides_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cmd.toml"
    path.write_text(BUILD + "\n[trajectories]\nsamples = 2\nmax_turns = 40\n", encoding="utf-8")
    build = prepare_build(load_config(path, out=tmp_path / "build"))
    for stage in ("ingest", "index", "questions"):
        assert run_stage(build.root, stage).status == "ran"
    accepted = json.loads((build.reports / "questions.json").read_text())["accepted"]
    assert main(["trajectories", str(build.root)]) == 0
    out = capsys.readouterr()
    assert f"{2 * accepted} trajectories in" in out.out  # the build's samples = 2, not 1
    assert "overrides" not in out.err
    assert read_marker(build, "trajectories", "done") is not None  # it ran as the build's stage

    assert main(["trajectories", str(build.root), "--samples", "1", "--force"]) == 0
    out = capsys.readouterr()
    assert "--samples overrides the build's samples = 2 with 1" in out.err
    assert f"{accepted} trajectories in" in out.out
    assert read_marker(build, "trajectories", "done") is None  # no longer the build's output


def test_every_stage_command_takes_force() -> None:
    from hopforge.flows.build.registry import STAGES
    from hopforge.flows.commands.cli import build_parser

    parser = build_parser()
    for stage in STAGES:
        argv = [stage, "--out", "B", "src"] if stage == "ingest" else [stage, "B"]
        assert parser.parse_args([*argv, "--force"]).force is True, stage


def test_a_build_whose_questions_were_all_rejected_says_so_at_the_next_stage(
        tmp_path: Path) -> None:
    """A corpus that gives no question stops the build with what happened and what to change,
    not with "run `hopforge trajectories` first"."""
    from hopforge.corpus.errors import HopforgeError
    from hopforge.corpus.parts import write_part
    from hopforge.flows.stages.filters import load_trajectories
    from hopforge.synth.records import Question

    build = BuildDir(tmp_path)
    build.questions.mkdir(parents=True)
    (build.trajectories).mkdir()
    write_part(build.questions, 0, [Question(qid=f"q{i}", question="?", answer="x",
                                             rejected="shortcut").to_row() for i in range(3)])
    with pytest.raises(HopforgeError, match="accepted none of its 3 drafts"):
        load_trajectories(build)
