"""Shared fixtures: one moto server process for the session, a fresh table per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from graph.client import Endpoint, create_table, open_client
from graph.embedded import EmbeddedDynamoDB
from graph.seed import demo_items
from graph.table import Table
from server.app import create_app


@pytest.fixture(scope="session")
def dynamodb() -> Iterator[EmbeddedDynamoDB]:
    """A real DynamoDB-compatible server (moto) over HTTP, in a child process."""
    with EmbeddedDynamoDB() as server:
        yield server


@pytest.fixture
async def table(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Table]:
    """An empty graph table (moto reset first)."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client, "graph")
        yield Table(client, "graph")


@pytest.fixture
async def demo(table: Table) -> Table:
    """The table holding the demo data."""
    await table.batch_write(demo_items())
    return table


@pytest.fixture
async def http(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    """The app over ASGI, serving the demo table."""
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client
