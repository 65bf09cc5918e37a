"""`answer(text)`: the final answer; the call that ends a trajectory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopforge.corpus.tools.base import Box, Tool, ToolResult, ToolSettings, normalize_text


class Answer(Tool):
    """Echoes the answer back; the run stops there."""

    name = "answer"
    final = True
    typed = ("text",)
    description = ("Give the final answer to the question and stop. Use a short answer: a "
                   "name, a date, a number or a few words.")

    def properties(self, settings: ToolSettings) -> dict[str, Any]:
        """`text`, the answer."""
        return {"text": {"type": "string", "minLength": 1, "description": "The final answer."}}

    def run(self, box: Box, arguments: dict[str, Any]) -> ToolResult:
        """The final answer, echoed back."""
        return ToolResult(text=arguments["text"], ok=True)

    def key(self, arguments: Mapping[str, Any]) -> str:
        """Answers with the same words are the same answer."""
        return normalize_text(arguments.get("text"))
