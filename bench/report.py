"""RESULTS.md: the figures' tables with the date, the machine and the versions they ran on."""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["Section", "environment", "write"]


@dataclass(frozen=True)
class Section:
    title: str
    text: str  # Markdown: an introduction, tables, notes


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _nproc() -> str:
    if shutil.which("nproc"):
        return subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return str(os.cpu_count())


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

    if not shutil.which("git"):
        return "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "graph", "server")
    return git("rev-parse", "--short", "HEAD") + (" with uncommitted changes" if dirty else "")


def environment(engine: str = "moto") -> str:
    """One paragraph: when, on what code, with which versions, on which DynamoDB engine
    (``bench/engines.py``)."""
    from .engines import described

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    packages = ", ".join(
        f"{name} {_version(name)}"
        for name in ("moto", "strawberry-graphql", "graphql-core", "aioboto3", "botocore")
    )
    return (
        f"Run on {now}; `nproc` = {_nproc()}; {platform.machine()} {platform.system()}; "
        f"Python {sys.version.split()[0]}; {packages}. Edgewise at commit {_commit()} "
        f"(graph/, server/). DynamoDB engine: {described(engine)}."
    )


def write(path: Path, intro: str, sections: list[Section]) -> None:
    """Write the report, replacing the previous one."""
    parts = ["# Edgewise benchmark results", "", intro, ""]
    for section in sections:
        parts += [f"## {section.title}", "", section.text.strip(), ""]
    path.write_text("\n".join(parts))
