"""The package as people install it, outside the checkout: ``python -m build`` on a copy of the
checkout as a fresh clone has it (no node_modules, no .venv), the wheel installed into a fresh
virtualenv, the Dockerfile's entry point and health check run from that virtualenv (as a
non-root user when the test can), and GraphiQL rendered by headless Chromium with no request
leaving the machine.

One test, as building and installing take a while (pip's cache makes the install quick).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.embedded import free_port
from server.http.playground import ASSETS
from tests.http.test_playground import dump_dom
from tests.served import alive, children

ROOT = Path(__file__).resolve().parents[2]
IMAGE_VENV = "/opt/edgewise"  # where the Dockerfile installs the wheel
NOBODY = 65534
START_TIMEOUT = 90.0
# Chromium's own background services (time, component updates, sign-in, autofill), which it
# calls whatever page it shows; requests to any other host come from the page.
CHROMIUM_SERVICES = frozenset(
    {
        "clients2.google.com",
        "update.googleapis.com",
        "accounts.google.com",
        "content-autofill.googleapis.com",
        "optimizationguide-pa.googleapis.com",
    }
)
TARGET = re.compile(rb"^(?:CONNECT ([^:\s]+)|[A-Z]+ https?://([^/:\s]+))")


@dataclass(frozen=True)
class Image:
    """What the Dockerfile's final stage sets up: environment, user, entry point, health check."""

    env: dict[str, str]
    user: str
    entrypoint: list[str]
    healthcheck: list[str]
    run: list[str]


def final_stage(dockerfile: Path) -> Image:
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    instructions = [
        line.strip().split(maxsplit=1)
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    last = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    env: dict[str, str] = {}
    user, entrypoint, healthcheck, run = "", [], [], []
    for keyword, rest in instructions[last + 1 :]:
        if keyword == "ENV":
            env |= dict(token.split("=", 1) for token in shlex.split(rest))
        elif keyword == "USER":
            user = rest
        elif keyword == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif keyword == "HEALTHCHECK":
            healthcheck = json.loads(rest.split(" CMD ", 1)[1])
        elif keyword == "RUN":
            run.append(rest)
    return Image(env, user, entrypoint, healthcheck, run)


def fresh_clone(destination: Path) -> Path:
    """The checkout's files as a clone has them: tracked and new files, nothing git ignores."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is skipped
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def system_python() -> str | None:
    """A Python >= 3.11 with venv that a non-root user can run (this one may live under a
    private home), or None."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.access(candidate, os.X_OK):
            continue
        probe = "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"
        check = subprocess.run([candidate, "-c", probe], capture_output=True, check=False)
        if check.returncode == 0:
            return candidate
    return None


@contextlib.contextmanager
def venv_home(tmp_path: Path, non_root: bool) -> Iterator[Path]:
    """Where the virtualenv goes: tmp_path, or for a non-root run a private directory that the
    user can read (pytest's temporary root is root's alone), removed afterwards."""
    if not non_root:
        yield tmp_path
        return
    home = Path(tempfile.mkdtemp(prefix="edgewise-wheel-"))
    try:
        home.chmod(0o755)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextlib.asynccontextmanager
async def outbound_trap() -> AsyncIterator[tuple[str, list[str]]]:
    """An HTTP proxy that answers nothing and notes the host of every request: Chromium sends
    everything but loopback through it, so nothing leaves the machine, and what it notes is
    what would have."""
    seen: list[str] = []

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            line = await asyncio.wait_for(reader.readline(), 5)
            match = TARGET.match(line)
            seen.append((match.group(1) or match.group(2)).decode() if match else repr(line))
        writer.close()

    server = await asyncio.start_server(note, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.close()
        await server.wait_closed()


def run(*command: str, timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )


async def render(url: str, profile: Path) -> tuple[str, str, list[str]]:
    """GraphiQL's DOM in headless Chromium, Chromium's log, and the hosts of any request that
    tried to leave the machine."""
    async with outbound_trap() as (proxy, outbound):
        flags = [
            f"--proxy-server={proxy}",  # loopback still goes direct
            "--disable-features=AutofillServerCommunication,NetworkTimeServiceQuerying",
        ]
        dom, log = await dump_dom(url, profile, flags)
    return dom, log, outbound


@pytest.mark.browser
def test_wheel_installs_and_serves_graphiql_offline_as_the_dockerfile_runs_it(
    tmp_path: Path,
) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    image = final_stage(ROOT / "Dockerfile")
    assert image.user and image.user.split(":")[0] not in ("0", "root"), image.user
    assert image.entrypoint[:2] == ["edgewise", "serve"], image.entrypoint
    assert any(f"python -m venv {IMAGE_VENV}" in step for step in image.run), image.run

    # `python -m build` makes the sdist, then the wheel from the sdist: npm ci runs there. (With
    # the test's own setuptools: an isolated build env would only add a download of it.)
    clone = fresh_clone(tmp_path / "clone")
    dist = str(tmp_path / "dist")
    built = run(
        sys.executable, "-m", "build", "--no-isolation", "-o", dist, str(clone), timeout=300
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    [wheel] = (tmp_path / "dist").glob("*.whl")
    assert wheel.name == f"edgewise-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for path in ASSETS.values():
        assert f"server/http/playground_assets/{path}" in names, path
    assert {"server/http/playground_assets/graphiql/LICENSE", "server/cli/main.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "tools/", "playground/", "bench/"))]

    python = system_python() if os.geteuid() == 0 else None
    non_root = python is not None  # else: run as this user (see the module docstring)
    with venv_home(tmp_path, non_root) as home:
        venv = home / "venv"
        # The Dockerfile's `python -m venv` and `pip install`, with this pip (--python): the
        # same install, without seeding the new venv with a pip of its own.
        made = run(python or sys.executable, "-m", "venv", "--without-pip", str(venv), timeout=120)
        assert made.returncode == 0, made.stderr
        pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
        # --no-compile: quicker; the served process compiles what it imports
        installed = run(
            *pip, "install", "--quiet", "--no-compile", f"{wheel}[embedded]", timeout=600
        )
        assert installed.returncode == 0, installed.stderr[-3000:]
        site = next(venv.glob("lib/python3.*/site-packages"))
        # The Dockerfile's `edgewise build` steps: the shipped models compiled in the image.
        builds = [
            part.strip().replace(IMAGE_VENV, str(venv))
            for step in image.run
            for part in step.split("&&")
            if " build --model " in part
        ]
        assert builds, image.run
        for build in builds:
            compiled = run(*shlex.split(build), timeout=120)
            assert compiled.returncode == 0, compiled.stderr

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("EDGEWISE_", "PYTHON", "VIRTUAL_ENV", "AWS_"))
        }
        for name, value in image.env.items():
            env[name] = value.replace("$PATH", env.get("PATH", "")).replace(IMAGE_VENV, str(venv))
        port = free_port()
        env |= {"EDGEWISE_HOST": "127.0.0.1", "EDGEWISE_PORT": str(port), "HOME": str(home)}
        as_user: dict[str, Any] = (
            {"user": NOBODY, "group": NOBODY, "extra_groups": []} if non_root else {}
        )

        shown = run(str(venv / "bin" / "edgewise"), "--version", timeout=60, cwd=home, env=env)
        assert shown.stdout.strip() == f"edgewise {version}", shown

        def healthcheck() -> int:
            return run(*image.healthcheck, timeout=10, cwd=home, env=env, **as_user).returncode

        assert healthcheck() != 0  # nothing listens yet: the check can fail
        log = tmp_path / "serve.log"
        with log.open("w") as output:
            process = subprocess.Popen(
                image.entrypoint, cwd=home, env=env, stdout=output, stderr=output, **as_user
            )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while healthcheck() != 0:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
            if non_root:
                assert Path(f"/proc/{process.pid}").stat().st_uid == NOBODY

            url = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=url, timeout=30) as client:
                assert client.get("/readyz").status_code == 200
                query = {"query": '{ user(id: "alice") { name } }'}
                assert client.post("/graphql", json=query).json() == {
                    "data": {"user": {"name": "Alice"}}
                }
                script = client.get("/playground/graphiql.js")
            assert script.status_code == 200
            packaged = site / "server" / "http" / "playground_assets" / ASSETS["graphiql.js"]
            assert script.content == packaged.read_bytes()

            dom, chromium_log, outbound = asyncio.run(
                render(f"{url}/graphql", tmp_path / "profile")
            )
            assert "Loading GraphiQL…" not in dom, chromium_log
            assert re.search(r'class="[^"]*\bgraphiql-container\b', dom), dom[:2000]
            assert re.search(r'class="[^"]*\bCodeMirror\b', dom), dom[:2000]
            assert set(outbound) <= CHROMIUM_SERVICES, outbound  # the page asked for none
            served = log.read_text()
            for name in ASSETS:
                assert re.search(rf'"GET /playground/{re.escape(name)} HTTP/1.1" 200', served), name
        finally:
            moto = children(process.pid)
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            for child in moto:
                if alive(child):
                    os.kill(child, signal.SIGKILL)
