"""``python -m bench.client``: client CPU per DynamoDB call, today's path against the lean one.

Per call (µs of this process's CPU), for a Query of 5 items and a BatchGetItem of 100 items:

- ``botocore (today)``: aioboto3's client behind ``graph.dynamo.boto.BotocoreClient``, its items
  decoded by boto3's TypeDeserializer (what ``from_dynamo`` was);
- ``botocore + decoder``: the same client, items decoded by ``graph.dynamo.values``;
- ``lean``: ``graph.dynamo.wire.LeanClient`` and ``graph.dynamo.values``;
- ``transport floor``: the same POST with ``graph.dynamo.transport`` alone (fixed headers, no
signing, no parsing);
- ``aiohttp POST``: the same with aiohttp alone, the lean client's transport before
  ``graph.dynamo.transport``.

Each is shown as a ratio to today's path. The answers are moto's, recorded once and replayed by
a small aiohttp server in a child process (its CPU is not counted), with their ``x-amz-crc32``.
It prints; it never passes or fails on a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from boto3.dynamodb.types import TypeDeserializer

from bench.demo import DEMO_LAYOUT
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.transport import Pool
from graph.dynamo.values import decode_item
from graph.keys import ItemKey
from graph.table import Table

__all__ = ["main", "measure"]

TARGET = "DynamoDB_20120810."
ITEMS = [
    {
        "PK": f"USER#u{i}",
        "SK": f"USER#u{i}" if i >= 5 else f"GROUP#g{i}",
        "name": f"User number {i}",
        "email": f"u{i}@example.com",
        "createdAt": "2026-01-02T03:04:05Z",
        "age": 20 + i,
        "score": f"{i}.5",
        "active": i % 2 == 0,
        "tags": {"a", "b", f"t{i}"},
    }
    for i in range(105)
]
QUERY = {
    "TableName": "graph",
    "KeyConditionExpression": "#h = :h AND begins_with(#r, :r)",
    "ExpressionAttributeNames": {"#h": "PK", "#r": "SK"},
    "ExpressionAttributeValues": {":h": {"S": "USER#u0"}, ":r": {"S": "GROUP#"}},
    "ReturnConsumedCapacity": "TOTAL",
}


def _batch_get() -> dict[str, Any]:
    keys = [ItemKey(f"USER#u{i}", f"USER#u{i}") for i in range(5, 105)]
    request = {"graph": {"Keys": [DEMO_LAYOUT.key(k) for k in keys]}}
    return {"RequestItems": request, "ReturnConsumedCapacity": "TOTAL"}


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "Query of 5 items": ("Query", QUERY),
    "BatchGetItem of 100 items": ("BatchGetItem", _batch_get()),
}


async def _record() -> dict[str, bytes]:
    """moto's answers to the two calls, as sent on the wire."""
    items = [dict(item, PK="USER#u0") if i < 5 else item for i, item in enumerate(ITEMS)]
    with EmbeddedDynamoDB() as moto:
        async with open_client(Endpoint(moto.url), lean=True) as client:
            await create_table(client.control, "graph", layout=DEMO_LAYOUT)
            await Table(client, "graph", layout=DEMO_LAYOUT).batch_write(items)
            answers = {}
            for operation, params in CALLS.values():
                parsed = await client.send(operation, params)  # type: ignore[attr-defined]
                parsed.pop("ResponseMetadata")
                answers[operation] = orjson.dumps(parsed)
    assert len(orjson.loads(answers["Query"])["Items"]) == 5
    assert len(orjson.loads(answers["BatchGetItem"])["Responses"]["graph"]) == 100
    return answers


def _replay(answers: dict[str, bytes], sock: socket.socket) -> None:
    """The replaying server (child process): each operation's recorded answer, with its CRC32."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        body = answers[request.headers["X-Amz-Target"].removeprefix(TARGET)]
        headers = {"x-amz-crc32": str(zlib.crc32(body)), "x-amzn-RequestId": "bench"}
        return web.Response(body=body, headers=headers, content_type="application/x-amz-json-1.0")

    app = web.Application()
    app.router.add_post("/", answer)
    web.run_app(app, sock=sock, print=None, handle_signals=True)


async def _per_call(call: Callable[[], Awaitable[Any]], calls: int, repeats: int) -> float:
    """The least CPU seconds per call over ``repeats`` runs of ``calls`` calls."""
    for _ in range(max(20, calls // 10)):
        await call()
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(calls):
            await call()
        best = min(best, (time.process_time() - started) / calls)
    return best


async def measure(url: str, calls: int, repeats: int, paths: set[str]) -> dict[str, list[float]]:
    """Path name to µs per call, one entry per CALLS entry."""
    deserializer = TypeDeserializer()
    results: dict[str, list[float]] = {}

    def items_of(response: dict[str, Any]) -> list[dict[str, Any]]:
        return response.get("Items") or response["Responses"]["graph"]

    async with (
        open_client(Endpoint(url), lean=False) as botocore,
        open_client(Endpoint(url), lean=True) as lean,
        aiohttp.ClientSession() as session,
    ):
        for name in ("botocore (today)", "botocore + decoder", "lean"):
            if name not in paths:
                continue
            results[name] = []
            for operation, params in CALLS.values():
                client = lean if name == "lean" else botocore
                method = getattr(client, "query" if operation == "Query" else "batch_get_item")
                today = name == "botocore (today)"

                async def call(
                    method: Any = method, params: Any = params, today: bool = today
                ) -> Any:
                    response = await method(params)
                    if today:
                        return [
                            {k: deserializer.deserialize(v) for k, v in raw.items()}
                            for raw in items_of(response)
                        ]
                    return [decode_item(raw) for raw in items_of(response)]

                results[name].append(await _per_call(call, calls, repeats) * 1e6)
        pool = Pool(url, connect_timeout=2, read_timeout=5)
        for path in ("transport floor", "aiohttp POST"):
            if path not in paths:
                continue
            results[path] = []
            for operation, params in CALLS.values():
                body = orjson.dumps(params)
                headers = {"Content-Type": "application/x-amz-json-1.0"}
                headers["X-Amz-Target"] = TARGET + operation

                async def bare(body: bytes = body, headers: dict[str, str] = headers) -> bytes:
                    return (await pool.send(pool.request(headers, body)))[2]

                async def post(body: bytes = body, headers: dict[str, str] = headers) -> bytes:
                    async with session.post(url, data=body, headers=headers) as response:
                        return await response.read()

                call = bare if path == "transport floor" else post
                results[path].append(await _per_call(call, calls, repeats) * 1e6)
        pool.close()
    return results


def _table(results: dict[str, list[float]]) -> str:
    today = results.get("botocore (today)")
    names = list(CALLS)
    lines = [
        "| client path | " + " | ".join(f"{n}: µs/call (ratio)" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for path, values in results.items():
        cells = [
            f"{v:.0f} ({v / today[i]:.2f}x)" if today else f"{v:.0f}" for i, v in enumerate(values)
        ]
        lines.append(f"| {path} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.client", description=__doc__)
    parser.add_argument("--calls", type=int, default=1000, help="calls per run (default 1000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs; the least is kept")
    parser.add_argument(
        "--paths",
        default="botocore (today),botocore + decoder,lean,transport floor,aiohttp POST",
        help="comma-separated paths to measure (default all)",
    )
    args = parser.parse_args()
    answers = asyncio.run(_record())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = multiprocessing.get_context("fork").Process(target=_replay, args=(answers, sock))
    server.start()
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        paths = set(args.paths.split(","))
        print(_table(asyncio.run(measure(url, args.calls, args.repeats, paths))))
    finally:
        server.terminate()
        server.join(10)
        sock.close()


if __name__ == "__main__":
    main()
