"""The export layouts, listed once: adding a layout is one module and one line in `LAYOUTS`.

`ExportConfig` takes its `formats` from them, the export stage writes each chosen layout's rows
against its schema into its folder with its side files, the dataset card lists them, and the
export's row check reads their rows back through them. Layout modules import
hopforge.export.records and .selection for types only: records.py reads this list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hopforge.export.layouts.base import Layout
from hopforge.export.layouts.preference import Preference
from hopforge.export.layouts.rl_plain import RlPlain
from hopforge.export.layouts.rl_verl import RlVerl
from hopforge.export.layouts.sft_hf import SftHf
from hopforge.export.layouts.sft_openai import SftOpenAI
from hopforge.export.layouts.sft_text import SftText
from hopforge.export.layouts.sft_trl import SftTrl
from hopforge.export.layouts.sharegpt import ShareGpt

LAYOUTS: tuple[type[Layout], ...] = (SftOpenAI, SftHf, SftTrl, RlVerl, RlPlain, Preference,
                                     ShareGpt, SftText)

_BY_NAME: dict[str, Layout] = {cls.name: cls() for cls in LAYOUTS}
# Each format writes one or more layouts ("kinds"); a kind is a folder under BUILD/export/.
KINDS: dict[str, tuple[str, ...]] = {}
for _layout in _BY_NAME.values():
    KINDS[_layout.format] = (*KINDS.get(_layout.format, ()), _layout.name)
FORMATS: tuple[str, ...] = tuple(KINDS)
DEFAULT_FORMATS: tuple[str, ...] = tuple(dict.fromkeys(
    lay.format for lay in _BY_NAME.values() if lay.default))


def layouts() -> tuple[Layout, ...]:
    """One instance of each layout, in the order of `LAYOUTS`."""
    return tuple(_BY_NAME.values())


def layout_named(name: str) -> Layout:
    """The layout whose folder is `name` (e.g. "sft/hf")."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown export layout {name!r}: one of {', '.join(_BY_NAME)}") from None


def layouts_of(formats: Sequence[str]) -> tuple[Layout, ...]:
    """The layouts the given formats write, format by format."""
    return tuple(_BY_NAME[k] for f in formats for k in KINDS[f])


def schemas_for(tool_names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The JSON Schema of every layout, by name."""
    return {lay.name: lay.schema(tool_names) for lay in _BY_NAME.values()}
