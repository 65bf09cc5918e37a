"""Export throughput on a synthetic build (tests/helpers/export_data.py).

Rows: writing the SFT rows as JSONL and as Parquet shards against Hugging Face `datasets`
writing the same rows (`Dataset.from_list(...).to_json / .to_parquet`) in the same process;
JSON Schema validation of every row; and the whole `export_build` (all formats, card and plots).
`ratio` is the reference's time over ours (above 1: ours is faster). The reference needs
`on_mixed_types="use_json"`: an invalid call's arguments (a string where the schema wants an
integer) otherwise stop `Dataset.from_list`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hopforge.corpus.tools import default_schemas
from hopforge.export.layouts.registry import schemas_for
from hopforge.export.records import ExportConfig
from hopforge.export.schemas import RecordValidator
from hopforge.export.selection import rows, select
from hopforge.export.shards import write_shards
from hopforge.flows.stages.export import export_build, read_inputs

from tests.helpers.export_data import make_build


def _timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per measured step."""
    import datasets

    datasets.disable_progress_bars()
    questions = 60 if quick else 600
    tmp = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        build = make_build(tmp / "build", questions=questions)
        config = ExportConfig()
        tools = default_schemas()
        selection = select(read_inputs(build), config)
        settings = {
            "page_chars": 1200,
            "default_k": 5,
            "max_k": 20,
            "mode": "hybrid",
            "corpus_fingerprint": "",
        }
        sft = [
            r
            for _, _, r in rows(selection, "sft/hf", tools=tools, settings=settings, config=config)
        ]
        schema = schemas_for([t["function"]["name"] for t in tools])["sft/hf"]
        n_msgs = sum(len(r["messages"]) for r in sft)
        out: list[dict[str, Any]] = []

        def ours(parquet: bool) -> None:
            write_shards(
                tmp / "ours",
                "sft/hf",
                "train",
                sft,
                schema=schema,
                max_records=10_000,
                max_bytes=1 << 30,
                parquet=parquet,
            )

        t_ref_json = _timed(
            lambda: datasets.Dataset.from_list(sft, on_mixed_types="use_json").to_json(
                tmp / "ref.jsonl", lines=True
            )
        )
        t_ref_pq = _timed(
            lambda: datasets.Dataset.from_list(sft, on_mixed_types="use_json").to_parquet(
                tmp / "ref.parquet"
            )
        )
        for case, parquet, t_ref in (
            ("sft jsonl shards", False, t_ref_json),
            ("sft parquet shards", True, t_ref_pq),
        ):
            t = _timed(lambda p=parquet: ours(p))
            out.append(
                {
                    "case": case,
                    "records": len(sft),
                    "messages": n_msgs,
                    "hopforge_s": t,
                    "reference_s": t_ref,
                    "ratio": t_ref / t,
                    "reference": "datasets",
                }
            )
        validator = RecordValidator(schema)
        t = _timed(lambda: [validator.problem(r) for r in sft])
        out.append(
            {
                "case": "schema validation",
                "records": len(sft),
                "messages": n_msgs,
                "hopforge_s": t,
                "reference_s": float("nan"),
                "ratio": float("nan"),
                "reference": "-",
            }
        )
        t = _timed(lambda: export_build(build, config))
        total = sum(
            len(p.read_text(encoding="utf-8").splitlines()) for p in build.export.rglob("part-*")
        )
        out.append(
            {
                "case": "export_build (all kinds)",
                "records": total,
                "messages": n_msgs,
                "hopforge_s": t,
                "reference_s": float("nan"),
                "ratio": float("nan"),
                "reference": "-",
            }
        )
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
