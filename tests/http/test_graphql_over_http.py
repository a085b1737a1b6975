"""GraphQL over HTTP conformance: the graphql-http audit suite against the app served by uvicorn,
and the media-type negotiation of ``server/http/graphql.py`` (``application/graphql-response+json``
for spec clients, ``application/json`` kept as it was for legacy ones).

The audit needs node and the npm package ``graphql-http`` installed in ``tests/http/node_modules``
(``make test`` runs ``npm ci`` there); the test fails, not skips, when either is missing.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from graph.table import Table
from server.http.app import create_app
from server.http.graphql import GRAPHQL_RESPONSE_JSON, JSON, negotiate
from server.http.limits import Limits
from tests.http.node import HERE, run_node
from tests.served import serve

PACKAGE = HERE / "node_modules" / "graphql-http" / "package.json"
AUDIT_TIMEOUT = 60.0
SPEC = f"{GRAPHQL_RESPONSE_JSON}, {JSON};q=0.9"  # what a spec client sends


async def run_audit(url: str) -> list[dict[str, Any]]:
    if not PACKAGE.exists():
        pytest.fail("graphql-http is not installed: run `make test` (npm ci in tests/http)")
    results: list[dict[str, Any]] = await run_node("audit.mjs", url, seconds=AUDIT_TIMEOUT)
    return results


async def test_graphql_http_audit_has_no_must_failure_and_no_should_warning(demo: Table) -> None:
    async with serve(create_app(table=demo)) as url:
        results = await run_audit(f"{url}/graphql")
    assert len(results) >= 40, results  # the suite ran (graphql-http 1.23.1 has 61)
    failed = [r for r in results if r["status"] in ("error", "warn")]
    assert not failed, "\n".join(
        f"{r['status']} {r['id']} {r['name']}: {r['reason']}" for r in failed
    )


# ---- negotiation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, JSON),
        ("", JSON),
        ("*/*", JSON),
        ("application/*", JSON),
        ("application/json", JSON),
        ("application/json; charset=utf-8", JSON),
        (GRAPHQL_RESPONSE_JSON, GRAPHQL_RESPONSE_JSON),
        (SPEC, GRAPHQL_RESPONSE_JSON),
        (f"{JSON}, {GRAPHQL_RESPONSE_JSON}", JSON),  # a tie: the one listed first
        (f"{GRAPHQL_RESPONSE_JSON}, {JSON}", GRAPHQL_RESPONSE_JSON),
        (f"{GRAPHQL_RESPONSE_JSON};q=0.5, {JSON}", JSON),
        (f"{JSON};q=0, */*", GRAPHQL_RESPONSE_JSON),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", JSON),
        ("APPLICATION/GRAPHQL-RESPONSE+JSON", GRAPHQL_RESPONSE_JSON),
        ("text/html", None),
        ("text/plain, image/png", None),
        (f"{JSON};q=0, {GRAPHQL_RESPONSE_JSON};q=0", None),
        ("application/xml", None),
    ],
)
def test_negotiate(accept: str | None, expected: str | None) -> None:
    assert negotiate(accept) == expected


async def post(
    http: httpx.AsyncClient, body: object, accept: str | None = SPEC, **headers: str
) -> httpx.Response:
    if accept is not None:
        headers["Accept"] = accept
    return await http.post(
        "/graphql", content=json.dumps(body), headers=headers | {"Content-Type": "application/json"}
    )


VARIABLE_QUERY = "query Q($id: ID!) { user(id: $id) { name } }"
REQUEST_ERRORS = {
    "parse": {"query": "{"},
    "validation": {"query": "{ user(id: 1) { nope } }"},
    "null variable": {"query": VARIABLE_QUERY, "variables": {"id": None}},
    "missing variable": {"query": VARIABLE_QUERY},
    "wrong variable type": {"query": VARIABLE_QUERY, "variables": {"id": [1]}},
}


@pytest.mark.parametrize("body", REQUEST_ERRORS.values(), ids=REQUEST_ERRORS.keys())
async def test_request_errors_are_400_without_data_for_graphql_response_json(
    http: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    response = await post(http, body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == GRAPHQL_RESPONSE_JSON
    payload = response.json()
    assert "data" not in payload
    assert payload["errors"]

    legacy = await post(http, body, accept=JSON)
    assert legacy.status_code == 200, legacy.text
    assert legacy.headers["content-type"] == JSON
    assert "data" not in legacy.json()
    assert legacy.json()["errors"] == payload["errors"]


@pytest.mark.parametrize("name", REQUEST_ERRORS)
async def test_request_errors_are_bad_user_input(http: httpx.AsyncClient, name: str) -> None:
    response = await post(http, REQUEST_ERRORS[name])
    assert {e["extensions"]["code"] for e in response.json()["errors"]} == {"BAD_USER_INPUT"}


async def test_a_query_answers_200_in_the_negotiated_type(http: httpx.AsyncClient) -> None:
    query = {"query": '{ user(id: "bob") { name } }'}
    for accept, media in [(SPEC, GRAPHQL_RESPONSE_JSON), (None, JSON), ("*/*", JSON)]:
        response = await post(http, query, accept=accept)
        assert response.status_code == 200
        assert response.headers["content-type"] == media
        assert "Accept" in response.headers["vary"].split(", ")
        assert response.json() == {"data": {"user": {"name": "Bob"}}}


async def test_field_errors_keep_data_and_200(http: httpx.AsyncClient) -> None:
    response = await post(
        http, {"query": '{ user(id: "bob") { name } bad: user(id: "a b") { id } }'}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"] == {"user": {"name": "Bob"}, "bad": None}
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]


async def test_an_accept_with_no_supported_type_is_406(http: httpx.AsyncClient) -> None:
    response = await post(http, {"query": "{ __typename }"}, accept="text/plain")
    assert response.status_code == 406
    assert response.headers["content-type"] == JSON
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    by_get = await http.get(
        "/graphql", params={"query": "{ __typename }"}, headers={"Accept": "image/png"}
    )
    assert by_get.status_code == 406


async def test_get_with_html_and_no_query_still_serves_the_playground(
    http: httpx.AsyncClient,
) -> None:
    response = await http.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("accept", [SPEC, JSON])
async def test_a_mutation_over_get_is_405_allowing_post(
    http: httpx.AsyncClient, accept: str
) -> None:
    response = await http.get(
        "/graphql",
        params={"query": 'mutation { deleteUser(id: "alice") { id } }'},
        headers={"Accept": accept},
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.headers["content-type"] == accept.split(",")[0]
    assert "data" not in response.json()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": "{ __typename }", "operationName": 7}, "operationName"),
        ({"query": "{ __typename }", "variables": "x"}, "variables"),
        ({"query": "{ __typename }", "extensions": [1]}, "extensions"),
        ({"query": ["{ __typename }"]}, "query"),
        ({"notquery": "{ __typename }"}, "query"),
        ([{"query": "{ __typename }"}], "batched"),
    ],
)
async def test_bad_parameters_are_400(http: httpx.AsyncClient, body: object, message: str) -> None:
    for accept in (SPEC, JSON):
        response = await post(http, body, accept=accept)
        assert response.status_code == 400, response.text
        [error] = response.json()["errors"]
        assert message in error["message"]


async def test_null_optional_parameters_are_accepted(http: httpx.AsyncClient) -> None:
    body = {"query": "{ __typename }", "variables": None, "operationName": None, "extensions": None}
    response = await post(http, body)
    assert response.status_code == 200
    assert response.json() == {"data": {"__typename": "Query"}}


async def test_limits_are_checked_before_execution_in_both_types(demo: Table) -> None:
    app = create_app(table=demo, limits=Limits(depth=2, body_bytes=200))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        deep = {"query": '{ user(id: "alice") { groups { edges { node { name } } } } }'}
        spec = await post(client, deep)
        assert spec.status_code == 400
        assert spec.json()["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
        assert "data" not in spec.json()
        legacy = await post(client, deep, accept=JSON)
        assert legacy.status_code == 200
        assert legacy.json()["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
        big = await post(client, {"query": "{ __typename }" + " " * 300})
        assert big.status_code == 413
        assert big.headers["content-type"] == GRAPHQL_RESPONSE_JSON


async def test_unauthenticated_is_401_with_www_authenticate(demo: Table) -> None:
    from server.http.auth import Authenticator

    app = create_app(table=demo, authenticator=Authenticator(secret="s" * 32))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for accept in (SPEC, JSON):
            response = await post(client, {"query": "{ __typename }"}, accept=accept)
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.headers["content-type"] == accept.split(",")[0]
            assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


HEADS = {
    "query, json": ({"query": '{ user(id: "alice") { name } }'}, JSON),
    "query, graphql-response+json": ({"query": '{ user(id: "alice") { name } }'}, SPEC),
    "a mutation: 405": ({"query": 'mutation { deleteUser(id: "bob") { id } }'}, JSON),
    "no query: 400": ({}, JSON),
    "the playground": ({}, "text/html"),
}


@pytest.mark.parametrize(("params", "accept"), list(HEADS.values()), ids=list(HEADS))
async def test_head_answers_as_the_same_get_without_a_body(
    http: httpx.AsyncClient, params: dict[str, str], accept: str
) -> None:
    get = await http.get("/graphql", params=params, headers={"Accept": accept})
    head = await http.head("/graphql", params=params, headers={"Accept": accept})
    assert head.status_code == get.status_code != 415
    assert head.content == b"" and get.content != b""
    unique = {"x-request-id"}
    assert {k: v for k, v in head.headers.items() if k not in unique} == {
        k: v for k, v in get.headers.items() if k not in unique
    }  # Content-Length is the GET's
    bob = await http.post("/graphql", json={"query": '{ user(id: "bob") { id } }'})
    assert bob.json() == {"data": {"user": {"id": "USER#bob"}}}  # HEAD never runs a mutation


async def test_head_over_uvicorn_sends_the_headers_only(demo: Table) -> None:
    async with serve(create_app(table=demo)) as url, httpx.AsyncClient() as client:
        params = {"query": '{ user(id: "alice") { name } }'}
        get = await client.get(f"{url}/graphql", params=params)
        head = await client.head(f"{url}/graphql", params=params)
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == get.headers["content-length"] != "0"
    assert head.headers["content-type"] == get.headers["content-type"] == JSON
