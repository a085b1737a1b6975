"""A fault-injecting HTTP proxy between a DynamoDB client and moto, for the reliability tests.

Point a client at it with ``open_client(Endpoint(proxy.url))``. It speaks just enough HTTP/1.1
(keep-alive, ``Content-Length`` bodies) to sit between botocore and moto, and injects, per call:

- latency (``latency``: up to that many seconds, uniformly);
- throttling: HTTP 400 ``ProvisionedThroughputExceededException`` or ``ThrottlingException``;
- 500 ``InternalServerError``;
- partial batches: a BatchGetItem forwards only part of its keys and answers the rest as
  ``UnprocessedKeys``; a BatchWriteItem forwards (so applies) only part of its writes and answers
  the rest as ``UnprocessedItems``, as DynamoDB does;
- dropped connections: closed with no response, before forwarding (``drop``: nothing applied) or
  after it (``drop_after``: applied, the answer lost);
- hangs: never answered (until the proxy stops);
- a corrupted answer (``bad_crc32``, only by ``inject``): an ``x-amz-crc32`` that does not match
  the body;
- a truncated answer (``truncated``, only by ``inject``): moto's answer cut in half, its
  ``Content-Length`` still the whole body's, and the connection closed;
- expired credentials (``expired_token``, only by ``inject``): HTTP 400 ``ExpiredTokenException``,
  as DynamoDB answers a request signed with a session token past its expiry.

Faults apply only to ``Faults.operations`` (every operation when ``None``), so a test can fault
reads and let setup writes through. Each call's fault is drawn from ``random.Random`` seeded with
the test's seed, the call's operation and body (less its transaction token and timestamps), and
how many times that same call was seen before: a seed gives the same faults on every run,
whatever order concurrent calls arrive in. ``inject`` forces the
next calls of an operation to get a given fault. A rewritten or made-up body carries the CRC32
that botocore checks (``x-amz-crc32``) and its own ``Content-Length``.

With ``replay=True`` a read the proxy forwards (the same operation and body as one moto already
answered) is answered from memory instead, as moto answered it: for tests whose table does not
change meanwhile, it keeps moto (which reads an index by scanning the whole table) from being the
bottleneck, while every fault and retry still happens as without it.

``stop()`` closes the port (connections are then refused) and every open connection; ``start()``
listens again on the same port, so a test can take DynamoDB away and bring it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import re
import socket
import zlib
from collections import Counter, deque
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Any

from aiohttp import ClientSession, ClientTimeout, TCPConnector

__all__ = ["KINDS", "READS", "FaultProxy", "Faults"]

TARGET_PREFIX = "DynamoDB_20120810."
AMZ_JSON = "application/x-amz-json-1.0"
# hop-by-hop or recomputed headers, not copied across the proxy
HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive"})
READS = frozenset({"BatchGetItem", "GetItem", "Query", "Scan"})
KINDS = (
    "throttle",
    "server_error",
    "partial",
    "drop",
    "drop_after",
    "hang",
    "bad_crc32",
    "truncated",
    "expired_token",
)
THROTTLES = (
    (
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded.",
    ),
    ("com.amazon.coral.availability#ThrottlingException", "Rate of requests exceeds the limit."),
)
SERVER_ERROR = ("com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error")
EXPIRED = (
    "com.amazon.coral.service#ExpiredTokenException",
    "The security token included in the request is expired",
)
MAX_HEAD = 64 * 1024
# what differs between two runs of the same test: transaction tokens and timestamps
VOLATILE = re.compile(
    rb'"ClientRequestToken":\s*"[^"]*"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?'
)


@dataclass(frozen=True)
class Faults:
    """What the proxy does to each call of ``operations``: probabilities, drawn in this order
    (throttle, 500, drop, drop after forwarding, hang); ``partial`` then applies to a forwarded
    batch call; ``latency`` is added to every faulted-operation call."""

    seed: int = 0
    operations: frozenset[str] | None = None
    latency: float = 0.0
    throttle: float = 0.0
    server_error: float = 0.0
    partial: float = 0.0
    drop: float = 0.0
    drop_after: float = 0.0
    hang: float = 0.0

    def applies(self, operation: str) -> bool:
        return self.operations is None or operation in self.operations


@dataclass
class _Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k.lower() == name), "")


@dataclass
class _Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    truncated: bool = False  # send only the first half of the body, then close


def _amz_error(status: int, kind: str, message: str) -> _Response:
    body = json.dumps({"__type": kind, "message": message}).encode()
    return _Response(status, _signed([("Content-Type", AMZ_JSON)], body), body)


def _signed(headers: list[tuple[str, str]], body: bytes) -> list[tuple[str, str]]:
    """``headers`` with the body's own CRC32 and length (botocore rejects a wrong CRC32)."""
    kept = [(k, v) for k, v in headers if k.lower() not in ("x-amz-crc32", "content-length")]
    return [*kept, ("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF))]


class FaultProxy:
    """``async with FaultProxy(moto_url, Faults(...)) as proxy:`` then use ``proxy.url``.

    Change ``proxy.faults`` at any time; ``proxy.stats`` counts calls and injected faults
    (``calls``, ``calls:<Operation>``, ``forwarded``, and one entry per fault kind, also per
    operation as ``<kind>:<Operation>``).
    """

    def __init__(
        self, upstream: str, faults: Faults | None = None, port: int = 0, replay: bool = False
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.faults = faults or Faults()
        self.replay = replay
        self._recorded: dict[tuple[str, bytes], _Response] = {}
        self.stats: Counter[str] = Counter()
        self._port = port
        self._seen: Counter[tuple[str, str]] = Counter()
        self.tokens: list[str] = []  # ClientRequestToken of every TransactWriteItems received
        self._forced: dict[str, deque[str]] = {}
        self._server: asyncio.Server | None = None
        self._client: ClientSession | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._released = asyncio.Event()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def inject(self, operation: str, kind: str, times: int = 1) -> None:
        """Give the next ``times`` calls of ``operation`` the fault ``kind`` (one of KINDS)."""
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {KINDS}")
        self._forced.setdefault(operation, deque()).extend([kind] * times)

    async def start(self) -> None:
        """Listen (again) on the proxy's port; the first start picks a free loopback port."""
        if self._server is not None:
            return
        self._released = asyncio.Event()
        if self._client is None:
            self._client = ClientSession(
                connector=TCPConnector(limit=256),
                timeout=ClientTimeout(total=30.0),
                auto_decompress=True,
                skip_auto_headers=("Accept-Encoding", "User-Agent", "Content-Type"),
            )
        sock = socket.socket()
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self._port))
            self._port = int(sock.getsockname()[1])
            self._server = await asyncio.start_server(self._serve, sock=sock)
        except BaseException:
            sock.close()
            raise

    async def stop(self) -> None:
        """Refuse connections: close the port and every open connection (hangs included)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self._released.set()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def close(self) -> None:
        await self.stop()
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ---- one connection ------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                response = await self._answer(request)
                if response is None:  # dropped or hung: close with no answer
                    return
                encoded = _encode(response)
                if response.truncated:
                    writer.write(encoded[: len(encoded) - len(response.body) // 2])
                    await writer.drain()
                    return
                writer.write(encoded)
                await writer.drain()
                if request.header("connection").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        except asyncio.CancelledError:
            return  # stop(): the connection is closed below
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    def _draw(self, operation: str, body: bytes) -> random.Random:
        """The random source of this call: the seed, the call (its body less the parts that
        change from run to run) and how many times that call was seen before."""
        digest = hashlib.sha256(VOLATILE.sub(b"~", body)).hexdigest()
        nth = self._seen[operation, digest]
        self._seen[operation, digest] += 1
        return random.Random(f"{self.faults.seed}|{operation}|{digest}|{nth}")

    def _choose(self, operation: str, rng: random.Random) -> str | None:
        forced = self._forced.get(operation)
        if forced:
            return forced.popleft()
        faults = self.faults
        if not faults.applies(operation):
            return None
        roll = rng.random()
        for kind in ("throttle", "server_error", "drop", "drop_after", "hang"):
            chance: float = getattr(faults, kind)
            if roll < chance:
                return kind
            roll -= chance
        if operation in ("BatchGetItem", "BatchWriteItem") and rng.random() < faults.partial:
            return "partial"
        return None

    async def _answer(self, request: _Request) -> _Response | None:
        target = request.header("x-amz-target")
        operation = target.removeprefix(TARGET_PREFIX) if target else request.method
        self.stats["calls"] += 1
        self.stats[f"calls:{operation}"] += 1
        if operation == "TransactWriteItems":
            self.tokens.append(json.loads(request.body).get("ClientRequestToken", ""))
        rng = self._draw(operation, request.body)
        faults = self.faults
        if faults.latency and faults.applies(operation):
            await asyncio.sleep(rng.uniform(0, faults.latency))
        kind = self._choose(operation, rng)
        if kind is not None:
            self.stats[kind] += 1
            self.stats[f"{kind}:{operation}"] += 1
        if kind == "throttle":
            return _amz_error(400, *rng.choice(THROTTLES))
        if kind == "server_error":
            return _amz_error(500, *SERVER_ERROR)
        if kind == "expired_token":
            return _amz_error(400, *EXPIRED)
        if kind == "drop":
            return None
        if kind == "hang":
            await self._released.wait()
            return None
        if kind == "partial":
            return await self._partial(operation, request, rng)
        response = await self._forward(request)
        if kind == "drop_after":
            return None
        if kind == "bad_crc32":  # as if the body had been corrupted on the way
            wrong = str((zlib.crc32(response.body) + 1) & 0xFFFFFFFF)
            headers = [(k, v) for k, v in response.headers if k.lower() != "x-amz-crc32"]
            return _Response(response.status, [*headers, ("x-amz-crc32", wrong)], response.body)
        if kind == "truncated":
            return _Response(response.status, response.headers, response.body, truncated=True)
        return response

    async def _forward(self, request: _Request, body: bytes | None = None) -> _Response:
        sent = request.body if body is None else body
        operation = request.header("x-amz-target").removeprefix(TARGET_PREFIX)
        recorded = (operation, sent)
        if self.replay and recorded in self._recorded:
            self.stats["replayed"] += 1
            return self._recorded[recorded]
        assert self._client is not None
        headers = [(k, v) for k, v in request.headers if k.lower() not in HOP]
        async with self._client.request(
            request.method, self.upstream + request.target, headers=headers, data=sent
        ) as upstream:
            content = await upstream.read()  # decoded if moto compressed it
            status = upstream.status
            encoded = "content-encoding" in upstream.headers
            kept = [
                (k, v)
                for k, v in upstream.headers.items()
                if k.lower() not in HOP and k.lower() != "content-encoding"
            ]
        self.stats["forwarded"] += 1
        if body is not None or encoded:
            kept = _signed(kept, content)
        response = _Response(status, kept, content)
        if self.replay and operation in READS and status == 200:
            self._recorded[recorded] = response
        return response

    async def _partial(
        self, operation: str, request: _Request, rng: random.Random
    ) -> _Response | None:
        """Forward part of a batch; answer the rest as unprocessed, merged into moto's answer."""
        payload = json.loads(request.body)
        requested: dict[str, Any] = payload.get("RequestItems") or {}
        getting = operation == "BatchGetItem"
        entries = [
            (table, index)
            for table, spec in requested.items()
            for index in range(len(spec["Keys"] if getting else spec))
        ]
        if len(entries) < 2:
            return await self._forward(request)
        held = set(rng.sample(entries, rng.randint(1, len(entries) - 1)))
        forwarded: dict[str, Any] = {}
        unprocessed: dict[str, Any] = {}
        for table, spec in requested.items():
            listed = spec["Keys"] if getting else spec
            keep = [x for i, x in enumerate(listed) if (table, i) not in held]
            rest = [x for i, x in enumerate(listed) if (table, i) in held]
            for target, part in ((forwarded, keep), (unprocessed, rest)):
                if part:
                    target[table] = {**spec, "Keys": part} if getting else part
        body = json.dumps({**payload, "RequestItems": forwarded}).encode()
        response = await self._forward(request, body)
        if response.status != 200:
            return response
        answer = json.loads(response.body)
        field = "UnprocessedKeys" if getting else "UnprocessedItems"
        merged = dict(answer.get(field) or {})
        for table, part in unprocessed.items():
            if getting:
                earlier = merged.get(table, {}).get("Keys", [])
                merged[table] = {**part, "Keys": earlier + part["Keys"]}
            else:
                merged[table] = merged.get(table, []) + part
        answer[field] = merged
        new_body = json.dumps(answer).encode()
        return _Response(200, _signed(response.headers, new_body), new_body)


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """One HTTP/1.1 request with a Content-Length body; None at a clean end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    if len(head) > MAX_HEAD:
        raise ConnectionError("request head too large")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    request = _Request(method, target, headers, b"")
    if request.header("transfer-encoding"):
        raise ConnectionError("chunked request bodies are not supported by the fault proxy")
    length = int(request.header("content-length") or 0)
    request.body = await reader.readexactly(length) if length else b""
    return request


def _encode(response: _Response) -> bytes:
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {response.status} {reason}"]
    lines += [f"{k}: {v}" for k, v in response.headers]
    lines.append(f"Content-Length: {len(response.body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body
