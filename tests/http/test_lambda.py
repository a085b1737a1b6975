"""``server.lambda_handler.handler`` invoked in-process with API Gateway HTTP API (payload 2.0)
and Lambda function URL events, against moto behind a counting proxy: the proxy is the witness
that a warm invocation makes no start-up call."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

import server.lambda_handler
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import EdgewiseError
from graph.table import Table
from models.demo.generate import demo_items
from tests.dynalite_server import Dynalite
from tests.faults import FaultProxy
from tests.helpers import DEMO_LAYOUT

QUERY = '{ user(id: "alice") { name groups { edges { node { name } } } } }'
CREATE = 'mutation { createUser(input: {id: "carol", name: "Carol"}) { id name version } }'
START_UP = {"DescribeTable", "TransactWriteItems"}


class LambdaContext:
    """The attributes of the context object Lambda's Python runtime passes."""

    function_name = "edgewise"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:edgewise"
    memory_limit_in_mb = 1024
    aws_request_id = "8f5d1a7c-3f0e-4a57-9c55-7f3e5e1f5d21"
    log_group_name = "/aws/lambda/edgewise"
    log_stream_name = "2026/11/23/[$LATEST]0123456789abcdef0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def http_api_event(
    method: str,
    path: str,
    *,
    query: str = "",
    headers: dict[str, str] | None = None,
    body: str | None = None,
    function_url: bool = False,
) -> dict[str, Any]:
    """An event as API Gateway HTTP APIs (payload format 2.0, ``$default`` stage) or a Lambda
    function URL sends it: lower-case headers, ``rawPath``/``rawQueryString``, and the body
    base64-encoded by a function URL."""
    api = "r3pmxmplak" if function_url else "xmpl7ryq5a"
    domain = (
        f"{api}.lambda-url.us-east-1.on.aws"
        if function_url
        else (f"{api}.execute-api.us-east-1.amazonaws.com")
    )
    sent = {
        "accept": "*/*",
        "host": domain,
        "user-agent": "curl/8.5.0",
        "x-amzn-trace-id": "Root=1-6561e7c5-0a1b2c3d4e5f60718293a4b5",
        "x-forwarded-for": "198.51.100.7",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
        **{k.lower(): v for k, v in (headers or {}).items()},
    }
    if body is not None:
        sent["content-length"] = str(len(body.encode()))
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": sent,
        "requestContext": {
            "accountId": "anonymous" if function_url else "123456789012",
            "apiId": api,
            "domainName": domain,
            "domainPrefix": api,
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "198.51.100.7",
                "userAgent": "curl/8.5.0",
            },
            "requestId": "Pc8x8gSIoAMEVnQ=" if not function_url else "a7c9e3b1-5d0f",
            "routeKey": "$default",
            "stage": "$default",
            "time": "23/Nov/2026:16:30:00 +0000",
            "timeEpoch": 1795451400000,
        },
        "isBase64Encoded": False,
    }
    if query:
        params: dict[str, str] = {}
        for part in query.split("&"):
            name, _, value = part.partition("=")
            params[name] = value  # left percent-encoded, as API Gateway does
        event["queryStringParameters"] = params
    if body is not None:
        if function_url:
            event["body"] = base64.b64encode(body.encode()).decode()
            event["isBase64Encoded"] = True
        else:
            event["body"] = body
    return event


class ThreadedProxy:
    """A counting FaultProxy (no faults) in a thread of its own: the handler runs its own loop."""

    def __init__(self, upstream: str) -> None:
        self.proxy = FaultProxy(upstream)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> ThreadedProxy:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.proxy.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.proxy.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    def calls(self) -> Counter[str]:
        return Counter(
            {k.removeprefix("calls:"): v for k, v in self.proxy.stats.items() if ":" in k}
        )


async def _demo_table(url: str) -> None:
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        await Table(client, "graph", layout=DEMO_LAYOUT).batch_write(demo_items())


@pytest.fixture
def proxy(dynamodb: EmbeddedDynamoDB, monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedProxy]:
    """moto with the demo table behind a counting proxy, and the Lambda environment to use it."""
    dynamodb.reset()
    asyncio.run(_demo_table(dynamodb.url))
    with ThreadedProxy(dynamodb.url) as proxy:
        for name in (
            "EDGEWISE_PRODUCTION",
            "EDGEWISE_READ_ONLY",
            "EDGEWISE_JWT_SECRET",
            "EDGEWISE_JWT_JWKS",
        ):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("EDGEWISE_DYNAMODB", proxy.proxy.url)
        monkeypatch.setenv("EDGEWISE_TABLE", "graph")
        monkeypatch.setattr(server.lambda_handler, "_container", None)
        try:
            yield proxy
        finally:
            if server.lambda_handler._container is not None:
                server.lambda_handler._container.close()


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    response = server.lambda_handler.handler(event, LambdaContext())
    # what API Gateway and function URLs accept back (payload 2.0 response)
    assert set(response) <= {"statusCode", "headers", "body", "isBase64Encoded", "cookies"}
    return response


def body_of(response: dict[str, Any]) -> str:
    body = str(response["body"])
    return base64.b64decode(body).decode() if response["isBase64Encoded"] else body


def test_a_warm_invocation_makes_no_start_up_call(proxy: ThreadedProxy) -> None:
    query = json.dumps({"query": QUERY})
    headers = {"content-type": "application/json", "edgewise-trace": "1"}
    cold = invoke(http_api_event("POST", "/graphql", headers=headers, body=query))
    assert cold["statusCode"] == 200, cold
    body = json.loads(body_of(cold))
    assert body["data"]["user"]["name"] == "Alice"
    assert [e["node"]["name"] for e in body["data"]["user"]["groups"]["edges"]] == [
        "Group 1",
        "Group 2",
    ]
    start_up = proxy.calls() - Counter(body["extensions"]["dynamodb"]["operations"])
    assert set(start_up) >= START_UP, start_up  # the probe ran in the cold start
    container = server.lambda_handler._container
    assert container is not None
    client = container.app.state.table.client

    before = proxy.calls()
    warm = invoke(http_api_event("POST", "/graphql", headers=headers, body=query))
    assert warm["statusCode"] == 200, warm
    warm_body = json.loads(body_of(warm))
    assert warm_body["data"] == body["data"]
    # every DynamoDB call the warm invocation made is one its own request made
    assert proxy.calls() - before == Counter(warm_body["extensions"]["dynamodb"]["operations"])
    assert server.lambda_handler._container is container
    assert container.app.state.table.client is client


def test_mutation_by_function_url_then_a_get_query(proxy: ThreadedProxy) -> None:
    headers = {"content-type": "application/json", "accept": "application/graphql-response+json"}
    created = invoke(
        http_api_event(
            "POST",
            "/graphql",
            headers=headers,
            body=json.dumps({"query": CREATE}),
            function_url=True,
        )
    )
    assert created["statusCode"] == 200, created
    assert created["headers"]["content-type"].startswith("application/graphql-response+json")
    assert json.loads(body_of(created)) == {
        "data": {"createUser": {"id": "USER#carol", "name": "Carol", "version": 1}}
    }
    query = "query=%7B%20user(id%3A%20%22carol%22)%20%7B%20name%20%7D%20%7D"
    read = invoke(http_api_event("GET", "/graphql", query=query))
    assert read["statusCode"] == 200, read
    assert json.loads(body_of(read)) == {"data": {"user": {"name": "Carol"}}}
    # a mutation by GET is refused, as over HTTP
    query = "query=" + "mutation%20%7B%20deleteUser(id%3A%20%22carol%22)%20%7B%20id%20%7D%20%7D"
    refused = invoke(http_api_event("GET", "/graphql", query=query))
    assert refused["statusCode"] == 405
    assert refused["headers"]["allow"] == "POST"


def test_graphiql_and_its_assets(proxy: ThreadedProxy) -> None:
    page = invoke(http_api_event("GET", "/graphql", headers={"accept": "text/html"}))
    assert page["statusCode"] == 200, page
    assert page["headers"]["content-type"].startswith("text/html")
    html = body_of(page)
    assert 'src="/playground/graphiql.js"' in html
    script = invoke(http_api_event("GET", "/playground/graphiql.js"))
    assert script["statusCode"] == 200
    assert "javascript" in script["headers"]["content-type"]
    assert "GraphiQL" in body_of(script)


def test_cors_preflight_reaches_the_app(proxy: ThreadedProxy) -> None:
    preflight = http_api_event(
        "OPTIONS",
        "/graphql",
        headers={
            "origin": "https://app.example.com",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,authorization",
        },
    )
    response = invoke(preflight)
    assert 200 <= response["statusCode"] < 300, response
    headers = response["headers"]
    assert headers["access-control-allow-origin"] == "*"
    methods = set(headers["access-control-allow-methods"].replace(" ", "").split(","))
    assert {"GET", "POST"} <= methods
    allowed = headers["access-control-allow-headers"].lower()
    assert "content-type" in allowed and "authorization" in allowed
    assert int(headers["access-control-max-age"]) > 0


def test_settings_come_from_the_same_environment_as_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDGEWISE_TABLE", raising=False)
    monkeypatch.delenv("EDGEWISE_DYNAMODB", raising=False)
    monkeypatch.setenv("EDGEWISE_MODEL", "order-entry")
    monkeypatch.setenv("EDGEWISE_CORS_ORIGINS", "https://app.example.com, http://localhost:5173")
    monkeypatch.setenv("EDGEWISE_PERSISTED_QUERIES", "0")
    monkeypatch.setenv("EDGEWISE_METRICS", "0")
    settings = server.lambda_handler.settings_from_env()
    assert (settings.dynamodb, settings.model, settings.table) == ("aws", "order-entry", None)
    assert settings.cors_origins == ("https://app.example.com", "http://localhost:5173")
    assert settings.persisted_queries is False and settings.metrics is False


def test_a_probe_that_refuses_the_table_fails_every_invocation(
    dynalite: Dynalite, dynalite_table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dynalite has no transactions: the probe, run beside the first request, refuses it (as a
    failed start did), on the first invocation and every later one; read-only, it serves."""
    for name in ("EDGEWISE_PRODUCTION", "EDGEWISE_READ_ONLY", "EDGEWISE_JWT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EDGEWISE_DYNAMODB", dynalite.url)
    monkeypatch.setenv("EDGEWISE_TABLE", dynalite_table.name)
    headers = {"content-type": "application/json"}
    event = http_api_event("POST", "/graphql", headers=headers, body=json.dumps({"query": QUERY}))
    for read_only in (False, True):
        monkeypatch.setenv("EDGEWISE_READ_ONLY", "1" if read_only else "0")
        monkeypatch.setattr(server.lambda_handler, "_container", None)
        try:
            if read_only:
                answered = invoke(event)
                assert json.loads(body_of(answered)) == {"data": {"user": None}}
                continue
            for _ in range(2):
                with pytest.raises(EdgewiseError, match="does not support TransactWriteItems"):
                    invoke(event)
        finally:
            if server.lambda_handler._container is not None:
                server.lambda_handler._container.close()
