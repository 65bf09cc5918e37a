"""`sft/openai`: the SFT windows in OpenAI's fine-tuning layout (see hopforge.export.sft)."""

from __future__ import annotations

from typing import ClassVar

from hopforge.export.layouts.sft_hf import SftHf
from hopforge.export.sft import Flavour


class SftOpenAI(SftHf):
    """The `sft/hf` windows with `arguments` as JSON strings and `parallel_tool_calls: false`."""

    name = "sft/openai"
    flavour: ClassVar[Flavour] = "openai"
    arguments: ClassVar[str] = "string"
    view_every_row = True  # its windows are the whole run; the one-turn rows repeat it
    card = """\
- `sft_openai`: OpenAI fine-tuning layout: tool-call `arguments` as a JSON string, `weight` (0/1)
  on every assistant message, which OpenAI's trainer reads. One row per window: the context the
  teacher saw (old tool results elided, restarting from each checkpoint).
"""
