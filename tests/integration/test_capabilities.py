"""The endpoint's capabilities, probed at start-up: moto has TransactWriteItems, dynalite has
not. ``serve`` refuses an endpoint without it unless ``--read-only``; ``/readyz`` reports it."""

from __future__ import annotations

import subprocess
import sys

import httpx

from graph.dynamo.capabilities import probe
from graph.dynamo.client import create_table
from graph.dynamo.embedded import free_port
from graph.table import Table
from models.demo.generate import demo_items
from server.http.app import create_app
from server.settings import Settings
from tests.dynalite_server import Dynalite
from tests.helpers import DEMO_LAYOUT
from tests.served import serve

MUTATION = 'mutation { createUser(input: {id: "carol", name: "Carol"}) { id } }'


async def scan(table: Table) -> list[dict[str, object]]:
    return list((await table.client.control.scan(dict(TableName=table.name)))["Items"])


async def test_probe_finds_transactions_on_moto_and_writes_nothing(table: Table) -> None:
    capabilities = await probe(table)
    assert capabilities.transactions is True, capabilities
    assert await scan(table) == []
    assert table.trace.operations == {"DescribeTable": 1, "TransactWriteItems": 1}


async def test_probe_finds_that_dynalite_lacks_transact_write_items(
    dynalite_table: Table, dynalite: Dynalite
) -> None:
    capabilities = await probe(dynalite_table)
    assert capabilities.transactions is False, capabilities
    assert "UnknownOperationException" in capabilities.detail
    message = capabilities.explain()
    assert "TransactWriteItems" in message and dynalite.url in message and "--read-only" in message
    assert await scan(dynalite_table) == []


async def test_probe_is_undecided_while_the_table_is_missing(table: Table) -> None:
    capabilities = await probe(Table(table.client, "no-such-table", layout=DEMO_LAYOUT))
    assert capabilities.transactions is None
    assert "create-table" in capabilities.detail


def test_serve_exits_naming_the_operation_and_the_endpoint(
    dynalite: Dynalite, dynalite_table: Table
) -> None:
    command = [sys.executable, "-m", "server", "serve", "--port", str(free_port())]
    command += ["--dynamodb", dynalite.url, "--table", dynalite_table.name]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1, result
    assert "TransactWriteItems" in result.stderr, result.stderr
    assert dynalite.url in result.stderr
    assert "--read-only" in result.stderr
    assert "Traceback" not in result.stderr


async def test_read_only_serves_queries_without_mutations_on_dynalite(
    dynalite: Dynalite, dynalite_table: Table
) -> None:
    await dynalite_table.batch_write(demo_items())
    settings = Settings(dynamodb=dynalite.url, table=dynalite_table.name, read_only=True)
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        ready = await client.get("/readyz")
        assert (ready.status_code, ready.text) == (200, "ready (read-only: no mutations)")
        query = '{ user(id: "bob") { name } }'
        body = (await client.post("/graphql", json={"query": query})).json()
        assert body == {"data": {"user": {"name": "Bob"}}}
        introspection = "{ __schema { mutationType { name } } }"
        body = (await client.post("/graphql", json={"query": introspection})).json()
        assert body == {"data": {"__schema": {"mutationType": None}}}
        body = (await client.post("/graphql", json={"query": MUTATION})).json()
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
        assert "mutation" in body["errors"][0]["message"]


async def test_readyz_reports_a_missing_operation(
    dynalite_table: Table, dynalite: Dynalite
) -> None:
    transport = httpx.ASGITransport(app=create_app(table=dynalite_table))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/readyz")
    assert response.status_code == 503
    assert "TransactWriteItems" in response.text and dynalite.url in response.text


async def test_readyz_probes_again_once_the_table_exists(table: Table) -> None:
    missing = Table(table.client, "later", layout=DEMO_LAYOUT)
    transport = httpx.ASGITransport(app=create_app(table=missing))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/readyz")).status_code == 503
        await create_table(table.client.control, "later", layout=DEMO_LAYOUT)
        response = await client.get("/readyz")
        assert (response.status_code, response.text) == (200, "ready")
