#!/usr/bin/env bash
# Check the build dashboard in a real browser.
#
# Starts the Prefect server on 127.0.0.1 (analytics off, a fresh database in a temporary
# PREFECT_HOME), runs a small build of tests/data/tiny_corpus.jsonl with PREFECT_API_URL set,
# checks through the API that the flow run, a task run per stage and the stage artifacts are
# there, then takes headless Chromium screenshots of the runs page, the build's flow run and
# the artifacts pages. Installs Debian's chromium when it is missing (needs root and apt).
#
#   scripts/check_dashboard.sh [SHOT_DIR]      # screenshots go to SHOT_DIR (default
#                                              # builds/dashboard-check/screenshots)
# Environment: PORT (default 4200).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-4200}
WORK=builds/dashboard-check
SHOTS=${1:-$WORK/screenshots}
VENV=.venv/bin
export HF_HUB_OFFLINE=1 PREFECT_SERVER_ANALYTICS_ENABLED=false TOKENIZERS_PARALLELISM=false
export PREFECT_HOME
PREFECT_HOME=$(mktemp -d)

if ! command -v chromium >/dev/null 2>&1; then
    echo "installing chromium (Debian package)"
    apt-get install -y chromium >/dev/null
fi
rm -rf "$WORK" && mkdir -p "$WORK" "$SHOTS"

"$VENV/hopforge" dashboard --port "$PORT" > "$WORK/server.log" 2>&1 &
SERVER=$!
PROFILE=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$PREFECT_HOME" "$PROFILE"' EXIT
for _ in $(seq 1 120); do
    if grep -q "export PREFECT_API_URL" "$WORK/server.log"; then break; fi
    if ! kill -0 $SERVER 2>/dev/null; then cat "$WORK/server.log"; exit 1; fi
    sleep 1
done
export PREFECT_API_URL="http://127.0.0.1:$PORT/api"
echo "server up: $PREFECT_API_URL"

cat > "$WORK/check.toml" <<EOF
[build]
name = "dashboard-check"
out = "build"

[corpus]
sources = ["$PWD/tests/data/tiny_corpus.jsonl"]

[index]
dense = false

[filter]
dedup_questions = 0.0
EOF
"$VENV/hopforge" build "$WORK/check.toml" 2>&1 | tail -n 12

# The run, its task runs and artifacts, through the API.
read -r FLOW_RUN SUMMARY FILTER_REPORT TABLE < <("$VENV/python" - <<'EOF'
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter, ArtifactFilterKey, FlowRunFilter, FlowRunFilterId)

STAGES = {"ingest", "index", "questions", "trajectories", "score", "filter", "export"}
with get_client(sync_client=True) as client:
    runs = [r for r in client.read_flow_runs() if r.state_name == "Completed"]
    assert runs, "no completed flow run on the server"
    run = runs[0]
    tasks = client.read_task_runs(
        flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])))
    names = {t.name for t in tasks}
    assert STAGES <= names, f"task runs: {sorted(names)}"
    keys = {a.key for a in client.read_artifacts()}
    missing = {f"dashboard-check-{s}-report" for s in STAGES} - keys
    assert not missing, f"missing artifacts: {sorted(missing)}"

    def latest(key):
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))
        return found[-1].id

    print(run.id, latest("dashboard-check-summary"), latest("dashboard-check-filter-report"),
          latest("dashboard-check-questions-stats"))
EOF
)
echo "flow run $FLOW_RUN: every stage has a task run and artifacts"

shot() {  # shot NAME URL
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
        --user-data-dir="$PROFILE" --window-size=1400,900 --virtual-time-budget=15000 \
        --screenshot="$SHOTS/$1.png" "$2" >/dev/null 2>&1
    test -s "$SHOTS/$1.png" && echo "screenshot: $SHOTS/$1.png"
}
BASE="http://127.0.0.1:$PORT"
shot runs "$BASE/runs"
shot flow-run "$BASE/runs/flow-run/$FLOW_RUN"
shot artifacts "$BASE/artifacts"
shot artifact-timeline "$BASE/artifacts/key/dashboard-check-filter-report"
shot summary "$BASE/artifacts/artifact/$SUMMARY"
shot filter-report "$BASE/artifacts/artifact/$FILTER_REPORT"
shot questions-table "$BASE/artifacts/artifact/$TABLE"
echo "dashboard check passed"
