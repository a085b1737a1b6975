"""dynalite: a second DynamoDB-compatible server (Node.js, in memory), beside moto, so the tests
do not lean on one emulator's leniency. ``tests/dynalite/package.json`` pins it; ``make
dynalite`` (run by ``make test``) installs it with ``npm ci``. It has no transactions."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from graph.dynamo.embedded import free_port

__all__ = ["Dynalite"]

CLI = Path(__file__).parent / "dynalite" / "node_modules" / "dynalite" / "cli.js"


class Dynalite:
    """``with Dynalite() as db: db.url`` runs dynalite on a free loopback port until the block
    ends. Tables become ACTIVE at once (no CREATING delay)."""

    def __init__(self, start_timeout: float = 20.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        node = shutil.which("node")
        if node is None or not CLI.is_file():
            raise RuntimeError(
                f"dynalite is not installed ({CLI} or `node` missing): run `make dynalite` "
                "(npm ci in tests/dynalite)"
            )
        delays = ["--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"]
        self.process = subprocess.Popen(
            [node, str(CLI), "--host", "127.0.0.1", "--port", str(self.port), *delays],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dynalite exited at start with code {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self.url
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"dynalite did not listen on {self.url} in {self.start_timeout:.0f}s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> Dynalite:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
