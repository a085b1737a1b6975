"""Figure 1: DynamoDB requests and rounds per query and fan-out - Edgewise, the minimum of the
performance model, and the naive baseline - counted by the proxy against live moto, and checked
against Edgewise's own trace (``extensions.dynamodb``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from .control import ProxyControl, ProxyStats
from .markdown import table
from .measure import say, send
from .minimum import Cost
from .queries import BenchQuery

__all__ = ["Measured", "RequestRow", "measure", "render", "short"]

ABBREVIATIONS = {"BatchGetItem": "BGI", "Query": "Q", "GetItem": "GI"}


def short(operations: dict[str, int]) -> str:
    """``{"BatchGetItem": 3, "Query": 101}`` as ``3 BGI + 101 Q``."""
    return " + ".join(f"{n} {ABBREVIATIONS.get(op, op)}" for op, n in sorted(operations.items()))


@dataclass(frozen=True)
class Measured:
    """One request's cost as its server's trace and as the proxy saw it."""

    trace: Cost
    proxy: ProxyStats
    data: Any

    @property
    def agrees(self) -> bool:
        return (
            self.trace.requests == self.proxy.requests
            and self.trace.rounds == self.proxy.rounds
            and self.trace.operations == self.proxy.operations
        )

    def check(self) -> str:
        if self.agrees:
            return "✓"
        return (
            f"✗ trace {self.trace.requests}/{self.trace.rounds} "
            f"proxy {self.proxy.requests}/{self.proxy.rounds}"
        )


@dataclass(frozen=True)
class RequestRow:
    query: BenchQuery
    ours: Measured
    naive: Measured


async def _measure_one(
    client: httpx.AsyncClient, query: BenchQuery, proxy: ProxyControl
) -> Measured:
    await proxy.reset()
    sample = await send(client, query)
    seen = await proxy.stats()
    trace = sample.trace
    return Measured(
        Cost(trace["requests"], trace["rounds"], trace["operations"]), seen, sample.data
    )


async def measure(
    queries: list[BenchQuery],
    ours: httpx.AsyncClient,
    naive: httpx.AsyncClient,
    proxy: ProxyControl,
) -> list[RequestRow]:
    """Each query once on each server, one request at a time, counted at the proxy."""
    rows = []
    for query in queries:
        row = RequestRow(
            query,
            await _measure_one(ours, query, proxy),
            await _measure_one(naive, query, proxy),
        )
        say(
            f"{query.label:7} ours {row.ours.trace.requests:4} req {row.ours.trace.rounds} rounds"
            f" {row.ours.check()} | min {query.minimum.requests:4}/{query.minimum.rounds}"
            f" | naive {row.naive.trace.requests:4}/{row.naive.trace.rounds} {row.naive.check()}"
        )
        rows.append(row)
    return rows


def render(rows: list[RequestRow]) -> str:
    headers = [
        "query",
        "fan-out",
        "ours req",
        "min req",
        "naive req",
        "ours rounds",
        "min rounds",
        "naive rounds",
        "ours / min",
        "ours calls",
        "minimum calls",
        "peak in flight",
        "trace = proxy",
        "same data",
    ]
    body = []
    for row in rows:
        q, ours, naive = row.query, row.ours, row.naive
        body.append(
            [
                q.name,
                q.fanout,
                ours.trace.requests,
                q.minimum.requests,
                naive.trace.requests,
                ours.trace.rounds,
                q.minimum.rounds,
                naive.trace.rounds,
                f"{ours.trace.requests / q.minimum.requests:.2f}",
                short(ours.trace.operations),
                short(q.minimum.operations),
                ours.proxy.peak_in_flight,
                f"{ours.check()} / {naive.check()}",
                "✓" if ours.data == naive.data else "✗",
            ]
        )
    return table(headers, body)
