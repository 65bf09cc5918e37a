"""The teacher flags every model-driven command shares, and opening the teacher they describe.

Flags win over the environment: HOPFORGE_TEACHER (scripted | openai), HOPFORGE_TEACHER_URL
(one URL, or several separated by commas), HOPFORGE_TEACHER_MODEL, and HOPFORGE_API_KEY
(or OPENAI_API_KEY). The key is only ever read from the environment, never from a flag, so it
does not land in shell history or process listings. HOPFORGE_TEACHER_RECORD names a JSONL file
that gets every request and answer (`make check-teacher` sets it; tests replay such files).
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.config.build_file import (
    ENV_KIND,
    ENV_MODEL,
    ENV_URL,
    TeacherConfig,
)
from hopforge.synth.teacher.recording import ENV_RECORD, Recorder
from hopforge.synth.teacher.replicas import server_problem
from hopforge.synth.teacher.wire import STRUCTURED_OUTPUT_MODES, api_key_from

if TYPE_CHECKING:  # httpx is imported only when a model teacher is opened
    from hopforge.synth.teacher.openai_client import OpenAIChatModel

TEACHERS = ("scripted", "openai")
_DEFAULT = TeacherConfig()  # the flags' defaults are the [teacher] table's


class TeacherConfigError(HopforgeError):
    """The teacher flags or environment are incomplete or inconsistent."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TeacherSettings:
    """A resolved teacher: its [teacher] settings, and what only the environment gives."""

    config: TeacherConfig = field(default_factory=TeacherConfig)
    api_key: str | None = field(default=None, repr=False)
    record: str = ""  # a JSONL file to append every request and answer to

    @property
    def name(self) -> str:
        """The label records carry: "scripted" or "openai:MODEL"."""
        return self.config.label


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {value}")
    return value


def add_teacher_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --teacher, --teacher-url, --teacher-model, --concurrency and friends to `parser`."""
    group = parser.add_argument_group(
        "teacher",
        "The model that writes questions or solves them. `scripted` needs no model; `openai` "
        "talks to `vllm serve` or any OpenAI-compatible server. The API key is read from "
        "HOPFORGE_API_KEY (or OPENAI_API_KEY).",
    )
    group.add_argument(
        "--teacher",
        choices=TEACHERS,
        default=None,
        help="scripted (default; deterministic, no model) or openai (an OpenAI-compatible "
        "server); env HOPFORGE_TEACHER. Giving --teacher-url implies openai.",
    )
    group.add_argument(
        "--teacher-url",
        action="append",
        default=None,
        metavar="URL",
        help="base URL of the server, e.g. http://127.0.0.1:8000/v1; repeat it or separate "
        "with commas for several replicas; env HOPFORGE_TEACHER_URL",
    )
    group.add_argument(
        "--teacher-model",
        default=None,
        metavar="NAME",
        help="model name as the server knows it (GET URL/models); env HOPFORGE_TEACHER_MODEL",
    )
    _add_setting(group, "--concurrency", "concurrency", positive_int, "N",
                 "most teacher requests in flight at once, over all replicas")
    _add_setting(group, "--teacher-timeout", "read_timeout", _positive_float, "SECONDS",
                 "how long a server may stay silent before the request is retried; streamed "
                 "answers may take longer in all, as long as tokens keep coming")
    group.add_argument(
        "--no-stream",
        dest="stream",
        action="store_false",
        help="ask for whole answers instead of streams (server-sent events); the timeout then "
        "bounds each whole answer",
    )
    group.add_argument(
        "--reasoning",
        action="store_true",
        help="the teacher is a reasoning model: keep its reasoning on every turn and do not "
        "limit it in the agent's prompt ([teacher] reasoning = true)",
    )
    _add_setting(group, "--teacher-retries", "max_retries", int, "N",
                 "retries after a connection error, timeout, 429 or 5xx")
    group.add_argument(
        "--structured-output",
        choices=STRUCTURED_OUTPUT_MODES,
        default=_DEFAULT.structured_output,
        help="how a JSON schema is requested: OpenAI response_format (default), vLLM "
        "guided_json or structured_outputs, or none",
    )


def _add_setting(
    group: argparse._ArgumentGroup,
    flag: str,
    setting: str,
    kind: Callable[[str], Any],
    metavar: str,
    help: str,
) -> None:
    """A flag for one [teacher] setting: its default is the table's, and its help says so."""
    default = getattr(_DEFAULT, setting)
    group.add_argument(flag, type=kind, default=default, metavar=metavar,
                       help=f"{help} (default {default:g}; [teacher] {setting})")


def split_urls(values: Sequence[str] | str | None) -> tuple[str, ...]:
    """URLs from repeated and/or comma-separated values, in order, without duplicates."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    urls = [u.strip().rstrip("/") for item in items for u in item.split(",")]
    return tuple(dict.fromkeys(u for u in urls if u))


def resolve_teacher(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> TeacherSettings:
    """Settings from the flags in `args`, falling back to the environment."""
    env = os.environ if environ is None else environ
    flag_urls = split_urls(getattr(args, "teacher_url", None))
    teacher = getattr(args, "teacher", None) or ("openai" if flag_urls else None)
    teacher = teacher or env.get(ENV_KIND, "").strip() or "scripted"
    if teacher not in TEACHERS:
        raise TeacherConfigError(
            f"HOPFORGE_TEACHER={teacher!r} is not a teacher; use one of {', '.join(TEACHERS)}."
        )
    if teacher == "scripted":
        if flag_urls or getattr(args, "teacher_model", None):
            raise TeacherConfigError(
                "--teacher-url and --teacher-model only apply to --teacher openai; "
                "drop them or add --teacher openai."
            )
        return TeacherSettings()
    urls = flag_urls or split_urls(env.get(ENV_URL))
    model = (getattr(args, "teacher_model", None) or env.get(ENV_MODEL, "")).strip()
    problem = server_problem(urls, model)
    if problem is not None:
        raise TeacherConfigError(problem)
    retries = getattr(args, "teacher_retries", _DEFAULT.max_retries)
    if retries < 0:
        raise TeacherConfigError(f"--teacher-retries must be >= 0, got {retries}.")
    config = TeacherConfig(
        kind="openai",
        urls=urls,
        model=model,
        concurrency=getattr(args, "concurrency", _DEFAULT.concurrency),
        read_timeout=getattr(args, "teacher_timeout", _DEFAULT.read_timeout),
        max_retries=retries,
        structured_output=getattr(args, "structured_output", _DEFAULT.structured_output),
        stream=getattr(args, "stream", _DEFAULT.stream),
        reasoning=bool(getattr(args, "reasoning", _DEFAULT.reasoning)),
    )
    return TeacherSettings(config=config, api_key=api_key_from(env) or None,
                           record=env.get(ENV_RECORD, ""))


def open_teacher(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> OpenAIChatModel | None:
    """The OpenAI-compatible teacher the flags describe, or None for the scripted teacher."""
    return open_settings(resolve_teacher(args, environ))


def open_settings(settings: TeacherSettings) -> OpenAIChatModel | None:
    """An `OpenAIChatModel` for resolved settings (None when the teacher is scripted)."""
    t = settings.config
    if t.kind == "scripted":
        return None
    from hopforge.synth.teacher.openai_client import OpenAIChatModel

    quiet_http_logs()
    return OpenAIChatModel(
        t.urls,
        t.model,
        api_key=settings.api_key,
        concurrency=t.concurrency,
        read_timeout=t.read_timeout,
        max_retries=t.max_retries,
        structured_output=t.structured_output,
        stream=t.stream,
        recorder=Recorder(settings.record) if settings.record else None,
    )


def quiet_http_logs() -> None:
    """Drop httpx's one INFO line per request (thousands per stage) unless debugging."""
    httpx_log = logging.getLogger("httpx")
    if httpx_log.level == logging.NOTSET and not logging.getLogger().isEnabledFor(logging.DEBUG):
        httpx_log.setLevel(logging.WARNING)
