"""Trim a `make check-teacher` run to the replay data the tests read (tests/data/teacher_replay/).

    .venv/bin/python scripts/trim_replay.py builds/check-teacher [--dest tests/data/teacher_replay]

Keeps, per trajectory of the run, the model's answers in order (the last attempt of each, when
a run was stopped and continued), the question rows, and what the run made of the answers.
Request bodies are dropped: the replay matches a conversation by its question.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts
from hopforge.synth.teacher.recording import read_recording

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _answer(payload: dict[str, Any]) -> dict[str, Any]:
    choice = payload["choices"][0]
    usage = payload.get("usage") or {}
    return {
        "message": choice["message"],
        "finish_reason": choice.get("finish_reason", "stop"),
        "usage": {k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens")},
    }


def main() -> None:
    """Write the questions, answers, trajectories and trajectory settings of a check build."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out", type=Path, help="the check-teacher build directory")
    p.add_argument("--dest", type=Path, default=ROOT / "tests" / "data" / "teacher_replay")
    args = p.parse_args()
    solved = next(d for d in (args.out / "solve", args.out / "build", args.out)
                  if (d / "trajectories").is_dir())
    build = BuildDir.at(solved)
    trajectories = list(read_parts(build.trajectories))
    qids = {t["qid"] for t in trajectories}
    questions = [q for q in read_parts(build.questions) if q["qid"] in qids]
    systems = {t["system_prompt"] for t in trajectories}
    texts = {q["qid"]: q["question"] for q in questions}
    answers: dict[str, list[dict[str, Any]]] = {}
    for row in read_recording(args.out / "requests.jsonl"):
        messages = row["request"].get("messages") or []
        if row.get("status") != 200 or len(messages) < 2 or messages[0]["content"] not in systems:
            continue
        qid = next((q for q, text in texts.items() if text in messages[1]["content"]), None)
        if qid is None:
            continue
        if len(messages) == 2:  # a trajectory (re)starts: keep only its last attempt
            answers[qid] = []
        answers.setdefault(qid, []).append(_answer(row["response"]))
    conversations = [{"qid": qid, "question": texts[qid], "answers": answers.get(qid, [])}
                     for qid in texts]
    expected = [
        {
            "tid": t["tid"], "qid": t["qid"], "termination": t["termination"],
            "final_answer": t["final_answer"],
            "turns": [{k: turn[k] for k in ("call_format", "call", "schema_valid", "args_valid",
                                            "repeat_of", "error", "reasoning") if k in turn}
                      for turn in t["turns"]],
        }
        for t in trajectories
    ]
    args.dest.mkdir(parents=True, exist_ok=True)
    _write(args.dest / "questions.jsonl", questions)
    _write(args.dest / "conversations.jsonl", conversations)
    _write(args.dest / "trajectories.jsonl", expected)
    settings = next(p for p in (args.out / "check.toml", args.out / "build.toml") if p.is_file())
    toml = tomllib.loads(settings.read_text("utf-8"))
    table = dict(toml.get("trajectories", {}))
    if toml.get("teacher", {}).get("reasoning"):  # [teacher] reasoning sets the agent's prompt
        table["reasoning"] = True
    _write(args.dest / "config.jsonl", [{k: v for k, v in table.items() if not isinstance(v, dict)}])
    size = sum(f.stat().st_size for f in args.dest.iterdir())
    print(f"{len(conversations)} conversations, {sum(len(a) for a in answers.values())} answers, "
          f"{len(expected)} trajectories: {size / 1024:.0f} KB in {args.dest}")


if __name__ == "__main__":
    main()
