"""The embedded DynamoDB: a moto server child process on a free loopback port, answering one
request at a time (:mod:`graph.dynamo.moto_child` says why)."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from types import TracebackType
from typing import Any, Self

__all__ = ["EmbeddedDynamoDB", "LocalServer", "MissingEmbedded", "free_port"]

CHILD = "graph.dynamo.moto_child"


class MissingEmbedded(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the child gets SIGTERM when the parent dies, even by SIGKILL."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalServer:
    """A DynamoDB engine run as a child process on a free loopback port: ``with Server() as db:
    db.url`` runs it until the block ends. A subclass's ``start`` launches it and waits until
    ``answers()``; ``stop`` ends it (SIGTERM, then SIGKILL)."""

    name = "the server"

    def __init__(self, port: int | None = None, start_timeout: float = 30.0) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        raise NotImplementedError

    def answers(self) -> bool:
        """True once the server answers (an ``OSError`` counts as not yet)."""
        raise NotImplementedError

    def _launch(self, command: list[str], **popen: Any) -> str:
        """Start ``command`` in a session of its own (a terminal's Ctrl-C reaches the API only,
        which then saves what it must through this server before stopping it), dying with this
        process, and wait until it answers."""
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
            start_new_session=True,
            **popen,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited at start with code {self.process.returncode}"
                )
            try:
                if self.answers():
                    return self.url
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer on {self.url} in {self.start_timeout:.0f}s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class EmbeddedDynamoDB(LocalServer):
    """``with EmbeddedDynamoDB() as db: db.url`` runs moto's server until the block ends."""

    name = "moto server"

    def start(self) -> str:
        if importlib.util.find_spec("moto") is None:
            raise MissingEmbedded(
                "--dynamodb embedded needs moto's server: pip install 'edgewise[embedded]' "
                "(or `make serve`, which installs it), or pass --dynamodb URL|aws"
            )
        return self._launch([sys.executable, "-m", CHILD, "-H", "127.0.0.1", "-p", str(self.port)])

    def answers(self) -> bool:
        with urllib.request.urlopen(f"{self.url}/moto-api/data.json", timeout=1):
            return True

    def reset(self) -> None:
        """Forget every table (moto's reset API)."""
        request = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass
