"""What an eval runs (`EvalConfig`) and the parsing of its options: budgets, fault mixes and
injections (`--budgets`, `--faults`, `--inject`; the failure modes are in injections.py).

A fault mix is a `FaultConfig`: per-kind rates of empty results, timeouts, changed result formats
and partial (cut) results, and the share of faults that persist (repeat on every retry of the
same call, so only a rephrased call or another path gets past them).

| preset | empty | timeout | format | partial | all | persistent |
|--------|-------|---------|--------|---------|-----|------------|
| none   | 0     | 0       | 0      | 0       | 0   | -          |
| light  | 0.03  | 0.03    | 0.02   | 0.02    | 0.10 | 0.20      |
| heavy  | 0.08  | 0.08    | 0.06   | 0.08    | 0.30 | 0.35      |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hopforge.corpus.errors import HopforgeError
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedConfig
from hopforge.synth.trajectories.stage import TrajectoryConfig

FAULT_PRESETS: Mapping[str, FaultConfig] = {
    "none": FaultConfig(),
    "light": FaultConfig(empty=0.03, timeout=0.03, format=0.02, partial=0.02, persistent=0.20),
    "heavy": FaultConfig(empty=0.08, timeout=0.08, format=0.06, partial=0.08, persistent=0.35),
}
MAX_BUDGET = 100_000
INJECTION_KINDS: tuple[str, ...] = ("repeat", "bad-args", "forget", "ignore-faults")


class EvalInputError(HopforgeError):
    """An eval option or input is unusable; the message names it and the fix."""


def fault_preset(name: str) -> FaultConfig:
    """The `FaultConfig` of preset `name`."""
    try:
        return FAULT_PRESETS[name]
    except KeyError:
        raise EvalInputError(
            f"unknown fault mix {name!r}: use one of {', '.join(FAULT_PRESETS)} "
            "(e.g. --faults none,light,heavy)"
        ) from None


def parse_faults(text: str) -> tuple[str, ...]:
    """Preset names from a comma-separated list, in order, each checked."""
    names = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    if not names:
        raise EvalInputError(
            f"--faults {text!r} names no fault mix: use e.g. --faults none,light,heavy"
        )
    for name in names:
        fault_preset(name)
    return names


def parse_budgets(text: str) -> tuple[int, ...]:
    """Turn budgets from a comma-separated list of whole numbers, sorted, without repeats."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise EvalInputError(
            f"--budgets {text!r} names no budget: use e.g. --budgets 10,50,100,600"
        )
    budgets: set[int] = set()
    for part in parts:
        try:
            value = int(part)
        except ValueError:
            raise EvalInputError(
                f"--budgets: {part!r} is not a whole number of tool calls; "
                "use e.g. --budgets 10,50,100,600"
            ) from None
        if not 1 <= value <= MAX_BUDGET:
            raise EvalInputError(
                f"--budgets: {value} is out of range: use budgets from 1 to {MAX_BUDGET} tool calls"
            )
        budgets.add(value)
    return tuple(sorted(budgets))


@dataclass(frozen=True, slots=True)
class Injection:
    """One failure mode and the call number (from 1) at which it starts."""

    kind: str
    turn: int = 0

    def __str__(self) -> str:
        return self.kind if self.kind == "ignore-faults" else f"{self.kind}@{self.turn}"


def parse_injection(text: str) -> Injection:
    """`repeat@N`, `bad-args@N`, `forget@N` or `ignore-faults`."""
    kind, _, at = text.strip().partition("@")
    if kind not in INJECTION_KINDS:
        raise EvalInputError(f"--inject {text!r}: unknown failure mode {kind!r}; use "
                             "repeat@N, bad-args@N, forget@N or ignore-faults")
    if kind == "ignore-faults":
        if at:
            raise EvalInputError(f"--inject {text!r}: ignore-faults takes no turn; drop @{at}")
        return Injection(kind)
    if not at.isdigit() or int(at) < 1:
        raise EvalInputError(f"--inject {text!r}: {kind} needs the call number it starts at, "
                             f"a whole number from 1, e.g. {kind}@20")
    return Injection(kind, int(at))


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalConfig:
    """What an eval runs: budgets, fault mixes, injections, and the agent loop's settings."""

    budgets: tuple[int, ...] = (10, 50, 100, 600)
    faults: tuple[str, ...] = ("none", "light", "heavy")
    injections: tuple[Injection, ...] = ()
    seed: int = 0
    concurrency: int = 16
    repeat_limit: int = 3  # a call repeated more than this within repeat_window: handoff
    repeat_window: int = 20
    plan_change_limit: int = 10  # plan changes in a row without new evidence: handoff
    checkpoint_every: int = 16
    keep_results: int = 5
    context_tokens: int = 32_768
    max_tokens: int = 1024
    temperature: float = 0.7
    # the scripted reference takes no deliberate detours and gives no early (wrong) answers:
    # it shows what the harness reports for a teacher that follows the plan
    scripted: ScriptedConfig = field(
        default_factory=lambda: ScriptedConfig(wrong_doc=0.0, early_answer=0.0))
    presets: Mapping[str, FaultConfig] = field(default_factory=lambda: dict(FAULT_PRESETS))

    def __post_init__(self) -> None:
        if not self.budgets or not self.faults:
            raise HopforgeError("EvalConfig needs at least one budget and one fault mix")
        if not 1 <= self.plan_change_limit <= 100_000:
            raise HopforgeError(f"EvalConfig.plan_change_limit = {self.plan_change_limit!r} is "
                                "out of range: use 1 to 100000")
        for name in self.faults:
            if name not in self.presets:
                fault_preset(name)  # raises with the list of presets

    def trajectory_config(self, budget: int, faults: str) -> TrajectoryConfig:
        """The trajectories stage's config for one cell."""
        return TrajectoryConfig(
            max_turns=budget, concurrency=self.concurrency, keep_results=self.keep_results,
            checkpoint_every=self.checkpoint_every, context_tokens=self.context_tokens,
            max_tokens=self.max_tokens, temperature=self.temperature,
            repeat_limit=self.repeat_limit, repeat_window=self.repeat_window,
            no_progress_turns=budget + 1, seed=self.seed, faults=self.presets[faults],
            scripted=self.scripted,
        )
