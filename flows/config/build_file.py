"""The build file: one TOML file per build, validated up front into each stage's config.

Tables: [build] name/out/runner/seed, [corpus] sources/format, [teacher] kind/urls/model,
and one table per stage ([index], [questions], [trajectories], [score], [filter], [export]),
each converted into that stage's config dataclass. Relative paths are relative to the file.
Teacher kind, URLs and model fill in from the environment when the file leaves them out
(HOPFORGE_TEACHER, HOPFORGE_TEACHER_URL with commas between replicas, HOPFORGE_TEACHER_MODEL);
the key only ever comes from HOPFORGE_API_KEY (or OPENAI_API_KEY) and is never written out.
They are read here, when a config is loaded, never at import time.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pydantic
from hopforge.corpus.builtin import BUILTIN_PREFIX, BUILTIN_SOURCE, BUILTINS, builtin_name
from hopforge.corpus.ingest import FORMAT_ALIASES, FORMATS
from hopforge.corpus.settings import OPERATIONAL, SETTINGS
from hopforge.flows.build.registry import STAGES, configured, find_stage
from hopforge.flows.config.sections import (
    ConfigError,
    check_keys,
    dataclass_to_table,
    dump_toml,
    table_to_dataclass,
)
from hopforge.flows.config.settings_hash import as_table, digest, shaping_settings
from hopforge.synth.teacher.wire import api_key_from
from pydantic import Field

BUILTIN_SOURCES = ("builtin:jargon", "builtin:wiki")
BUILTIN_LICENCE = BUILTINS[BUILTIN_SOURCE][2]
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ENV_KIND, ENV_URL, ENV_MODEL = "HOPFORGE_TEACHER", "HOPFORGE_TEACHER_URL", "HOPFORGE_TEACHER_MODEL"
# Where a model server's key is read from, first set one wins; never a flag or a build file.


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class BuildSettings:
    """[build]: where the build goes, and where its CPU stages and trajectory parts run."""

    name: str = Field(description=(
        "the build's name: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"))
    out: str = Field(default="", description=(
        "the build directory; empty: builds/NAME under the current directory; may contain {date}"))
    runner: Literal["local", "dask", "ray"] = Field(default="local", json_schema_extra=OPERATIONAL,
                                                    description=(
        "where CPU stages and trajectory parts run: this process, a Dask or a Ray cluster"))
    seed: int = Field(default=0, description="the seed every stage's seed defaults to")
    workers: int = Field(default=2, ge=1, json_schema_extra=OPERATIONAL, description=(
        "processes of a local Dask cluster, CPUs of a local Ray cluster"))
    address: str = Field(default="", json_schema_extra=OPERATIONAL, description=(
        "an existing Dask scheduler or Ray cluster; empty: start a local one"))

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ConfigError(
                f"name = {self.name!r} is not allowed: use 1-64 letters, digits, "
                "'.', '_' or '-', starting with a letter or digit"
            )


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class CorpusSettings:
    """[corpus]: the source files (or "builtin:jargon") and their format."""

    sources: tuple[str, ...] = Field(default=(), description=(
        "files or folders (relative to the build file), or builtin:jargon / builtin:wiki"))
    format: str = Field(default="", description="the sources' format; empty: detect from each file")
    strict: bool = Field(default=False, description=(
        "stop on the first malformed record instead of counting it"))
    licence: str = Field(default="", description=(
        "the corpus licence, for the dataset card (e.g. cc-by-sa-4.0)"))


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class TeacherConfig:
    """[teacher]: the scripted teacher, or an OpenAI-compatible server (one URL per replica)."""

    kind: Literal["scripted", "openai"] = Field(default="scripted", description=(
        "scripted (deterministic, no model) or openai (an OpenAI-compatible server)"))
    urls: tuple[str, ...] = Field(default=(), description="base URLs of the server, one per replica")
    model: str = Field(default="", description="the model's name as the server knows it")
    concurrency: int = Field(default=16, ge=1, description=(
        "requests in flight at once, over all replicas"))
    read_timeout: float = Field(default=120.0, gt=0.0, description=(
        "seconds a server may stay silent before the request is retried"))
    max_retries: int = Field(default=4, ge=0, description=(
        "retries after a connection error, timeout, 429 or 5xx"))
    structured_output: Literal[
        "response_format", "guided_json", "structured_outputs", "none"
    ] = Field(default="response_format", description="how a JSON schema is requested")
    stream: bool = Field(default=True, strict=True, description=(
        "streamed answers: the read timeout bounds silence, not the whole answer"))
    reasoning: bool = Field(default=False, strict=True, description=(
        "a reasoning model: its thinking is kept and not limited by the prompt"))

    def __post_init__(self) -> None:
        for url in self.urls:
            if not url.startswith(("http://", "https://")):
                raise ConfigError(
                    f"urls = [{url!r}, ...] is not allowed: use http(s) base URLs such "
                    "as http://127.0.0.1:8000/v1"
                )

    @property
    def label(self) -> str:
        """The teacher's name as records carry it: "scripted" or "openai:MODEL"."""
        return "scripted" if self.kind == "scripted" else f"openai:{self.model}"


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class ToolsSettings:
    """[tools]: where the agent's search tools run; empty url: the index loaded in process."""

    url: str = Field(default="", description=(
        "a running `hopforge serve-search`, e.g. http://search-host:8900"))

    def __post_init__(self) -> None:
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"url = {self.url!r} is not an http(s) URL: use e.g. "
                              "\"http://search-host:8900\" (see `hopforge serve-search`)")


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildConfig:
    """A validated build file: settings of the build and one config object per stage."""

    build: BuildSettings
    corpus: CorpusSettings
    teacher: TeacherConfig
    tools: ToolsSettings = field(default_factory=ToolsSettings)
    stages: Mapping[str, Any] = field(default_factory=dict)  # stage name -> its config object
    base_dir: Path = Path(".")
    api_key: str = field(default="", repr=False)  # from HOPFORGE_API_KEY; never written out

    @property
    def name(self) -> str:
        return self.build.name

    def out_dir(self, today: str = "") -> Path:
        """The build directory; `{date}` in [build] out becomes `today` (YYYY-MM-DD)."""
        out = self.build.out or f"builds/{self.build.name}"
        if "{date}" in out:
            out = out.replace("{date}", today or today_utc())
        path = Path(out).expanduser()
        return path if path.is_absolute() else (Path.cwd() / path if not self.build.out
                                                 else self.base_dir / path)

    def source_paths(self) -> list[str]:
        """Each source as an absolute path, or as is for a builtin corpus."""
        return [s if s.startswith(BUILTIN_PREFIX) else str((self.base_dir / s).resolve())
                for s in self.corpus.sources]

    def tables(self) -> dict[str, dict[str, Any]]:
        """The resolved config as TOML tables: every default filled in, paths absolute."""
        doc: dict[str, dict[str, Any]] = {
            "build": dataclass_to_table(self.build),
            "corpus": {**dataclass_to_table(self.corpus), "sources": self.source_paths()},
            "teacher": dataclass_to_table(self.teacher),
            "tools": dataclass_to_table(self.tools),
        }
        for spec in configured():
            if self.stages.get(spec.name) is not None:
                doc[spec.section] = as_table(self.stages[spec.name])
        return doc

    def stage_hashes(self) -> dict[str, str]:
        """A hash of the settings that shape each stage's output (URLs and runner excluded)."""
        tables = self.tables()
        teacher = {"kind": self.teacher.kind, "model": self.teacher.model}
        parts: dict[str, Any] = {
            "ingest": {"corpus": {k: v for k, v in tables["corpus"].items()
                                  if k not in ("strict", "licence")}},
        }
        for spec in configured():
            obj = self.stages.get(spec.name)
            parts[spec.name] = {
                spec.section: shaping_settings(spec.name, obj) if obj is not None else {},
                "seed": self.build.seed,
            }
            if spec.teacher:
                parts[spec.name]["teacher"] = teacher
        parts["export"]["licence"] = self.corpus.licence  # it goes into the dataset card
        runs = self.stages.get("trajectories")
        if runs is not None:  # the mix keeps only tasks a run can finish (questions.TurnLimits)
            parts["questions"]["limits"] = {"max_turns": runs.max_turns,
                                            "no_progress": runs.no_progress_turns,
                                            "faults": runs.faults.total}
        return {stage: digest(parts[stage]) for stage in STAGES}

    def config_hash(self) -> str:
        """One hash over every stage's settings."""
        return digest(self.stage_hashes())

    def frozen_toml(self) -> str:
        """The build file as written into BUILD/build.toml: every setting, and [meta] hashes."""
        header = ("The frozen settings of this build (defaults filled in, paths absolute).\n"
                  "[meta] is written by hopforge: config_hash covers the settings that shape the\n"
                  "data (teacher URLs, keys and the runner do not); `hopforge build` on this\n"
                  "file reproduces the build.")
        meta = {"config_hash": self.config_hash(), "stage_hashes": self.stage_hashes()}
        return dump_toml({**self.tables(), "meta": meta}, header=header)


def today_utc() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def stage_config_class(stage: str) -> type:
    """The config dataclass of `stage` (ValueError for a stage without a table of its own)."""
    cls = find_stage(stage).config
    if cls is None:
        raise ValueError(f"stage {stage!r} has no settings table of its own")
    return cls


def parse_config(
    doc: Mapping[str, Any],
    *,
    base_dir: Path,
    default_name: str = "build",
    out: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> BuildConfig:
    """Validate a parsed build file; `env` supplies teacher URL/model/key when the file has none."""
    env = os.environ if env is None else env
    allowed = ["build", "corpus", "teacher", "tools", *(s.section for s in configured()),
               "meta"]  # [meta]: hashes hopforge writes into a frozen copy; ignored here
    check_keys("", doc, allowed)
    build_table = dict(doc.get("build", {}))
    build_table.setdefault("name", default_name)
    if out is not None:
        build_table["out"] = str(Path(out).expanduser().resolve())
    build = table_to_dataclass("build", build_table, BuildSettings)
    _check_runner(build)
    corpus = table_to_dataclass("corpus", doc.get("corpus", {}), CorpusSettings)
    _check_sources(corpus, base_dir)
    if not corpus.licence and set(corpus.sources) <= set(BUILTIN_SOURCES):
        licences = sorted({BUILTINS[builtin_name(s)][2] for s in corpus.sources})
        corpus = dataclasses.replace(corpus, licence="; ".join(licences) or BUILTIN_LICENCE)
    teacher_table = dict(doc.get("teacher", {}))
    if "kind" not in teacher_table and env.get(ENV_KIND):
        teacher_table["kind"] = env[ENV_KIND].strip()
    if not teacher_table.get("urls") and env.get(ENV_URL):
        teacher_table["urls"] = [u.strip().rstrip("/") for u in env[ENV_URL].split(",")
                                 if u.strip()]
    if not teacher_table.get("model") and env.get(ENV_MODEL):
        teacher_table["model"] = env[ENV_MODEL]
    teacher = table_to_dataclass("teacher", teacher_table, TeacherConfig)
    if teacher.kind == "openai" and not (teacher.urls and teacher.model):
        raise ConfigError(
            "[teacher] kind = \"openai\" needs urls and model: set [teacher] urls = "
            "[\"http://HOST:8000/v1\"] and model = \"NAME\", or export "
            f"{ENV_URL} (comma-separated for several replicas) and {ENV_MODEL}"
        )
    tools = table_to_dataclass("tools", doc.get("tools", {}), ToolsSettings)
    stages: dict[str, Any] = {}
    for spec in configured():
        stage, section = spec.name, spec.section
        table = dict(doc.get(section, {}))
        cls = stage_config_class(stage)
        names = {f.name for f in dataclasses.fields(cls)}
        if "seed" in names and "seed" not in table:
            table["seed"] = build.seed
        flags = {f.name for f in dataclasses.fields(cls) if f.type in (bool, "bool")}
        if "reasoning" in flags and "reasoning" not in table:
            table["reasoning"] = teacher.reasoning  # [teacher] reasoning sets the agent's prompt
        stages[stage] = table_to_dataclass(section, table, cls)
    return BuildConfig(build=build, corpus=corpus, teacher=teacher, tools=tools, stages=stages,
                       base_dir=base_dir,
                       api_key=api_key_from(env))


def _check_runner(build: BuildSettings) -> None:
    package = {"dask": ("prefect_dask", "prefect-dask", "prefect-dask"),
               "ray": ("prefect_ray", "prefect-ray and Ray", "'hopforge[ray]'")}
    if build.runner in package:
        module, needs, install = package[build.runner]
        if importlib.util.find_spec(module) is None:
            raise ConfigError(
                f"[build] runner = \"{build.runner}\" needs {needs}: `pip install {install}`, "
                "or use runner = \"local\""
            )


def _check_sources(corpus: CorpusSettings, base_dir: Path) -> None:

    if corpus.format and corpus.format not in FORMATS and corpus.format not in FORMAT_ALIASES:
        raise ConfigError(
            f"[corpus] format = {corpus.format!r} is not allowed: use one of "
            f"{', '.join([*FORMATS, *FORMAT_ALIASES])}, or leave it out to detect each file's"
        )
    builtin = [s for s in corpus.sources if s.startswith(BUILTIN_PREFIX)]
    if corpus.format and builtin and len(builtin) < len(corpus.sources):
        raise ConfigError(
            f"[corpus] format = {corpus.format!r} applies to every source, but "
            f"{builtin[0]!r} is a built-in corpus: leave format out to detect each file's"
        )
    if not corpus.sources:
        raise ConfigError(
            "[corpus] sources is empty: list files or folders (relative to the build file), "
            f"or use {', '.join(map(repr, BUILTIN_SOURCES))}"
        )
    for source in corpus.sources:
        if source.startswith(BUILTIN_PREFIX):
            if source not in BUILTIN_SOURCES:
                raise ConfigError(
                    f"[corpus] sources contains {source!r}: the built-in corpora are "
                    f"{', '.join(BUILTIN_SOURCES)}"
                )
        elif not (base_dir / source).exists():
            raise ConfigError(
                f"[corpus] sources contains {source!r}, which does not exist (looked at "
                f"{(base_dir / source).resolve()}); paths are relative to the build file"
            )


def load_config(
    path: str | Path, *, out: str | Path | None = None, env: Mapping[str, str] | None = None
) -> BuildConfig:
    """Read and validate a build file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the build file {path}: {exc.strerror}") from None
    return parse_config_text(text, base_dir=path.resolve().parent, default_name=path.stem,
                             out=out, env=env, origin=str(path))


def parse_config_text(
    text: str,
    *,
    base_dir: Path,
    default_name: str = "build",
    out: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    origin: str = "the build file",
) -> BuildConfig:
    """Parse TOML text and validate it (see `parse_config`)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin} is not valid TOML: {exc}") from None
    return parse_config(doc, base_dir=base_dir, default_name=default_name, out=out, env=env)


def read_frozen_hash(text: str) -> str:
    """The config hash in [meta] of a frozen BUILD/build.toml ("" if none)."""
    try:
        meta = tomllib.loads(text).get("meta", {})
    except tomllib.TOMLDecodeError:
        return ""
    return str(meta.get("config_hash", "")) if isinstance(meta, dict) else ""
