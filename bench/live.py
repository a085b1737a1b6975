"""``python -m bench.live``: live queries on one server, from a write to every subscriber.

The app serves the demo table on an embedded moto server (its stream read by the app), under
uvicorn in this process. For each count of subscriptions, identical (one shared execution) and
distinct (each its own document, so one execution each), over one WebSocket per 100
subscriptions: ``--rounds`` times, a mutation renames alice and the time until every subscriber
has the new answer is measured (the stream's polling and the 50 ms coalescing window included).
Prints the median and worst latency, messages per second and the hub's executions and DynamoDB
requests per change. It measures and prints; it never passes or fails on a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from contextlib import AsyncExitStack
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from graph.client import Endpoint, create_table, open_client
from graph.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items
from server.app import create_app
from server.live import Hub
from server.settings import Settings
from tests.served import serve

PER_SOCKET = 100


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


async def measure(counts: list[int], rounds: int) -> list[tuple[int, str, dict[str, float]]]:
    rows = []
    with EmbeddedDynamoDB() as dynamodb:
        async with open_client(Endpoint(dynamodb.url)) as client:
            await create_table(client, "graph")
            table = Table(client, "graph")
            await table.batch_write(demo_items())
            app = create_app(Settings(subscriptions_max=100_000), table=table)
            async with serve(app) as url:
                hub: Hub = app.state.live
                for count in counts:
                    for distinct in (False, True):
                        result = await _case(url, hub, count, distinct, rounds)
                        rows.append((count, "distinct" if distinct else "identical", result))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.live", description=__doc__)
    parser.add_argument("--counts", default="1,100,1000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    rows = asyncio.run(measure(counts, args.rounds))
    print(
        "| subscriptions | documents | p50 write→all (ms) | max (ms) | messages/s | "
        "executions/change | DynamoDB requests/change |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for count, kind, r in rows:
        print(
            f"| {count} | {kind} | {r['p50_ms']:.0f} | {r['max_ms']:.0f} | "
            f"{r['messages_per_s']:.0f} | {r['executions']:.0f} | {r['requests']:.0f} |"
        )


if __name__ == "__main__":
    main()
