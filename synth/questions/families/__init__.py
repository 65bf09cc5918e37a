"""The question families, one module each; `FAMILIES` lists them, and nothing else names them.

A family samples a spec over the corpus's facts (`sample`), counts its `min_calls`, and words it
plainly (`render`, the scripted composer). Adding a family is adding a module with a `Family`
subclass and one line below.
"""

from __future__ import annotations

from hopforge.synth.questions.families.aggregation import AGGREGATION
from hopforge.synth.questions.families.base import MAX_DEPTH, Draft, Families, Family, spec_id
from hopforge.synth.questions.families.chain import CHAIN
from hopforge.synth.questions.families.comparison import COMPARISON
from hopforge.synth.questions.families.intersection import INTERSECTION
from hopforge.synth.questions.families.ranking import RANKING
from hopforge.synth.questions.families.sets import item_set
from hopforge.synth.questions.families.unanswerable import UNANSWERABLE
from hopforge.synth.records import Spec

FAMILIES: tuple[Family, ...] = (CHAIN, COMPARISON, INTERSECTION, AGGREGATION, UNANSWERABLE,
                                RANKING)
_BY_NAME = {f.name: f for f in FAMILIES}
KINDS: tuple[str, ...] = tuple(_BY_NAME)  # the question kinds there are
DEFAULT_KINDS: tuple[str, ...] = tuple(f.name for f in FAMILIES if f.default)  # made unless asked

__all__ = ["DEFAULT_KINDS", "FAMILIES", "KINDS", "MAX_DEPTH", "Draft", "Families", "Family",
           "draw", "family", "family_of", "item_set", "spec_id"]


def family(name: str) -> Family:
    """The family that makes questions of kind `name`."""
    return _BY_NAME[name]


def draw(s: Families, kind: str) -> Draft | None:
    """One draft of `kind` over sampler `s`, or None when this draw failed."""
    return family(kind).sample(s, s.rng.getrandbits(32))


def family_of(spec: Spec) -> Family:
    """The family whose wording a spec takes (an unanswerable one, the family it varies)."""
    return _BY_NAME[spec.family]
