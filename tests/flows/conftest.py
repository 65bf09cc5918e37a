"""Fixtures of the flow tests: the small build made with the default runner, the reference the
runner tests compare against."""

from pathlib import Path

import pytest
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import done_indexes
from hopforge.flows.build.engine import run_build
from hopforge.flows.config.build_file import load_config

from tests.helpers.runner_builds import write_config


@pytest.fixture(scope="session")
def local_build(tmp_path_factory: pytest.TempPathFactory, tiny_corpus_path: Path) -> BuildDir:
    """The small runner build with the default runner, without Prefect (tests only read it)."""
    tmp = tmp_path_factory.mktemp("local")
    build, _ = run_build(load_config(write_config(tmp, tiny_corpus_path, "local"),
                                     out=tmp / "local"))
    assert len(done_indexes(build.trajectories)) >= 4
    return build
