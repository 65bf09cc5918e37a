"""The shared teacher flags: parsing, environment fallback, errors, and opening a real client."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from hopforge.flows.config.build_file import TeacherConfig
from hopforge.flows.config.teacher import (
    TeacherConfigError,
    add_teacher_arguments,
    open_teacher,
    resolve_teacher,
    split_urls,
)
from hopforge.synth.teacher.openai_client import OpenAIChatModel
from hopforge.synth.teacher.wire import api_key_from

from tests.helpers.openai_server import OpenAITestServer, Reply


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hopforge questions")
    add_teacher_arguments(parser)
    return parser.parse_args(list(argv))


def test_default_is_the_scripted_teacher() -> None:
    settings = resolve_teacher(parse(), environ={})
    assert settings.config.kind == "scripted" and settings.name == "scripted"
    assert open_teacher(parse(), environ={}) is None


def test_flags_describe_an_openai_teacher() -> None:
    args = parse(
        "--teacher", "openai",
        "--teacher-url", "http://a:8000/v1,http://b:8000/v1/",
        "--teacher-url", "http://c:8000/v1",
        "--teacher-model", "Qwen/Qwen3-8B",
        "--concurrency", "64",
        "--teacher-timeout", "30",
        "--structured-output", "guided_json",
    )  # fmt: skip
    settings = resolve_teacher(args, environ={"HOPFORGE_API_KEY": "k1"})
    assert settings.config.urls == ("http://a:8000/v1", "http://b:8000/v1", "http://c:8000/v1")
    assert (settings.config.model, settings.config.concurrency, settings.config.read_timeout) == (
        "Qwen/Qwen3-8B",
        64,
        30,
    )
    assert settings.config.structured_output == "guided_json"
    assert settings.api_key == "k1" and "k1" not in repr(settings)
    assert settings.name == "openai:Qwen/Qwen3-8B"


def test_flags_left_out_mean_what_an_empty_teacher_table_means() -> None:
    settings = resolve_teacher(parse("--teacher-url", "http://a/v1", "--teacher-model", "m"), {})
    assert settings.config == TeacherConfig(kind="openai", urls=("http://a/v1",), model="m")


def test_url_flag_implies_openai() -> None:
    settings = resolve_teacher(parse("--teacher-url", "http://a/v1", "--teacher-model", "m"), {})
    assert settings.config.kind == "openai"


def test_environment_fills_in_missing_flags() -> None:
    env = {
        "HOPFORGE_TEACHER": "openai",
        "HOPFORGE_TEACHER_URL": "http://x:1/v1, http://y:2/v1",
        "HOPFORGE_TEACHER_MODEL": "env-model",
        "OPENAI_API_KEY": "k2",
    }
    settings = resolve_teacher(parse(), environ=env)
    assert settings.config.urls == ("http://x:1/v1", "http://y:2/v1")
    assert (settings.config.model, settings.api_key) == ("env-model", "k2")
    flags = parse("--teacher-url", "http://z:3/v1", "--teacher-model", "flag-model")
    settings = resolve_teacher(flags, environ={**env, "HOPFORGE_API_KEY": "k1"})
    assert (settings.config.urls, settings.config.model, settings.api_key) == (
        ("http://z:3/v1",),
        "flag-model",
        "k1",
    )


def test_one_order_of_key_variables_for_commands_builds_and_the_judge() -> None:
    from hopforge.flows.config.build_file import parse_config
    from hopforge.flows.stages.filters import JUDGE_KEY_ENV

    env = {"OPENAI_API_KEY": "openai", "HOPFORGE_API_KEY": "hopforge", JUDGE_KEY_ENV: "judge"}
    assert api_key_from(env) == "hopforge" and api_key_from({"OPENAI_API_KEY": "o"}) == "o"
    assert api_key_from(env, first=(JUDGE_KEY_ENV,)) == "judge"
    assert api_key_from({"HOPFORGE_API_KEY": "", JUDGE_KEY_ENV: ""}) == ""
    flags = parse("--teacher-url", "http://z:3/v1", "--teacher-model", "m")
    assert resolve_teacher(flags, environ=env).api_key == "hopforge"
    build = parse_config({"build": {"name": "b"}, "corpus": {"sources": ["builtin:jargon"]}},
                         base_dir=Path("."),
                         env=env)
    assert build.api_key == "hopforge"


@pytest.mark.parametrize(
    ("argv", "env", "match"),
    [
        (["--teacher", "openai", "--teacher-model", "m"], {}, "HOPFORGE_TEACHER_URL"),
        (["--teacher", "openai", "--teacher-url", "http://a/v1"], {}, "HOPFORGE_TEACHER_MODEL"),
        (["--teacher-url", "localhost:8000", "--teacher-model", "m"], {}, "http://"),
        (["--teacher", "scripted", "--teacher-model", "m"], {}, "--teacher openai"),
        ([], {"HOPFORGE_TEACHER": "gpt"}, "scripted, openai"),
        (
            ["--teacher-url", "http://a/v1", "--teacher-model", "m", "--teacher-retries", "-1"],
            {},
            "--teacher-retries",
        ),
    ],
)
def test_missing_or_bad_settings_say_what_to_do(
    argv: list[str], env: dict[str, str], match: str
) -> None:
    with pytest.raises(TeacherConfigError, match=match):
        resolve_teacher(parse(*argv), environ=env)


@pytest.mark.parametrize(
    "argv", [["--concurrency", "0"], ["--teacher-timeout", "-1"], ["--teacher", "gpt"]]
)
def test_bad_flag_values_are_rejected_by_the_parser(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse(*argv)


def test_split_urls() -> None:
    assert split_urls(None) == ()
    assert split_urls(" http://a/v1/ ,,http://a/v1") == ("http://a/v1",)


def test_open_teacher_talks_to_the_server(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue(Reply.text("ready"))
    args = parse("--teacher-url", openai_server.base_url, "--teacher-model", "test-model")
    model = open_teacher(args, environ={"HOPFORGE_API_KEY": "sk-t"})
    assert isinstance(model, OpenAIChatModel) and model.concurrency == 16

    async def ask() -> str:
        async with model as m:
            return (await m.complete([{"role": "user", "content": "hi"}])).text

    assert asyncio.run(ask()) == "ready"
    assert openai_server.headers[0]["Authorization"] == "Bearer sk-t"


def test_no_stream_flag_and_the_recording_file(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue(Reply.text("whole"))
    record = tmp_path / "requests.jsonl"
    args = parse("--teacher-url", openai_server.base_url, "--teacher-model", "test-model",
                 "--no-stream")
    model = open_teacher(args, environ={"HOPFORGE_TEACHER_RECORD": str(record)})
    assert isinstance(model, OpenAIChatModel) and model.stream is False
    assert resolve_teacher(parse("--teacher-url", "http://a/v1", "--teacher-model", "m"),
                           environ={}).config.stream is True

    async def ask() -> str:
        async with model as m:
            return (await m.complete([{"role": "user", "content": "hi"}])).text

    assert asyncio.run(ask()) == "whole"
    assert "stream" not in openai_server.requests[0]
    (row,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert row["stream"] is False and row["response"]["choices"][0]["message"]["content"] == "whole"
