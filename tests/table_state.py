"""Reading the whole table directly, and checking the graph's invariants on what was read."""

from __future__ import annotations

import threading
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from graph.dynamo.client import (
    Endpoint,
    client_config,
    create_table,
    open_client,
    table_definition,
)
from graph.dynamo.plane import ControlPlane
from graph.items import Codec
from graph.marks import is_marked
from graph.table import Item, Layout, RetryPolicy, Table, from_dynamo
from graph.writes.writer import Writer
from models.demo.generate import demo_items
from server.engine import engine_for
from tests.helpers import DEMO_LAYOUT, LEAN

Items = dict[tuple[str, str], Item]


async def scan(table: Table) -> Items:
    """Every item of the table (a strongly consistent Scan), by (PK, SK)."""
    items: Items = {}
    pk, sk = table.layout.pk, table.layout.sk
    params: dict[str, Any] = {"TableName": table.name, "ConsistentRead": True}
    while True:
        response = await table.client.control.scan(params)
        for raw in response["Items"]:
            item = from_dynamo(raw)
            items[item[pk], item[sk]] = item
        if "LastEvaluatedKey" not in response:
            return items
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def problems(items: Items, codec: Codec | None = None) -> list[str]:
    """Everything wrong with the graph in ``items``, read through a model (the demo's unless
    ``codec`` is given): an edge or a child whose end is missing, a counter that disagrees with
    what it counts, a unique value with no claim, a claim of a missing node or of another
    value, a node still marked deleting."""
    codec = codec or engine_for("demo").codec
    model = codec.model
    writer = Writer(Table(None, model.table, layout=codec.layout), codec)
    nodes = {key: item for key, item in items.items() if codec.node_type(item) is not None}
    counted: Counter[tuple[str, str]] = Counter()
    claims: Items = {}
    found = []
    for (pk, sk), item in items.items():
        edge = codec.edge_type(item)
        node = codec.node_type(item)
        if edge is not None:
            for end, which in ((pk, "from"), (sk, "to")):
                if (end, end) not in nodes:
                    found.append(f"edge {pk} -{edge.label}-> {sk}: {end} is missing")
                if (counter := edge.counter(which)) is not None:
                    counted[end, counter] += 1
        elif node is not None and node.parent is not None:
            if (pk, pk) not in nodes:
                found.append(f"{node.name} {sk} of missing {pk}")
            if node.parent_counter is not None:
                counted[pk, node.parent_counter] += 1
        elif node is None:
            claims[pk, sk] = item
    for (pk, _sk), item in nodes.items():
        node = codec.node_type(item)
        assert node is not None
        if is_marked(model, item):
            found.append(f"{pk} is still marked deleting")
        for counter in node.counters(model):
            if int(item.get(counter, 0)) != counted[pk, counter]:
                found.append(f"{pk}.{counter} is {item.get(counter)}, not {counted[pk, counter]}")
        for name, field in node.fields.items():
            value = item.get(field.attribute)
            if field.unique is None or value is None:
                continue
            claim = writer.claim_item(field, value, codec.item_key(item))
            key = claim[codec.layout.pk], claim[codec.layout.sk]
            if claims.pop(key, None) != claim:
                found.append(f"{pk} has {name} {value} but no claim item {key[0]}")
    found += [f"{pk} claims for a missing node or another value" for pk, _sk in claims]
    return found


def edges(items: Items, label: str) -> set[tuple[str, str]]:
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
    async with open_client(Endpoint(url), client_config(read_timeout=30.0), lean=LEAN) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        table = Table(client, "graph", RetryPolicy(deadline=60.0), layout=DEMO_LAYOUT)
        await table.batch_write(demo_items())
        yield table


async def create_streamless(control: ControlPlane, name: str, layout: Layout) -> None:
    """The table of :func:`graph.dynamo.client.create_table`, without its stream, for tests of
    many transactions: moto copies the whole table, its stream's records included, for each
    action of a transaction, so with a stream each transaction takes longer than the last."""
    definition = table_definition(name, layout)
    del definition["StreamSpecification"]
    await control.create_table(definition)
