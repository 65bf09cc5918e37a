"""`make check-teacher`: a small whole build against a real model server, and one table of it.

Opt-in, not run in CI. Give a running OpenAI-compatible server with TEACHER_URL and
TEACHER_MODEL (or --url/--model), or start vLLM from a model folder with --serve DIR. The build
(tiny test corpus, model-composed questions, model trajectories, the model as judge in score,
then filter and export) lives in OUT/build; running the check again continues it, so a run stopped
by a dead server goes on where it stopped once the server is back (--fresh starts over).
Every request and answer is recorded in OUT/requests.jsonl.

A small model may compose no question that passes the checks. Then the model still solves
questions, from the scripted composer, in OUT/solve (trajectories, model judge, filter,
export, stage by stage), and the table says which composer the solved questions came from.

    TEACHER_URL=http://127.0.0.1:8000/v1 TEACHER_MODEL=Qwen/Qwen2.5-7B-Instruct make check-teacher
    make check-teacher ARGS="--serve /models/qwen --questions 2 --max-turns 8"
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from teacher_table import print_table, summarize

HOPFORGE = ROOT / ".venv" / "bin" / "hopforge"
TINY = ROOT / "tests" / "data" / "tiny_corpus.jsonl"
BUILD_FILE = """\
[build]
name = "check-teacher"
seed = 0

[corpus]
sources = [{corpus!r}]

[teacher]
kind = "openai"
urls = [{url!r}]
model = {model!r}
concurrency = {concurrency}
read_timeout = {timeout}
max_retries = 2
stream = {stream}
reasoning = {reasoning}

[questions]
n = {questions}
part_size = {questions}
# the tiny corpus is too small to blur clue phrases or to hide answers from a top-5 search: a
# plumbing check; pass --corpus builtin:jargon for questions the default checks would keep
min_df = {min_df}
shortcut_rank = {shortcut_rank}
attempts_per_question = {attempts}
concurrency = {concurrency}
max_tokens = 400

[trajectories]
samples = {samples}
max_turns = {max_turns}
concurrency = {concurrency}
context_tokens = {context}
max_tokens = 384
checkpoint_every = 0
call_format = {call_format!r}
part_questions = 1

[score]
judge_urls = [{url!r}]
judge_model = {model!r}
judge_concurrency = {concurrency}
"""


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="make check-teacher", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("TEACHER_URL", ""), help="env TEACHER_URL")
    p.add_argument("--model", default=os.environ.get("TEACHER_MODEL", ""),
                   help="env TEACHER_MODEL (with --serve: the served name, default teacher)")
    p.add_argument("--serve", metavar="DIR", help="start vLLM on this model folder, stop it after")
    p.add_argument("--port", type=int, default=8765, help="port for --serve (default 8765)")
    p.add_argument("--vllm-python", default=os.environ.get("VLLM_PYTHON", "python3"),
                   help="the Python of vLLM's own venv (env VLLM_PYTHON)")
    p.add_argument("--no-tool-parser", action="store_true",
                   help="--serve without --enable-auto-tool-choice (to see that failure)")
    p.add_argument("--max-model-len", type=int, default=8192, help="for --serve (default 8192)")
    p.add_argument("--out", type=Path, default=ROOT / "builds" / "check-teacher")
    p.add_argument("--fresh", action="store_true", help="delete --out first")
    p.add_argument("--corpus", default=str(TINY), help="default: the tiny test corpus")
    p.add_argument("--questions", type=int, default=2, help="accepted questions wanted")
    p.add_argument("--attempts", type=int, default=4, help="attempts per wanted question")
    p.add_argument("--solve-questions", type=int, default=0,
                   help="scripted questions to solve when the model's are all rejected "
                   "(default: --questions)")
    p.add_argument("--samples", type=int, default=1)
    p.add_argument("--max-turns", type=int, default=10)
    p.add_argument("--context", type=int, default=16384, help="configured context tokens")
    p.add_argument("--call-format", choices=("native", "text"), default="native")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600.0, help="read timeout (s)")
    p.add_argument("--no-stream", action="store_true", help="whole answers instead of streams")
    p.add_argument("--scripted-questions", action="store_true",
                   help="skip the model composer: the model solves scripted-composer questions "
                   "(a slow CPU model extracts facts for minutes per document)")
    p.add_argument("--reasoning", action="store_true",
                   help="a reasoning teacher ([teacher] reasoning = true); with --serve, vLLM "
                   "splits its thinking off with --reasoning-parser, under --chat-template")
    p.add_argument("--reasoning-parser", default="olmo3",
                   help="for --serve --reasoning (default olmo3: <think> tags written as text)")
    p.add_argument("--chat-template", default=str(ROOT / "scripts" / "think_template.jinja"),
                   help="for --serve --reasoning (default: Qwen2.5's template made to think)")
    return p.parse_args(argv)


def _serve(args: argparse.Namespace, log: Path) -> subprocess.Popen[bytes]:
    cmd = [args.vllm_python, "-m", "vllm.entrypoints.openai.api_server", "--model", args.serve,
           "--served-model-name", args.model, "--host", "127.0.0.1", "--port", str(args.port),
           "--max-model-len", str(args.max_model_len),
           # one prefill chunk per prompt: with a chunked prefill, vLLM's CPU build rewinds the
           # per-request sampler (hopforge sends a seed) with a CUDA-only call and the engine dies
           # ("CPU Generator does not use offset")
           "--max-num-batched-tokens", str(args.max_model_len),
           *os.environ.get("VLLM_ARGS", "").split()]
    if not args.no_tool_parser:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    if args.reasoning:  # --chat-template "" keeps the model's own (a reasoning model's)
        cmd += ["--reasoning-parser", args.reasoning_parser]
        cmd += ["--chat-template", args.chat_template] if args.chat_template else []
    print(f"starting vLLM: {' '.join(cmd)} (log: {log})", flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + float(os.environ.get("START_TIMEOUT", "900"))
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"vLLM exited with {server.returncode}; see {log}")
        try:
            urllib.request.urlopen(f"{args.url}/models", timeout=5).close()
            return server
        except OSError:
            time.sleep(5)
    server.terminate()
    sys.exit(f"vLLM did not answer on {args.url} within START_TIMEOUT; see {log}")


def _questions(build: Path) -> tuple[int, int]:
    """Questions the build attempted and accepted."""
    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.parts import read_parts

    questions = BuildDir.at(build).questions
    rows = list(read_parts(questions)) if questions.is_dir() else []
    return len(rows), sum(1 for r in rows if not r["rejected"])


def _solve_scripted(args: argparse.Namespace, env: dict[str, str]) -> int:
    """The model solves scripted-composer questions in OUT/solve; the first failing status."""
    solve = str(args.out / "solve")
    teacher = ["--teacher-url", args.url, "--teacher-model", args.model,
               "--concurrency", str(args.concurrency), "--teacher-timeout", str(args.timeout),
               *(["--no-stream"] if args.no_stream else []),
               *(["--reasoning"] if args.reasoning else [])]
    steps = [] if (args.out / "solve" / "index").is_dir() else [
        ["ingest", args.corpus, "--out", solve],
        ["index", solve, "--no-progress"],
    ]
    steps += [
        ["questions", solve, "-n", str(args.solve_questions or args.questions),
         "--teacher", "scripted",  # the tiny corpus cannot hide answers from a top-5 search
         *(["--shortcut-rank", "1"] if Path(args.corpus) == TINY else [])],
        ["trajectories", solve, *teacher, "--samples", str(args.samples),
         "--max-turns", str(args.max_turns), "--context-tokens", str(args.context),
         "--max-tokens", "384", "--checkpoint-every", "0", "--call-format", args.call_format,
         "--part-questions", "1"],
        ["score", solve, "--judge-url", args.url, "--judge-model", args.model],
        ["filter", solve],
        ["export", solve],
    ]
    for step in steps:
        print(f"running: hopforge {' '.join(step)}", flush=True)
        status = subprocess.run([str(HOPFORGE), *step], env=env, check=False).returncode
        if status:
            return status
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the check; the exit status is the build's."""
    args = _args(argv)
    if args.serve:
        args.model = args.model or "teacher"
        args.url = f"http://127.0.0.1:{args.port}/v1"
    if not (args.url and args.model):
        sys.exit("check-teacher: set TEACHER_URL and TEACHER_MODEL (a running OpenAI-compatible "
                 "server), or pass --serve DIR to start vLLM from a model folder")
    if not HOPFORGE.is_file():
        sys.exit(f"check-teacher: no {HOPFORGE}; run `make setup` first")
    if args.fresh and args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    build_file = args.out / "check.toml"
    build_dir = args.out / "build"
    build_file.write_text(BUILD_FILE.format(
        corpus=str(Path(args.corpus).resolve()) if ":" not in args.corpus else args.corpus,
        min_df=1 if Path(args.corpus) == TINY else 20,
        shortcut_rank=1 if Path(args.corpus) == TINY else 5,
        url=args.url, model=args.model, concurrency=args.concurrency, timeout=args.timeout,
        stream=str(not args.no_stream).lower(), reasoning=str(args.reasoning).lower(),
        questions=args.questions,
        attempts=args.attempts, samples=args.samples, max_turns=args.max_turns,
        context=args.context, call_format=args.call_format))
    server = _serve(args, args.out / "vllm.log") if args.serve else None
    record = args.out / "requests.jsonl"
    env = {**os.environ, "HOPFORGE_TEACHER_RECORD": str(record), "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    try:
        if args.scripted_questions:
            status = _solve_scripted(args, env)
            solved_from = "scripted composer (--scripted-questions)"
        else:
            cmd = [str(HOPFORGE), "build", str(build_file), "--out", str(build_dir), "--no-prefect"]
            print(f"running: {' '.join(cmd)}", flush=True)
            status = subprocess.run(cmd, env=env, check=False).returncode
            solved_from = "model composer"
        attempted, accepted = _questions(build_dir)  # of the model composer
        if attempted and not accepted and not args.scripted_questions:
            print("the model composed no question that passed the checks: it solves questions "
                  f"of the scripted composer in {args.out / 'solve'}", flush=True)
            status = _solve_scripted(args, env)
            solved_from = "scripted composer (the model's were all rejected)"
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
    wall = time.perf_counter() - started
    solve = args.out / "solve" if solved_from.startswith("scripted") else build_dir
    summary = summarize(solve if args.scripted_questions else build_dir, record, wall_s=wall,
                        solved=solve)
    summary["solved_questions_from"] = solved_from
    (args.out / "check-teacher.json").write_text(json.dumps(summary, indent=1))
    print_table(summary, title=f"check-teacher: {args.model} at {args.url}")
    if status:
        print(f"\nthe build stopped with status {status} (see its message above); run the same "
              "command again to continue", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
