"""Figure 2: latency with a fixed latency injected per DynamoDB call, the proxy replaying
recorded responses (so moto's serial CPU is out of the picture) - Edgewise, the naive baseline,
and the floor: rounds x latency + Edgewise's own CPU per request."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import httpx

from .control import ProxyControl
from .markdown import table
from .measure import percentile, say, send
from .queries import BenchQuery

__all__ = ["IN_FLIGHT", "LatencyRow", "measure", "render"]

IN_FLIGHT = 64  # graph.table.Table's default bound on one request's calls in flight


@dataclass(frozen=True)
class LatencyRow:
    query: BenchQuery
    latency: float  # injected per call, seconds
    ours: list[float]  # wall seconds per request
    ours_cpu: list[float]  # CPU seconds per request (server in this process)
    naive: list[float]
    misses: int  # replays that had to go to moto after warming
    proxy_cpu: tuple[float, float]  # the proxy's CPU seconds per request: ours, naive

    @property
    def cpu(self) -> float:
        return statistics.median(self.ours_cpu)

    @property
    def floor(self) -> float:
        return self.query.minimum.rounds * self.latency + self.cpu

    @property
    def capped_floor(self) -> float:
        """The floor when a wave's calls go out at most ``IN_FLIGHT`` at a time."""
        return self.query.minimum.wave_time(self.latency, IN_FLIGHT) + self.cpu


async def measure(
    queries: list[BenchQuery],
    ours: httpx.AsyncClient,
    naive: httpx.AsyncClient,
    proxy: ProxyControl,
    latency: float,
    iterations: int,
) -> list[LatencyRow]:
    """Warm each query's recording once per server, then time ``iterations`` requests of ours
    and half as many (at least 5) of the slower naive server."""
    await proxy.configure(latency=latency, replay=True)
    rows = []
    for query in queries:
        await send(ours, query)
        await send(naive, query)
        start = await proxy.reset()
        ours_samples = [await send(ours, query) for _ in range(iterations)]
        middle = await proxy.stats()
        naive_samples = [await send(naive, query) for _ in range(max(5, iterations // 2))]
        end = await proxy.stats()
        row = LatencyRow(
            query,
            latency,
            [s.wall for s in ours_samples],
            [s.cpu for s in ours_samples],
            [s.wall for s in naive_samples],
            end.misses,
            (
                (middle.cpu - start.cpu) / len(ours_samples),
                (end.cpu - middle.cpu) / len(naive_samples),
            ),
        )
        say(
            f"{query.label:7} p50 ours {ms(percentile(row.ours, 0.5))}"
            f" naive {ms(percentile(row.naive, 0.5))} floor {ms(row.floor)}"
            f" (replay misses {row.misses})"
        )
        rows.append(row)
    return rows


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def render(rows: list[LatencyRow]) -> str:
    headers = [
        "query",
        "fan-out",
        "ours p50",
        "ours p95",
        "naive p50",
        "naive p95",
        "floor",
        f"floor, {IN_FLIGHT} in flight",
        "ours CPU",
        "ours p50 / floor",
        "naive p50 / ours p50",
        "proxy CPU ours / naive",
    ]
    body = [
        [
            row.query.name,
            row.query.fanout,
            ms(percentile(row.ours, 0.5)),
            ms(percentile(row.ours, 0.95)),
            ms(percentile(row.naive, 0.5)),
            ms(percentile(row.naive, 0.95)),
            ms(row.floor),
            ms(row.capped_floor),
            ms(row.cpu),
            f"{percentile(row.ours, 0.5) / row.floor:.2f}",
            f"{percentile(row.naive, 0.5) / percentile(row.ours, 0.5):.1f}",
            f"{ms(row.proxy_cpu[0])} / {ms(row.proxy_cpu[1])}",
        ]
        for row in rows
    ]
    return table(headers, body)
