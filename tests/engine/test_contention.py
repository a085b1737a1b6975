"""Writes under contention and load (issue 34): eight clients send random, conflicting
membership and subscription changes through the app at once, over a proxy that adds latency
(0 to 50 ms a call) and throttling (10 % of calls), on the embedded DynamoDB (moto, answering
one request at a time as :mod:`graph.dynamo.moto_child` explains). Group ``big`` has more
members than a transaction holds replicas (the table's transactions hold 8 actions here, so
the pending protocol runs for each change of its subscriptions, in a fraction of what 100
actions cost moto). Afterwards the
replicas of ``User.products`` equal the join of the edges, every read of the replicated fields
equals the walked answer, no job or mark is left, and no answer was ``UNAVAILABLE``.

``EDGEWISE_CONTENTION_RUNS=N`` runs N seeded examples instead of 2; a 150-member fan-out under
the same faults is tests/engine/test_fan_out.py; ``python -m bench.fig_contention`` measures
conflicting writes per second and a 150-member fan-out."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from graph.dynamo.client import Endpoint, client_config, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import RetryPolicy, Table
from graph.writes import background
from server.engine import Engine, engine_for
from server.http.app import create_app
from server.http.limits import Limits
from server.settings import Settings
from tests.engine.test_replicas import DEMO, drift, leftovers, replicated
from tests.faults import FaultProxy, Faults
from tests.helpers import LEAN, LOCAL
from tests.table_state import create_streamless

USERS = ("alice", "bob", "u1", "u2", "u3", "m0", "m1")
GROUPS = ("group1", "group2", "g3", "big")
PRODUCTS = ("prod1", "prod2", "prod3", "p4")
MEMBERS = 8  # of big: past a transaction of SMALL actions (and the other groups within one)
SMALL = 8
CLIENTS = 8
CHANGES = 5  # each client's, one after another
RUNS = int(os.environ.get("EDGEWISE_CONTENTION_RUNS", "2"))


def contended() -> str:
    """The replicated demo model, with a mutation that removes a subscription."""
    text = replicated()
    anchor = "    add: subscribeGroup\n"
    text = text.replace(anchor, anchor + "    remove: unsubscribeGroup\n", 1)
    exposed = "    - subscribeGroup\n"
    return text.replace(exposed, exposed + "    - unsubscribeGroup\n", 1)


def sample() -> dict[str, Any]:
    """The demo's sample data, a few more nodes and edges, and group ``big``."""
    data = yaml.safe_load((DEMO / "sample.yaml").read_text())
    members = [f"m{i}" for i in range(MEMBERS)]
    data["nodes"] += [
        *({"type": "User", "id": u, "name": u.upper()} for u in ("u1", "u2", "u3", *members)),
        {"type": "Group", "id": "g3", "name": "G3"},
        {"type": "Group", "id": "big", "name": "Big"},
        {"type": "Product", "id": "p4", "name": "P4"},
    ]
    joins = [("u1", "g3"), ("u2", "group2"), *((m, "big") for m in members)]
    data["edges"] += [
        *({"label": "MEMBER_OF", "from": u, "to": g, "role": "MEMBER"} for u, g in joins),
        {"label": "SUBSCRIBES_TO", "from": "g3", "to": "p4", "plan": "pro", "status": "ACTIVE"},
        {"label": "SUBSCRIBES_TO", "from": "big", "to": "prod1", "plan": "pro", "status": "ACTIVE"},
    ]
    return data


Change = tuple[str, str, str]  # (join|leave|subscribe|unsubscribe|cancel|read, a, b)
changes = st.one_of(
    st.tuples(st.sampled_from(["join", "leave"]), st.sampled_from(USERS), st.sampled_from(GROUPS)),
    st.tuples(
        st.sampled_from(["subscribe", "unsubscribe", "cancel"]),
        st.sampled_from(GROUPS),
        st.sampled_from(PRODUCTS),
    ),
    st.tuples(st.just("read"), st.sampled_from(USERS), st.sampled_from(PRODUCTS)),
)
DOCUMENTS = {
    "join": 'addGroupMember(userId: "{a}", groupId: "{b}") {{ cursor }}',
    "leave": 'removeGroupMember(userId: "{a}", groupId: "{b}")',
    "subscribe": 'subscribeGroup(groupId: "{a}", productId: "{b}", plan: "pro") {{ cursor }}',
    "unsubscribe": 'unsubscribeGroup(groupId: "{a}", productId: "{b}")',
    "cancel": 'cancelSubscription(groupId: "{a}", productId: "{b}") {{ cursor }}',
}
READ = '{{ user(id: "{a}") {{ products {{ product {{ id }} }} hasAccess(productId: "{b}") }} }}'
ALLOWED = {"CONFLICT", "NOT_FOUND"}  # an edge there already, or not there


def document(kind: str, a: str, b: str) -> str:
    if kind == "read":
        return READ.format(a=a, b=b)
    return "mutation { " + DOCUMENTS[kind].format(a=a, b=b) + " }"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("contention")
    (folder / "model.yaml").write_text(contended())
    (folder / "sample.yaml").write_text(yaml.safe_dump(sample()))
    return str(folder / "model.yaml")


@asynccontextmanager
async def loaded(
    url: str, engine: Engine, faults: Faults, max_actions: int = SMALL
) -> AsyncIterator[tuple[Table, Table]]:
    """The sample graph on a fresh table at ``url``: the table itself (to check it), and the
    table over a fault proxy in front of it, with the server's own retry policy (to change
    it)."""
    async with (
        open_client(Endpoint(url), client_config(read_timeout=60.0), lean=LEAN) as direct,
        FaultProxy(url, faults) as proxy,
        open_client(Endpoint(proxy.url), client_config(), lean=LEAN) as proxied,
    ):
        await create_streamless(direct.control, "graph", engine.layout)
        table = Table(direct, "graph", layout=engine.layout, max_actions=max_actions)
        await table.batch_write(engine.sample_items(table))
        yield (
            table,
            Table(proxied, "graph", RetryPolicy(), layout=engine.layout, max_actions=max_actions),
        )


async def run_clients(
    table: Table, model_file: str, plans: list[list[Change]]
) -> tuple[Counter[str], list[Any]]:
    """Each plan sent by one client, all clients at once; the error codes answered, and the
    answers with an error not in ALLOWED. Then the work they left running is waited for."""
    codes: Counter[str] = Counter()
    wrong: list[Any] = []
    app = create_app(Settings(model=model_file), table=table)
    transport = httpx.ASGITransport(app=app)

    async def client(plan: list[Change]) -> None:
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            for kind, a, b in plan:
                response = await http.post("/graphql", json={"query": document(kind, a, b)})
                body = response.json()
                codes["answers"] += 1
                for error in body.get("errors", []):
                    code = error.get("extensions", {}).get("code", "?")
                    codes[code] += 1
                    if code not in ALLOWED:
                        wrong.append((kind, a, b, body))

    await asyncio.gather(*(client(plan) for plan in plans))
    assert await background.settled(60)
    return codes, wrong


EVERYTHING = (
    "{ "
    + " ".join(
        f'{u}: user(id: "{u}") {{ products {{ product {{ id }} via {{ id }} }} '
        + " ".join(f'{p}: hasAccess(productId: "{p}")' for p in PRODUCTS)
        + " }"
        for u in USERS
    )
    + " }"
)


async def answers(table: Table, model: str) -> dict[str, Any]:
    """Every user's products and access, read through ``model`` (one request)."""
    app = create_app(Settings(model=model), table=table, limits=Limits(aliases=100, cost=50_000))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
    ) as http:
        body = (await http.post("/graphql", json={"query": EVERYTHING})).json()
    assert "errors" not in body, body
    return {
        user: (
            {
                (p["product"]["id"], frozenset(v["id"] for v in p["via"]))
                for p in fields["products"]
            },
            {p: fields[p] for p in PRODUCTS},
        )
        for user, fields in body["data"].items()
    }


async def walked_differences(table: Table, model_file: str) -> list[Any]:
    """Every user whose replicated answers differ from the walked ones."""
    replicated, walked = await answers(table, model_file), await answers(table, "demo")
    return [(u, replicated[u], walked[u]) for u in USERS if replicated[u] != walked[u]]


@given(
    plans=st.lists(
        st.lists(changes, min_size=CHANGES, max_size=CHANGES), min_size=CLIENTS, max_size=CLIENTS
    ),
    seed=st.integers(0, 2**16),
)
@settings(
    max_examples=RUNS,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # a failing run is not shrunk: too slow
)
def test_eight_clients_at_once_leave_the_replicas_exact_and_answer_no_unavailable(
    dynamodb: EmbeddedDynamoDB, model_file: str, plans: list[list[Change]], seed: int
) -> None:
    engine = engine_for(model_file)
    faults = Faults(seed=seed, latency=0.05, throttle=0.1)

    async def scenario() -> None:
        dynamodb.reset()
        async with loaded(dynamodb.url, engine, faults) as (table, faulty):
            codes, wrong = await run_clients(faulty, model_file, plans)
            assert wrong == [], codes
            assert await drift(table, engine) == {}
            assert await leftovers(table) == []
            assert await walked_differences(table, model_file) == []

    asyncio.run(scenario())


@pytest.mark.skipif(LOCAL, reason="the server's retries, whatever the engine: run on moto")
async def test_a_call_left_unanswered_is_sent_again_after_the_dynamodb_timeout(
    dynamodb: EmbeddedDynamoDB, model_file: str
) -> None:
    """``--dynamodb-timeout``: a call DynamoDB never answers is sent again after that long, and
    the request answers within its deadline; without it, one attempt waits as long as the
    deadline allows, and the request answers UNAVAILABLE at its deadline."""
    engine = engine_for(model_file)
    dynamodb.reset()
    async with (
        open_client(Endpoint(dynamodb.url), lean=LEAN) as client,
        FaultProxy(dynamodb.url) as proxy,
    ):
        await create_streamless(client.control, "graph", engine.layout)
        table = Table(client, "graph", layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        answered = {}
        for timeout in (0.3, None):
            settings = Settings(
                model=model_file,
                dynamodb=proxy.url,
                table="graph",
                deadline=2.0,
                dynamodb_timeout=timeout,
                client="lean" if LEAN else "botocore",
            )
            app = create_app(settings)
            async with (
                app.router.lifespan_context(app),
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
                ) as http,
            ):
                hangs = proxy.stats["hang"]
                proxy.inject("BatchGetItem", "hang")  # the read of the user
                began = time.monotonic()
                query = '{ user(id: "alice") { name } }'
                body = (await http.post("/graphql", json={"query": query})).json()
                answered[timeout] = (time.monotonic() - began, body)
                assert proxy.stats["hang"] == hangs + 1
    took, body = answered[0.3]
    assert body == {"data": {"user": {"name": "Alice"}}}, answered
    took, body = answered[None]
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAVAILABLE"], body
    assert took >= 1.9, answered
