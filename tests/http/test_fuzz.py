"""Fuzzing: schemathesis in GraphQL mode generates queries and mutations from the served schema
(every root field, random arguments and selections) and sends them over real HTTP to the app,
served by uvicorn over the demo data in moto. No answer may be a 5xx or carry an
``INTERNAL_SERVER_ERROR``.

``make test`` runs a few derandomized examples per root field; ``EDGEWISE_FUZZ_EXAMPLES=N``
(e.g. ``make fuzz``) runs N random ones per root field instead.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core.result import Ok
from schemathesis.generation.modes import GenerationMode

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT
from tests.served import serve_in_thread

FUZZ_EXAMPLES = os.environ.get("EDGEWISE_FUZZ_EXAMPLES")
EXAMPLES = int(FUZZ_EXAMPLES or 8)
TIMEOUT = 30.0  # seconds for one HTTP answer
# The committed SDL (kept equal to the code's schema by tests/engine/test_schema_file.py), loaded at
# import so each root field is its own test.
SCHEMA = schemathesis.graphql.from_path(Path(__file__).parents[2] / "schema.graphql")
LOADED = list(SCHEMA.get_all_operations())
OPERATIONS = {result.ok().label: result.ok() for result in LOADED if isinstance(result, Ok)}
assert len(OPERATIONS) == len(LOADED), LOADED  # schemathesis could read every root field


async def _load_demo(url: str) -> None:
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        await Table(client, "graph", layout=DEMO_LAYOUT).batch_write(demo_items())


@pytest.fixture(scope="module")
def served(dynamodb: EmbeddedDynamoDB) -> Iterator[str]:
    """The app (its own DynamoDB client, opened by its lifespan) over a fresh demo table."""
    dynamodb.reset()
    asyncio.run(_load_demo(dynamodb.url))
    with serve_in_thread(create_app(Settings(dynamodb=dynamodb.url))) as url:
        yield url


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda mode: mode.value)
@pytest.mark.parametrize("label", OPERATIONS)
def test_no_server_error(served: str, label: str, mode: GenerationMode) -> None:
    """Valid (positive) and invalid (negative) documents for each root field."""
    strategy = OPERATIONS[label].as_strategy(generation_mode=mode)

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES,
        derandomize=FUZZ_EXAMPLES is None,  # make test: the same examples every run
        database=None,  # no .hypothesis/ folder
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    def answers_without_server_error(case: Any) -> None:
        response = case.call(base_url=f"{served}/graphql", timeout=TIMEOUT)
        assert response.status_code < 500, (case.body, response.status_code, response.text)
        body = response.json()
        codes = [e.get("extensions", {}).get("code") for e in body.get("errors", [])]
        assert None not in codes, (case.body, body)
        assert "INTERNAL_SERVER_ERROR" not in codes, (case.body, body)

    answers_without_server_error()
