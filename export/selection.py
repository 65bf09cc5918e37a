"""What an export writes: the trajectories, questions and pairs chosen, and their rows per kind.

`select` is the plain stage function: it decontaminates, splits by evidence chain and picks the
kept trajectories, the accepted questions and the usable preference pairs, recording a reason
for everything it leaves out. `rows` asks one export layout for its rows of a selection.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hopforge.export.decontam import find_contaminated
from hopforge.export.layouts.base import Context
from hopforge.export.layouts.registry import layout_named
from hopforge.export.preference import pair_id
from hopforge.export.records import Contamination, EvalItem, Example, ExportConfig, Rejected
from hopforge.export.rl import Task
from hopforge.export.sft import example_weights
from hopforge.export.splits import chain_key, split_questions
from hopforge.export.windows import Counter as TokenCounter
from hopforge.export.windows import (
    WindowSettings,
    WindowTooLong,
    estimate_tokens,
    turn_windows,
    windows,
)
from hopforge.filters.records import Decision, PreferencePair, Score
from hopforge.filters.select import failure
from hopforge.synth.annotate import label_trajectory
from hopforge.synth.records import Question, Trajectory


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildInputs:
    """Everything the export reads from a build."""

    questions: tuple[Question, ...] = ()
    trajectories: tuple[Trajectory, ...] = ()
    scores: dict[str, Score] = field(default_factory=dict)  # by tid
    pairs: tuple[PreferencePair, ...] = ()
    decisions: dict[str, Decision] | None = None  # by tid; None when the filters did not run


@dataclass(frozen=True, slots=True, kw_only=True)
class Paired:
    """A preference pair with both trajectories and its question."""

    pair: PreferencePair
    question: Question
    chosen: Trajectory
    rejected: Trajectory
    split: str
    chain: str
    chosen_score: Score | None = None
    rejected_score: Score | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What the export writes, and what it left out and why."""

    examples: tuple[Example, ...] = ()  # kept trajectories (SFT, ShareGPT)
    tasks: tuple[Task, ...] = ()  # accepted questions (RL)
    pairs: tuple[Paired, ...] = ()  # preference pairs
    contaminated: tuple[Contamination, ...] = ()
    dropped: tuple[str, ...] = ()  # a reason per trajectory not exported
    rejected: tuple[Rejected, ...] = ()  # records that could not be made
    untrained_windows: int = 0  # windows left out because none of their turns is trained



def _system_prompt(trajs: Sequence[Trajectory], fallback: str) -> str:
    prompts = Counter(t.system_prompt for t in trajs if t.system_prompt)
    return min(prompts, key=lambda p: (-prompts[p], p)) if prompts else fallback


def with_windows(
    ex: Example,
    tools: Sequence[dict[str, Any]],
    settings: WindowSettings,
    *,
    count: TokenCounter = estimate_tokens,
) -> tuple[Example, int]:
    """The example with its turns labelled and its SFT windows, and how many windows had no
    trained turn (left out; an example without any window is not exported)."""
    t = label_trajectory(ex.trajectory, ex.question)
    ex = dataclasses.replace(ex, trajectory=t)
    weights = example_weights(ex)
    if not any(weights):
        return ex, 0
    made = windows(t, ex.question.question, weights, tools, settings, count=count)
    kept = tuple(
        w for w in made if any(m.get("weight") for m in w.messages if m["role"] == "assistant")
    )
    singles = tuple(turn_windows(t, ex.question.question, weights, tools, settings, count=count))
    return dataclasses.replace(ex, windows=kept, turn_windows=singles), len(made) - len(kept)


def select(
    inputs: BuildInputs,
    config: ExportConfig,
    eval_items: Sequence[EvalItem] = (),
    *,
    default_prompt: str = "",
    tools: Sequence[dict[str, Any]] = (),
    window_settings: WindowSettings | None = None,
    count: TokenCounter = estimate_tokens,
) -> Selection:
    """Decontaminate, split by chain, and pick the trajectories, questions and pairs to export.

    An RL question gets the system prompt its trajectories ran with (the most common one), else
    the build's most common one, else `default_prompt`. Turns are labelled anew; a failed
    trajectory (see `failure`) is exported only when the filter decided to keep it, and a
    trajectory with no trained turn, or with a turn too long for any window, is left out.
    """
    settings = window_settings or WindowSettings(max_seq_tokens=config.max_seq_tokens,
                                                 reasoning=config.reasoning)
    accepted = {q.qid: q for q in sorted(inputs.questions, key=lambda q: q.qid) if not q.rejected}
    contaminated = find_contaminated(
        accepted.values(), eval_items, n=config.decontam_n, answer_context_n=config.answer_context_n
    )
    for hit in contaminated:
        del accepted[hit.qid]
    removed = {h.qid for h in contaminated}
    splits = split_questions(
        accepted.values(), validation_fraction=config.validation_fraction, seed=config.seed
    )
    chains = {qid: chain_key(q) for qid, q in accepted.items()}
    by_qid: dict[str, list[Trajectory]] = {}
    for t in inputs.trajectories:
        by_qid.setdefault(t.qid, []).append(t)

    examples, dropped = [], []
    rejected_long: list[Rejected] = []
    untrained = 0
    for t in sorted(inputs.trajectories, key=lambda t: (t.qid, t.sample, t.tid)):
        decision = inputs.decisions.get(t.tid) if inputs.decisions is not None else None
        if t.qid in removed:
            dropped.append("contaminated")
        elif t.qid not in accepted:
            dropped.append("question missing or rejected")
        elif inputs.decisions is not None and decision is None:
            dropped.append("no filter decision")
        elif decision is not None and not decision.kept:
            dropped.append(decision.reason or "dropped by the filters")
        elif decision is None and failure(t):
            dropped.append(failure(t))
        else:
            q = accepted[t.qid]
            ex = Example(
                trajectory=t,
                question=q,
                split=splits[q.qid],
                chain=chains[q.qid],
                score=inputs.scores.get(t.tid),
                decision=decision,
            )
            try:
                ex, untrained_here = with_windows(ex, tools, settings, count=count)
            except WindowTooLong as exc:
                dropped.append("too-long")
                rejected_long.append(Rejected(kind="sft", record_id=t.tid, reason=str(exc)))
                continue
            untrained += untrained_here
            if not ex.windows:
                dropped.append("no-trained-turn")
                continue
            examples.append(ex)

    fallback = _system_prompt(inputs.trajectories, default_prompt)
    tasks = []
    for qid, q in accepted.items():
        trajs = by_qid.get(qid, [])
        scores = tuple(inputs.scores[t.tid] for t in trajs if t.tid in inputs.scores)
        tasks.append(
            Task(
                question=q,
                split=splits[qid],
                chain=chains[qid],
                scores=scores,
                system_prompt=_system_prompt(trajs, fallback),
                n_trajectories=len(trajs),
                final_answers=tuple(t.final_answer for t in trajs),
            )
        )

    by_tid = {t.tid: t for t in inputs.trajectories}
    pairs, rejected = [], list(rejected_long)
    for pair in sorted(inputs.pairs, key=lambda p: (p.qid, p.chosen, p.rejected)):
        chosen, worse = by_tid.get(pair.chosen), by_tid.get(pair.rejected)
        if pair.qid in removed:
            continue
        if pair.qid not in accepted or chosen is None or worse is None:
            reason = "its question or one of its trajectories is missing or rejected"
            rejected.append(Rejected(kind="preference", record_id=pair_id(pair), reason=reason))
            continue
        decision = inputs.decisions.get(chosen.tid) if inputs.decisions is not None else None
        if decision is not None and not decision.answer_trained:
            reason = f"the chosen trajectory's answer is not to be learned ({decision.reason})"
            rejected.append(Rejected(kind="preference", record_id=pair_id(pair), reason=reason))
            continue
        pairs.append(
            Paired(
                pair=pair,
                question=accepted[pair.qid],
                chosen=chosen,
                rejected=worse,
                split=splits[pair.qid],
                chain=chains[pair.qid],
                chosen_score=inputs.scores.get(chosen.tid),
                rejected_score=inputs.scores.get(worse.tid),
            )
        )
    return Selection(
        examples=tuple(examples),
        tasks=tuple(tasks),
        pairs=tuple(pairs),
        contaminated=tuple(contaminated),
        dropped=tuple(dropped),
        rejected=tuple(rejected),
        untrained_windows=untrained,
    )


def rows(
    selection: Selection,
    kind: str,
    *,
    tools: Sequence[dict[str, Any]],
    settings: dict[str, Any],
    config: ExportConfig,
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The rows of one layout (`kind`, e.g. "sft/hf"), in a fixed order, as (split, record id,
    row); the layout makes them (hopforge.export.layouts)."""
    ctx = Context(config=config, tools=tools, settings=settings)
    return layout_named(kind).rows(selection, ctx)
