"""``edgewise serve --log-format json``: every line the process writes is one JSON object (its
own logs, uvicorn's, the access log, console spans), each GraphQL request is logged with its
numbers, and no token, header value or variable value is ever written."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB, free_port
from graph.table import Table
from models.demo.generate import demo_items
from server.observe.logs import AccessPath, JsonFormatter
from tests.helpers import DEMO_LAYOUT
from tests.tokens import SECRET, bearer, hs256

EDGEWISE = [sys.executable, "-m", "server"]
HIDDEN = "hunter2-do-not-log@example.com"  # a variable's value
LOOKUP = "query Lookup($email: String!) { userByEmail(email: $email) { id } }"
BAD_ID = '{ user(id: "not an id!") { name } }'


def _wait_ready(process: subprocess.Popen[bytes], url: str, stderr: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, stderr.read_text()
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "edgewise serve was not ready in 60 s"
        time.sleep(0.1)


def _lines(path: Path) -> list[dict[str, Any]]:
    entries = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)  # fails on any line that is not JSON
        assert isinstance(entry, dict), line
        entries.append(entry)
    return entries


async def _demo_table(url: str) -> None:
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        await Table(client, "graph", layout=DEMO_LAYOUT).batch_write(demo_items())


def test_json_logs_are_one_object_a_line_and_never_hold_a_secret(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    dynamodb.reset()
    asyncio.run(_demo_table(dynamodb.url))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    admin = hs256(roles=["admin"])
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.Zm9yZ2VkLXNpZ25hdHVyZQ"
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    env = {
        **os.environ,
        "EDGEWISE_LOG_FORMAT": "json",
        "EDGEWISE_JWT_SECRET": SECRET,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [*EDGEWISE, "serve", "--port", str(port), "--dynamodb", dynamodb.url],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
    try:
        _wait_ready(process, url, err)
        with httpx.Client(base_url=url, headers=bearer(admin)) as client:
            variables = {"email": HIDDEN}
            posted = client.post("/graphql", json={"query": LOOKUP, "variables": variables})
            got = client.get(
                "/graphql", params={"query": LOOKUP, "variables": json.dumps(variables)}
            )
            bad = client.post("/graphql", json={"query": BAD_ID})
            refused = client.post("/graphql", json={"query": LOOKUP}, headers=bearer(forged))
            assert client.get("/metrics").status_code == 200
        time.sleep(0.3)  # the console exporter's batch
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert posted.json() == got.json() == {"data": {"userByEmail": None}}
    assert bad.status_code == 200 and refused.status_code == 401

    written = out.read_text() + err.read_text()
    for secret in (HIDDEN, "hunter2", admin, forged, SECRET, "Bearer"):
        assert secret not in written
    logs = _lines(err)
    for entry in logs:
        assert {"time", "level", "message", "logger"} <= entry.keys(), entry
        assert entry["time"].endswith("Z")
    loggers = {entry["logger"] for entry in logs}
    assert {"uvicorn.error", "uvicorn.access", "edgewise.request"} <= loggers

    requests = [e for e in logs if e["logger"] == "edgewise.request"]
    by_status = {(e["operation"], e["status"], tuple(e["error_codes"])) for e in requests}
    assert by_status == {
        ("Lookup", 200, ()),
        ("anonymous", 200, ("BAD_USER_INPUT",)),
        ("anonymous", 401, ("UNAUTHENTICATED",)),  # refused before its document was read
    }
    lookups = [e for e in requests if e["operation"] == "Lookup"]
    assert len(lookups) == 2
    assert lookups[0]["request_id"] == posted.headers["x-request-id"]
    for entry in lookups:
        assert entry["dynamodb_requests"] >= 1 and entry["dynamodb_rounds"] >= 1
        assert entry["duration_ms"] > 0
        assert len(entry["trace_id"]) == 32

    access = [e for e in logs if e["logger"] == "uvicorn.access"]
    assert {(e["method"], e["path"], e["status"]) for e in access} >= {
        ("POST", "/graphql", 200),
        ("GET", "/graphql", 200),
        ("GET", "/metrics", 200),
    }
    assert not any("?" in e["path"] or "?" in e["message"] for e in access)

    spans = _lines(out)
    names = {
        span["attributes"].get("graphql.operation.name")
        for span in spans
        if span["kind"] == "SpanKind.SERVER"
    }
    assert names == {"Lookup", "anonymous"}
    assert any(span["name"] == "DynamoDB.BatchGetItem" for span in spans)


def test_access_log_paths_lose_their_query_string_in_text_too() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/graphql?variables=%7B%22a%22%3A1%7D", "1.1", 200),
        None,
    )
    assert AccessPath().filter(record)
    assert record.getMessage() == '127.0.0.1:5000 - "GET /graphql HTTP/1.1" 200'
    entry = json.loads(JsonFormatter().format(record))
    assert entry["path"] == "/graphql" and entry["status"] == 200
