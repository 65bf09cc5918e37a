"""Paths of a build directory (see DESIGN.md, "The build directory")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class BuildDir:
    root: Path

    @classmethod
    def at(cls, path: str | Path) -> BuildDir:
        return cls(Path(path))

    @property
    def config(self) -> Path:
        return self.root / "build.toml"

    @property
    def corpus(self) -> Path:
        return self.root / "corpus"

    @property
    def links(self) -> Path:
        return self.corpus / "links.parquet"

    @property
    def index(self) -> Path:
        return self.root / "index"

    @property
    def questions(self) -> Path:
        return self.root / "questions"

    @property
    def trajectories(self) -> Path:
        return self.root / "trajectories"

    @property
    def scores(self) -> Path:
        return self.root / "scores"

    @property
    def pairs(self) -> Path:
        return self.root / "pairs"

    @property
    def filtered(self) -> Path:
        return self.root / "filtered"

    @property
    def export(self) -> Path:
        return self.root / "export"

    @property
    def reports(self) -> Path:
        return self.root / "reports"
