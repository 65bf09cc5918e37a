"""The dataset card's "Training" section: settings under which TRL and verl train the rows as
intended, with the row lengths measured at export."""

from __future__ import annotations

from typing import Any

VERL_TEXT = """\
**verl** (tool agent loop, GRPO/PPO), in verl's environment with `pip install --no-deps
hopforge` (for the tool class; the reward file needs only the standard library):

```bash
hopforge serve-search BUILD --port 8900        # one per node; the tools call it over HTTP
python -m verl.trainer.main_ppo \\
  data.train_files=rl/verl/train/part-00000.parquet \\
  data.val_files=rl/verl/validation/part-00000.parquet \\
  data.return_raw_chat=True \\
  actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.multi_turn.enable=True \\
  actor_rollout_ref.rollout.multi_turn.format=hermes \\
  actor_rollout_ref.rollout.multi_turn.tool_config_path=rl/verl/tool_config.yaml \\
  reward.custom_reward_function.path=pkg://hopforge.synth.reward \\
  reward.custom_reward_function.name=compute_score ...
```

Rows are Parquet with `agent_name: tool_agent`; `tool_config.yaml` names
`hopforge.export.verl_tools.HopforgeTool` once per tool with its schema whole and the service
URL (`HOPFORGE_SEARCH_URL` overrides it). The reward also loads by path: the file
`python -c "import hopforge.synth.reward as m; print(m.__file__)"` prints. It grades the final
`answer` call: SQuAD-normalised match with the answer or an alias, lists as sets of items,
"not found" only on unanswerable questions (`reward_model.ground_truth.answer_type`).
"""

GRPO_TEXT = """\
**TRL GRPO** (`rl/plain`): `GRPOTrainer(reward_funcs=hopforge.synth.reward.grpo_reward,
train_dataset=load_dataset("json", data_dir="rl/plain")["train"], ...)`: the same grading over
the `answer`, `aliases` and `answer_type` columns. TRL's GRPOTrainer can call tools during
generation (`tools=` plain Python functions, or `environment_factory=`); its schemas come from
the functions' type hints, so hopforge's limits (`minLength`, `maximum`) do not reach the model
that way, and the rows' system prompt leaves the schemas to the chat template.
"""


def _fits(training: dict[str, Any]) -> str:
    within = training.get("trl_rows_within") or {}
    total = (training.get("trl_row_tokens") or {}).get("count") or 0
    if not total:
        return "n/a"
    return ", ".join(f"{int(n):,}: {k / total:.0%}" for n, k in within.items())


def training_text(manifest: dict[str, Any]) -> str:
    """The card's training section for this export's row lengths."""
    training = manifest.get("stats", {}).get("training") or {}
    trl_max = training.get("trl_max_length")
    window_max = training.get("window_max_length")
    counted = training.get("tokens_counted_with", "characters / 4")
    trl = (training.get("trl_row_tokens") or {})
    lines = [
        f"Row lengths in tokens, counted with {counted} "
        + ("(an estimate: set `[export] tokenizer` to the student's tokenizer for exact counts)"
           if counted == "characters / 4" else "(its chat template, tools included)") + ":",
        "",
        (f"- `sft/trl`: median {trl.get('median', 'n/a')}, p90 {trl.get('p90', 'n/a')}, "
         f"max {trl.get('max', 'n/a')}; rows that fit {_fits(training)}"),
        ("- `sft/hf`, `sft/openai`, `sharegpt` (multi-turn windows): max "
         f"{(training.get('window_row_tokens') or {}).get('max', 'n/a')}"),
        "",
        ("**TRL SFT** (`sft/trl`): `SFTConfig(max_length="
         f"{trl_max}, completion_only_loss=True)` (the default for prompt-completion rows) keeps "
         "every row and trains exactly each row's completion, its one trained turn; a smaller "
         "`max_length` cuts rows from the right, so their completion is lost. Leave "
         "`assistant_only_loss` off: with it TRL would train every assistant message of a "
         "multi-turn row. TRL does not read `sft/hf`'s per-message `weight`: use `sft/trl` with "
         f"TRL, and `sft/hf` (max_length {window_max}) with trainers that honour `weight`."),
        "",
        GRPO_TEXT,
        VERL_TEXT,
    ]
    return "\n".join(lines)
