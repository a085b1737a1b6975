"""Settings of one server process, from CLI flags and environment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    dynamodb: str = "embedded"
    table: str = "graph"
    demo: bool = True
    data_file: Path | None = None
    production: bool = False
