"""A command that runs one stage (`hopforge questions BUILD`, ...) on the engine's done-markers.

When BUILD holds a build.toml and the command's settings make the same stage hash as the
build's (the same stage table and teacher), the command starts and finishes the stage through
the engine: a stage done with those settings is skipped, and a finished run writes the marker
`hopforge build` reads, so the build skips it too. With other settings the command runs as it
always did, and the stage's markers are dropped: its output is no longer what the build's
settings make, so the next `hopforge build` runs the stage again.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pydantic
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.settings import explain
from hopforge.flows.build.context import open_build
from hopforge.flows.build.engine import StageResult, StageRun, begin_stage, finish_stage
from hopforge.flows.build.markers import MARKERS, drop_markers, read_marker
from hopforge.flows.build.registry import STAGES, find_stage

log = logging.getLogger(__name__)


def begin_command(
    build_root: str | Path,
    stage: str,
    stage_config: Any,
    *,
    teacher: tuple[str, str] | None = None,
    force: bool = False,
    other_inputs: bool = False,
) -> StageRun | StageResult | None:
    """Start `stage` for a command whose settings are `stage_config` (and `teacher`: kind, model).

    Returns the skipped result when the build has the stage done with these settings, the
    started run to pass to `finish_command`, or None to run without markers (no build.toml, other
    settings, or the stage before it is not done). `force` never skips; `other_inputs`: the
    command reads something a build's stage does not (e.g. a reference file), so it never
    counts as the build's run.
    """
    build = BuildDir.at(Path(build_root))
    if not build.config.is_file():
        return None
    try:
        context = open_build(build.root)
    except HopforgeError as exc:  # not a build file the engine can run (hand-written, moved)
        log.info("%s: %s; running without the build's stage markers", stage, exc)
        return None
    config = context.config
    mine = dataclasses.replace(config, stages={**config.stages, stage: stage_config})
    if teacher is not None and find_stage(stage).teacher:
        kind, model = teacher
        mine = dataclasses.replace(mine, teacher=dataclasses.replace(
            config.teacher, kind=kind, model=model))
    if other_inputs or mine.stage_hashes()[stage] != config.stage_hashes()[stage]:
        if read_marker(build, stage, "done") or read_marker(build, stage, "start"):
            log.info("%s: other settings than %s; `hopforge build` will run it again",
                     stage, build.config)
        drop_markers(build, stage)
        return None
    i = STAGES.index(stage)
    if i and read_marker(build, STAGES[i - 1], "done") is None:
        return None
    if force:
        drop_markers(build, stage)
    return begin_stage(build.root, stage, context, reset=False)


def finish_command(build_root: str | Path, begun: StageRun | StageResult | None,
                   stats: dict[str, Any]) -> None:
    """Write the done-marker of a stage `begin_command` started (nothing for the other cases).

    `stats`: what the stage's `Stage.run` returns (`Stage.figures` of its report).
    """
    if isinstance(begun, StageRun):
        finish_stage(build_root, begun, stats)


def done_message(build_root: str | Path, stage: str) -> str:
    """What a command prints when the build has its stage done with the same settings."""
    marker = BuildDir.at(Path(build_root)).root / MARKERS / f"{stage}.done.json"
    return (f"{stage}: done already with these settings ({marker}); skipped. "
            "Pass --force to run it again.")


def build_settings(build_root: str | Path, stage: str) -> Any:
    """The settings of `stage` in the build file of `build_root`, or None when there is no
    build file the engine reads."""
    build = BuildDir.at(Path(build_root))
    if not build.config.is_file():
        return None
    try:
        return open_build(build.root).config.stages[stage]
    except HopforgeError:
        return None


def with_flags(build_root: str | Path, stage: str, default: Any,
               flags: dict[str, Any]) -> Any:
    """The settings a stage command runs with: the build's `stage` settings (else `default`),
    then every flag given (`flags`: field -> value, None when the flag was not given). A flag
    that changes the build's value says so on stderr."""
    import sys

    base = build_settings(build_root, stage)
    config = base if base is not None else default
    changes = {name: value for name, value in flags.items() if value is not None}
    if base is not None:
        for name, value in changes.items():
            if getattr(base, name) != value:
                print(f"{stage}: --{name.replace('_', '-')} overrides the build's {name} = "
                      f"{getattr(base, name)!r} with {value!r}", file=sys.stderr)
    try:
        return dataclasses.replace(config, **changes)
    except pydantic.ValidationError as exc:  # a flag's value is out of the setting's range
        raise ValueError(explain(exc, type(config).__name__)) from None
