"""Sending a benchmark query, timing it, and summarising timings."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.types import ASGIApp

from .queries import BenchQuery

__all__ = ["Sample", "in_process", "percentile", "say", "send"]

_STARTED = time.monotonic()


def say(message: str) -> None:
    """Progress on stdout, with the time since the bench started."""
    print(f"[{time.monotonic() - _STARTED:6.1f}s] {message}", flush=True)


@dataclass(frozen=True)
class Sample:
    body: dict[str, Any]
    wall: float  # seconds
    cpu: float  # this process's CPU seconds (the server's, when it runs in process)

    @property
    def trace(self) -> dict[str, Any]:
        trace: dict[str, Any] = self.body["extensions"]["dynamodb"]
        return trace

    @property
    def data(self) -> Any:
        return self.body.get("data")


def in_process(app: ASGIApp) -> httpx.AsyncClient:
    """An HTTP client calling ``app`` in this process (no socket)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")


async def send(client: httpx.AsyncClient, query: BenchQuery) -> Sample:
    """POST ``query`` with ``Edgewise-Trace: 1``; raises on an HTTP or GraphQL error."""
    cpu, wall = time.process_time(), time.perf_counter()
    response = await client.post(
        "/graphql",
        json={"query": query.text, "variables": query.variables},
        headers={"Edgewise-Trace": "1"},
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    if body.get("errors"):
        raise RuntimeError(f"{query.label}: {body['errors'][:2]}")
    return Sample(body, wall, cpu)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]
