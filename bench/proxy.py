"""A metering HTTP proxy between a DynamoDB client and moto.

It counts calls per DynamoDB operation (``X-Amz-Target: DynamoDB_20120810.<Op>``) and sequential
rounds (busy periods: the number of calls in flight rising from 0), can hold every call for a
fixed latency (``asyncio.sleep``, so calls overlap), and records read responses to replay them:
an identical later read (same operation, same body) is answered from the recording, after the
latency, without touching moto. moto is serial (about 9 ms of CPU per Query), DynamoDB is a
parallel fleet, so replay lets a read benchmark's latency show its round structure.

Two refinements keep replays exact where request bytes legitimately vary: bodies are compared as
canonical JSON with each BatchGetItem's ``Keys`` sorted (DynamoDB treats them as a set and answers
in any order), and a BatchGetItem whose keys were all seen before, in other batches, is answered
from the items recorded per key. ``x-amz-crc32`` always matches the body sent.

Run it as ``python -m bench.proxy --upstream URL --port P``; control it over HTTP under
``/__bench__/`` (see :class:`bench.control.ProxyControl`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
import zlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

__all__ = ["CONTROL", "Meter", "Recording", "build_app", "main"]

CONTROL = "/__bench__"
TARGET_PREFIX = "DynamoDB_20120810."
READS = frozenset({"BatchGetItem", "GetItem", "Query", "Scan"})
JSON_TYPE = "application/x-amz-json-1.0"
# headers that describe one hop, not the request
HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "accept-encoding"})


@dataclass
class Meter:
    """Counts calls, operations and rounds (rises of in-flight calls from 0)."""

    requests: int = 0
    rounds: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    hits: int = 0
    misses: int = 0
    operations: Counter[str] = field(default_factory=Counter)

    def begin(self, operation: str) -> None:
        if self.in_flight == 0:
            self.rounds += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self.requests += 1
        self.operations[operation] += 1

    def end(self) -> None:
        self.in_flight -= 1

    def reset(self) -> None:
        """Zero the counts (calls still in flight stay counted as in flight)."""
        self.requests = self.rounds = self.hits = self.misses = 0
        self.peak_in_flight = self.in_flight
        self.operations = Counter()

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "rounds": self.rounds,
            "operations": dict(self.operations),
            "peakInFlight": self.peak_in_flight,
            "hits": self.hits,
            "misses": self.misses,
            "cpu": time.process_time(),
        }


def _canonical(operation: str, body: bytes) -> str:
    parsed = json.loads(body)
    if operation == "BatchGetItem":
        for request in parsed.get("RequestItems", {}).values():
            request["Keys"] = sorted(request.get("Keys", []), key=_dumps)
    return _dumps(parsed)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Recording:
    """Read responses by (operation, canonical body), and BatchGetItem results by key."""

    def __init__(self) -> None:
        self.responses: dict[tuple[str, str], bytes] = {}
        # table -> canonical key -> the item (None: known to be missing)
        self.items: dict[str, dict[str, dict[str, Any] | None]] = {}

    def clear(self) -> None:
        self.responses.clear()
        self.items.clear()

    def lookup(self, operation: str, body: bytes) -> bytes | None:
        found = self.responses.get((operation, _canonical(operation, body)))
        if found is None and operation == "BatchGetItem":
            return self._compose(json.loads(body))
        return found

    def record(self, operation: str, body: bytes, response: bytes) -> None:
        self.responses[(operation, _canonical(operation, body))] = response
        if operation == "BatchGetItem":
            self._record_items(json.loads(body), json.loads(response))

    def _record_items(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        if response.get("UnprocessedKeys"):
            return
        for table, wanted in request.get("RequestItems", {}).items():
            if set(wanted) != {"Keys"} or not wanted["Keys"]:
                continue  # projections or consistent reads: keep to whole-response replay
            names = sorted(wanted["Keys"][0])
            known = self.items.setdefault(table, {})
            for key in wanted["Keys"]:
                known.setdefault(_dumps(key), None)
            for item in response.get("Responses", {}).get(table, []):
                known[_dumps({n: item[n] for n in names})] = item

    def _compose(self, request: dict[str, Any]) -> bytes | None:
        """A BatchGetItem answer from items recorded by key, if every key is known."""
        responses: dict[str, list[dict[str, Any]]] = {}
        capacity = []
        for table, wanted in request.get("RequestItems", {}).items():
            known = self.items.get(table, {})
            if set(wanted) != {"Keys"} or any(_dumps(k) not in known for k in wanted["Keys"]):
                return None
            found = [known[_dumps(k)] for k in wanted["Keys"]]
            responses[table] = [item for item in found if item is not None]
            capacity.append({"TableName": table, "CapacityUnits": 0.5 * len(responses[table])})
        answer: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": {}}
        if request.get("ReturnConsumedCapacity", "NONE") != "NONE":
            answer["ConsumedCapacity"] = capacity
        return _dumps(answer).encode()


@dataclass
class Settings:
    latency: float = 0.0
    replay: bool = False
    record: bool = True


def _response(status: int, body: bytes) -> web.Response:
    headers = {
        "Content-Type": JSON_TYPE,
        "x-amz-crc32": str(zlib.crc32(body)),
        "x-amzn-RequestId": uuid.uuid4().hex,
    }
    return web.Response(status=status, body=body, headers=headers)


def build_app(upstream: str) -> web.Application:
    """The proxy as an aiohttp app forwarding DynamoDB calls to ``upstream``."""
    meter = Meter()
    recording = Recording()
    settings = Settings()
    app = web.Application(client_max_size=64 * 1024 * 1024)

    async def open_session(app: web.Application) -> AsyncIterator[None]:
        connector = TCPConnector(limit=512, force_close=False)
        async with ClientSession(connector=connector, timeout=ClientTimeout(total=120)) as session:
            app["session"] = session
            yield

    app.cleanup_ctx.append(open_session)

    async def forward(request: web.Request, body: bytes) -> tuple[int, bytes]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        session: ClientSession = app["session"]
        async with session.post(upstream + request.path_qs, data=body, headers=headers) as answer:
            return answer.status, await answer.read()

    async def dynamodb(request: web.Request) -> web.Response:
        body = await request.read()
        operation = request.headers.get("X-Amz-Target", "").removeprefix(TARGET_PREFIX)
        meter.begin(operation or "?")
        try:
            if settings.latency:
                await asyncio.sleep(settings.latency)
            readable = operation in READS
            if settings.replay and readable:
                cached = recording.lookup(operation, body)
                if cached is not None:
                    meter.hits += 1
                    return _response(200, cached)
                meter.misses += 1
            status, payload = await forward(request, body)
            if settings.record and readable and status == 200:
                recording.record(operation, body, payload)
            return _response(status, payload)
        finally:
            meter.end()

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(meter.snapshot())

    async def reset(request: web.Request) -> web.Response:
        meter.reset()
        return web.json_response(meter.snapshot())

    async def configure(request: web.Request) -> web.Response:
        changes = await request.json()
        for name in ("latency", "replay", "record"):
            if name in changes:
                setattr(settings, name, type(getattr(settings, name))(changes[name]))
        if changes.get("forget"):
            recording.clear()
        return web.json_response(settings.__dict__ | {"recorded": len(recording.responses)})

    app.router.add_get(f"{CONTROL}/stats", stats)
    app.router.add_post(f"{CONTROL}/reset", reset)
    app.router.add_post(f"{CONTROL}/config", configure)
    app.router.add_post("/{tail:.*}", dynamodb)
    return app


def main() -> None:
    """``python -m bench.proxy --upstream URL --port P``: serve until terminated."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the DynamoDB endpoint, e.g. moto")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    web.run_app(
        build_app(args.upstream.rstrip("/")),
        host=args.host,
        port=args.port,
        access_log=None,
        print=None,
        backlog=1024,
    )


if __name__ == "__main__":
    main()
