"""``/metrics``: Prometheus' text format, read back with prometheus-client's own parser, and
checked against what the requests' traces say they sent to DynamoDB."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from graph.dynamo.client import Endpoint, client_config, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import RetryPolicy, Table
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.faults import FaultProxy
from tests.helpers import DEMO_LAYOUT
from tests.tokens import SECRET, asgi

TRACE = {"Edgewise-Trace": "1"}
NAMED = 'query Products { user(id: "alice") { products { product { name } via { name } } } }'
ANONYMOUS = '{ user(id: "bob") { groups { edges { node { name } } } } }'
FAILING = '{ user(id: "not an id!") { name } }'


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``, by name and labels."""
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def total(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        value
        for (sample, have), value in samples.items()
        if sample == name and set(labels.items()) <= set(have)
    )


async def test_metrics_count_requests_and_every_dynamodb_call(demo: Table) -> None:
    async with asgi(create_app(table=demo)) as client:
        traces = []
        for query in (NAMED, NAMED, ANONYMOUS, FAILING):
            response = await client.post("/graphql", json={"query": query}, headers=TRACE)
            assert "x-request-id" in response.headers
            traces.append(response.json()["extensions"]["dynamodb"])
        await client.post("/graphql", json={"query": "{ nope }"})  # does not validate
        samples = await scrape(client)

    requests = "edgewise_graphql_requests_total"
    assert total(samples, requests, operation="Products", outcome="ok") == 2
    assert total(samples, requests, operation="anonymous", outcome="ok") == 1
    assert total(samples, requests, operation="anonymous", outcome="error") == 2
    assert total(samples, "edgewise_graphql_request_seconds_count") == 5
    assert total(samples, "edgewise_graphql_request_seconds_count", operation="Products") == 2

    # DynamoDB: every HTTP request the traces counted, by operation, and the rounds
    calls = "edgewise_dynamodb_calls_total"
    assert total(samples, calls) == sum(t["requests"] for t in traces) > 0
    for operation in ("BatchGetItem", "Query"):
        sent = sum(t["operations"].get(operation, 0) for t in traces)
        assert total(samples, calls, operation=operation, outcome="ok") == sent > 0
        assert total(samples, "edgewise_dynamodb_call_seconds_count", operation=operation) == sent
    assert total(samples, "edgewise_dynamodb_rounds_count") == 5
    assert total(samples, "edgewise_dynamodb_rounds_sum") == sum(t["rounds"] for t in traces)
    read = "edgewise_dynamodb_consumed_read_units_total"
    assert total(samples, read) == sum(t["consumedReadUnits"] for t in traces)
    assert total(samples, "edgewise_dynamodb_retries_total") == 0
    # the items loader batched every node read of a request into one BatchGetItem per wave
    batches = total(samples, "edgewise_dataloader_batch_size_count", loader="items")
    assert 0 < batches == total(samples, calls, operation="BatchGetItem")
    assert total(samples, "edgewise_dataloader_batch_size_sum", loader="items") >= 5


async def test_throttles_and_retries_are_counted(dynamodb: EmbeddedDynamoDB, demo: Table) -> None:
    async with (
        FaultProxy(dynamodb.url) as proxy,
        open_client(Endpoint(proxy.url), client_config(0.5, 1.0)) as client,
    ):
        table = Table(
            client, "graph", RetryPolicy(base_delay=0.001, max_delay=0.01), layout=DEMO_LAYOUT
        )
        async with asgi(create_app(table=table)) as http:
            proxy.inject("BatchGetItem", "throttle", times=2)
            proxy.inject("Query", "server_error")
            response = await http.post("/graphql", json={"query": ANONYMOUS}, headers=TRACE)
            trace = response.json()["extensions"]["dynamodb"]
            samples = await scrape(http)
    assert response.json()["data"]["user"]["groups"]["edges"]
    calls = "edgewise_dynamodb_calls_total"
    assert total(samples, calls, operation="BatchGetItem", outcome="throttled") == 2
    assert total(samples, calls, operation="Query", outcome="error") == 1
    assert total(samples, calls) == trace["requests"] == proxy.stats["calls"]
    assert total(samples, "edgewise_dynamodb_retries_total", operation="BatchGetItem") == 2
    assert total(samples, "edgewise_dynamodb_retries_total", operation="Query") == 1


async def test_metrics_are_off_under_production_unless_asked(demo: Table) -> None:
    authenticator = Authenticator(secret=SECRET)
    production = create_app(Settings(production=True), demo, authenticator)
    asked = create_app(Settings(production=True, metrics=True), demo, authenticator)
    off = create_app(Settings(metrics=False), demo)
    async with asgi(production) as a, asgi(asked) as b, asgi(off) as c:
        assert (await a.get("/metrics")).status_code == 404
        assert (await b.get("/metrics")).status_code == 200
        assert (await c.get("/metrics")).status_code == 404


async def test_each_app_has_its_own_registry(demo: Table) -> None:
    first, second = create_app(table=demo), create_app(table=demo)
    async with asgi(first) as one, asgi(second) as two:
        await one.post("/graphql", json={"query": NAMED})
        counts = [
            total(await scrape(client), "edgewise_graphql_requests_total") for client in (one, two)
        ]
    assert counts == [1, 0]


async def test_client_chosen_operation_names_are_bounded(demo: Table) -> None:
    app = create_app(table=demo)
    app.state.metrics.max_operations = 3
    async with asgi(app) as client:
        for n in range(6):
            query = f"query Q{n} {{ __typename }}"
            await client.post("/graphql", json={"query": query})
        await client.post("/graphql", json={"query": "{ __typename }", "operationName": "x y"})
        samples = await scrape(client)
    requests = "edgewise_graphql_requests_total"
    labels = {dict(key)["operation"] for (name, key) in samples if name == requests}
    assert labels == {"Q0", "Q1", "Q2", "other"}
    assert total(samples, requests, operation="other") == 4


async def test_a_model_built_schema_is_measured_too(
    model_http: Callable[[str], Awaitable[httpx.AsyncClient]],
) -> None:
    client = await model_http("order-entry")
    query = 'query Job { employee(id: "e4") { currentJob { title } } }'
    response = await client.post("/graphql", json={"query": query}, headers=TRACE)
    trace = response.json()["extensions"]["dynamodb"]
    samples = await scrape(client)
    assert total(samples, "edgewise_graphql_requests_total", operation="Job", outcome="ok") == 1
    assert total(samples, "edgewise_dynamodb_calls_total") == trace["requests"] > 0
    assert total(samples, "edgewise_dynamodb_rounds_sum") == trace["rounds"]
    assert total(samples, "edgewise_dataloader_batch_size_count") > 0
