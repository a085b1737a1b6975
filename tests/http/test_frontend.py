"""What a browser frontend meets first, over plain HTTP: CORS (preflights, origins, production),
automatic persisted queries (hash alone, registration, mismatch, not supported, mutations by GET,
limits, the LRU bound, the allow-list mode), operation selection as graphql-js words it, and the
playground opened from a ``?query=`` link. The real clients run in test_clients.py."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from graph.errors import BadUserInput
from server.http.app import create_app
from server.http.auth import Authenticator
from server.http.cors import MAX_AGE
from server.http.graphql import GRAPHQL_RESPONSE_JSON, JSON
from server.http.limits import Limits
from server.settings import Settings
from tests.tokens import SECRET, CountedTable, asgi, bearer, hs256, seeded_table

pytestmark = pytest.mark.asyncio(loop_scope="module")

SPEC = f"{GRAPHQL_RESPONSE_JSON}, {JSON};q=0.9"
CHROMIUM_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
    "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)
APP = "http://localhost:5173"
OTHER = "https://evil.example"
BOB = '{ user(id: "bob") { name } }'


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def graph() -> AsyncIterator[CountedTable]:
    """The demo data on a moto server of this module's own; every request's DynamoDB calls add
    up in ``graph.trace``."""
    async with seeded_table() as table:
        yield table


def admin() -> dict[str, str]:
    return bearer(hs256("root", roles=["admin"]))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def persisted(query: str | None = None, digest: str | None = None) -> dict[str, Any]:
    """APQ parameters: the hash of ``query`` (or ``digest``), with the query when given."""
    hashed = {"persistedQuery": {"version": 1, "sha256Hash": digest or sha256(query or "")}}
    return {"extensions": hashed} | ({"query": query} if query is not None else {})


async def post(
    client: httpx.AsyncClient, body: dict[str, Any], accept: str = SPEC, **headers: str
) -> httpx.Response:
    return await client.post("/graphql", json=body, headers={"Accept": accept, **headers})


async def get(
    client: httpx.AsyncClient, params: dict[str, Any], accept: str = SPEC, **headers: str
) -> httpx.Response:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    return await client.get("/graphql", params=encoded, headers={"Accept": accept, **headers})


def codes(response: httpx.Response) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


def preflight(
    origin: str, headers: str = "content-type, authorization, edgewise-trace, idempotency-key"
) -> Any:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": headers,
    }


# ---- CORS ----------------------------------------------------------------------------------


async def test_a_preflight_is_answered_for_any_origin_by_default(graph: CountedTable) -> None:
    async with asgi(create_app(table=graph)) as client:
        response = await client.options("/graphql", headers=preflight(APP))
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == "*"
    methods = response.headers["access-control-allow-methods"].split(", ")
    assert {"GET", "POST"} <= set(methods)
    allowed = {h.lower() for h in response.headers["access-control-allow-headers"].split(", ")}
    assert {"content-type", "authorization", "edgewise-trace", "idempotency-key"} <= allowed
    assert response.headers["access-control-max-age"] == str(MAX_AGE)


async def test_a_cross_origin_request_gets_allow_origin_star_by_default(
    graph: CountedTable,
) -> None:
    async with asgi(create_app(table=graph)) as client:
        response = await post(client, {"query": BOB}, Origin=APP)
    assert response.json() == {"data": {"user": {"name": "Bob"}}}
    assert response.headers["access-control-allow-origin"] == "*"
    assert "retry-after" in response.headers["access-control-expose-headers"]


async def test_a_preflight_for_a_header_not_allowed_is_refused(graph: CountedTable) -> None:
    async with asgi(create_app(table=graph)) as client:
        response = await client.options("/graphql", headers=preflight(APP, "x-unknown"))
    assert response.status_code == 400
    assert "headers" in response.text


@pytest.mark.parametrize("production", [False, True])
async def test_listed_origins_only_are_allowed(graph: CountedTable, production: bool) -> None:
    settings = Settings(production=production, cors_origins=(APP,))
    app = create_app(settings, table=graph, authenticator=Authenticator(secret=SECRET))
    async with asgi(app) as client:
        allowed = await client.options("/graphql", headers=preflight(APP))
        refused = await client.options("/graphql", headers=preflight(OTHER))
        from_app = await post(client, {"query": BOB}, Origin=APP, **admin())
        from_other = await post(client, {"query": BOB}, Origin=OTHER, **admin())
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == APP
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert from_app.headers["access-control-allow-origin"] == APP
    assert "Origin" in from_app.headers["vary"]
    assert "access-control-allow-origin" not in from_other.headers
    # CORS is the browser's rule: the server still answers a non-browser client.
    assert from_other.json() == {"data": {"user": {"name": "Bob"}}}


async def test_production_without_listed_origins_allows_none(graph: CountedTable) -> None:
    settings = Settings(production=True)
    app = create_app(settings, table=graph, authenticator=Authenticator(secret=SECRET))
    async with asgi(app) as client:
        refused = await client.options("/graphql", headers=preflight(APP))
        answered = await post(client, {"query": BOB}, Origin=APP, **admin())
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert "access-control-allow-origin" not in answered.headers


# ---- automatic persisted queries -----------------------------------------------------------


@pytest.mark.parametrize("accept", [SPEC, JSON])
@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_an_unknown_hash_is_not_found_then_registered_with_its_query(
    graph: CountedTable, method: str, accept: str
) -> None:
    send = post if method == "POST" else get
    async with asgi(create_app(table=graph)) as client:
        before = graph.trace.requests
        unknown = await send(client, persisted(digest=sha256(BOB)), accept)
        assert graph.trace.requests == before  # nothing ran
        registered = await send(client, persisted(BOB), accept)
        known = await send(client, persisted(digest=sha256(BOB)), accept)
    assert unknown.status_code == 200, unknown.text
    assert unknown.json() == {
        "errors": [
            {
                "message": "PersistedQueryNotFound",
                "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"},
            }
        ]
    }
    assert unknown.headers["cache-control"] == "private, no-cache, must-revalidate"
    assert unknown.headers["content-type"] == accept.split(",")[0]
    assert registered.json() == {"data": {"user": {"name": "Bob"}}}
    assert known.json() == {"data": {"user": {"name": "Bob"}}}


async def test_a_hash_that_does_not_match_the_query_is_bad_user_input(
    graph: CountedTable,
) -> None:
    wrong = sha256("{ __typename }")
    async with asgi(create_app(table=graph)) as client:
        mismatch = await post(client, {"query": BOB, **persisted(digest=wrong)})
        still_unknown = await post(client, persisted(digest=wrong))
    assert mismatch.status_code == 400
    assert codes(mismatch) == ["BAD_USER_INPUT"]
    assert "does not match" in mismatch.json()["errors"][0]["message"]
    assert codes(still_unknown) == ["PERSISTED_QUERY_NOT_FOUND"]


@pytest.mark.parametrize(
    ("extension", "message"),
    [
        ({"version": 2, "sha256Hash": "a" * 64}, "version"),
        ({"version": 1}, "sha256Hash"),
        ({"version": 1, "sha256Hash": "not-hex"}, "sha256Hash"),
        ("yes", "version"),
    ],
)
async def test_a_malformed_persisted_query_is_bad_user_input(
    graph: CountedTable, extension: object, message: str
) -> None:
    async with asgi(create_app(table=graph)) as client:
        response = await post(client, {"extensions": {"persistedQuery": extension}})
    assert response.status_code == 400
    assert codes(response) == ["BAD_USER_INPUT"]
    assert message in response.json()["errors"][0]["message"]


async def test_no_persisted_queries_answers_not_supported(graph: CountedTable) -> None:
    app = create_app(Settings(persisted_queries=False), table=graph)
    async with asgi(app) as client:
        hashed = await post(client, persisted(digest=sha256(BOB)))
        with_query = await get(client, persisted(BOB))
        plain = await post(client, {"query": BOB})
    for response in (hashed, with_query):
        assert response.status_code == 200
        assert response.json()["errors"] == [
            {
                "message": "PersistedQueryNotSupported",
                "extensions": {"code": "PERSISTED_QUERY_NOT_SUPPORTED"},
            }
        ]
    assert plain.json() == {"data": {"user": {"name": "Bob"}}}


RENAME = 'mutation { updateGroup(input: {id: "group2", description: "by hash"}) { version } }'
GROUP2_VERSION = '{ group(id: "group2") { version } }'


async def test_a_hashed_get_never_runs_a_mutation(graph: CountedTable) -> None:
    async with asgi(create_app(table=graph)) as client:
        registered = await post(client, persisted(RENAME))
        version = registered.json()["data"]["updateGroup"]["version"]
        by_hash = await get(client, persisted(digest=sha256(RENAME)))
        other = 'mutation { deleteUser(id: "bob") { id } }'
        with_query = await get(client, persisted(other))
        other_by_hash = await post(client, persisted(digest=sha256(other)))
        after = await post(client, {"query": GROUP2_VERSION})
        bob = await post(client, {"query": BOB})
    for refused in (by_hash, with_query):
        assert refused.status_code == 405, refused.text
        assert refused.headers["allow"] == "POST"
    assert codes(other_by_hash) == ["PERSISTED_QUERY_NOT_FOUND"]  # a refused query is not kept
    assert after.json() == {"data": {"group": {"version": version}}}
    assert bob.json() == {"data": {"user": {"name": "Bob"}}}


DEEP = '{ user(id: "alice") { groups { edges { node { members { edges { node { id } } } } } } } }'
BY_FIRST = 'query($n: Int) { user(id: "alice") { groups(first: $n) { edges { node { id } } } } }'
INTROSPECTION = "{ __schema { queryType { name } } }"


@pytest.mark.parametrize(
    ("query", "variables", "code"),
    [
        (DEEP, None, "QUERY_TOO_COMPLEX"),  # depth 8 over 5
        (BY_FIRST, {"n": 100}, "QUERY_TOO_COMPLEX"),  # cost 101 over 50
        (INTROSPECTION, None, "BAD_USER_INPUT"),  # no introspection under --production
    ],
)
async def test_under_production_a_persisted_query_passes_every_limit(
    graph: CountedTable, query: str, variables: dict[str, Any] | None, code: str
) -> None:
    app = create_app(
        Settings(production=True),
        table=graph,
        authenticator=Authenticator(secret=SECRET),
        limits=Limits(depth=5, cost=50),
    )
    async with asgi(app) as client:
        before = graph.trace.requests
        registering = await post(client, persisted(query) | {"variables": variables}, **admin())
        assert graph.trace.requests == before
        by_hash = await post(client, persisted(digest=sha256(query)), **admin())
    assert set(codes(registering)) == {code}
    assert codes(by_hash) == ["PERSISTED_QUERY_NOT_FOUND"]  # never registered


async def test_under_production_a_registered_hash_still_needs_a_token_and_its_limits(
    graph: CountedTable,
) -> None:
    app = create_app(
        Settings(production=True),
        table=graph,
        authenticator=Authenticator(secret=SECRET),
        limits=Limits(cost=50),
    )
    by_hash = persisted(digest=sha256(BY_FIRST))
    async with asgi(app) as client:
        registered = await post(client, persisted(BY_FIRST) | {"variables": {"n": 1}}, **admin())
        anonymous = await post(client, by_hash | {"variables": {"n": 1}})
        small = await post(client, by_hash | {"variables": {"n": 2}}, **admin())
        before = graph.trace.requests
        costly = await post(client, by_hash | {"variables": {"n": 100}}, **admin())
        assert graph.trace.requests == before
    edges = registered.json()["data"]["user"]["groups"]["edges"]
    assert [e["node"]["id"] for e in edges] == ["GROUP#group1"]
    assert anonymous.status_code == 401
    assert codes(anonymous) == ["UNAUTHENTICATED"]
    assert len(small.json()["data"]["user"]["groups"]["edges"]) == 2
    assert codes(costly) == ["QUERY_TOO_COMPLEX"]
    assert "cost" in costly.json()["errors"][0]["message"]


async def test_the_cache_is_bounded_least_recently_used_first(graph: CountedTable) -> None:
    queries = [f'{{ user(id: "bob") {{ name{" " * n} }} }}' for n in range(3)]
    room = len(queries[0]) + len(queries[2])  # the longest two fit, not all three
    app = create_app(Settings(persisted_queries_cache_bytes=room), table=graph)
    async with asgi(app) as client:
        for query in queries[:2]:
            assert "data" in (await post(client, persisted(query))).json()
        await post(client, persisted(digest=sha256(queries[0])))  # now the most recent
        assert "data" in (await post(client, persisted(queries[2]))).json()
        found = [
            "data" in (await post(client, persisted(digest=sha256(q)))).json() for q in queries
        ]
    assert found == [True, False, True]


# ---- allow-list: --persisted-queries-only --------------------------------------------------

ALICE = '{ user(id: "alice") { name } }'


def apollo_manifest(path: Path, *queries: str) -> Path:
    """A manifest as Apollo's generate-persisted-query-manifest writes it."""
    operations = [
        {"id": sha256(q), "body": q, "name": f"Q{i}", "type": "query"}
        for i, q in enumerate(queries)
    ]
    manifest = {"format": "apollo-persisted-query-manifest", "version": 1, "operations": operations}
    path.write_text(json.dumps(manifest))
    return path


async def test_allow_list_runs_only_the_manifest_operations(
    graph: CountedTable, tmp_path: Path
) -> None:
    manifest = apollo_manifest(tmp_path / "persisted-query-manifest.json", BOB)
    app = create_app(Settings(persisted_queries_only=manifest), table=graph)
    async with asgi(app) as client:
        by_hash = await post(client, persisted(digest=sha256(BOB)))
        by_get = await get(client, persisted(digest=sha256(BOB)))
        by_text = await post(client, {"query": BOB})
        unknown = await post(client, persisted(digest=sha256(ALICE)))
        register = await post(client, persisted(ALICE))
        freeform = await post(client, {"query": ALICE})
        legacy = await post(client, {"query": ALICE}, accept=JSON)
    for answered in (by_hash, by_get, by_text):
        assert answered.json() == {"data": {"user": {"name": "Bob"}}}, answered.text
    assert codes(unknown) == ["PERSISTED_QUERY_NOT_FOUND"]
    for refused in (register, freeform):
        assert refused.status_code == 400
        assert codes(refused) == ["FORBIDDEN"]
        assert "--persisted-queries-only" in refused.json()["errors"][0]["message"]
    assert (legacy.status_code, codes(legacy)) == (200, ["FORBIDDEN"])


async def test_allow_list_reads_graphql_codegen_persisted_documents_by_document_id(
    graph: CountedTable, tmp_path: Path
) -> None:
    manifest = tmp_path / "persisted-documents.json"
    manifest.write_text(json.dumps({sha256(BOB): BOB}))
    app = create_app(Settings(persisted_queries_only=manifest), table=graph)
    async with asgi(app) as client:
        bare = await post(client, {"documentId": sha256(BOB)})
        prefixed = await post(client, {"documentId": f"sha256:{sha256(BOB)}"})
        unknown = await post(client, {"documentId": "nope"})
    assert bare.json() == prefixed.json() == {"data": {"user": {"name": "Bob"}}}
    assert codes(unknown) == ["PERSISTED_QUERY_NOT_FOUND"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{", "not JSON"),
        ("[]", "a manifest is"),
        ('{"format": "other", "version": 1}', "unknown format"),
        ('{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [1]}', "id"),
        ('{"a": 1}', "a manifest is"),
        ("{}", "no operation"),
    ],
)
async def test_a_bad_manifest_stops_the_start(
    graph: CountedTable, tmp_path: Path, content: str | None, message: str
) -> None:
    manifest = tmp_path / "manifest.json"
    if content is not None:
        manifest.write_text(content)
    with pytest.raises(BadUserInput, match=message) as raised:
        create_app(Settings(persisted_queries_only=manifest), table=graph)
    assert str(manifest) in str(raised.value)


async def test_the_allow_list_needs_persisted_queries_on(
    graph: CountedTable, tmp_path: Path
) -> None:
    manifest = apollo_manifest(tmp_path / "m.json", BOB)
    with pytest.raises(BadUserInput, match="drop --no-persisted-queries"):
        create_app(Settings(persisted_queries=False, persisted_queries_only=manifest), table=graph)


# ---- operation selection -------------------------------------------------------------------

CREATE = 'mutation Create { createGroup(input: {id: "never", name: "Never"}) { id } }'
NEVER = '{ group(id: "never") { id } }'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": CREATE, "operationName": "Nope"}, 'Unknown operation named "Nope".'),
        (
            {"query": 'mutation { deleteUser(id: "bob") { id } }', "operationName": "X"},
            'Unknown operation named "X".',
        ),
        (
            {"query": f"{CREATE}\n{BOB.replace('{', 'query Bob {', 1)}"},
            "Must provide operation name if query contains multiple operations.",
        ),
        ({"query": "fragment F on Query { __typename }"}, "Must provide an operation."),
    ],
)
async def test_operation_selection_errors_as_graphql_js_words_them_and_run_nothing(
    graph: CountedTable, body: dict[str, Any], message: str
) -> None:
    async with asgi(create_app(table=graph)) as client:
        before = graph.trace.requests
        spec = await post(client, body)
        legacy = await post(client, body, accept=JSON)
        assert graph.trace.requests == before
        never = await post(client, {"query": NEVER})
        bob = await post(client, {"query": BOB})
    assert spec.status_code == 400
    assert spec.json() == {
        "errors": [{"message": message, "extensions": {"code": "BAD_USER_INPUT"}}]
    }
    assert legacy.status_code == 200
    assert legacy.json() == spec.json()
    assert never.json() == {"data": {"group": None}}
    assert bob.json() == {"data": {"user": {"name": "Bob"}}}


async def test_the_named_operation_runs_alone_by_post_and_get(graph: CountedTable) -> None:
    document = f"query Alice {ALICE}\nquery Bob {BOB}\n{CREATE}"
    async with asgi(create_app(table=graph)) as client:
        by_post = await post(client, {"query": document, "operationName": "Bob"})
        by_get = await get(client, {"query": document, "operationName": "Alice"})
        mutation_by_get = await get(client, {"query": document, "operationName": "Create"})
        never = await post(client, {"query": NEVER})
    assert by_post.json() == {"data": {"user": {"name": "Bob"}}}
    assert by_get.json() == {"data": {"user": {"name": "Alice"}}}
    assert mutation_by_get.status_code == 405
    assert never.json() == {"data": {"group": None}}


# ---- the playground from a link ------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        (CHROMIUM_ACCEPT, True),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", True),  # Firefox
        ("text/html", True),
        (SPEC, False),
        (JSON, False),
        ("*/*", False),  # curl
        ("application/json, text/html", False),
    ],
)
async def test_a_browser_opening_a_query_link_gets_the_playground(
    graph: CountedTable, accept: str, html: bool
) -> None:
    params = {"query": "query Q($id: ID!) { user(id: $id) { name } }", "operationName": "Q"}
    async with asgi(create_app(table=graph)) as client:
        response = await get(client, params | {"variables": {"id": "bob"}}, accept)
    assert response.status_code == 200, response.text
    if html:
        assert response.headers["content-type"].startswith("text/html")
        assert "graphiql" in response.text.lower()
    else:
        assert response.json() == {"data": {"user": {"name": "Bob"}}}


async def test_the_playground_page_never_echoes_the_link(graph: CountedTable) -> None:
    script = "</script><script>alert(1)</script>"
    async with asgi(create_app(table=graph)) as client:
        response = await get(client, {"query": f"# {script}\n{BOB}"}, CHROMIUM_ACCEPT)
    assert response.headers["content-type"].startswith("text/html")
    assert "alert(1)" not in response.text  # GraphiQL reads the link in the browser
