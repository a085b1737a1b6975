"""Helpers shared by the HTTP tests."""

from __future__ import annotations

import os
from typing import Any

import httpx

from graph.table import Layout

# The data-plane client the tests open: lean (the default) unless EDGEWISE_CLIENT=botocore, which
# `make test` sets for its second run of the data-plane suites.
LEAN = os.environ.get("EDGEWISE_CLIENT", "lean").strip().lower() != "botocore"

# The engine under the ``dynamodb`` fixture: moto unless EDGEWISE_TEST_ENGINE=local, which puts
# DynamoDB Local in its place (`make test` sets it for its run of the suites that talk to DynamoDB).
ENGINE = os.environ.get("EDGEWISE_TEST_ENGINE", "moto").strip().lower()
if ENGINE not in ("moto", "local"):
    raise ValueError(f"EDGEWISE_TEST_ENGINE={ENGINE!r}: use moto or local")
LOCAL = ENGINE == "local"

# The demo's table as CONTRACT.md has it (the demo model must agree: tests/engine checks it).
DEMO_LAYOUT = Layout("PK", "SK", {"inverted": ("SK", "PK"), "gsi2": ("GSI2PK", "GSI2SK")})


async def gql(
    client: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None
) -> dict[str, Any]:
    """POST a query with tracing on; returns the JSON body (asserting HTTP 200)."""
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Edgewise-Trace": "1"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body
