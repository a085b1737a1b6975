"""One execution record per query text (server.engine.records): a document is parsed,
validated and its operation selected once, whichever way it arrives (GET, POST, WebSocket,
Server-Sent Events, a live query)."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from graph.table import Table
from server.engine import records
from server.http.app import create_app
from tests.http.test_subscriptions import receive, served, socket, subscribe


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times the records parse, validate and select an operation."""
    counted: Counter[str] = Counter()

    def counting(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return function(*args, **kwargs)

        return call

    for name in ("parse", "validate", "_select"):
        monkeypatch.setattr(records, name, counting(name, getattr(records, name)))
    return counted


@pytest.fixture
async def live(demo: Table) -> AsyncIterator[tuple[str, Starlette]]:
    async with served(create_app(table=demo)) as pair:
        yield pair


def unique(text: str) -> str:
    """``text`` with a root alias no other test uses: a query text no record holds yet."""
    return text.replace("{ user", f"{{ u{uuid.uuid4().hex}: user", 1)


async def test_a_document_is_parsed_validated_and_selected_once_across_transports(
    live: tuple[str, Starlette], calls: Counter[str]
) -> None:
    url, _app = live
    query = unique('query Q { user(id: "alice") { name } }')
    async with httpx.AsyncClient(timeout=10) as client:
        got = await client.get(f"{url}/graphql", params={"query": query})
        posted = await client.post(f"{url}/graphql", json={"query": query})
        streamed = await client.get(
            f"{url}/graphql", params={"query": query}, headers={"Accept": "text/event-stream"}
        )
    assert got.json() == posted.json()
    assert list(got.json()["data"].values()) == [{"name": "Alice"}]
    assert json.dumps(got.json(), separators=(",", ":")) in streamed.text
    async with socket(url) as ws:
        await subscribe(ws, "1", query)
        message = await receive(ws)
        assert message["type"] == "next"
        assert message["payload"] == got.json()
    assert calls == {"parse": 1, "validate": 1, "_select": 1}


async def test_a_subscription_is_parsed_once_and_runs_as_a_query(
    live: tuple[str, Starlette], calls: Counter[str]
) -> None:
    url, _app = live
    query = unique('subscription { user(id: "alice") { name } }')
    async with socket(url) as ws:
        await subscribe(ws, "1", query)
        await subscribe(ws, "2", query)
        answers = [await receive(ws), await receive(ws)]
    assert [list(a["payload"]["data"].values()) for a in answers] == [[{"name": "Alice"}]] * 2
    # parsed once; validated as a subscription, and its operation as a query, once each
    assert calls == {"parse": 1, "validate": 2, "_select": 2}
