"""The scripted teacher's voices: read from the voices file shipped beside voice.py."""

from __future__ import annotations

from importlib.resources import files

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.synth.trajectories.voice import (
    FACTS,
    HOUSE,
    NOTES,
    OTHER_VOICES,
    SITUATIONS,
    VOICES,
    VOICES_FILE,
    load_voices,
)

_ONE = """
[[voices]]
name = "flat"
[voices.situations]
{situations}
[voices.notes]
{notes}
"""


def _file(**changes: str | None) -> str:
    lines = {k: f"{k} {{title}}." for k in (*SITUATIONS, *NOTES, *FACTS)}
    for key, value in changes.items():
        if value is None:
            lines.pop(key)
        else:
            lines[key] = value
    situations = "\n".join(f'{k} = "{v}"' for k, v in lines.items() if k in SITUATIONS)
    notes = "\n".join(f'{k} = "{v}"' for k, v in lines.items() if k not in SITUATIONS)
    return _ONE.format(situations=situations, notes=notes)


def test_the_shipped_file_words_every_situation_in_every_voice() -> None:
    text = files("hopforge.synth.trajectories").joinpath(VOICES_FILE).read_text("utf-8")
    assert load_voices(text) == VOICES
    assert HOUSE.name == "house" and HOUSE is VOICES[0] and OTHER_VOICES == VOICES[1:]
    assert len({v.name for v in VOICES}) == len(VOICES) >= 6
    assert HOUSE.say("search", what="Grey Needle") == "Let me search for Grey Needle."
    assert HOUSE.say("todo", open=("o_link", {"via": "Calden", "pattern": "1799"})) == \
        "Still open: which entry Calden mentions has 1799."
    terse = next(v for v in VOICES if v.name == "terse")
    assert terse.say("back", title="Calden") == "Back to Calden."  # the note's wording


def test_a_voice_that_misses_a_line_is_refused_with_the_line_named() -> None:
    assert load_voices(_file())[0].say("open", title="Calden") == "open Calden."
    with pytest.raises(HopforgeError, match=r"voice 'flat' has no line for widen, tally"):
        load_voices(_file(widen=None, tally=None), origin="mine.toml")
    with pytest.raises(HopforgeError, match=r"lines nothing says: shrug"):
        load_voices(_file(shrug="Meh."))
    with pytest.raises(HopforgeError, match=r"mine.toml is not valid TOML"):
        load_voices("[[voices]\nname = 1", origin="mine.toml")
    with pytest.raises(HopforgeError, match="declares no voices"):
        load_voices("title = 'none'")
