"""What each stage of a build is: one `StageSpec` per stage, in the order a build runs them.

The config loader, the engine, the stage adapters, the Prefect flow, the reports and the CLI
all read this table; none keeps its own list of stages. Classes and functions are named as
(module, attribute) and imported when first used, so reading the table imports no stage.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class StageSpec:
    """One stage: its settings table, how it runs, what it writes and reports."""

    name: str
    runner: str  # the adapter in hopforge.flows.build.adapters that runs it on a build directory
    section: str  # its table in the build file
    # (module, class) of that table's dataclass; none for ingest, whose [corpus] table is a
    # setting of the whole build (BuildConfig.corpus)
    config_class: tuple[str, str] = ("", "")
    outputs: tuple[str, ...] = ()  # the BuildDir folders it writes (removed when it starts over)
    reports: tuple[str, ...] = ()  # name prefixes of its files under BUILD/reports/
    headline: tuple[str, ...] = ()  # dotted paths into its report kept in the done-marker
    # settings that change how fast it runs or where it sends requests, never what it makes
    # (left out of its settings hash)
    operational: frozenset[str] = frozenset()
    teacher: bool = False  # it calls the teacher (the teacher's kind and model shape its output)
    resumable: bool = False  # it skips parts it finished; its folder is emptied on a fresh start
    parted: bool = False  # its parts can run as separate tasks (`plan_parts`, `run_part`, ...)
    progress: bool = False  # long enough for a progress bar and a progress artifact
    cpu: bool = False  # it only uses the CPU: it goes to the Dask or Ray runner when one is set


SPECS: tuple[StageSpec, ...] = (
    StageSpec(
        name="ingest", runner="_ingest", section="corpus", cpu=True,
        outputs=("corpus",), reports=("ingest",),
        headline=("documents", "links", "isolated_docs", "total_words", "problems"),
    ),
    StageSpec(
        name="index", runner="_index", section="index", cpu=True,
        config_class=("hopforge.corpus.index", "IndexConfig"),
        outputs=("index",), reports=("index",), operational=frozenset({"batch_size", "device"}),
        headline=("documents", "passages", "dense.vectors", "dense.embedded", "dense.reused"),
    ),
    StageSpec(
        name="questions", runner="_questions", section="questions",
        config_class=("hopforge.synth.questions.config", "QuestionConfig"),
        outputs=("questions",), reports=("questions",),
        headline=("accepted", "rejected", "attempted", "acceptance_rate"),
        operational=frozenset({"concurrency"}),
        teacher=True, resumable=True, progress=True,
    ),
    StageSpec(
        name="trajectories", runner="_trajectories", section="trajectories",
        config_class=("hopforge.synth.trajectories.stage", "TrajectoryConfig"),
        outputs=("trajectories",), reports=("trajectories",),
        headline=("trajectories", "terminations.answer", "turns.mean", "turns.max"),
        operational=frozenset({"concurrency", "search_batch", "search_wait_s"}),
        teacher=True, resumable=True, parted=True, progress=True,
    ),
    StageSpec(
        name="score", runner="_score", section="score", cpu=True,
        config_class=("hopforge.filters.pointwise", "ScoreConfig"),
        outputs=("scores", "pairs"), reports=("score", "pairs"),
        headline=("trajectories", "pairs", "correct_share"),
        operational=frozenset({"judge_urls", "judge_concurrency"}),
    ),
    StageSpec(
        name="filter", runner="_filter", section="filter", cpu=True,
        config_class=("hopforge.filters.select", "FilterConfig"),
        outputs=("filtered",), reports=("filter",),
        headline=("trajectories", "kept", "dropped"),
    ),
    StageSpec(
        name="export", runner="_export", section="export", cpu=True,
        config_class=("hopforge.export.records", "ExportConfig"),
        outputs=("export",), reports=("export",),
    ),
)
STAGES: tuple[str, ...] = tuple(s.name for s in SPECS)
_BY_NAME = {s.name: s for s in SPECS}


def stage_spec(name: str) -> StageSpec:
    """The spec of stage `name` (KeyError for a name that is not a stage)."""
    return _BY_NAME[name]


def configured() -> tuple[StageSpec, ...]:
    """The stages whose table is read into a config dataclass of their own, in build order."""
    return tuple(s for s in SPECS if s.config_class[0])
