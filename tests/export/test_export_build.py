"""`export_build` and `hopforge export` on a small hand-made build."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts, write_part
from hopforge.corpus.search import open_searcher
from hopforge.corpus.tools import TOOLS
from hopforge.export.manifest import verify_manifest
from hopforge.export.records import ExportConfig
from hopforge.export.shards import read_shard
from hopforge.flows.commands.cli import main
from hopforge.flows.stages.export import export_build
from hopforge.synth.records import Question, Trajectory

from tests.helpers.export_data import FINGERPRINT, make_build

KINDS = ("sft/openai", "sft/hf", "sft/trl", "rl/verl", "rl/plain", "preference", "sharegpt")


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _records(export: Path, kind: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for split in ("train", "validation"):
        out[split] = [
            r for p in sorted((export / kind / split).glob("part-*")) for r in read_shard(p)
        ]
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = make_build(tmp_path_factory.mktemp("export") / "build")
    export_build(build, ExportConfig(validation_fraction=0.2))
    return build.root


def test_layout_manifest_and_checksums(exported: Path) -> None:
    export = exported / "export"
    manifest = json.loads((export / "manifest.json").read_text())
    assert verify_manifest(export) == []
    shards = {s["path"] for s in manifest["shards"]}
    on_disk = {str(p.relative_to(export)) for p in export.rglob("part-*")}
    assert shards == on_disk and all(
        Path(p).parts[0] in ("sft", "rl", "preference", "sharegpt") for p in shards
    )
    assert manifest["schema_version"] == 1 and manifest["hopforge_version"]
    assert (
        manifest["config_hash"] == "cafe0123deadbeef"
        and manifest["corpus_fingerprint"] == FINGERPRINT
    )
    assert manifest["teachers"] == ["openai:tiny-teacher", "scripted"]
    assert set(manifest["counts"]) == set(KINDS)
    for kind in KINDS:
        records = _records(export, kind)
        assert {s: len(r) for s, r in records.items() if r} == manifest["counts"][kind]
    assert manifest["tools"] == {  # native calls: the teacher got the schemas in `tools`
        "source": "hopforge.corpus.tools",
        "names": [cls.name for cls in TOOLS],
    }
    assert manifest["stats"]["dropped_by_reason"] == {"style: templated": 2}


def test_verify_manifest_notices_a_changed_shard(tmp_path: Path) -> None:
    build = make_build(tmp_path / "b", questions=3)
    export_build(build, ExportConfig(formats=("rl",)))
    shard = build.export / "rl/plain/train/part-00000.jsonl"
    shard.write_bytes(shard.read_bytes().replace(b"q00", b"q99"))
    assert verify_manifest(build.export) == [
        "rl/plain/train/part-00000.jsonl: sha256 differs from the manifest"
    ]
    shard.unlink()
    assert verify_manifest(build.export) == ["rl/plain/train/part-00000.jsonl: missing"]


def test_counts_follow_filters_and_questions(exported: Path) -> None:
    export = exported / "export"
    sft = [r for rows in _records(export, "sft/hf").values() for r in rows]
    rl = [r for rows in _records(export, "rl/verl").values() for r in rows]
    # 26 trajectories of 13 accepted questions, 2 dropped by the filters; a trajectory's turns
    # are trained five at a time (the results its window's prompt shows verbatim)
    assert len({r["metadata"]["tid"] for r in sft}) == 24 and len(sft) > 24
    assert len(rl) == 13  # the rejected question is not exported
    for r in sft:
        before = ""
        for m in r["messages"]:
            if m["role"] == "assistant":
                assert not (m.get("weight") and before.startswith("[result of turn")), r["metadata"]
            else:
                before = m.get("content") or ""
    sharegpt = [r for rows in _records(export, "sharegpt").values() for r in rows]
    trl = [r for rows in _records(export, "sft/trl").values() for r in rows]
    assert {r["metadata"]["tid"] for r in sharegpt} == {r["metadata"]["tid"] for r in sft}
    trained = sum(m.get("weight", 0) for r in sft for m in r["messages"])
    assert len(sharegpt) == len(trl) >= trained > 0  # one row per trained turn
    flawed = [r for r in sft if any(m.get("weight") == 0 for m in r["messages"])]
    assert flawed and all(m.get("weight") in (None, 0, 1) for r in sft for m in r["messages"])


def test_no_chain_on_both_sides(exported: Path) -> None:
    export = exported / "export"
    for kind in KINDS:
        sides: dict[str, set[str]] = {}
        for split, rows in _records(export, kind).items():
            for r in rows:
                sides.setdefault(r["metadata"]["chain"], set()).add(split)
                assert r["metadata"]["split"] == split
        assert all(len(s) == 1 for s in sides.values()), kind
    rl = {r["qid"]: split for split, rows in _records(export, "rl/plain").items() for r in rows}
    assert rl["q000"] == rl["q012"]  # the two questions over one chain
    assert set(rl.values()) == {"train", "validation"}


def test_rerun_gives_the_same_files(exported: Path) -> None:
    before = _files(exported / "export")
    export_build(exported, ExportConfig(validation_fraction=0.2))
    assert _files(exported / "export") == before
    assert not (exported / ".export.tmp").exists() and not (exported / ".export.old").exists()


def test_card_plots_and_dataset_info(exported: Path) -> None:
    export = exported / "export"
    card = (export / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-sa-4.0\n")
    for section in (
        "## Contents",
        "## Loading",
        "## Statistics",
        "## How it was made",
        "## Licence",
    ):
        assert section in card
    for plot in ("hops", "turns", "terminations", "rewards"):
        assert (export / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"(plots/{plot}.png)" in card
    info = json.loads((export / "sharegpt" / "dataset_info.json").read_text())
    for entry in info.values():
        assert (export / "sharegpt" / entry["file_name"]).is_dir()
    assert json.loads((export / "tools.json").read_text())[0]["function"]["name"] == "search"
    assert json.loads((exported / "reports" / "export.json").read_text())["counts"]["sft/hf"]


def test_a_trajectory_with_nothing_to_train_gives_no_row(tmp_path: Path) -> None:
    build = make_build(tmp_path / "b", questions=4)
    empty = Trajectory(
        tid="q000-empty", qid="q000", teacher="scripted", sample=9, termination="error"
    )
    write_part(build.trajectories, 1, [empty.to_row()])
    from hopforge.filters.records import Decision

    write_part(build.filtered, 1, [Decision(tid=empty.tid, qid="q000", kept=True).to_row()])
    result = export_build(build, ExportConfig(formats=("sft", "sharegpt")))
    assert result.rejected == ()
    manifest = json.loads((build.export / "manifest.json").read_text())
    assert manifest["stats"]["dropped_by_reason"]["no-trained-turn"] == 1
    tids = {
        r["metadata"]["tid"] for rows in _records(build.export, "sft/hf").values() for r in rows
    }
    assert "q000-empty" not in tids and len(tids) == 9
    assert not (build.export / "rl").exists()


def test_decontamination_removes_and_counts(tmp_path: Path) -> None:
    build = make_build(tmp_path / "b", questions=6)
    qs = {
        r["qid"]: Question.from_row(r)
        for p in sorted(build.questions.glob("part-*.jsonl"))
        for r in map(json.loads, p.read_text().splitlines())
    }
    eval_file = tmp_path / "eval.jsonl"
    eval_file.write_text(
        json.dumps({"question": qs["q002"].question, "answer": "nothing alike"}) + "\n"
    )
    rc = main(
        [
            "export",
            str(build.root),
            "--decontaminate",
            str(eval_file),
            "--formats",
            "sft,rl,preference",
        ]
    )
    assert rc == 0
    manifest = json.loads((build.export / "manifest.json").read_text())
    assert manifest["decontamination"]["removed_questions"] == 1
    assert manifest["decontamination"]["questions"][0]["qid"] == "q002"
    for kind in ("sft/hf", "rl/plain", "preference"):
        ids = {r["metadata"]["qid"] for rows in _records(build.export, kind).values() for r in rows}
        assert "q002" not in ids and "q001" in ids


def test_cli_shards_zstd_parquet_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build = make_build(tmp_path / "b", questions=8, filtered=False)
    assert main(["export", str(build.root)]) == 2
    assert "--allow-unfiltered" in capsys.readouterr().err
    with pytest.raises(HopforgeError, match="run the filters stage"):
        export_build(build, ExportConfig())
    rc = main(
        [
            "export",
            str(build.root),
            "--allow-unfiltered",
            "--formats",
            "sft,rl",
            "--shard-records",
            "4",
            "--zstd",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "sft/hf: train" in out and "manifest:" in out
    names = sorted(p.name for p in (build.export / "sft/hf/train").iterdir())
    assert names[0] == "part-00000.jsonl.zst" and len(names) >= 4
    assert all(len(list(read_shard(p))) <= 4 for p in (build.export / "sft/hf/train").iterdir())
    assert not (build.export / "preference").exists()
    rc = main(
        [
            "export",
            str(build.root),
            "--allow-unfiltered",
            "--formats",
            "rl",
            "--parquet",
            "--shard-bytes",
            "4K",
        ]
    )
    assert rc == 0
    shards = json.loads((build.export / "manifest.json").read_text())["shards"]
    assert shards and all(s["path"].endswith(".parquet") for s in shards)
    assert verify_manifest(build.export) == []
    rows = [
        r for s in shards if s["kind"] == "rl/verl" for r in read_shard(build.export / s["path"])
    ]
    assert rows[0]["reward_model"]["style"] == "rule" and len(rows) == 9
    assert main(["export", str(build.root), "--formats", "sft,nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_missing_questions_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HopforgeError, match="questions stage"):
        export_build(tmp_path, ExportConfig())


def test_config_validation() -> None:
    with pytest.raises(ValueError, match=r"validation_fraction\n.*less than 1"):
        ExportConfig(validation_fraction=1.5)
    with pytest.raises(ValueError, match=r"shard_records\n.*greater than or equal to 1"):
        ExportConfig(shard_records=0)
    with pytest.raises(HopforgeError, match="choose one or more of"):
        ExportConfig(formats=("jsonl",))
    assert dataclasses.replace(ExportConfig(), formats=("rl",)).kinds == ("rl/verl", "rl/plain")


def test_trajectories_of_the_agent_export_cleanly(
    tmp_path: Path, agent_documents: list, agent_questions: list
) -> None:
    """The real chain: scripted teacher with faults, scores, filters, then the export."""
    from hopforge.corpus.store import corpus_fingerprint, write_corpus
    from hopforge.corpus.tools import ToolBox
    from hopforge.flows.stages.filters import filter_build, score_build
    from hopforge.flows.stages.trajectories import run_trajectories_build
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.stage import TrajectoryConfig

    build = BuildDir.at(tmp_path / "b")
    write_corpus(build, agent_documents)
    write_part(build.questions, 0, [q.to_row() for q in agent_questions])
    faults = FaultConfig.uniform(0.2, timeout_delay_s=0.0)
    run_trajectories_build(build, TrajectoryConfig(samples=2, faults=faults))
    score_build(build)
    filter_build(build)
    result = export_build(build, ExportConfig(validation_fraction=0.2))
    assert result.rejected == () and result.counts["rl/verl"] == {"train": 4, "validation": 1}
    assert verify_manifest(build.export) == []
    rows = [
        r for s in result.shards if s.kind == "sft/hf" for r in read_shard(build.export / s.path)
    ]
    kept = [d for d in read_parts(build.filtered) if d["kept"]]
    last: dict[str, list] = {}  # a trajectory's windows in order: its last one answers
    for row in rows:
        tools = [t["function"]["name"] for t in row["tools"]]
        calls = [m["tool_calls"][0]["function"] for m in row["messages"] if m.get("tool_calls")]
        assert {c["name"] for c in calls} <= set(tools)
        assert row["metadata"]["rewards"]["combined"] is not None
        last[row["metadata"]["tid"]] = calls
    assert set(last) == {d["tid"] for d in kept} and kept
    assert all(calls[-1]["name"] == "answer" for calls in last.values())
    verl = [
        r for s in result.shards if s.kind == "rl/verl" for r in read_shard(build.export / s.path)
    ]
    ran_with = ToolBox(open_searcher(build)).settings()  # the toolbox the stage built
    for row in verl:
        stated = dict(row["extra_info"]["tool_settings"])
        assert stated.pop("corpus_fingerprint") == corpus_fingerprint(build)
        assert stated == ran_with


def test_questions_without_trajectories_still_give_rl_rows(tmp_path: Path) -> None:
    build = make_build(tmp_path / "b", questions=4)
    for part in build.trajectories.iterdir():
        part.unlink()
    result = export_build(build, ExportConfig(formats=("rl", "sft")))
    assert result.counts["sft/hf"] == {} and sum(result.counts["rl/verl"].values()) == 5
    row = next(read_shard(build.export / "rl/verl/train/part-00000.parquet"))
    # the SFT rows' system prompt: the schemas come once, from the tool config's tools
    assert row["prompt"][0]["role"] == "system" and row["prompt"][0]["content"]
    assert '"name": "answer"' not in row["prompt"][0]["content"]
    import yaml

    config = yaml.safe_load((build.export / "rl/verl/tool_config.yaml").read_text())
    tools = json.loads((build.export / "tools.json").read_text())
    assert [t["config"]["schema"] for t in config["tools"]] == tools
    assert {t["class_name"] for t in config["tools"]} == {"hopforge.export.verl_tools.HopforgeTool"}
    assert config["tools"][0]["config"]["url"] == "http://127.0.0.1:8900"
