"""The bench's side of the proxy: configure it, reset and read its counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from .proxy import CONTROL

__all__ = ["ProxyControl", "ProxyStats"]


@dataclass(frozen=True)
class ProxyStats:
    """What the proxy saw since its last reset."""

    requests: int
    rounds: int
    operations: dict[str, int]
    peak_in_flight: int
    hits: int
    misses: int
    cpu: float  # the proxy process's CPU seconds so far (take differences)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> ProxyStats:
        return cls(
            raw["requests"],
            raw["rounds"],
            raw["operations"],
            raw["peakInFlight"],
            raw["hits"],
            raw["misses"],
            raw["cpu"],
        )


class ProxyControl:
    """Talks to the proxy's ``/__bench__`` endpoints."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._http = httpx.AsyncClient(base_url=url + CONTROL, timeout=30)

    async def configure(
        self, *, latency: float | None = None, replay: bool | None = None, forget: bool = False
    ) -> None:
        changes: dict[str, Any] = {"forget": forget}
        if latency is not None:
            changes["latency"] = latency
        if replay is not None:
            changes["replay"] = replay
        (await self._http.post("/config", json=changes)).raise_for_status()

    async def reset(self) -> ProxyStats:
        response = await self._http.post("/reset")
        response.raise_for_status()
        return ProxyStats.of(response.json())

    async def stats(self) -> ProxyStats:
        response = await self._http.get("/stats")
        response.raise_for_status()
        return ProxyStats.of(response.json())

    async def aclose(self) -> None:
        await self._http.aclose()
