"""The export layouts as plug-ins: one class each, listed once, and everything asks the list."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hopforge.corpus.tools import default_schemas
from hopforge.export.layouts.base import Layout
from hopforge.export.layouts.registry import (
    DEFAULT_FORMATS,
    FORMATS,
    KINDS,
    LAYOUTS,
    layout_named,
    layouts,
    layouts_of,
    schemas_for,
)
from hopforge.export.records import ExportConfig
from hopforge.flows.view.catalog import ROW_LAYOUTS

LAYOUT_DIR = Path(__file__).resolve().parents[2] / "export" / "layouts"
NAMES = [t["function"]["name"] for t in default_schemas()]


def test_each_layout_is_listed_once_with_its_own_folder_and_format() -> None:
    names = [cls.name for cls in LAYOUTS]
    assert len(names) == len(set(names))
    assert [lay.name for lay in layouts()] == names
    for lay in layouts():
        assert isinstance(lay, Layout) and layout_named(lay.name) is lay
        assert lay.name in KINDS[lay.format] and lay.format in FORMATS
        assert "/" not in lay.config_name and lay.card.startswith(f"- `{lay.config_name}`")
        assert lay.card.endswith("\n")
    assert set(DEFAULT_FORMATS) <= set(FORMATS)
    with pytest.raises(ValueError, match="unknown export layout 'sft/none'"):
        layout_named("sft/none")


def test_config_formats_and_kinds_come_from_the_layouts() -> None:
    config = ExportConfig()
    assert config.formats == DEFAULT_FORMATS
    assert config.kinds == tuple(lay.name for lay in layouts_of(DEFAULT_FORMATS))
    assert ExportConfig(formats=("rl",)).kinds == KINDS["rl"] == ("rl/verl", "rl/plain")
    with pytest.raises(Exception, match="choose one or more of"):
        ExportConfig(formats=("nope",))


def test_every_layout_gives_a_valid_json_schema() -> None:
    schemas = schemas_for(NAMES)
    assert list(schemas) == [lay.name for lay in layouts()]
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_viewer_shows_the_turn_layouts() -> None:
    """Layouts with a trained_note are read back as chat (the row check) and shown by the view."""
    turn = [lay.name for lay in layouts() if lay.trained_note]
    assert list(ROW_LAYOUTS) == turn and {"sft/hf", "sft/trl", "sharegpt"} <= set(turn)
    for lay in layouts():
        row = {"messages": [], "prompt": [], "completion": [], "conversations": []}
        assert (lay.chat(row) is not None) == bool(lay.trained_note), lay.name


@pytest.mark.parametrize("module", sorted(p.stem for p in LAYOUT_DIR.glob("*.py")))
def test_each_layout_module_imports_first(module: str) -> None:
    """A layout module imports hopforge.export.records and .selection only for types:
    records.py reads the layout list, so importing a layout first must still work."""
    name = "hopforge.export.layouts" + ("" if module == "__init__" else f".{module}")
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
