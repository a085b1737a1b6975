"""Running a Node.js script of this folder, or of ``tests/clients`` (their packages in
``node_modules``, installed by ``make test`` with ``npm ci``) and reading the one JSON value it
prints."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CLIENTS", "HERE", "run_node"]

HERE = Path(__file__).parent
CLIENTS = HERE.parent / "clients"  # Relay, Apollo Federation, graphql-schema-linter


async def run_node(script: str, *args: str, seconds: float = 60.0, folder: Path = HERE) -> Any:
    """``node folder/script args…``; fails the test (never skips) when node or the packages
    are missing, when it runs over ``seconds``, or exits non-zero. Kills its process group."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("`node` is not on PATH: the tests with real clients need Node.js 18 or later")
    if not (folder / "node_modules" / ".package-lock.json").exists():
        pytest.fail(
            f"the npm packages of tests/{folder.name} are not installed: run `make test` (npm ci)"
        )
    process = await asyncio.create_subprocess_exec(
        node,
        str(folder / script),
        *args,
        cwd=folder,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group: a browser it starts goes with it
    )
    try:
        async with asyncio.timeout(seconds):
            stdout, stderr = await process.communicate()
    except TimeoutError:
        pytest.fail(f"node {script} did not finish within {seconds:.0f} s")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    assert process.returncode == 0, f"node {script} failed:\n{stderr.decode(errors='replace')}"
    return json.loads(stdout)
