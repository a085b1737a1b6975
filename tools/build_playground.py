"""setuptools' ``build_py``, plus GraphiQL's files: the wheel gets them at packaging time from the
npm packages that ``playground/package-lock.json`` pins (``npm ci``, unless
``playground/node_modules`` already holds exactly those versions), copied to
``server/http/playground_assets/`` with their licenses. Editable installs skip this: a checkout
serves ``playground/node_modules`` (``make playground``).

``pyproject.toml`` names this class in ``[tool.setuptools.cmdclass]``; the sdist carries this file
and the two npm files, so a wheel built from the sdist is built the same way.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from setuptools.command.build_py import build_py

PACKAGES = ("graphiql", "react", "react-dom")
# What server/http/playground.py serves (its ASSETS), and each package's license.
FILES = (
    "react/umd/react.production.min.js",
    "react-dom/umd/react-dom.production.min.js",
    "graphiql/graphiql.min.js",
    "graphiql/graphiql.min.css",
    *(f"{package}/LICENSE" for package in PACKAGES),
)
TARGET = Path("server") / "http" / "playground_assets"


def _pinned_versions_installed(playground: Path) -> bool:
    """Whether ``node_modules`` holds the lockfile's version of each package (what ``npm ci``
    would install), so a checkout's ``make playground`` is reused instead of run again."""
    lock = json.loads((playground / "package-lock.json").read_text())["packages"]
    for package in PACKAGES:
        manifest = playground / "node_modules" / package / "package.json"
        if not manifest.is_file():
            return False
        installed = json.loads(manifest.read_text()).get("version")
        if installed != lock[f"node_modules/{package}"]["version"]:
            return False
    return all((playground / "node_modules" / path).is_file() for path in FILES)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode and not self.dry_run:
            self._playground(Path("playground").resolve())

    def _playground(self, playground: Path) -> None:
        if not _pinned_versions_installed(playground):
            npm = shutil.which("npm")
            if npm is None:
                raise SystemExit(
                    "building the edgewise wheel needs npm: GraphiQL's files are installed at "
                    "packaging time from playground/package-lock.json (`npm ci`)"
                )
            command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
            subprocess.run(command, cwd=playground, check=True)
        target = Path(self.build_lib) / TARGET
        for path in FILES:
            destination = target / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(playground / "node_modules" / path, destination)
