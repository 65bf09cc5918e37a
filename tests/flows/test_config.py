"""The build file: validation messages, hashes, frozen copies and relative paths."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hopforge.flows.config.build_file import STAGES, BuildConfig, load_config, parse_config_text
from hopforge.flows.config.demo import demo_config
from hopforge.flows.config.sections import ConfigError


def write(tmp_path: Path, text: str, corpus: Path, name: str = "b.toml") -> Path:
    path = tmp_path / name
    body = f'[corpus]\nsources = ["{corpus}"]\n' + textwrap.dedent(text)
    path.write_text(body, encoding="utf-8")
    return path


def load(tmp_path: Path, text: str, corpus: Path, **kw: object) -> BuildConfig:
    return load_config(write(tmp_path, text, corpus), env={}, **kw)  # type: ignore[arg-type]


def error(tmp_path: Path, text: str, corpus: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text, corpus)
    return str(info.value)


def test_unknown_key_names_it_and_lists_the_allowed_ones(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, "[index]\npassage_wrods = 100\n", tiny_corpus_path)
    assert "'passage_wrods'" in msg and "[index]" in msg
    assert "passage_words" in msg and "k1" in msg  # the allowed keys are listed


def test_unknown_table_is_refused(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, "[indx]\ndense = false\n", tiny_corpus_path)
    assert "'indx'" in msg and "index" in msg and "trajectories" in msg


def test_wrong_type_names_key_value_and_expected_type(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, '[index]\npassage_words = "big"\n', tiny_corpus_path)
    assert "[index] passage_words" in msg and '"big"' in msg and "integer" in msg
    msg = error(tmp_path, "[index]\ndense = 1\n", tiny_corpus_path)
    assert "[index] dense" in msg and "true or false" in msg


def test_choice_lists_the_allowed_values(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, '[build]\nrunner = "spark"\n', tiny_corpus_path)
    assert "[build] runner" in msg and '"spark"' in msg
    assert all(r in msg for r in ('"local"', '"dask"', '"ray"'))


def test_stage_range_errors_carry_the_table_name(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, "[index]\nb = 2.0\n", tiny_corpus_path)
    assert msg.startswith("[index]") and "b=2.0" in msg.replace(" ", "")


def test_nested_tables_are_checked_too(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, "[trajectories.faults]\nempty = \"often\"\n", tiny_corpus_path)
    assert "faults" in msg and "empty" in msg and '"often"' in msg
    ok = load(tmp_path, "[trajectories.faults]\nempty = 0.1\n", tiny_corpus_path)
    assert ok.stages["trajectories"].faults.empty == 0.1


def test_invalid_toml_and_missing_file(tmp_path, tiny_corpus_path):
    msg = error(tmp_path, "[index\n", tiny_corpus_path)
    assert "not valid TOML" in msg
    with pytest.raises(ConfigError, match="cannot read the build file"):
        load_config(tmp_path / "absent.toml")


def test_sources_are_relative_to_the_build_file(tmp_path, tiny_corpus_path, monkeypatch):
    (tmp_path / "conf" / "data").mkdir(parents=True)
    (tmp_path / "conf" / "data" / "c.jsonl").write_bytes(tiny_corpus_path.read_bytes())
    path = tmp_path / "conf" / "b.toml"
    path.write_text('[corpus]\nsources = ["data/c.jsonl"]\n[build]\nout = "out/x"\n')
    monkeypatch.chdir(tmp_path)  # not the config's folder
    config = load_config(path, env={})
    assert config.source_paths() == [str((tmp_path / "conf" / "data" / "c.jsonl").resolve())]
    assert config.out_dir() == tmp_path / "conf" / "out" / "x"
    assert config.name == "b"  # the file's stem when [build] name is absent
    path.write_text('[corpus]\nsources = ["data/missing.jsonl"]\n')
    with pytest.raises(ConfigError, match="missing.jsonl.*relative to the build file"):
        load_config(path, env={})


def test_out_flag_overrides_and_date_template(tmp_path, tiny_corpus_path):
    config = load(tmp_path, '[build]\nout = "b-{date}"\n', tiny_corpus_path)
    assert config.out_dir("2030-01-02") == tmp_path / "b-2030-01-02"
    config = load(tmp_path, "", tiny_corpus_path, out=tmp_path / "elsewhere")
    assert config.out_dir() == tmp_path / "elsewhere"


def test_hash_is_stable_and_tracks_only_what_shapes_the_data(tmp_path, tiny_corpus_path):
    base = load(tmp_path, "", tiny_corpus_path)
    again = load(tmp_path, "", tiny_corpus_path)
    assert base.config_hash() == again.config_hash()
    # operational settings do not change the data
    ops = load(tmp_path, '[build]\nrunner = "dask"\nworkers = 4\n', tiny_corpus_path)
    assert ops.config_hash() == base.config_hash()
    # a stage's setting changes that stage's hash only
    idx = load(tmp_path, "[index]\nk1 = 1.2\n", tiny_corpus_path)
    changed = {s for s in STAGES if idx.stage_hashes()[s] != base.stage_hashes()[s]}
    assert changed == {"index"}
    # the seed shapes every stage after ingest
    seeded = load(tmp_path, "[build]\nseed = 7\n", tiny_corpus_path)
    changed = {s for s in STAGES if seeded.stage_hashes()[s] != base.stage_hashes()[s]}
    assert changed == set(STAGES) - {"ingest"}
    # an explicitly written default is the same config
    explicit = load(tmp_path, "[index]\nk1 = 1.5\n", tiny_corpus_path)
    assert explicit.config_hash() == base.config_hash()


def test_frozen_copy_round_trips_with_the_same_hash(tmp_path, tiny_corpus_path):
    config = load(tmp_path, "[index]\ndense = false\n[trajectories]\nsamples = 2\n",
                  tiny_corpus_path)
    text = config.frozen_toml()
    again = parse_config_text(text, base_dir=Path("/"), env={})
    assert again.config_hash() == config.config_hash()
    assert again.frozen_toml() == text
    assert f'config_hash = "{config.config_hash()}"' in text


def test_teacher_from_environment_and_key_never_written(tmp_path, tiny_corpus_path):
    path = write(tmp_path, '[teacher]\nkind = "openai"\n', tiny_corpus_path)
    with pytest.raises(ConfigError, match="HOPFORGE_TEACHER_URL"):
        load_config(path, env={})
    env = {"HOPFORGE_TEACHER_URL": "http://a:8000/v1, http://b:8000/v1/",
           "HOPFORGE_TEACHER_MODEL": "m", "HOPFORGE_API_KEY": "sekrit"}
    config = load_config(path, env=env)
    assert config.teacher.urls == ("http://a:8000/v1", "http://b:8000/v1")
    assert config.teacher.model == "m" and config.api_key == "sekrit"
    assert "sekrit" not in config.frozen_toml() and "sekrit" not in repr(config)
    # the file wins over the environment; URLs do not change the hash, the model does
    other = load_config(write(tmp_path, '[teacher]\nkind = "openai"\nurls = ["http://c/v1"]\n'
                              'model = "m"\n', tiny_corpus_path, name="c.toml"), env=env)
    assert other.teacher.urls == ("http://c/v1",)
    assert other.config_hash() == config.config_hash()
    renamed = load_config(path, env={**env, "HOPFORGE_TEACHER_MODEL": "m2"})
    assert renamed.stage_hashes()["trajectories"] != config.stage_hashes()["trajectories"]
    msg = error(tmp_path, '[teacher]\nurls = ["ftp://x"]\n', tiny_corpus_path)
    assert "ftp://x" in msg and "http" in msg


def test_corpus_checks(tmp_path, tiny_corpus_path):
    path = tmp_path / "b.toml"
    path.write_text(f'[corpus]\nsources = ["{tiny_corpus_path}"]\nformat = "csv"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert "[corpus] format" in str(info.value) and "csv" in str(info.value)
    assert "jsonl" in str(info.value)
    path.write_text('[corpus]\nsources = ["builtin:encyclopedia"]\n')
    with pytest.raises(ConfigError, match="builtin:jargon"):
        load_config(path, env={})
    path.write_text("[build]\nname = \"x\"\n")
    with pytest.raises(ConfigError, match="sources is empty"):
        load_config(path, env={})


def test_demo_config_is_valid_and_uses_the_builtin_corpus(tmp_path):
    config = demo_config(tmp_path / "demo")
    assert config.corpus.sources == ("builtin:jargon",)
    assert config.teacher.kind == "scripted"
    assert config.out_dir() == tmp_path / "demo"


def test_several_teacher_urls_reach_the_client(tmp_path, tiny_corpus_path):
    from hopforge.flows.build.context import open_teacher

    path = write(tmp_path, '[teacher]\nkind = "openai"\nmodel = "m"\nconcurrency = 7\n'
                 'urls = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]\n',
                 tiny_corpus_path)
    config = load_config(path, env={"HOPFORGE_API_KEY": "k"})
    model = open_teacher(config)
    assert model.base_urls == ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
    assert model.name == "openai:m"
    scripted = load_config(write(tmp_path, "", tiny_corpus_path, name="s.toml"), env={})
    assert open_teacher(scripted) is None


def test_speed_settings_do_not_change_the_hash(tmp_path, tiny_corpus_path):
    base = load(tmp_path, "", tiny_corpus_path)
    fast = load(tmp_path, "[trajectories]\nconcurrency = 64\n[questions]\nconcurrency = 2\n"
                "[index]\nbatch_size = 8\n", tiny_corpus_path)
    assert fast.stage_hashes() == base.stage_hashes()
    more = load(tmp_path, "[questions]\nn = 7\n", tiny_corpus_path)
    assert more.stage_hashes()["questions"] != base.stage_hashes()["questions"]


def test_every_stage_names_what_exists(tmp_path):
    """The registry's stages resolve: config classes, their fields and build folders."""
    import dataclasses

    from hopforge.corpus.layout import BuildDir
    from hopforge.flows.build.registry import REGISTRY, PartedStage, Stage

    build = BuildDir.at(tmp_path)
    assert STAGES == tuple(s.name for s in REGISTRY)
    for stage in REGISTRY:
        assert type(stage).run is not Stage.run, stage.name
        assert all(isinstance(getattr(build, out), Path) for out in stage.outputs), stage.name
        if stage.config is not None:
            fields = {f.name for f in dataclasses.fields(stage.config)}
            assert stage.operational <= fields, stage.name
        else:
            assert not stage.operational
    assert [s.name for s in REGISTRY if isinstance(s, PartedStage)] == ["trajectories"]
    assert [s.name for s in REGISTRY if s.parted] == ["trajectories"]
    assert [s.name for s in REGISTRY if not s.cpu] == ["questions", "trajectories"]


def test_a_reasoning_teacher_gets_a_prompt_that_does_not_limit_its_reasoning(
        tmp_path, tiny_corpus_path):
    from hopforge.corpus.tools import default_schemas
    from hopforge.synth import prompts
    from hopforge.synth.trajectories.loop import system_prompt

    plain = load(tmp_path, "", tiny_corpus_path)
    assert plain.teacher.reasoning is False and plain.stages["trajectories"].reasoning is False
    config = load(tmp_path, """
        [teacher]
        kind = "openai"
        urls = ["http://127.0.0.1:8000/v1"]
        model = "r1-distill"
        reasoning = true
    """, tiny_corpus_path)
    assert config.stages["trajectories"].reasoning is True  # [teacher] sets the agent's prompt
    assert config.stages["export"].reasoning == "keep"  # the export's own choice is untouched
    schemas = default_schemas()
    brief = system_prompt(schemas, text_calls=False)
    thinking = system_prompt(schemas, text_calls=False, reasoning=True)
    assert prompts.AGENT_BRIEF in brief and "short sentence" not in thinking
    assert prompts.AGENT_REASONING in thinking and '"search"' not in thinking
    assert '"search"' in system_prompt(schemas, text_calls=True)  # no native tools: in the text
    message = error(tmp_path, '[export]\nreasoning = "all"\n', tiny_corpus_path)
    assert 'reasoning = "all"' in message and "keep" in message and "drop" in message
