"""`rl/verl`: verl's RLHFDataset rows, one per accepted question, and verl's tool config."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml
from hopforge.corpus.service import DEFAULT_PORT
from hopforge.export.layouts.base import Context, Layout, Row
from hopforge.export.rl import VERL_TOOL_CONFIG, verl_record, verl_tool_config
from hopforge.export.schemas import verl_schema

if TYPE_CHECKING:
    from hopforge.export.records import ShardInfo
    from hopforge.export.selection import Selection

TOOL_CONFIG_HEAD = (
    "# verl: actor_rollout_ref.rollout.multi_turn.tool_config_path=THIS FILE\n"
    "# The tools call `hopforge serve-search BUILD` at `url` (or $HOPFORGE_SEARCH_URL);\n"
    "# verl's environment needs `pip install --no-deps hopforge` for the tool class.\n")


def tool_config_text(tools: Sequence[Mapping[str, Any]], build_config: Mapping[str, Any]) -> str:
    """rl/verl/tool_config.yaml: the tools for verl's tool agent loop, calling the search
    service of build.toml's `[tools] url` (default: serve-search on this machine)."""
    section = build_config.get("tools")
    url = (section.get("url") if isinstance(section, dict) else "") or (
        f"http://127.0.0.1:{DEFAULT_PORT}")
    body = yaml.safe_dump(verl_tool_config(tools, url), sort_keys=False, allow_unicode=True,
                          width=100)
    return TOOL_CONFIG_HEAD + body


class RlVerl(Layout):
    """verl's columns, the ground truth in `reward_model`, the tools' kwargs in `extra_info`."""

    name = "rl/verl"
    format = "rl"
    parquet = True  # verl reads Parquet (and .json), not JSONL
    card = """\
- `rl_verl`: verl RLHFDataset columns (`data_source`, `prompt`, `ability`, `reward_model`,
  `extra_info`), Parquet, with `tool_config.yaml` for verl's tool agent loop. The prompt is the
  SFT rows' (schemas left to the chat template); `metadata.teacher_pass_rate` is the share of the
  teacher's trajectories the reward grades right, `mean_reward` their mean point-wise score.
"""

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        index: Counter[str] = Counter()  # verl's `extra_info.index` counts per split
        for task in selection.tasks:
            row = verl_record(
                task,
                index=index[task.split],
                tool_names=ctx.tool_names,
                tool_settings=ctx.settings,
                data_source=ctx.config.data_source,
                ability=ctx.config.ability,
            )
            index[task.split] += 1
            yield task.split, task.question.qid, row

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        return verl_schema(tool_names)

    def files(self, ctx: Context, shards: Sequence[ShardInfo]) -> dict[str, Any]:
        return {VERL_TOOL_CONFIG: tool_config_text(ctx.tools, ctx.build_config)}
