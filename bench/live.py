"""Figure 8 of ``python -m bench`` (``--skip 8``), or alone as ``python -m bench.live``: live
queries on one server, from a write to every subscriber.

The app serves the demo data, in a table of its own on the bench's moto (``python -m
bench.live`` starts one of its own: ``--engine moto``, or ``local`` for DynamoDB Local;
``--output DIR`` writes ``LIVE.md``, or ``LIVE-LOCAL.md``), its stream read by the app, under
uvicorn in this process. For each count of subscriptions, identical (one shared execution) and
distinct (each its own document, so one execution each), over one WebSocket per 100
subscriptions: ``--rounds`` times, a mutation renames alice and the time until every subscriber
has the new answer is measured (the stream's polling and the 50 ms coalescing window included).
Prints the median and worst latency, messages per second and the hub's executions and DynamoDB
requests per change. It
measures and prints; it never passes or fails on a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from bench.demo import DEMO_LAYOUT
from bench.engines import ENGINES, started, suffix
from bench.markdown import table as markdown_table
from bench.options import RESULTS
from bench.report import Section, environment, write
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.table import Table
from models.demo.generate import demo_items
from server.http.app import create_app
from server.live.queries import Hub
from server.settings import Settings
from tests.served import serve

PER_SOCKET = 100
COUNTS = (1, 100, 1000)
ROUNDS = 5
TABLE = "live"

Row = tuple[int, str, dict[str, float]]  # subscriptions, identical or distinct, the figures


def _document(n: int, distinct: bool) -> str:
    extra = f" n{n}: id" if distinct else ""
    return f'subscription {{ user(id: "alice") {{ name{extra} }} }}'


async def _open(url: str, count: int, distinct: bool, stack: AsyncExitStack) -> list[Any]:
    sockets: list[ClientConnection] = []
    for start in range(0, count, PER_SOCKET):
        ws = await stack.enter_async_context(
            connect(url, subprotocols=["graphql-transport-ws"], max_queue=None)  # type: ignore[list-item]
        )
        await ws.send(json.dumps({"type": "connection_init"}))
        await ws.recv()
        ids = range(start, min(count, start + PER_SOCKET))
        for n in ids:
            payload = {"query": _document(n, distinct)}
            await ws.send(json.dumps({"type": "subscribe", "id": str(n), "payload": payload}))
        for _ in ids:
            await ws.recv()
        sockets.append(ws)
    return sockets


async def _drain(ws: ClientConnection, expected: int) -> None:
    for _ in range(expected):
        await ws.recv()


async def _case(url: str, hub: Hub, count: int, distinct: bool, rounds: int) -> dict[str, float]:
    async with AsyncExitStack() as stack, httpx.AsyncClient() as http:
        sockets = await _open(url.replace("http", "ws") + "/graphql", count, distinct, stack)
        latencies = []
        executions, requests = hub.executions, hub.requests
        for round_ in range(rounds):
            name = f"Alice {count} {distinct} {round_}"
            mutation = f'mutation {{ updateUser(input: {{id: "alice", name: "{name}"}}) {{ id }} }}'
            started = time.perf_counter()
            waiting = [
                asyncio.create_task(_drain(ws, min(PER_SOCKET, count - i * PER_SOCKET)))
                for i, ws in enumerate(sockets)
            ]
            await http.post(f"{url}/graphql", json={"query": mutation})
            await asyncio.gather(*waiting)
            latencies.append(time.perf_counter() - started)
        return {
            "p50_ms": statistics.median(latencies) * 1000,
            "max_ms": max(latencies) * 1000,
            "messages_per_s": count / statistics.median(latencies),
            "executions": (hub.executions - executions) / rounds,
            "requests": (hub.requests - requests) / rounds,
        }


async def measure(moto: str, counts: tuple[int, ...] = COUNTS, rounds: int = ROUNDS) -> list[Row]:
    """Every case on the moto server at ``moto``, in a new table of the demo data."""
    rows = []
    async with open_client(Endpoint(moto)) as client:
        await create_table(client.control, TABLE, layout=DEMO_LAYOUT)
        table = Table(client, TABLE, layout=DEMO_LAYOUT)
        await table.batch_write(demo_items())
        app = create_app(Settings(subscriptions_max=100_000), table=table)
        async with serve(app) as url:
            hub: Hub = app.state.live
            for count in counts:
                for distinct in (False, True):
                    result = await _case(url, hub, count, distinct, rounds)
                    rows.append((count, "distinct" if distinct else "identical", result))
    return rows


def render(rows: list[Row], rounds: int = ROUNDS, engine: str = "moto") -> Section:
    """Figure 8's section of RESULTS.md."""
    body = [
        [
            f"{count:,}",
            kind,
            f"{r['p50_ms']:.0f}",
            f"{r['max_ms']:.0f}",
            f"{r['messages_per_s']:,.0f}",
            f"{r['executions']:,.0f}",
            f"{r['requests']:,.0f}",
        ]
        for count, kind, r in rows
    ]
    header = [
        "subscriptions",
        "documents",
        "p50 write→all (ms)",
        "max (ms)",
        "messages/s",
        "executions/change",
        "DynamoDB requests/change",
    ]
    text = (
        '`subscription { user(id: "alice") { name } }` over graphql-transport-ws (100 '
        "subscriptions per WebSocket) to one server in this process (uvicorn), which reads its "
        f"table's stream on the bench's {engine} (no proxy). *identical*: every subscription "
        "the same document (multiplexed: one execution per change); *distinct*: each its own "
        "document "
        "(an alias more), so one execution each, their reads by key still sent together "
        "(`graph/shared.py`). For each count and kind, "
        f"{rounds} times: a mutation renames alice, timed from its POST until every subscriber "
        "has the new answer (the stream's polling, up to 250 ms when idle, and the 50 ms "
        "coalescing window included). *messages/s*: subscriptions / median time. Executions "
        "and DynamoDB requests are the server's own counts (`Hub.executions`, `Hub.requests`) "
        "per change.\n\n" + markdown_table(header, body)
    )
    return Section("8. Live queries: from a write to every subscriber, on one server", text)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.live", description=__doc__)
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--engine", choices=ENGINES, default="moto", help="the DynamoDB engine")
    parser.add_argument(
        "--output", type=Path, help=f"a directory for LIVE.md (LIVE-LOCAL.md), e.g. {RESULTS}"
    )
    args = parser.parse_args()
    counts = tuple(int(c) for c in args.counts.split(","))
    with started(args.engine) as url:
        rows = asyncio.run(measure(url, counts, args.rounds))
    section = render(rows, args.rounds, ENGINES[args.engine])
    print(section.text.rsplit("\n\n", 1)[1])
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        path = args.output / f"LIVE{suffix(args.engine)}.md"
        write(path, environment(args.engine), [section])


if __name__ == "__main__":
    main()
