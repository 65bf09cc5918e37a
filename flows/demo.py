"""The built-in demo build: the Jargon File shipped in the repository and the scripted teacher."""

from __future__ import annotations

from pathlib import Path

from hopforge.flows.config import BuildConfig, parse_config_text

DEMO_CONFIG_NAME = "builtin:demo"
DEFAULT_DEMO_OUT = "builds/demo"

DEMO_TOML = """\
# The built-in demo: the whole pipeline on a 2-core CPU in a few minutes, no model server.
[build]
name = "demo"
seed = 0

[corpus]
sources = ["builtin:jargon"]   # the Jargon File 4.4.7 (public domain), committed in corpus/data/

[teacher]
kind = "scripted"              # plays each sampled hop chain through the real search tools
"""


def demo_config(out: str | Path | None = None) -> BuildConfig:
    """The demo's validated config; the build goes to `out` (default builds/demo)."""
    return parse_config_text(DEMO_TOML, base_dir=Path.cwd(), default_name="demo",
                             out=out or DEFAULT_DEMO_OUT, env={}, origin="the demo config")
