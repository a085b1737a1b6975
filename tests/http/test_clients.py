"""The frontend clients this API is for, run for real against the app served by uvicorn: Apollo
Client and urql in Node (``apollo.mjs``, ``urql.mjs``), and GraphiQL in headless Chromium
(``graphiql.mjs``, driven by puppeteer-core), from a page on another origin and from a shared
``?query=`` link. Each script prints what it saw as JSON; the assertions are here.

The npm packages are pinned in ``tests/http/package.json`` and its lockfile (``make test`` runs
``npm ci``); Chromium is Debian's (``make browser``). A missing one fails the test.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from graph.table import Table
from server.http.app import create_app
from tests.http.node import run_node
from tests.http.test_playground import CHROMIUM, CHROMIUM_FLAGS, Seen, recording
from tests.served import serve
from tests.table_state import scan


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hashed_only(request: dict[str, Any], method: str) -> bool:
    return request["method"] == method and request["query"] is None and bool(request["hash"])


async def test_apollo_client_persisted_queries_pagination_and_cache_normalization(
    demo: Table,
) -> None:
    async with serve(create_app(table=demo)) as url:
        report = await run_node("apollo.mjs", f"{url}/graphql")

    # The hash alone by GET, answered PERSISTED_QUERY_NOT_FOUND; the retry carries the query.
    unknown, retry = report["persisted"]
    assert hashed_only(unknown, "GET"), unknown
    assert retry["method"] == "POST" and retry["query"], retry
    assert unknown["hash"] == retry["hash"] == sha256(retry["query"])
    assert report["firstPage"] == {
        "names": ["Group 1"],
        "ids": ["GROUP#group1"],
        "hasNextPage": True,
    }

    # fetchMore: the registered hash alone, by GET; relayStylePagination appends the page.
    [more] = report["fetchMoreRequests"]
    assert hashed_only(more, "GET") and more["hash"] == unknown["hash"], more
    assert report["merged"] == {
        "names": ["Group 1", "Group 2"],
        "ids": ["GROUP#group1", "GROUP#group2"],
        "hasNextPage": False,
    }

    # The mutation goes by POST (hash, then hash and query) and its answer updates the cached
    # group inside the paginated list, with no refetch.
    assert [r["method"] for r in report["requestsForMutation"]] == ["POST", "POST"]
    assert report["mutation"] == {
        "__typename": "Group",
        "id": "GROUP#group1",
        "name": "Renamed by Apollo",
        "version": 2,
    }
    assert report["afterMutation"]["names"] == ["Renamed by Apollo", "Group 2"]

    # Another client, empty cache: the server still knows the hash, one GET answers.
    [again] = report["secondClientRequests"]
    assert hashed_only(again, "GET") and again["hash"] == unknown["hash"], again
    assert report["secondClient"]["names"] == ["Renamed by Apollo"]

    # docs/frontend.md's ApolloLink ("Safe retries"): each mutation carries an Idempotency-Key;
    # the same key twice answers the first answer (one user), a call without one gets a fresh key.
    keys = [r["key"] for r in report["keyedRequests"]]
    assert keys[:2] == ["apollo-1", "apollo-1"] and keys[2] not in (None, "apollo-1"), keys
    assert report["keyedAgain"] == report["keyedFirst"] != report["keyedOther"]
    names = [i.get("name") for i in (await scan(demo)).values()]
    assert (names.count("Keyed"), names.count("Other")) == (1, 1)


async def test_urql_query_and_mutation(demo: Table) -> None:
    async with serve(create_app(table=demo)) as url:
        report = await run_node("urql.mjs", f"{url}/graphql")

    assert report["query"]["error"] is None, report["query"]
    product = report["query"]["data"]["product"]
    assert product["id"] == "PRODUCT#prod2"
    assert product["subscribers"]["totalCount"] == 2
    assert [e["node"]["id"] for e in product["subscribers"]["edges"]] == [
        "GROUP#group1",
        "GROUP#group2",
    ]
    # urql's persisted exchange: the hash alone by GET, then hash and query by GET.
    unknown, retry = report["queryRequests"]
    assert hashed_only(unknown, "GET"), unknown
    assert retry["method"] == "GET" and retry["hash"] == sha256(retry["query"]), retry

    assert report["mutation"] == {
        "data": {
            "createProduct": {
                "__typename": "Product",
                "id": "PRODUCT#urql-product",
                "name": "Made by urql",
                "version": 1,
            }
        },
        "error": None,
    }
    assert [r["method"] for r in report["mutationRequests"]] == ["POST"]
    created = report["created"]["data"]["product"]
    assert (created["name"], created["subscribers"]["totalCount"]) == ("Made by urql", 0)


SHARED_QUERY = (
    'query One { user(id: "alice") { name } }\nquery Two($id: ID!) { user(id: $id) { name email } }'
)
SHARED_VARIABLES = '{"id": "bob"}'


@pytest.mark.browser
async def test_graphiql_from_another_origin_and_from_a_shared_link(
    demo: Table, tmp_path: Path
) -> None:
    chromium = shutil.which(CHROMIUM)
    if chromium is None:
        pytest.fail(f"`{CHROMIUM}` is not on PATH: install it with `make browser`")
    flags = [flag for flag in CHROMIUM_FLAGS if flag != "--headless"]  # puppeteer sets it
    seen: list[Seen] = []
    async with serve(recording(create_app(table=demo), seen)) as url:
        query = {"query": SHARED_QUERY, "variables": SHARED_VARIABLES, "operationName": "Two"}
        link = f"{url}/graphql?{urlencode(query)}"
        report = await run_node(
            "graphiql.mjs", url, link, chromium, str(tmp_path / "profile"), *flags, seconds=90
        )

    embedded = report["embedded"]
    assert embedded["errors"] == [], embedded
    assert embedded["query"] == '{ user(id: "bob") { name } }'
    assert embedded["response"] == {"data": {"user": {"name": "Bob"}}}
    calls = [s for s in seen if s.path == "/graphql" and s.origin == report["origin"]]
    preflights = [s for s in calls if s.method == "OPTIONS"]
    posts = [s for s in calls if s.method == "POST"]
    assert preflights, seen
    assert posts, seen
    assert {(s.status, s.allow_origin) for s in preflights + posts} == {(200, "*")}, calls

    shared = report["shared"]
    assert shared["errors"] == [], shared
    assert shared["query"] == SHARED_QUERY
    assert shared["variables"] == SHARED_VARIABLES
    assert shared["response"] == {"data": {"user": {"name": "Bob", "email": "bob@example.com"}}}
    opened = [s for s in seen if s.method == "GET" and s.path == "/graphql" and not s.origin]
    assert opened[0].accept.startswith("text/html,"), opened  # Chromium's navigation
    assert opened[0].status == 200
