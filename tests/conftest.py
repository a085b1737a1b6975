"""Shared fixtures: one moto server process for the session, a fresh table per test; dynalite
as a second DynamoDB-compatible server (``compatible_table`` runs a test on both); DynamoDB Local,
AWS's own emulator, which ``EDGEWISE_TEST_ENGINE=local`` puts in moto's place under every fixture
built on ``dynamodb`` (``make test`` reruns the suites that talk to DynamoDB so)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.dynalite_server import Dynalite
from tests.dynamodb_local import DynamoDBLocal
from tests.helpers import DEMO_LAYOUT, LEAN, LOCAL
from tests.table_state import SerialDynamoDB, demo_table

BACKENDS = ["moto", "dynalite"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``EDGEWISE_TEST_ENGINE=local`` only the tests on the ``dynamodb`` fixture run: the
    others would run exactly as they did on moto (their own servers, or none)."""
    if not LOCAL:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if "dynamodb" in getattr(item, "fixturenames", ()) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """DynamoDB Local over HTTP, in a JVM of this worker's own (``reset()`` deletes its tables)."""
    with DynamoDBLocal() as server:
        yield server


@pytest.fixture(scope="session")
def dynamodb(request: pytest.FixtureRequest) -> Iterator[EmbeddedDynamoDB | DynamoDBLocal]:
    """A real DynamoDB-compatible server over HTTP, in a child process: moto, or DynamoDB Local
    under ``EDGEWISE_TEST_ENGINE=local``."""
    if LOCAL:
        yield request.getfixturevalue("dynamodb_local")
        return
    with EmbeddedDynamoDB() as server:
        yield server


@pytest.fixture
async def moto_table(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Table]:
    """An empty graph table (moto reset first)."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        yield Table(client, "graph", layout=DEMO_LAYOUT)


@pytest.fixture
def table(moto_table: Table) -> Table:
    """An empty graph table on moto."""
    return moto_table


@pytest.fixture(scope="session")
def dynalite() -> Iterator[Dynalite]:
    """dynalite (in memory, no transactions) over HTTP, in a child process."""
    with Dynalite() as server:
        yield server


@pytest.fixture
async def dynalite_table(dynalite: Dynalite) -> AsyncIterator[Table]:
    """An empty graph table on dynalite, under a name of its own, deleted afterwards."""
    name = f"graph-{uuid.uuid4().hex[:12]}"
    async with open_client(Endpoint(dynalite.url), lean=LEAN) as client:
        await create_table(client.control, name, layout=DEMO_LAYOUT)
        yield Table(client, name, layout=DEMO_LAYOUT)
    # A fresh client: dynalite closes connections idle past its keep-alive timeout, and this
    # raw call (unlike Table.call) would not retry on the pooled one it closed.
    async with open_client(Endpoint(dynalite.url), lean=LEAN) as client:
        await client.control.delete_table(dict(TableName=name))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Which DynamoDB-compatible server a ``compatible_table`` test runs on."""
    return str(request.param)


@pytest.fixture
def compatible_table(backend: str, request: pytest.FixtureRequest) -> Table:
    """An empty graph table on each server: moto, then dynalite."""
    table: Table = request.getfixturevalue(f"{backend}_table")
    return table


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


@pytest.fixture
async def model_http(
    dynamodb: EmbeddedDynamoDB,
) -> AsyncIterator[Callable[[str], Awaitable[httpx.AsyncClient]]]:
    """``await model_http("order-entry")``: the app over ASGI serving a shipped model (or a model
    file's path) on a fresh table holding its sample data."""
    dynamodb.reset()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(open_client(Endpoint(dynamodb.url), lean=LEAN))

        async def serve(model: str) -> httpx.AsyncClient:
            engine = engine_for(model)
            await create_table(client.control, engine.table_name, layout=engine.layout)
            table = Table(client, engine.table_name, layout=engine.layout)
            await table.batch_write(engine.sample_items(table))
            app = create_app(Settings(model=model), table=table)
            transport = httpx.ASGITransport(app=app)
            return await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url="http://edgewise")
            )

        yield serve


def team_boto3(url: str, kind: str) -> Any:
    """boto3's ``client`` or ``resource`` for DynamoDB at ``url``, as a team's script opens it."""
    factory = boto3.client if kind == "client" else boto3.resource
    return factory(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="team",
        aws_secret_access_key="team",
    )


@pytest.fixture(scope="module")
def serial_dynamodb(
    request: pytest.FixtureRequest,
) -> Iterator[SerialDynamoDB | DynamoDBLocal]:
    """moto serving one request at a time (DynamoDB's isolation of concurrent transactions,
    which moto's threaded server lacks), one per test module; under ``EDGEWISE_TEST_ENGINE=local``
    DynamoDB Local, which isolates transactions itself."""
    if LOCAL:
        yield request.getfixturevalue("dynamodb_local")
        return
    with SerialDynamoDB() as server:
        yield server


@pytest.fixture
async def serial(serial_dynamodb: SerialDynamoDB) -> AsyncIterator[Table]:
    """The demo table on a server with DynamoDB's isolation, for concurrent writers."""
    serial_dynamodb.reset()
    async with demo_table(serial_dynamodb.url) as table:
        yield table


@pytest.fixture
def team_client(dynamodb: EmbeddedDynamoDB) -> Iterator[Any]:
    """boto3's DynamoDB client on the shared moto server, closed after the test."""
    client = team_boto3(dynamodb.url, "client")
    yield client
    client.close()


TeamTable = Callable[[str, dict[str, Any], list[dict[str, Any]]], Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def team_http(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> AsyncIterator[TeamTable]:
    """``await team_http(model_yaml, create_table_arguments, items)``: a table created and
    filled with boto3 as a team would (``items`` in boto3's resource form, written as they are),
    then the app over ASGI serving ``model_yaml`` over it."""
    dynamodb.reset()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(open_client(Endpoint(dynamodb.url), lean=LEAN))

        async def serve(
            model: str, table: dict[str, Any], items: list[dict[str, Any]]
        ) -> httpx.AsyncClient:
            resource = team_boto3(dynamodb.url, "resource")
            try:
                created = resource.create_table(BillingMode="PAY_PER_REQUEST", **table)
                with created.batch_writer() as batch:
                    for item in items:
                        batch.put_item(Item=item)
            finally:
                resource.meta.client.close()  # its pool's sockets, not left to the collector
            path = tmp_path / "model.yaml"
            path.write_text(model)
            engine = engine_for(str(path))
            served = Table(client, table["TableName"], layout=engine.layout)
            app = create_app(Settings(model=str(path), table=table["TableName"]), table=served)
            return await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
            )

        yield serve
