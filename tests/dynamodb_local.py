"""DynamoDB Local: AWS's own DynamoDB emulator (Java, in memory), for the tests beside moto.

``tests/dynamodb-local/package.json`` pins the npm package ``amplify-dynamodb-simulator``, which
ships ``DynamoDBLocal.jar`` and its ``DynamoDBLocal_lib/``; ``make dynamodb-local`` (run by
``make test``) installs it with ``npm ci`` and Debian's JRE where ``java`` is missing. Nothing is
downloaded at run time. It has transactions with idempotency tokens, streams, TTL and AWS's
validation of requests, which moto and dynalite are lenient about."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from graph.dynamo.embedded import _die_with_parent, free_port

__all__ = ["JAR_DIR", "DynamoDBLocal"]

JAR_DIR = (
    Path(__file__).parent
    / "dynamodb-local"
    / "node_modules"
    / "amplify-dynamodb-simulator"
    / "emulator"
)

# A test run is too short for the JVM's optimizing compiler to pay back: with the first JIT tier
# only and the serial GC, DynamoDB Local answered in 1.9 s instead of 3.1-3.7 s from start, and
# test_replicas.py with test_team_tables.py cost 30 CPU-seconds instead of 41 (2 cores, shared).
# It holds about 200 MB resident; one server per pytest worker.
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m"]


class DynamoDBLocal:
    """``with DynamoDBLocal() as db: db.url`` runs DynamoDB Local on a free loopback port until
    the block ends (``-inMemory -sharedDb``: every credential and region sees one database).
    ``reset()`` deletes every table, as ``EmbeddedDynamoDB.reset()`` forgets moto's."""

    def __init__(self, start_timeout: float = 60.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.directory: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> str:
        java = shutil.which("java")
        jar = JAR_DIR / "DynamoDBLocal.jar"
        if java is None or not jar.is_file():
            raise RuntimeError(
                f"DynamoDB Local is not installed ({jar} or `java` missing): run "
                "`make dynamodb-local` (npm ci in tests/dynamodb-local, Debian's JRE)"
            )
        library = JAR_DIR / "DynamoDBLocal_lib"
        server = ["-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(self.port)]
        # a directory of its own: it writes dynamodb-local-metadata.json where it runs
        self.directory = tempfile.TemporaryDirectory(prefix="dynamodb-local-")
        self.process = subprocess.Popen(
            [java, *JVM_OPTIONS, f"-Djava.library.path={library}", "-jar", str(jar), *server],
            cwd=self.directory.name,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # no JVM left behind by a worker killed mid-run
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"DynamoDB Local exited at start with code {self.process.returncode}"
                )
            try:
                self.call("ListTables", {})
                return self.url
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"DynamoDB Local did not answer on {self.url} in {self.start_timeout:.0f}s"
        )

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
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.directory is not None:
            self.directory.cleanup()
            self.directory = None

    def __enter__(self) -> DynamoDBLocal:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
