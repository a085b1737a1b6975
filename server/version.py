"""The version: the installed distribution's, whose one source is ``pyproject.toml``."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version

__all__ = ["version"]


def version() -> str:
    """``X.Y.Z`` of the installed ``edgewise`` distribution (``0+unknown`` when not installed)."""
    try:
        return distribution_version("edgewise")
    except PackageNotFoundError:
        return "0+unknown"
