"""One adapter per stage: call the stage's plain build-directory runner with its config.

The runners live with their stages (corpus/, synth/, filters/, export/ and flows/stages/);
this module holds the adapter each `StageSpec.runner` of hopforge.flows.build.registry names, and
builds the teacher from [teacher]. A parted stage (the trajectories) can also run part by
part (`plan_parts`, `run_part` on any worker, `finish_parts`), for a cluster's task runner.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.build.context import BuildContext
from hopforge.flows.build.markers import source_fingerprint
from hopforge.flows.build.registry import SPECS, stage_spec
from hopforge.flows.config.build_file import BUILTIN_PREFIX, BuildConfig

if TYPE_CHECKING:
    from hopforge.export.records import ExportResult
    from hopforge.flows.stages.trajectories import PartPlan

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None] | None
Runner = Callable[[BuildContext, Progress], dict[str, Any]]


def fingerprint(stage: str, config: BuildConfig) -> str:
    """Inputs outside the build directory that a stage reads (the corpus sources for ingest)."""
    if stage != "ingest":
        return ""
    sources = config.source_paths()
    sources = [*sources, *(str(_builtin_path(s)) for s in sources if s.startswith(BUILTIN_PREFIX))]
    return source_fingerprint(sources)


def run(stage: str, context: BuildContext, *, progress: Progress = None) -> dict[str, Any]:
    """Run `stage` on the build of `context`; returns the stage's statistics."""
    runner: Runner = globals()[stage_spec(stage).runner]
    return runner(context, progress)


def _ingest(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.store import write_corpus

    build, config = context.build, context.config
    paths = [_builtin_path(s) if s.startswith(BUILTIN_PREFIX) else Path(s)
             for s in config.source_paths()]
    result = ingest_paths(paths, fmt=config.corpus.format or None, strict=config.corpus.strict)
    if not result.documents:
        raise HopforgeError(
            f"no documents found in {', '.join(config.corpus.sources)}; check [corpus] sources "
            "and format (`hopforge ingest --help` lists the formats)"
        )
    write_corpus(build, result.documents, result.stats)
    return headline("ingest", result.stats)


def _builtin_path(source: str) -> Path:
    from hopforge.corpus.builtin import builtin_corpus_path

    return builtin_corpus_path(source)


def _index(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.corpus.index import build_index

    build, config = context.build, context.config
    return headline("index", build_index(build, config.stages["index"]))


def open_teacher(config: BuildConfig) -> Any:
    """The teacher of [teacher]: None for the scripted one, else an OpenAI-compatible client."""
    from hopforge.flows.config.teacher import ENV_RECORD, TeacherSettings, open_settings

    if config.teacher.kind == "scripted":
        return None
    return open_settings(TeacherSettings(config=config.teacher, api_key=config.api_key or None,
                                         record=os.environ.get(ENV_RECORD, "")))


def open_search(config: BuildConfig) -> Any:
    """A client of the search service of [tools] url, or None to load the index in process."""
    if not config.tools.url:
        return None
    from hopforge.corpus.remote import RemoteSearcher

    return RemoteSearcher(config.tools.url)


def _questions(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.flows.stages.questions import TurnLimits, run_questions_build

    build, config = context.build, context.config
    runs = config.stages["trajectories"]
    limits = TurnLimits(max_turns=runs.max_turns, no_progress=runs.no_progress_turns)
    report = run_questions_build(build, config.stages["questions"],
                                 teacher=open_teacher(config), progress=progress, limits=limits)
    return headline("questions", report)


def _trajectories(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.flows.stages.trajectories import run_trajectories_build

    build, config = context.build, context.config
    report = run_trajectories_build(build, config.stages["trajectories"],
                                    teacher=open_teacher(config), progress=progress,
                                    searcher=open_search(config))
    return headline("trajectories", report)


def _check_parted(stage: str) -> None:
    if not stage_spec(stage).parted:
        names = ", ".join(s.name for s in SPECS if s.parted)
        raise ValueError(f"stage {stage!r} does not run in parts; only {names}")


def plan_parts(stage: str, context: BuildContext) -> PartPlan:
    """Start or continue `stage` part by part: each part's size and the parts still to run."""
    from hopforge.flows.stages.trajectories import plan_trajectory_parts

    _check_parted(stage)
    config = context.config
    return plan_trajectory_parts(context.build, config.stages["trajectories"],
                                 teacher=config.teacher.label)


def run_part(stage: str, context: BuildContext, index: int) -> dict[str, Any]:
    """Run part `index` of a planned stage in this process; a model teacher gets its own client.

    The client is made here from [teacher] urls/model, with the API key of this process's
    environment (each worker reads its own HOPFORGE_API_KEY).
    """
    from hopforge.flows.stages.trajectories import run_trajectory_part

    _check_parted(stage)
    build, config = context.build, context.config
    return run_trajectory_part(build, config.stages["trajectories"], index,
                               teacher=open_teacher(config), searcher=open_search(config))


def finish_parts(stage: str, context: BuildContext, parts: Sequence[Mapping[str, Any]], *,
                 seconds: float = 0.0) -> dict[str, Any]:
    """Write the report of a stage whose parts are all done; returns the stage's statistics."""
    from hopforge.flows.stages.trajectories import finish_trajectories_build

    _check_parted(stage)
    build, config = context.build, context.config
    report = finish_trajectories_build(build, config.stages["trajectories"],
                                       teacher=config.teacher.label, parts=parts,
                                       seconds=seconds)
    return headline("trajectories", report)


def _score(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.flows.stages.filters import score_build

    build, config = context.build, context.config
    return headline("score", score_build(build, config.stages["score"], force=True))


def _filter(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.flows.stages.filters import filter_build

    build, config = context.build, context.config
    return headline("filter", filter_build(build, config.stages["filter"], force=True))


def _export(context: BuildContext, progress: Progress) -> dict[str, Any]:
    from hopforge.flows.stages.export import export_build

    result = export_build(context.build, context.config.stages["export"],
                          build_toml=context.frozen_toml)
    return export_stats(result)


def export_stats(result: ExportResult) -> dict[str, Any]:
    """The statistics of an export that its done-marker keeps."""
    stats: dict[str, Any] = {"records": result.total, "shards": len(result.shards),
                             "rejected": len(result.rejected),
                             "contaminated": len(result.contaminated)}
    stats.update({kind: dict(splits) for kind, splits in result.counts.items()})
    return stats


def headline(stage: str, report: dict[str, Any]) -> dict[str, Any]:
    """The statistics of a stage's report that its done-marker keeps (`StageSpec.headline`)."""
    out: dict[str, Any] = {}
    for path in stage_spec(stage).headline:
        value: Any = report
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            out[path.replace(".", "_")] = value
    return out

