"""The scripted composer: plain, deterministic wording of a spec. It is the no-model default and
the test fixture; its questions read plainly and carry every fact of the spec.

Each family words its own specs (`Family.render`, one module each under
synth/questions/families/); the clues bring their own words (synth/questions/clues.py), so a
question names its starts and nothing else but the titles an entity clue quotes.
"""

from __future__ import annotations

import random

from hopforge.synth.questions.families import family_of
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.wording import clue_text, q
from hopforge.synth.records import Spec

NAME = "scripted"
__all__ = ["NAME", "clue_text", "q", "render"]


def render(spec: Spec, graph: CorpusGraph, rng: random.Random) -> str:
    """The question text for `spec`."""
    return family_of(spec).render(spec, graph, rng)
