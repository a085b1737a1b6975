"""Figure 5: bulk load - items per second for ``edgewise load`` (``graph.bulk.load``: validate
the DynamoDB-JSON file, then BatchWriteItem calls of 25, many in flight) against boto3's
``Table.batch_writer`` (one call of 25 at a time), into fresh tables on the same moto: directly,
and through the proxy holding each call a fixed latency, as a network and DynamoDB would."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from bench.demo import DEMO_LAYOUT
from graph.bulk import load
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.table import Table, to_dynamo
from models.demo.generate import generated_items

from .control import ProxyControl
from .markdown import table
from .measure import say

__all__ = ["BulkResult", "measure", "render"]


@dataclass(frozen=True)
class BulkResult:
    loader: str
    setup: str  # "moto" or "moto + N ms per call"
    items: int
    seconds: float
    calls: int  # BatchWriteItem calls

    @property
    def rate(self) -> float:
        return self.items / self.seconds


def items(count: int) -> list[dict[str, Any]]:
    """``count`` items of a generated graph (users, groups, products, edges, counters)."""
    graph = generated_items(
        users=max(10, count * 16 // 100),
        groups=max(5, count // 20),
        products=max(10, count // 200),
        memberships=3,
        subscriptions=3,
        seed=1,
    )
    return graph[:count]


def _write(path: Path, data: list[dict[str, Any]]) -> None:
    """The items as ``edgewise dump`` writes them: DynamoDB JSON, one a line."""
    with open(path, "w", encoding="utf-8") as out:
        for item in data:
            out.write(json.dumps(to_dynamo(item), sort_keys=True, separators=(",", ":")) + "\n")


async def _ours(url: str, path: Path, count: int, setup: str) -> BulkResult:
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, "bulk-ours", layout=DEMO_LAYOUT)
        target = Table(client, "bulk-ours", layout=DEMO_LAYOUT)
        started = time.perf_counter()
        written = await load(target, path)
        seconds = time.perf_counter() - started
        calls = target.trace.operations["BatchWriteItem"]
        await client.control.delete_table(dict(TableName="bulk-ours"))
    if written != count:
        raise RuntimeError(f"edgewise load wrote {written} items, not {count}")
    return BulkResult("edgewise load (graph.bulk.load)", setup, written, seconds, calls)


def _boto3(url: str, data: list[dict[str, Any]], setup: str) -> BulkResult:
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    )
    calls = 0

    def count(**_: Any) -> None:
        nonlocal calls
        calls += 1

    resource.meta.client.meta.events.register("before-call.dynamodb.BatchWriteItem", count)
    target = resource.Table("bulk-boto3")
    started = time.perf_counter()
    with target.batch_writer() as writer:
        for item in data:
            writer.put_item(Item=item)
    seconds = time.perf_counter() - started
    target.delete()
    return BulkResult("boto3 Table.batch_writer", setup, len(data), seconds, calls)


async def _pair(url: str, data: list[dict[str, Any]], setup: str) -> list[BulkResult]:
    """Both loaders, one after the other, into fresh tables at ``url``."""
    with tempfile.TemporaryDirectory(prefix="edgewise-bench-") as folder:
        path = Path(folder) / "items.jsonl"
        _write(path, data)
        say(f"bulk, {setup}: {len(data)} items in a DynamoDB-JSON file; edgewise load ...")
        ours = await _ours(url, path, len(data), setup)
    say(f"bulk, {setup}: edgewise load {ours.rate:.0f} items/s, {ours.calls} calls; boto3 ...")
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, "bulk-boto3", layout=DEMO_LAYOUT)
    theirs = await asyncio.to_thread(_boto3, url, data, setup)
    say(f"bulk, {setup}: boto3 batch_writer {theirs.rate:.0f} items/s, {theirs.calls} calls")
    return [ours, theirs]


async def measure(
    moto: str, count: int, proxy: ProxyControl, latency: float, latency_count: int
) -> list[BulkResult]:
    """``count`` items straight into moto, then ``latency_count`` through the proxy holding
    each call ``latency`` seconds (its call counts must match the loaders')."""
    data = items(max(count, latency_count))
    results = await _pair(moto, data[:count], "moto")
    await proxy.configure(latency=latency, replay=False)
    await proxy.reset()
    delayed = await _pair(proxy.url, data[:latency_count], f"moto + {latency * 1000:.0f} ms/call")
    seen = (await proxy.stats()).operations.get("BatchWriteItem", 0)
    if seen != sum(r.calls for r in delayed):
        say(f"bulk: ✗ the proxy saw {seen} BatchWriteItem calls, the loaders counted otherwise")
    return results + delayed


def render(results: list[BulkResult]) -> str:
    baseline = {r.setup: r.rate for r in results if r.loader.startswith("boto3")}
    rows = [
        [
            r.loader,
            r.setup,
            r.items,
            f"{r.seconds:.1f}",
            f"{r.rate:.0f}",
            r.calls,
            f"{r.rate / baseline[r.setup]:.2f}",
        ]
        for r in results
    ]
    headers = [
        "loader",
        "DynamoDB",
        "items",
        "seconds",
        "items/s",
        "BatchWriteItem calls",
        "x boto3",
    ]
    return table(headers, rows)
