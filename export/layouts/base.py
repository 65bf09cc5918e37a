"""What an export layout is: one class holding its name, its rows, its schema and its card text.

A `Layout` subclass says everything the export needs to know about one layout: the folder its
shards go to under BUILD/export/ (its `name`, e.g. `sft/hf`), the `--formats` group that writes
it, the rows it makes from the selected trajectories, questions and pairs, the JSON Schema every
row is checked against, its entry in the dataset card, the files it writes beside its shards,
and, for layouts whose rows are one trajectory's turns, how a trainer reads a row back as chat
messages. The stage, the card and the config ask the layout; nothing dispatches on its name.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # ExportConfig checks its formats against the layouts: no import back
    from hopforge.export.records import ExportConfig, ShardInfo
    from hopforge.export.selection import Selection

# (split, record id, row): what a layout's `rows` yields, in a fixed order.
Row = tuple[str, str, dict[str, Any]]
# (role, content, trained, tool calls) of one message as `hopforge view` shows it; `trained` is
# True/False for model turns and None for the others.
Shown = tuple[str, Any, bool | None, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What rows and side files are made with, besides the selection."""

    config: ExportConfig
    tools: Sequence[dict[str, Any]] = ()  # the tool schemas rows carry
    settings: dict[str, Any] = field(default_factory=dict)  # the toolbox settings (tool_settings)
    build_config: dict[str, Any] = field(default_factory=dict)  # build.toml, parsed
    tokenizer: Any = None  # `[export] tokenizer`, loaded; None when none is set

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools, in order."""
        return [t["function"]["name"] for t in self.tools]


class Layout:
    """One export layout; subclasses set the class attributes and `rows` and `schema`."""

    name: ClassVar[str]  # its kind and folder under BUILD/export/, e.g. "sft/hf"
    format: ClassVar[str]  # the `--formats` group that writes it, e.g. "sft"
    card: ClassVar[str]  # its entry under the dataset card's Contents (Markdown, ends in "\n")
    default: ClassVar[bool] = True  # written when the build names no formats
    parquet: ClassVar[bool] = False  # always Parquet, never zstd (the trainer reads no JSONL)
    needs_tokenizer: ClassVar[bool] = False  # rows are rendered with `[export] tokenizer`
    trained_note: ClassVar[str] = ""  # what its trainer trains of a row; set: a turn layout
    view_every_row: ClassVar[bool] = False  # a static `hopforge view` site pages every row

    @property
    def config_name(self) -> str:
        """Its name without slashes: the card's `config_name` and its schema's file name."""
        return self.name.replace("/", "_")

    def rows(self, selection: Selection, ctx: Context) -> Iterator[Row]:
        """Its rows, in a fixed order."""
        raise NotImplementedError

    def schema(self, tool_names: Sequence[str]) -> dict[str, Any]:
        """The JSON Schema each of its rows must pass."""
        raise NotImplementedError

    def files(self, ctx: Context, shards: Sequence[ShardInfo]) -> dict[str, Any]:
        """Files it writes beside its shards, by path under BUILD/export/: text or JSON."""
        return {}

    def chat(self, row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
        """A row read back as its trainer sees it: (messages, trained completion), weights on
        the messages where the layout has them; None for rows that are not a trajectory's turns
        (the export checks each turn layout's rows with `hopforge.export.justify`)."""
        return None

    def shown(self, row: dict[str, Any]) -> list[Shown]:
        """A turn layout's row as `hopforge view` shows it: each message, and whether the
        trainer trains it (read from `chat`; [] for a layout without one)."""
        chat = self.chat(row)
        if chat is None:
            return []
        context, completion = chat
        return ([(m["role"], m.get("content"),
                  bool(m.get("weight", 0)) if m["role"] == "assistant" else None,
                  m.get("tool_calls")) for m in context]
                + [(m["role"], m.get("content"), True, m.get("tool_calls")) for m in completion])
