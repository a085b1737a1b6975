"""A cold Lambda process imports only what its path uses (issue 32): ``server.lambda_handler``
imported in a fresh interpreter, then its first request answered as a Lambda function URL
event, against moto, with a function's environment (credentials and region in ``AWS_*``). What
it must not have loaded is read from ``sys.modules`` after the import and after the answer."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.coldstart import event
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items
from tests.helpers import DEMO_LAYOUT

ROOT = Path(__file__).resolve().parents[2]

# Never on the default path: the botocore client's stack, and what only a setting turns on.
NEVER = (
    "botocore",
    "aioboto3",
    "aiobotocore",
    "aiohttp",
    "boto3",
    "opentelemetry",  # OTEL_TRACES_EXPORTER
    "prometheus_client",  # EDGEWISE_METRICS (off by default on Lambda)
    "redis",  # EDGEWISE_PUBSUB
    "server.live.queries",  # EDGEWISE_SUBSCRIPTIONS (off by default on Lambda)
    "server.http.playground",  # a browser asking for GraphiQL
    "server.cli",
    "strawberry",
    "jwt",  # a JWT key (EDGEWISE_JWT_SECRET or EDGEWISE_JWT_JWKS)
    "httpx",  # a JWKS URL
    "graph.bulk",  # --data-file
    "graph.dynamo.embedded",
    "moto",
)
# Not with the model compiled ahead of time (EDGEWISE_COMPILED): the model file's parser, and so
# no pydantic at all (the settings convert their own values).
PARSER = ("model.load", "model.spec", "yaml", "pydantic", "pydantic_settings")

CHILD = """
import base64, json, sys
EVENT, TOP = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
def loaded():
    return sorted({w for m in sys.modules for w in TOP if m == w or m.startswith(w + ".")})
from server.lambda_handler import handler
imported = loaded()
class Context:
    def get_remaining_time_in_millis(self):
        return 29_000
response = handler(EVENT, Context())
body = response["body"]
body = base64.b64decode(body) if response.get("isBase64Encoded") else body
print(json.dumps({"imported": imported, "answered": loaded(), "body": json.loads(body)}))
"""


@pytest.fixture(scope="module")
def demo_table(dynamodb: EmbeddedDynamoDB) -> str:
    async def fill() -> None:
        dynamodb.reset()
        async with open_client(Endpoint(dynamodb.url)) as client:
            await create_table(client.control, "graph", layout=DEMO_LAYOUT)
            await Table(client, "graph", layout=DEMO_LAYOUT).batch_write(demo_items())

    asyncio.run(fill())
    return dynamodb.url


def cold(url: str, watched: tuple[str, ...], **env: str) -> dict[str, Any]:
    """A fresh interpreter's modules (of ``watched``) after the import and after the answer."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("EDGEWISE_", "AWS_"))}
    environ.pop("OTEL_TRACES_EXPORTER", None)
    environ |= {
        "AWS_ACCESS_KEY_ID": "ASIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SESSION_TOKEN": "token",
        "AWS_REGION": "us-east-1",
        "EDGEWISE_DYNAMODB": url,
        "EDGEWISE_TABLE": "graph",
        **env,
    }
    command = [sys.executable, "-c", CHILD, json.dumps(event()), json.dumps(watched)]
    done = subprocess.run(
        command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert found["body"] == {"data": {"user": {"name": "Alice"}}}, found
    return found


def test_the_default_path_imports_nothing_it_does_not_use(demo_table: str) -> None:
    found = cold(demo_table, NEVER)
    assert found["imported"] == []
    assert found["answered"] == []


def test_with_a_build_the_model_files_parser_is_not_imported_either(
    demo_table: str, tmp_path: Path
) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "server", "build", "--model", "demo", "--output", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    found = cold(demo_table, NEVER + PARSER, EDGEWISE_COMPILED=str(tmp_path))
    assert found["answered"] == []


def test_what_a_setting_turns_on_is_imported_then(demo_table: str) -> None:
    """The watch sees a module once it is used: metrics turned on load Prometheus' client."""
    found = cold(demo_table, ("prometheus_client", "botocore"), EDGEWISE_METRICS="1")
    assert found["imported"] == []
    assert found["answered"] == ["prometheus_client"]
