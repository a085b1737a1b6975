"""Reading the whole table directly, and checking the graph's invariants on what was read."""

from __future__ import annotations

import threading
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from graph.client import Endpoint, client_config, create_table, open_client
from graph.keys import NodeType
from graph.model import EDGE_TYPES, OFFICE_COUNTER, counter, counters_of
from graph.seed import demo_items
from graph.table import Item, RetryPolicy, Table, from_dynamo

NODE_TYPES = {t.value for t in NodeType}


async def scan(table: Table) -> dict[tuple[str, str], Item]:
    """Every item of the table (a strongly consistent Scan), by (PK, SK)."""
    items: dict[tuple[str, str], Item] = {}
    params: dict[str, Any] = {"TableName": table.name, "ConsistentRead": True}
    while True:
        response = await table.client.scan(**params)
        for raw in response["Items"]:
            item = from_dynamo(raw)
            items[item["PK"], item["SK"]] = item
        if "LastEvaluatedKey" not in response:
            return items
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def is_node(item: Item) -> bool:
    return bool(item["PK"] == item["SK"] and item["PK"].partition("#")[0] in NODE_TYPES)


def problems(items: dict[tuple[str, str], Item]) -> list[str]:
    """Everything wrong with the graph in ``items``: dangling edges, counters that disagree with
    the edges, email claims of missing users, orphan tickets, half-deleted nodes."""
    found: list[str] = []
    nodes = {pk: item for (pk, _sk), item in items.items() if is_node(item)}
    counts: Counter[tuple[str, str]] = Counter()
    for (pk, sk), item in items.items():
        label = item.get("edge")
        if label is not None:
            edge = EDGE_TYPES[label]
            for end in (pk, sk):
                if end not in nodes:
                    found.append(f"edge {pk} -{label}-> {sk}: {end} is missing")
            counts[pk, counter(edge, incoming=False)] += 1
            counts[sk, counter(edge, incoming=True)] += 1
        elif item.get("type") == "OFFICE":
            if pk not in nodes:
                found.append(f"office {sk} of missing {pk}")
            counts[pk, OFFICE_COUNTER] += 1
        elif pk.startswith("EMAIL#"):
            user = nodes.get(item["user"])
            if user is None:
                found.append(f"{pk} claims missing {item['user']}")
            elif str(user.get("email", "")).lower() != pk.removeprefix("EMAIL#"):
                found.append(f"{pk} claimed by {item['user']} whose email is {user.get('email')}")
    for key, node in nodes.items():
        if node.get("deleting"):
            found.append(f"{key} is still marked deleting")
        if node.get("email") and ("EMAIL#" + node["email"].lower(),) * 2 not in items:
            found.append(f"{key} has email {node['email']} but no claim item")
        if node["type"] == "TICKET" and node.get("author") not in nodes:
            found.append(f"ticket {key} of missing author {node.get('author')}")
        for name in counters_of(NodeType(node["type"])):
            stored, real = int(node.get(name, 0)), counts[key, name]
            if stored != real:
                found.append(f"{key}.{name} is {stored} but {real} items are counted")
    return found


def edges(items: dict[tuple[str, str], Item], label: str) -> set[tuple[str, str]]:
    return {key for key, item in items.items() if item.get("edge") == label}


class SerialDynamoDB:
    """moto's DynamoDB serving one request at a time, from a thread of this process.

    moto checks a transaction's conditions and then applies its writes with no lock, so its
    threaded server (the ``dynamodb`` fixture) lets two concurrent transactions interleave: two
    conditional updates of one version can both win, and an ADD can be lost. DynamoDB never
    does that. Tests of concurrent writers use this server, which restores that isolation while
    the writers still race on the client side.
    """

    def __enter__(self) -> SerialDynamoDB:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        app = DomainDispatcherApplication(create_backend_app)
        self.server = make_server("127.0.0.1", 0, app, threaded=False)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.thread.join()


@asynccontextmanager
async def demo_table(url: str) -> AsyncIterator[Table]:
    """A fresh graph table holding the demo data at ``url`` (reset first by the caller).

    Its read timeout and deadline are generous: a server that answers one call at a time
    (:class:`SerialDynamoDB`) queues concurrent writers, and on a loaded machine the last in
    the queue may wait past the default 5 s; a timed-out transaction would then be retried
    while its first attempt still applies, which moto (ignoring ClientRequestToken) turns into
    a CONFLICT that DynamoDB would not give."""
    async with open_client(Endpoint(url), client_config(read_timeout=30.0)) as client:
        await create_table(client, "graph")
        table = Table(client, "graph", RetryPolicy(deadline=60.0))
        await table.batch_write(demo_items())
        yield table
