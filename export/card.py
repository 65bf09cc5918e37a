"""BUILD/export/README.md: a dataset card with statistics, provenance, licences and plots."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_bytes
from hopforge.export.card_training import training_text
from hopforge.export.layouts.registry import layouts
from hopforge.export.records import Distributions
from hopforge.synth.records import TERMINATIONS

LICENCE_KEYS = ("licence", "license", "licenses", "licences")
HF_LICENCES = {
    "apache-2.0",
    "mit",
    "cc0-1.0",
    "cc-by-4.0",
    "cc-by-sa-3.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "gfdl",
    "odc-by",
    "odbl",
    "pddl",
    "unlicense",
    "bsd-3-clause",
    "gpl-3.0",
}
# Names people write for a licence the Hugging Face hub knows under another id.
HF_ALIASES = {"cc0": "cc0-1.0", "cc-0": "cc0-1.0", "apache2": "apache-2.0",
              "apache-2": "apache-2.0", "cc-by-sa": "cc-by-sa-4.0", "cc-by": "cc-by-4.0"}


def _find_licences(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            if key.lower() in LICENCE_KEYS:
                found += (
                    [sub.strip()]
                    if isinstance(sub, str) and sub.strip()
                    else [s.strip() for s in sub if isinstance(s, str) and s.strip()]
                    if isinstance(sub, list)
                    else []
                )
            else:
                found += _find_licences(sub)
    elif isinstance(value, list):
        for sub in value:
            found += _find_licences(sub)
    return found


def corpus_licences(
    build: BuildDir, build_config: dict[str, Any], *, override: str = ""
) -> list[str]:
    """Licences recorded in the build (config, index manifest, reports) or given by the user."""
    if override:
        return [override]
    found = _find_licences(build_config)
    for path in [build.index / "manifest.json", *sorted(build.reports.glob("*.json"))]:
        if path.is_file() and path.name != "export.json":
            try:
                found += _find_licences(json.loads(path.read_text(encoding="utf-8")))
            except json.JSONDecodeError:
                continue
    return list(dict.fromkeys(found))


def _figure(title: str, xlabel: str) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.2), dpi=100)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("trajectories")
    return fig, ax


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.tight_layout()
    sink = io.BytesIO()
    fig.savefig(sink, format="png", metadata={"Software": None})
    return sink.getvalue()


def _length_figure(dist: Distributions) -> Any:
    """Task length on the axis each family has: hops for chains, comparisons and
    intersections; the fewest tool calls for aggregations (they have no hops)."""
    from matplotlib.figure import Figure

    kinds = dist.kinds or ("chain",) * len(dist.hops)
    calls = dist.min_calls or (0,) * len(dist.hops)
    hops = [h for h, k in zip(dist.hops, kinds, strict=False) if k != "aggregation"]
    agg = [c for c, k in zip(calls, kinds, strict=False) if k == "aggregation"]
    fig = Figure(figsize=(8, 3.2), dpi=100)
    left, right = fig.subplots(1, 2)
    left.set_title("Hops (chain, comparison, intersection)")
    left.set_xlabel("hops")
    left.set_ylabel("trajectories")
    if hops:
        counts = sorted(Counter(hops).items())
        left.bar([str(k) for k, _ in counts], [v for _, v in counts], color="#4c72b0")
    else:
        left.text(0.5, 0.5, "no such tasks in this export", ha="center", va="center",
                  transform=left.transAxes)
    right.set_title("Aggregations: fewest tool calls")
    right.set_xlabel("min_calls")
    if agg:
        right.hist(agg, bins=min(20, max(3, len(set(agg)))), color="#8172b2")
    else:
        right.text(0.5, 0.5, "no aggregations in this export", ha="center", va="center",
                   transform=right.transAxes)
    return fig


def plot_distributions(dist: Distributions, out_dir: Path) -> list[str]:
    """Write the card's PNG plots (Agg backend); returns their file names."""
    written = []
    if dist.hops:
        written.append(("hops.png", _length_figure(dist)))
    if dist.turns:
        fig, ax = _figure("Turns per trajectory", "turns")
        ax.hist(dist.turns, bins=min(30, max(5, len(set(dist.turns)))), color="#55a868")
        written.append(("turns.png", fig))
    if dist.terminations:
        fig, ax = _figure("Termination reasons", "trajectories")
        counts = Counter(dist.terminations)
        names = list(TERMINATIONS) + sorted(
            set(counts) - set(TERMINATIONS))
        values = [counts.get(t, 0) for t in names]
        ax.barh(names[::-1], values[::-1], color="#c44e52")
        ax.set_ylabel("")
        for y, v in enumerate(values[::-1]):  # zeros are written, so an empty reason reads
            ax.annotate(str(v), (v, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set_xlim(0, max(values) * 1.15 or 1)
        written.append(("terminations.png", fig))
    rewards = {k: v for k, v in dist.rewards.items() if v}
    if rewards:
        fig, ax = _figure("Reward distributions", "reward")
        for name, values in sorted(rewards.items()):
            ax.hist(values, bins=20, alpha=0.6, label=name)
        ax.legend(loc="upper right")
        written.append(("rewards.png", fig))
    for name, fig in written:
        atomic_write_bytes(out_dir / name, _png(fig))
    return [name for name, _ in written]


def _front_matter(name: str, manifest: dict[str, Any], licences: Sequence[str], suffix: str) -> str:
    ids = list(dict.fromkeys(HF_ALIASES.get(lic.lower(), lic.lower()) for lic in licences))
    licence = ids[0] if len(ids) == 1 and ids[0] in HF_LICENCES else "other"
    lines = [
        "---",
        f"license: {licence}",
        f"pretty_name: {name}",
        "task_categories:",
        "- text-generation",
        "- question-answering",
        "tags:",
        "- tool-use",
        "- multi-hop",
        "- deep-search",
        "- synthetic",
        "configs:",
    ]
    for kind, splits in manifest["counts"].items():
        if not splits:
            continue
        lines += [f"- config_name: {kind.replace('/', '_')}", "  data_files:"]
        for split in sorted(splits):
            lines += [f"  - split: {split}", f"    path: {kind}/{split}/*{suffix}"]
    return "\n".join(lines + ["---", ""])


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _fmt(q: dict[str, float] | None) -> str:
    if not q:
        return "n/a"
    return f"mean {q['mean']:.2f}, median {q['median']:.2f}, p10 {q['p10']:.2f}, p90 {q['p90']:.2f}, max {q['max']:.2f}"


WEIGHTS_TEXT = """\
Assistant messages with `weight: 0` (invalid or off-track calls, repeated calls, negatively
rewarded turns, turns that carry an over-cap style pattern) are context, not targets; failed
trajectories (an error, or no answer) are not exported. Ids, rewards and filterable facts are under
`metadata`. Questions are split by evidence chain: no validation question shares its chain with a
training one.
"""

LOADING_TEXT = """\
```python
from datasets import load_dataset

sft = load_dataset("json", data_dir="sft/trl")  # TRL SFTTrainer: prompt + completion + tools
dpo = load_dataset("json", data_dir="preference")  # TRL DPOTrainer
rl = load_dataset("json", data_dir="rl/plain")  # TRL GRPOTrainer: prompt + answer columns
verl = load_dataset("parquet", data_dir="rl/verl")  # verl's rows
```

- OpenAI fine-tuning: upload `sft/openai/train/*.jsonl` as they are.
- verl: `data.train_files` / `data.val_files` = the shards of `rl/verl/train` / `validation` (Parquet,
  whatever `--parquet` says), tools from `rl/verl/tool_config.yaml` (see Training).
- LLaMA-Factory: `dataset_dir: sharegpt`, `dataset: NAME_train` (see `sharegpt/dataset_info.json`),
  `mask_history: true`.
"""


def contents_text(manifest: dict[str, Any]) -> str:
    """Each layout's entry (those a default export writes, and any other this one wrote), then
    what the weights and the splits mean."""
    wrote = manifest.get("counts") or {}
    entries = [lay.card for lay in layouts() if lay.default or lay.name in wrote]
    return "".join(entries) + "\n" + WEIGHTS_TEXT


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _stats_lines(manifest: dict[str, Any]) -> list[str]:
    stats, dec = manifest["stats"], manifest["decontamination"]
    return [
        (
            f"- questions: {stats['questions']}; trajectories exported: "
            f"{stats['exported_trajectories']} of {stats['trajectories']}"
        ),
        f"- hops: {stats['hops']}; kinds: {stats['kinds']}",
        f"- turns per trajectory: {_fmt(stats['turns_per_trajectory'])}",
        f"- terminations: {stats['terminations']}",
        (f"- combined reward: {_fmt(stats['reward_combined'])} (relative: z-scored among "
         "each question's runs, so a correct run the others beat is below 0; it ranks runs "
         "of one question, it does not judge a run alone)"),
        f"- supervised share of assistant turns: {_share(stats['supervised_turn_share'])}",
        f"- teachers: {stats['teachers']}",
        f"- left out by the filters: {stats['dropped_by_reason']}",
        (
            f"- decontamination: {dec['removed_questions']} questions removed against "
            f"{dec['eval_items']} evaluation items {dec['by_reason']}"
        ),
        f"- records that failed their schema (not written): {manifest['rejected']['count']}",
    ]


def render_card(
    manifest: dict[str, Any],
    *,
    name: str,
    licences: Sequence[str],
    plots: Sequence[str],
    suffix: str,
    build_toml: str,
) -> str:
    """The dataset card as Markdown, with Hugging Face front matter."""
    rows = [
        (f"`{k}`", s.get("train", 0), s.get("validation", 0)) for k, s in manifest["counts"].items()
    ]
    lines = [_front_matter(name, manifest, licences, suffix), f"# {name}", ""]
    lines.append(
        f"Training data for small deep-search agents, made by hopforge {manifest['hopforge_version']}:"
        " multi-hop questions with verifiable answers over a document corpus, solved by a teacher"
        " with `search` / `open` / `find` / `answer` tools, scored per turn and per trajectory,"
        " filtered, and exported for SFT, RL and preference training."
    )
    lines += ["", "## Contents", "", _table(rows, ["kind", "train", "validation"]), "",
              contents_text(manifest)]
    lines += ["## Loading", "", LOADING_TEXT]
    lines += ["## Training", "", training_text(manifest)]
    lines += ["## Statistics", "", *_stats_lines(manifest), ""]
    if plots:
        lines += (
            ["## Plots", ""] + [f"![{p.removesuffix('.png')}](plots/{p})" for p in plots] + [""]
        )
    lines += [
        "## How it was made",
        "",
        f"- config hash: `{manifest.get('config_hash')}`",
        f"- corpus fingerprint: `{manifest.get('corpus_fingerprint')}`",
        f"- teachers: {', '.join(manifest.get('teachers', [])) or 'n/a'}",
        f"- question composers: {', '.join(manifest.get('composers', [])) or 'n/a'}",
        f"- tools: {', '.join(manifest['tools']['names'])} (schemas in `tools.json`)",
        "- sha256 of every shard: `manifest.json`; JSON Schema of every kind: `schemas/`",
        "",
    ]
    if build_toml:
        lines += [
            "<details><summary>build.toml</summary>",
            "",
            "```toml",
            build_toml.rstrip(),
            "```",
        ]
        lines += ["</details>", ""]
    lines += ["## Licence", ""]
    if licences:
        lines.append(
            "Corpus licences: " + "; ".join(licences) + ". The questions, trajectories and answers"
            " quote the corpus, so its licences apply to this dataset."
        )
    else:
        lines.append(
            "The build records no licence for its corpus. The data quotes the corpus: check the"
            " licences of its sources before sharing it."
        )
    return "\n".join(lines) + "\n"
