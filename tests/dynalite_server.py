"""dynalite: a second DynamoDB-compatible server (Node.js, in memory), beside moto, so the tests
do not lean on one emulator's leniency. ``tests/dynalite/package.json`` pins it; ``make
dynalite`` (run by ``make test``) installs it with ``npm ci``. It has no transactions."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from graph.dynamo.embedded import LocalServer

__all__ = ["Dynalite"]

CLI = Path(__file__).parent / "dynalite" / "node_modules" / "dynalite" / "cli.js"


class Dynalite(LocalServer):
    """``with Dynalite() as db: db.url`` runs dynalite on a free loopback port until the block
    ends. Tables become ACTIVE at once (no CREATING delay)."""

    name = "dynalite"

    def start(self) -> str:
        node = shutil.which("node")
        if node is None or not CLI.is_file():
            raise RuntimeError(
                f"dynalite is not installed ({CLI} or `node` missing): run `make dynalite` "
                "(npm ci in tests/dynalite)"
            )
        delays = ["--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"]
        host = ["--host", "127.0.0.1", "--port", str(self.port)]
        return self._launch([node, str(CLI), *host, *delays])

    def answers(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True
