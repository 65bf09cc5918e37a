"""Row sizes in tokens without a tokenizer: an estimate meant to lie above the real count.

Characters / 4 undercounts what training rows hold: doc_ids and page numbers are digits, which
Qwen2.5's tokenizer splits one per token (Llama 3's in groups of up to three), and results are
full of brackets, quotes and punctuation that rarely merge. So the text is cut the way byte-level
BPE pre-tokenizers cut it and each piece is priced at what it can cost: a digit or a symbol one
token, a run of letters one token per `LETTERS_PER_TOKEN` ASCII letters (rounded up) plus one
per other letter, a line break or a run of spaces one token. Each message adds what chat
templates wrap it in, each tool call its tags, and the tool schemas the template's instructions.
`python -m bench tokens` measures the estimate against Qwen2.5's and Llama 3's tokenizers on
exported rows; set `[export] tokenizer` to count with the student's own tokenizer instead.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

LETTERS_PER_TOKEN = 4  # ASCII letters per token in a letter run (rounded up); see the bench
MESSAGE_TOKENS = 8  # role markers and separators a chat template puts around one message
CALL_TOKENS = 12  # tags and keys around one tool call (`<tool_call>{"name": ...}</tool_call>`)
TOOLS_TOKENS = 256  # the template's instructions around the tool schemas
_PIECE = re.compile(r"[^\W\d_]+|\d|\s+|.", re.DOTALL)

Counter = Callable[[Sequence[dict[str, Any]], Sequence[dict[str, Any]]], int]


def text_tokens(text: str) -> int:
    """Estimated tokens of a text, priced piece by piece (see the module docstring)."""
    n = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isspace():
            n += len(piece) > 1 or "\n" in piece  # a single space joins the next word
        elif first.isalpha():
            ascii_letters = sum(ch < "\x80" for ch in piece)
            n += math.ceil(ascii_letters / LETTERS_PER_TOKEN) + len(piece) - ascii_letters
        else:
            n += 1  # a digit, or a symbol: one token at most in every tokenizer we measured
    return n


def estimate_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
    """Estimated tokens of a row: its messages (content, reasoning, calls) and tool schemas."""
    return memo_estimate()(messages, tools)


def memo_estimate() -> Counter:
    """`estimate_tokens` for one trajectory's windows: each text and schema list priced once.

    Windows render the same messages many times (a long run's rows are cut by trying ever
    longer spans), so prices are kept by text, and the schema list by identity (the cache
    holds the object, so an id is never reused while it lives).
    """
    texts: dict[str, int] = {}
    schemas: dict[int, tuple[Any, int]] = {}

    def price(text: str) -> int:
        hit = texts.get(text)
        if hit is None:
            hit = texts[text] = text_tokens(text)
        return hit

    def count(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        total = 0
        if tools:
            hit = schemas.get(id(tools))
            if hit is None or hit[0] is not tools:
                hit = (tools, TOOLS_TOKENS + text_tokens(json.dumps(list(tools),
                                                                    ensure_ascii=False)))
                schemas[id(tools)] = hit
            total += hit[1]
        for m in messages:
            total += MESSAGE_TOKENS + price(m.get("content") or "")
            total += price(m.get("reasoning_content") or "")
            for call in m.get("tool_calls") or ():
                fn = call["function"]
                args = fn["arguments"]
                if not isinstance(args, str):
                    args = json.dumps(args, ensure_ascii=False)
                total += CALL_TOKENS + price(fn["name"]) + price(args)
        return total

    return count
