"""The named fault mixes of `hopforge eval` and the parsing of its budget and fault lists.

A preset is a `FaultConfig`: per-kind rates of empty results, timeouts, changed result formats
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

from hopforge.corpus.errors import HopforgeError
from hopforge.synth.trajectories.faults import FaultConfig

FAULT_PRESETS: Mapping[str, FaultConfig] = {
    "none": FaultConfig(),
    "light": FaultConfig(empty=0.03, timeout=0.03, format=0.02, partial=0.02, persistent=0.20),
    "heavy": FaultConfig(empty=0.08, timeout=0.08, format=0.06, partial=0.08, persistent=0.35),
}
MAX_BUDGET = 100_000


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
