"""What a build reads once and hands to every stage: its directory, config and frozen build file.

The engine makes one `BuildContext` per build from the config it was given and passes it down;
a process that runs a stage of a build it did not prepare (a Prefect task, a cluster worker)
gets it from `open_build`, which reads BUILD/build.toml once per process and keeps it while
the file stays the same.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.remote import RemoteSearcher
from hopforge.flows.config.build_file import (
    ENV_KIND,
    ENV_MODEL,
    ENV_URL,
    BuildConfig,
    parse_config_text,
)
from hopforge.flows.config.teacher import TeacherSettings, open_settings
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.teacher.recording import ENV_RECORD
from hopforge.synth.teacher.wire import API_KEY_ENV


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildContext:
    """One build: its directory, its validated config and the text of BUILD/build.toml."""

    build: BuildDir
    config: BuildConfig
    frozen_toml: str  # as written into BUILD/build.toml (the dataset card quotes it)

    def teacher(self) -> ChatModel | None:
        """A client of the build's teacher ([teacher]); None for the scripted one."""
        return open_teacher(self.config)

    def searcher(self) -> RemoteSearcher | None:
        """A client of the search service of [tools] url; None to load the index in process."""
        return open_search(self.config)


def open_teacher(config: BuildConfig) -> ChatModel | None:
    """The teacher of [teacher]: None for the scripted one, else an OpenAI-compatible client
    made from [teacher] urls/model and this process's API key (each worker reads its own)."""
    if config.teacher.kind == "scripted":
        return None
    return open_settings(TeacherSettings(config=config.teacher, api_key=config.api_key or None,
                                         record=os.environ.get(ENV_RECORD, "")))


def open_search(config: BuildConfig) -> RemoteSearcher | None:
    """A client of the search service of [tools] url, or None to load the index in process."""
    return RemoteSearcher(config.tools.url) if config.tools.url else None


_LOCK = threading.Lock()
_OPENED: dict[tuple[object, ...], tuple[BuildConfig, str]] = {}
# what a config takes from the environment when it is loaded (teacher and key)
_ENV = (ENV_KIND, ENV_URL, ENV_MODEL, *API_KEY_ENV)


def open_build(build_root: str | Path) -> BuildContext:
    """The context of a prepared build directory, read from its build.toml once per process."""
    build = BuildDir.at(Path(build_root))
    path = build.config
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise HopforgeError(
            f"{build.root} has no build.toml; run `hopforge build CONFIG.toml` first") from None
    key = (str(path.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_size,
           tuple(os.environ.get(name, "") for name in _ENV))
    with _LOCK:
        opened = _OPENED.get(key)
    if opened is None:
        text = path.read_text(encoding="utf-8")
        config = parse_config_text(text, base_dir=path.resolve().parent, default_name=path.stem,
                                   origin=str(path))
        opened = (config, text)
        with _LOCK:
            _OPENED.clear()
            _OPENED[key] = opened
    return BuildContext(build=build, config=opened[0], frozen_toml=opened[1])
