"""Child processes of the bench (the proxy, uvicorn servers), each stopped when its block ends."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from graph.dynamo.embedded import free_port

__all__ = ["ROOT", "Child", "child", "naive_server", "ours_server", "proxy"]

ROOT = Path(__file__).resolve().parent.parent
LOGS = Path(tempfile.gettempdir()) / "edgewise-bench"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the child gets SIGTERM when the bench dies, even by SIGKILL."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Child:
    """A Python child process listening on ``url``."""

    def __init__(
        self, name: str, argv: Sequence[str], port: int, ready_path: str, cwd: Path = ROOT
    ) -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = LOGS / f"{name}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, *argv],
                cwd=cwd,  # python -m imports the packages of this folder first
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        self._wait_ready(ready_path)

    def _wait_ready(self, path: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start; see {self.log}")
            try:
                with urllib.request.urlopen(self.url + path, timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer on {self.url} in {timeout:.0f}s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextmanager
def child(name: str, argv: Sequence[str], ready_path: str, cwd: Path = ROOT) -> Iterator[Child]:
    """Start ``python argv…`` in ``cwd`` (``{port}`` in argv is a free port), yield it, stop
    it."""
    port = free_port()
    started = Child(name, [a.replace("{port}", str(port)) for a in argv], port, ready_path, cwd)
    try:
        yield started
    finally:
        started.stop()


def proxy(upstream: str) -> contextlib.AbstractContextManager[Child]:
    """The metering proxy in front of ``upstream``."""
    argv = ["-m", "bench.proxy", "--upstream", upstream, "--port", "{port}"]
    return child("proxy", argv, "/__bench__/stats")


@contextmanager
def ours_server(
    dynamodb: str, table: str, workers: int = 1, *flags: str, cwd: Path = ROOT, name: str = "ours"
) -> Iterator[Child]:
    """Edgewise itself, as users run it: ``edgewise serve --workers N [flags]`` (uvicorn), once
    every worker has started; ``cwd``: the checkout whose code runs (another commit's tree)."""
    argv = ["-m", "server", "serve", "--dynamodb", dynamodb, "--table", table, "--no-demo"]
    if workers != 1:  # the default (and older commits know no --workers)
        argv += ["--workers", str(workers)]
    argv += ["--port", "{port}", *flags]
    with child(f"{name}-{workers}", argv, "/healthz", cwd) as started:
        deadline = time.monotonic() + 60
        while started.log.read_text().count("Application startup complete") < workers:
            if started.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"not every worker of ours started; see {started.log}")
            time.sleep(0.1)
        yield started


def naive_server(dynamodb: str, table: str) -> contextlib.AbstractContextManager[Child]:
    """The naive baseline under uvicorn, with the same defaults as ``edgewise serve``."""
    argv = ["-m", "bench.naive", "--dynamodb", dynamodb, "--table", table, "--port", "{port}"]
    return child("naive", argv, "/healthz")
