"""DynamoDB Local: AWS's own DynamoDB emulator (Java, in memory), the embedded engine of
``edgewise serve --dynamodb local``, and beside moto in the tests.

It needs ``java`` (Debian's ``openjdk-17-jre-headless``) and the directory holding
``DynamoDBLocal.jar`` and its ``DynamoDBLocal_lib/``: ``$EDGEWISE_DYNAMODB_LOCAL``, else the one
the npm package ``amplify-dynamodb-simulator`` ships, in ``./node_modules`` or, in a checkout of
this repository, in ``tests/dynamodb-local/node_modules`` (``make dynamodb-local`` installs it
there, with the JRE where ``java`` is missing). Nothing is downloaded at run time. It has
transactions with idempotency tokens, streams, TTL and AWS's validation of requests, which moto
and dynalite are lenient about."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graph.dynamo.embedded import EmbeddedDynamoDB, LocalServer

__all__ = ["ENV", "DynamoDBLocal", "MissingDynamoDBLocal", "jar_dir", "missing", "start_embedded"]

ENV = "EDGEWISE_DYNAMODB_LOCAL"
PACKAGE = Path("node_modules") / "amplify-dynamodb-simulator" / "emulator"
CHECKOUT = Path(__file__).parents[2] / "tests" / "dynamodb-local"
INSTALL = (
    "install Java (Debian: apt-get install openjdk-17-jre-headless) and the jar (npm install "
    f"amplify-dynamodb-simulator, then {ENV}=node_modules/amplify-dynamodb-simulator/emulator; "
    "in a checkout of Edgewise: make dynamodb-local), or use --dynamodb embedded (moto)"
)


class MissingDynamoDBLocal(RuntimeError):
    """``java`` or ``DynamoDBLocal.jar`` is not there; the message says how to install them."""


def jar_dir() -> Path:
    """The directory holding ``DynamoDBLocal.jar``: ``$EDGEWISE_DYNAMODB_LOCAL`` when set, else
    the npm package's in the working directory, else the checkout's (the last when none has it)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return Path(given)
    for base in (Path.cwd(), CHECKOUT):
        if (base / PACKAGE / "DynamoDBLocal.jar").is_file():
            return base / PACKAGE
    return CHECKOUT / PACKAGE


def missing() -> str | None:
    """Why DynamoDB Local cannot start here, and how to install it; None when it can."""
    if shutil.which("java") is None:
        return f"DynamoDB Local needs `java`, which is not on PATH: {INSTALL}"
    jar = jar_dir() / "DynamoDBLocal.jar"
    if not jar.is_file():
        return f"DynamoDB Local is not installed (no {jar}): {INSTALL}"
    return None


# A test run is too short for the JVM's optimizing compiler to pay back: with the first JIT tier
# only and the serial GC, DynamoDB Local answered in 1.9 s instead of 3.1-3.7 s from start, and
# test_replicas.py with test_team_tables.py cost 30 CPU-seconds instead of 41 (2 cores, shared).
# It holds about 200 MB resident; one server per pytest worker.
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m"]


class DynamoDBLocal(LocalServer):
    """``with DynamoDBLocal() as db: db.url`` runs DynamoDB Local on a free loopback port until
    the block ends (``-inMemory -sharedDb``: every credential and region sees one database).
    ``reset()`` deletes every table, as ``EmbeddedDynamoDB.reset()`` forgets moto's."""

    name = "DynamoDB Local"

    def __init__(
        self, start_timeout: float = 60.0, jvm_options: Sequence[str] = JVM_OPTIONS
    ) -> None:
        super().__init__(start_timeout=start_timeout)
        self.jvm_options = list(jvm_options)
        self.directory: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> str:
        problem = missing()
        if problem is not None:
            raise MissingDynamoDBLocal(problem)
        java = shutil.which("java")
        assert java is not None  # missing() said so
        directory = jar_dir()
        jar = directory / "DynamoDBLocal.jar"
        library = directory / "DynamoDBLocal_lib"
        server = ["-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(self.port)]
        # a directory of its own: it writes dynamodb-local-metadata.json where it runs
        self.directory = tempfile.TemporaryDirectory(prefix="dynamodb-local-")
        return self._launch(
            [java, *self.jvm_options, f"-Djava.library.path={library}", "-jar", str(jar), *server],
            cwd=self.directory.name,
        )

    def answers(self) -> bool:
        self.call("ListTables", {})
        return True

    def call(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        """One DynamoDB API call, as plain JSON (DynamoDB Local checks only that a request is
        signed, not the signature)."""
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/"
                "aws4_request, SignedHeaders=host, Signature=0",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer

    def reset(self) -> None:
        """Delete every table (DynamoDB Local has no reset call; in memory a delete is quick)."""
        start: dict[str, Any] = {}
        while True:
            listed = self.call("ListTables", start)
            for name in listed["TableNames"]:
                self.call("DeleteTable", {"TableName": name})
            if "LastEvaluatedTableName" not in listed:
                return
            start = {"ExclusiveStartTableName": listed["LastEvaluatedTableName"]}

    def stop(self) -> None:
        super().stop()
        if self.directory is not None:
            self.directory.cleanup()
            self.directory = None


def start_embedded(kind: str) -> EmbeddedDynamoDB | DynamoDBLocal:
    """Start the engine ``--dynamodb`` ``kind`` names: ``embedded``, moto's server; ``local``,
    DynamoDB Local (its JVM tuned to start fast, as in the tests). Start it from the thread that
    keeps it: PR_SET_PDEATHSIG ties the child to the thread that forked it. Raises
    :class:`MissingDynamoDBLocal` when it cannot."""
    engine = EmbeddedDynamoDB() if kind == "embedded" else DynamoDBLocal()
    engine.start()
    return engine
