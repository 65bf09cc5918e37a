"""The built-in demo build: the Jargon File shipped in the repository and the scripted teacher."""

from __future__ import annotations

from pathlib import Path

from hopforge.flows.config.build_file import BuildConfig, parse_config_text

DEMO_CONFIG_NAME = "builtin:demo"
DEFAULT_DEMO_OUT = "builds/demo"

DEMO_TOML = """\
# The built-in demo: the whole pipeline on a 2-core CPU in a couple of minutes, no model server.
[build]
name = "demo"
seed = 0

[corpus]
sources = ["builtin:jargon"]   # the Jargon File 4.4.7 (public domain), committed in corpus/data/

[teacher]
kind = "scripted"              # plays each sampled hop chain through the real search tools

[index]
# Hybrid search, sized for a CPU: the 2,553 Jargon passages (median 96 word pieces with the
# title) embed in about 25 s with max_seq_length = 96 in bf16 (the dense side reads a passage's
# first 96 word pieces; BM25 reads it whole). On HotpotQA's 994 paragraphs 96 keeps recall@5 at
# 0.79 (128: 0.795, 256: 0.79; `python -m bench dense`).
dense = true
max_seq_length = 96

[questions]
n = 200                        # accepted questions: chains, comparisons and intersections
part_size = 50
# then a few long tasks: aggregations whose fewest tool calls lie in each range
ladder = [{ min_calls = 50, max_calls = 150, n = 3 }, { min_calls = 100, max_calls = 300, n = 2 }]
attempts_per_question = 30     # room for the ladder rungs, which draw from what the mix left

[trajectories]
samples = 4                    # four runs per question, so pair-wise scores have something to rank
part_questions = 25
max_turns = 400                # the ladder's tasks need up to 300 calls; the others end early
# Faulty tools now and then, to show recoveries in the data.
faults = { empty = 0.04, timeout = 0.02, format = 0.02, partial = 0.02, timeout_delay_s = 0.0 }

[filter]
# The scripted composer writes few comparison questions on this corpus; a kind or hop count
# with fewer than 40 trajectories does not cap the others (the default 5 would cut most chains).
balance_min_group = 40

[export]
dataset_name = "hopforge-jargon-demo"
"""


def demo_config(out: str | Path | None = None) -> BuildConfig:
    """The demo's validated config; the build goes to `out` (default builds/demo)."""
    return parse_config_text(DEMO_TOML, base_dir=Path.cwd(), default_name="demo",
                             out=out or DEFAULT_DEMO_OUT, env={}, origin="the demo config")
