"""Figure 4: requests per second for one query with many concurrent clients against a uvicorn
server in a child process (Edgewise via ``edgewise serve``, and the naive baseline), the proxy
replaying with a fixed latency per DynamoDB call."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from .markdown import table
from .measure import percentile, say
from .queries import BenchQuery

__all__ = ["Throughput", "load", "render"]


@dataclass(frozen=True)
class Throughput:
    server: str
    clients: int
    duration: float
    latencies: list[float]
    errors: int
    misses: int

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.duration


async def load(
    server: str, url: str, query: BenchQuery, expected: Any, clients: int, duration: float
) -> Throughput:
    """``clients`` loops POSTing ``query`` back to back for ``duration`` seconds."""
    payload = {"query": query.text, "variables": query.variables}
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(url, connector=connector) as session:
        for _ in range(3):  # warm: connections, the server's first requests
            async with session.post("/graphql", json=payload) as response:
                body = await response.json()
                if body.get("data") != expected:
                    raise RuntimeError(f"{server} answers {query.label} differently: {body}")
        deadline = time.perf_counter() + duration

        async def client() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                async with session.post("/graphql", json=payload) as response:
                    body = await response.json()
                if response.status == 200 and "errors" not in body:
                    latencies.append(time.perf_counter() - started)
                else:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    result = Throughput(server, clients, elapsed, latencies, errors, 0)
    say(
        f"{server}: {result.rate:.0f} requests/s, p50 {percentile(latencies, 0.5) * 1000:.0f} ms,"
        f" {errors} errors"
    )
    return result


def render(results: list[Throughput], query: BenchQuery, latency: float) -> str:
    rows = [
        [
            r.server,
            query.label,
            r.clients,
            f"{r.duration:.1f}",
            len(r.latencies),
            f"{r.rate:.0f}",
            f"{percentile(r.latencies, 0.5) * 1000:.0f}",
            f"{percentile(r.latencies, 0.95) * 1000:.0f}",
            r.errors,
            f"{latency * 1000:.0f} ms",
        ]
        for r in results
    ]
    headers = [
        "server",
        "query",
        "clients",
        "seconds",
        "requests",
        "requests/s",
        "p50 ms",
        "p95 ms",
        "errors",
        "per DynamoDB call",
    ]
    return table(headers, rows)
