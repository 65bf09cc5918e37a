"""The stages of a build: one `Stage` class per stage, listed once in `REGISTRY`, in build order.

A stage owns its settings model (`config`, the dataclass its build-file table becomes), its run
over a build directory (`run`), and the figures of its report that its done-marker keeps
(`figures`). The config loader, the engine, the Prefect flow, the reports, the dashboard and the
commands ask these objects; none keeps its own list of stages. The work itself lives with each
stage's logic (corpus/, synth/, filters/, export/ and flows/stages/); a class here says how the
build calls it. Adding a stage is adding a class and a line in `REGISTRY`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from hopforge.corpus.builtin import BUILTIN_PREFIX, builtin_corpus_path
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import IndexConfig, build_index
from hopforge.corpus.ingest import ingest_paths, source_fingerprint
from hopforge.corpus.settings import operational
from hopforge.corpus.store import write_corpus
from hopforge.export.records import ExportConfig, ExportResult
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.select import FilterConfig
from hopforge.flows.stages.export import export_build
from hopforge.flows.stages.filters import filter_build, score_build
from hopforge.flows.stages.questions import TurnLimits, run_questions_build
from hopforge.flows.stages.trajectories import (
    PartPlan,
    finish_trajectories_build,
    plan_trajectory_parts,
    run_trajectories_build,
    run_trajectory_part,
)
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.trajectories.stage import TrajectoryConfig

if TYPE_CHECKING:
    from hopforge.flows.build.context import BuildContext
    from hopforge.flows.config.build_file import BuildConfig

Progress = Callable[[int, int], None] | None


class Stage:
    """One stage of a build: its settings table, how it runs, what it writes and reports."""

    name: ClassVar[str]
    section: ClassVar[str]  # its table in the build file
    # the dataclass of that table; None for ingest, whose [corpus] table is a setting of the
    # whole build (BuildConfig.corpus)
    config: ClassVar[type | None] = None
    outputs: ClassVar[tuple[str, ...]] = ()  # the BuildDir folders it writes (emptied anew)
    reports: ClassVar[tuple[str, ...]] = ()  # name prefixes of its files under BUILD/reports/
    headline: ClassVar[tuple[str, ...]] = ()  # dotted paths into its report kept in the marker
    teacher: ClassVar[bool] = False  # it calls the teacher (whose kind and model shape it)
    resumable: ClassVar[bool] = False  # it skips parts it finished; a fresh start empties it
    parted: ClassVar[bool] = False  # its parts can run as separate tasks (`PartedStage`)
    progress: ClassVar[bool] = False  # long enough for a progress bar and artifact
    cpu: ClassVar[bool] = False  # CPU work only: it goes to the Dask or Ray runner when set

    @property
    def operational(self) -> frozenset[str]:
        """Settings that change how fast it runs or where it sends requests, never what it
        makes (left out of its settings hash): those its config marks OPERATIONAL."""
        return operational(self.config)

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        """Run the stage on the build of `context`; returns the statistics its marker keeps."""
        raise NotImplementedError

    def fingerprint(self, config: BuildConfig) -> str:
        """Inputs outside the build directory that the stage reads ("" for none)."""
        return ""

    def figures(self, report: Mapping[str, Any]) -> dict[str, Any]:
        """The statistics of a report that the done-marker keeps (`headline`'s paths)."""
        out: dict[str, Any] = {}
        for path in self.headline:
            value: Any = report
            for key in path.split("."):
                value = value.get(key) if isinstance(value, Mapping) else None
            if value is not None:
                out[path.replace(".", "_")] = value
        return out


class Ingest(Stage):
    name, section, cpu = "ingest", "corpus", True
    outputs, reports = ("corpus",), ("ingest",)
    headline = ("documents", "links", "isolated_docs", "total_words", "problems")

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        config = context.config
        paths = [builtin_corpus_path(s) if s.startswith(BUILTIN_PREFIX) else Path(s)
                 for s in config.source_paths()]
        result = ingest_paths(paths, fmt=config.corpus.format or None,
                              strict=config.corpus.strict)
        if not result.documents:
            raise HopforgeError(
                f"no documents found in {', '.join(config.corpus.sources)}; check [corpus] "
                "sources and format (`hopforge ingest --help` lists the formats)"
            )
        write_corpus(context.build, result.documents, result.stats)
        return self.figures(result.stats)

    def fingerprint(self, config: BuildConfig) -> str:
        sources = config.source_paths()
        builtins = [str(builtin_corpus_path(s)) for s in sources if s.startswith(BUILTIN_PREFIX)]
        return source_fingerprint([*sources, *builtins])


class Index(Stage):
    name, section, config, cpu = "index", "index", IndexConfig, True
    outputs, reports = ("index",), ("index",)
    headline = ("documents", "passages", "dense.vectors", "dense.embedded", "dense.reused")

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        return self.figures(build_index(context.build, context.config.stages[self.name]))


class Questions(Stage):
    name, section, config = "questions", "questions", QuestionConfig
    outputs, reports = ("questions",), ("questions",)
    headline = ("accepted", "rejected", "attempted", "acceptance_rate")
    teacher = resumable = progress = True

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        config = context.config
        runs = config.stages["trajectories"]  # the mix keeps only tasks a run can finish
        limits = TurnLimits(max_turns=runs.max_turns, no_progress=runs.no_progress_turns,
                            faults=runs.faults.total)
        report = run_questions_build(context.build, config.stages[self.name],
                                     teacher=context.teacher(), progress=progress,
                                     limits=limits)
        return self.figures(report)


class PartedStage(Stage):
    """A stage whose parts can run as separate tasks: `plan_parts`, then `run_part` on any
    worker for each pending part, then `finish_parts` with their results."""

    parted = True

    def plan_parts(self, context: BuildContext) -> PartPlan:
        """Start or continue the stage part by part: each part's size and the parts to run."""
        raise NotImplementedError

    def run_part(self, context: BuildContext, index: int) -> dict[str, Any]:
        """Run part `index` in this process; a model teacher gets its own client here."""
        raise NotImplementedError

    def finish_parts(self, context: BuildContext, parts: Sequence[Mapping[str, Any]], *,
                     seconds: float = 0.0) -> dict[str, Any]:
        """Write the report once every part is done; returns the stage's statistics."""
        raise NotImplementedError


class Trajectories(PartedStage):
    name, section, config = "trajectories", "trajectories", TrajectoryConfig
    outputs, reports = ("trajectories",), ("trajectories",)
    headline = ("trajectories", "terminations.answer", "turns.mean", "turns.max")
    teacher = resumable = progress = True

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        report = run_trajectories_build(context.build, context.config.stages[self.name],
                                        teacher=context.teacher(), progress=progress,
                                        searcher=context.searcher())
        return self.figures(report)

    def plan_parts(self, context: BuildContext) -> PartPlan:
        config = context.config
        return plan_trajectory_parts(context.build, config.stages[self.name],
                                     teacher=config.teacher.label)

    def run_part(self, context: BuildContext, index: int) -> dict[str, Any]:
        # the client is made here from [teacher] urls/model, with this process's API key
        return run_trajectory_part(context.build, context.config.stages[self.name], index,
                                   teacher=context.teacher(), searcher=context.searcher())

    def finish_parts(self, context: BuildContext, parts: Sequence[Mapping[str, Any]], *,
                     seconds: float = 0.0) -> dict[str, Any]:
        config = context.config
        report = finish_trajectories_build(context.build, config.stages[self.name],
                                           teacher=config.teacher.label, parts=parts,
                                           seconds=seconds)
        return self.figures(report)


class Score(Stage):
    name, section, config, cpu = "score", "score", ScoreConfig, True
    outputs, reports = ("scores", "pairs"), ("score", "pairs")
    headline = ("trajectories", "pairs", "correct_share")

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        return self.figures(score_build(context.build, context.config.stages[self.name],
                                        force=True))


class Filter(Stage):
    name, section, config, cpu = "filter", "filter", FilterConfig, True
    outputs, reports = ("filtered",), ("filter",)
    headline = ("trajectories", "kept", "dropped")

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        return self.figures(filter_build(context.build, context.config.stages[self.name],
                                         force=True))


class Export(Stage):
    name, section, config, cpu = "export", "export", ExportConfig, True
    outputs, reports = ("export",), ("export",)

    def run(self, context: BuildContext, progress: Progress = None) -> dict[str, Any]:
        result = export_build(context.build, context.config.stages[self.name],
                              build_toml=context.frozen_toml)
        return self.result_figures(result)

    @staticmethod
    def result_figures(result: ExportResult) -> dict[str, Any]:
        """The statistics of an export that its done-marker keeps."""
        stats: dict[str, Any] = {"records": result.total, "shards": len(result.shards),
                                 "rejected": len(result.rejected),
                                 "contaminated": len(result.contaminated)}
        stats.update({kind: dict(splits) for kind, splits in result.counts.items()})
        return stats


REGISTRY: tuple[Stage, ...] = (Ingest(), Index(), Questions(), Trajectories(), Score(), Filter(),
                               Export())
STAGES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
_BY_NAME = {s.name: s for s in REGISTRY}


def find_stage(name: str) -> Stage:
    """The stage called `name` (KeyError for a name that is not a stage)."""
    return _BY_NAME[name]


def parted_stage(name: str) -> PartedStage:
    """The stage called `name`, which must run in parts (ValueError otherwise)."""
    parted = {s.name: s for s in REGISTRY if isinstance(s, PartedStage)}
    if name not in parted:
        raise ValueError(f"stage {name!r} does not run in parts; only {', '.join(parted)}")
    return parted[name]


def configured() -> tuple[Stage, ...]:
    """The stages whose table is read into a config dataclass of their own, in build order."""
    return tuple(s for s in REGISTRY if s.config is not None)
