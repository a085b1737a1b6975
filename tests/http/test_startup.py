"""The app's start-up makes no DynamoDB call its first answer waits for (issue 32): the endpoint's
capability probe runs beside the first requests. Shown with the probe's calls held by the fault
proxy (``hang``: unanswered until the client's read timeout, then retried): a query is answered
while the probe is still waiting, and a mutation waits for the probe before it writes. (With
subscriptions on, the start waits for the probe's DescribeTable: whether the table has a stream
decides the schema; a Lambda function has them off.)"""

from __future__ import annotations

import asyncio

import httpx

from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items
from server.http.app import create_app
from server.settings import Settings
from tests.faults import FaultProxy

QUERY = '{ user(id: "alice") { name } }'
MUTATION = 'mutation { createUser(input: {id: "carol", name: "Carol"}) { id name } }'


async def test_the_first_answer_does_not_wait_for_the_probe_and_a_mutation_does(
    dynamodb: EmbeddedDynamoDB, table: Table
) -> None:
    await table.batch_write(demo_items())
    async with FaultProxy(dynamodb.url) as proxy:
        for operation in ("DescribeTable", "TransactWriteItems"):
            proxy.inject(operation, "hang")  # the probe's first attempts: until the read timeout
        # (with subscriptions the start waits: whether the table has a stream decides the schema)
        settings = Settings(
            dynamodb=proxy.url, table=table.name, read_timeout=3.0, subscriptions=False
        )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://t") as client,
        ):
            checking = app.state.checking
            assert checking is not None and not checking.done()
            answer = await client.post("/graphql", json={"query": QUERY})
            assert answer.json() == {"data": {"user": {"name": "Alice"}}}
            assert not checking.done()  # answered while the probe's calls are still held

            mutation = asyncio.create_task(client.post("/graphql", json={"query": MUTATION}))
            await asyncio.sleep(0.5)
            assert not mutation.done() and not checking.done()  # waiting for the probe
            written = await mutation
            assert checking.done() and checking.result().transactions is True
            assert written.json() == {"data": {"createUser": {"id": "USER#carol", "name": "Carol"}}}
            ready = await client.get("/readyz")
            assert (ready.status_code, ready.text) == (200, "ready")
