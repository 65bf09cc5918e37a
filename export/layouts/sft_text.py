"""`sft/text`: the `sft/trl` rows rendered to text by the student's chat template.

TRL's SFTTrainer (and trainers that take text) train on `{prompt, completion}` strings as a
standard prompt-completion dataset: the loss covers the completion only. Each row is one trained
turn, as in `sft/trl`: `prompt` is the context the teacher had for it rendered by `[export]
tokenizer`'s chat template (tools included, with the generation prompt), `completion` the rest
of the rendering once the turn is added. As TRL does for conversational rows, the prompt is the
part the two renderings share, so a template that writes the generation prompt differently
before a call (DeepSeek-R1's) still gives the completion in full. Untrained turns stay
context only, so the rows train what the other layouts train; the text is only right for the
tokenizer that rendered it, so the format is not written by default (`--formats sft,text`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hopforge.corpus.errors import HopforgeError
from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.schemas import obj, turn_metadata
from hopforge.export.sft import context_only, window_metadata

if TYPE_CHECKING:
    from hopforge.export.selection import Selection

TEXT = {"type": "string", "minLength": 1}


class SftText(Layout):
    """One `{prompt, completion}` pair of strings per trained turn, rendered by the tokenizer."""

    name = "sft/text"
    format = "text"
    default = False
    needs_tokenizer = True
    card = """\
- `sft_text`: the `sft_trl` rows rendered by the chat template of `[export] tokenizer` (tools
  included): `prompt` and `completion` strings, TRL's standard prompt-completion layout, for
  trainers that take text (TRL trains the completion only). Right only for that tokenizer.
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        if not getattr(ctx.tokenizer, "chat_template", None):
            raise HopforgeError(
                f"[export] tokenizer = {ctx.config.tokenizer!r} has no chat template, and the "
                "text format renders each row with it: give the student's tokenizer (a folder "
                "with tokenizer_config.json or chat_template.jinja), or leave text out of formats"
            )
        tools = [dict(t) for t in ctx.tools] or None
        for ex in selection.examples:
            for k, window in enumerate(ex.turn_windows):
                meta = window_metadata(ex, k, window, count=len(ex.turn_windows))
                for turn, context, message in context_only(window):
                    prompt = ctx.tokenizer.apply_chat_template(
                        context, tools=tools, tokenize=False, add_generation_prompt=True)
                    whole = ctx.tokenizer.apply_chat_template(
                        [*context, message], tools=tools, tokenize=False)
                    shared = os.path.commonprefix([prompt, whole])
                    yield ex.split, f"{ex.trajectory.tid}#t{turn}", {
                        "prompt": shared,
                        "completion": whole[len(shared):],
                        "metadata": {**meta, "n_supervised": 1, "turn": turn},
                    }

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return obj({"prompt": TEXT, "completion": TEXT, "metadata": turn_metadata()})
