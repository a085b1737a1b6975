"""DynamoDB down: whether it refuses connections (the fault proxy stopped, its port closed) or
hangs (the proxy never answers), a request ends within its deadline with UNAVAILABLE, HTTP 503
when there is no data; ``/readyz`` answers 503 while it is down and 200 once it is back, with no
restart. The last test does the same through ``edgewise serve`` and its timeout flags."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, client_config, open_client
from graph.dynamo.embedded import free_port
from graph.keys import ItemKey
from graph.table import RetryPolicy, Table
from server.http.app import create_app
from tests.faults import FaultProxy, Faults
from tests.helpers import DEMO_LAYOUT

DEADLINE = 2.0
SLACK = 1.0  # seconds past the deadline a loaded machine may take to answer
POLICY = RetryPolicy(base_delay=0.01, max_delay=0.2, deadline=DEADLINE)
NULLABLE = '{ user(id: "alice") { name } }'  # user is nullable: data {user: null} and an error
NON_NULL = "{ tickets(status: OPEN) { totalCount } }"  # all non-null: data null
CREATE = 'mutation { createUser(input: {id: "carol", name: "Carol"}) { id } }'


@contextlib.asynccontextmanager
async def app_through(proxy: FaultProxy) -> AsyncIterator[httpx.AsyncClient]:
    """The app, its DynamoDB client through ``proxy`` with short timeouts and a 2 s deadline."""
    config = client_config(connect_timeout=0.5, read_timeout=1.0)
    async with open_client(Endpoint(proxy.url), config) as client:
        app = create_app(table=Table(client, "graph", POLICY, layout=DEMO_LAYOUT))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            yield http


async def timed(http: httpx.AsyncClient, query: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await http.post("/graphql", json={"query": query})
    return response, time.monotonic() - started


def unavailable(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAVAILABLE"], body
    return body


async def check_down(http: httpx.AsyncClient) -> None:
    """What a client sees while DynamoDB is down."""
    response, seconds = await timed(http, NULLABLE)
    assert seconds < DEADLINE + SLACK, seconds
    assert response.status_code == 200, response.text  # there is data: {"user": null}
    assert unavailable(response)["data"] == {"user": None}

    response, seconds = await timed(http, NON_NULL)
    assert seconds < DEADLINE + SLACK, seconds
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert unavailable(response)["data"] is None

    started = time.monotonic()
    ready = await http.get("/readyz")
    assert time.monotonic() - started < DEADLINE + SLACK
    assert ready.status_code == 503, ready.text


async def check_up(http: httpx.AsyncClient) -> None:
    assert (await http.get("/readyz")).status_code == 200
    response, _ = await timed(http, NON_NULL)
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {"tickets": {"totalCount": 0}}}


async def test_refused_connections_end_within_the_deadline_and_readyz_recovers(
    demo: Table, dynamodb: Any
) -> None:
    async with FaultProxy(dynamodb.url) as proxy, app_through(proxy) as http:
        await check_up(http)
        await proxy.stop()  # the port is closed: connections are refused
        await check_down(http)
        await proxy.start()  # the same port again; the app is not restarted
        await check_up(http)


async def test_hanging_dynamodb_ends_within_the_deadline_and_readyz_recovers(
    demo: Table, dynamodb: Any
) -> None:
    async with FaultProxy(dynamodb.url) as proxy, app_through(proxy) as http:
        await check_up(http)
        proxy.faults = Faults(hang=1.0)
        await check_down(http)
        assert proxy.stats["hang"] >= 3
        proxy.faults = Faults()
        await check_up(http)


@pytest.mark.parametrize("outage", ["refused", "hang"])
async def test_a_mutation_during_an_outage_is_unavailable_503(
    demo: Table, dynamodb: Any, outage: str
) -> None:
    async with FaultProxy(dynamodb.url) as proxy, app_through(proxy) as http:
        if outage == "refused":
            await proxy.stop()
        else:
            proxy.faults = Faults(hang=1.0)
        response, seconds = await timed(http, CREATE)
        assert seconds < DEADLINE + SLACK, seconds
        assert unavailable(response)["data"] is None
        assert response.status_code == 503
    assert await demo.get_item(ItemKey("USER#carol", "USER#carol")) is None


async def test_a_closed_port_is_unavailable_too(demo: Table) -> None:
    """Nothing ever listened there: the same answers as a stopped proxy."""
    config = client_config(connect_timeout=0.5, read_timeout=1.0)
    async with open_client(Endpoint(f"http://127.0.0.1:{free_port()}"), config) as client:
        app = create_app(table=Table(client, "graph", POLICY, layout=DEMO_LAYOUT))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            await check_down(http)


async def test_serve_flags_bound_a_hanging_dynamodb(
    demo: Table, dynamodb: Any, tmp_path: Path
) -> None:
    """``edgewise serve --dynamodb URL --deadline --read-timeout --connect-timeout`` over the
    proxy: a request ends within the deadline with 503, /readyz follows DynamoDB."""
    port = free_port()
    with (tmp_path / "serve.log").open("wb") as log:
        async with FaultProxy(dynamodb.url) as proxy:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server",
                "serve",
                "--port",
                str(port),
                "--dynamodb",
                proxy.url,
                "--deadline",
                "1.5",
                "--read-timeout",
                "0.5",
                "--connect-timeout",
                "0.5",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            try:
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", timeout=10
                ) as http:
                    async with asyncio.timeout(60):
                        while True:
                            assert process.returncode is None, (tmp_path / "serve.log").read_text()
                            with contextlib.suppress(httpx.TransportError):
                                if (await http.get("/readyz")).status_code == 200:
                                    break
                            await asyncio.sleep(0.1)
                    proxy.faults = Faults(hang=1.0)
                    started = time.monotonic()
                    response = await http.post("/graphql", json={"query": NON_NULL})
                    assert time.monotonic() - started < 1.5 + SLACK
                    assert response.status_code == 503, response.text
                    unavailable(response)
                    assert (await http.get("/readyz")).status_code == 503
                    proxy.faults = Faults()
                    assert (await http.get("/readyz")).status_code == 200
            finally:
                if process.returncode is None:
                    process.terminate()
                    try:
                        async with asyncio.timeout(20):
                            await process.wait()
                    except TimeoutError:
                        process.kill()
                        await process.wait()
