"""Run in verl's environment (.venv-verl) by tests/export/test_verl_tools.py: verl's own tool
loading, tool agent loop, dataset and reward loader on an export, against a live serve-search.

Usage: verl_side.py EXPORT_DIR TOKENIZER_DIR REWARD_FILE; prints one JSON object of findings.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def main() -> None:
    export, tokenizer_dir, reward_file = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.tools.tool_registry import load_all_tools
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out: dict[str, Any] = {}
    config_path = export / "rl" / "verl" / "tool_config.yaml"
    tools = load_all_tools(tool_config_path=str(config_path), function_tool_path=None)
    out["tool_names"] = [t.name for t in tools]
    out["schemas"] = [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True)
                      for t in tools]

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    multi_turn = {"max_user_turns": 8, "max_assistant_turns": 8, "max_parallel_calls": 1,
                  "max_tool_response_length": 100_000, "tool_response_truncate_side": "middle",
                  "format": "hermes", "tool_config_path": str(config_path)}
    trainer = OmegaConf.create({"actor_rollout_ref": {"rollout": {
        "multi_turn": multi_turn, "prompt_length": 4096, "response_length": 4096,
        "full_determinism": True}}})
    data = OmegaConf.create({"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}})
    loop = ToolAgentLoop(trainer_config=DictConfigWrap(trainer), server_manager=None,
                         tokenizer=tokenizer, processor=None, dataset_cls=RLHFDataset,
                         data_config=DictConfigWrap(data), tools=ToolListWrap(tools))
    out["loop_schemas"] = loop.tool_schemas

    train = sorted((export / "rl" / "verl" / "train").glob("part-*.parquet"))
    dataset = RLHFDataset(data_files=[str(p) for p in train], tokenizer=tokenizer,
                          config=OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 8192,
                                                   "filter_overlong_prompts": False,
                                                   "return_raw_chat": True,
                                                   "tool_config_path": str(config_path)}))
    row = dataset[0]
    out["dataset_rows"] = len(dataset)
    out["row_keys"] = sorted(row)
    tools_kwargs = row.get("tools_kwargs") or row["extra_info"]["tools_kwargs"]
    raw = dataset.dataframe[0]
    answer = raw["reward_model"]["ground_truth"]["target"][0]

    async def calls() -> list[dict[str, Any]]:
        agent = AgentData(messages=list(row["raw_prompt"]), image_data=None, video_data=None,
                          audio_data=None, mm_processor_kwargs={}, metrics={}, request_id="r0",
                          tools_kwargs=tools_kwargs)
        results = []
        first = await loop._call_tool(
            FunctionCall(name="search", arguments=json.dumps({"query": raw["extra_info"]["question"],
                                                              "k": 3})), tools_kwargs, agent)
        results.append({"tool": "search", "text": first[0].text})
        doc_id = first[0].text.split("[doc_id: ", 1)[1].split("]", 1)[0]
        for name, args in (("open", {"doc_id": doc_id}),
                           ("find", {"doc_id": doc_id, "pattern": "the"}),
                           ("answer", {"text": answer}),
                           ("search", {"query": ""}),
                           ("lookup", {"query": "x"})):
            got = await loop._call_tool(FunctionCall(name=name, arguments=json.dumps(args)),
                                        tools_kwargs, agent)
            results.append({"tool": name, "args": args, "text": got[0].text})
        return results

    out["calls"] = asyncio.run(calls())

    rollout = json.dumps({"name": "answer", "arguments": {"text": answer}})
    truth = raw["reward_model"]["ground_truth"]
    scores = {}
    for how, path in (("path", reward_file), ("pkg", "pkg://hopforge.synth.reward")):
        fn = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": {
            "path": path, "name": "compute_score"}}}))
        scores[how] = [fn(data_source=raw["data_source"], solution_str=rollout,
                          ground_truth=truth, extra_info=raw["extra_info"]),
                       fn(data_source=raw["data_source"], solution_str="<answer>nothing</answer>",
                          ground_truth=truth, extra_info=raw["extra_info"])]
    out["reward"] = scores
    print(json.dumps(out))


if __name__ == "__main__":
    main()
