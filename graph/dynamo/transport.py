"""The lean client's HTTP/1.1: keep-alive connections, one request at a time each, over asyncio's
own transports, responses parsed by httptools (llhttp, the parser of Node.js and uvicorn).

Why not aiohttp: a DynamoDB call is a small POST whose answer carries ``Content-Length``, and a
request that fans out sends a hundred of them at once. A bare aiohttp POST cost 2.5 times this
module's CPU per call (``python -m bench.client``: 157 against 63 µs), for features the data
plane never uses (redirects, cookies, compression, proxies, streaming).

The failures are raised as the exceptions aiohttp raised for them, so that
:mod:`graph.dynamo.wire` turns them into the botocore exceptions the retry policy knows:
:class:`ConnectionClosed` (the connection ended before a whole answer, an unreadable answer),
:class:`ConnectTimeout`, :class:`ReadTimeout` and ``OSError`` (no connection)."""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import cast
from urllib.parse import urlsplit

import httptools

__all__ = ["Answer", "ConnectTimeout", "ConnectionClosed", "Pool", "ReadTimeout"]

Answer = tuple[int, dict[str, str], bytes]  # status, headers (names in lower case), body


class ConnectionClosed(ConnectionError):
    """The connection ended, or the answer could not be parsed, before a whole answer came."""


class ConnectTimeout(TimeoutError):
    pass


class ReadTimeout(TimeoutError):
    pass


class _Connection(asyncio.Protocol):
    """One keep-alive connection; :meth:`send` one request at a time."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[Answer] | None = None
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.open = True
        self.reusable = True
        self.idle_since = 0.0

    def send(self, request: bytes, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Answer]:
        assert self.transport is not None
        self.headers, self.body = {}, []
        self.waiter = loop.create_future()
        self.transport.write(request)
        return self.waiter

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.fail(ConnectionClosed(f"unreadable answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        self.fail(ConnectionClosed(f"the server closed the connection: {exc or 'EOF'}"))

    # httptools' callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.reusable = self.parser.should_keep_alive()
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            answer = (self.parser.get_status_code(), self.headers, b"".join(self.body))
            waiter.set_result(answer)

    def fail(self, exc: Exception) -> None:
        """No answer will come on this connection: fail the one awaited, close the socket."""
        self.reusable = False
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        if self.transport is not None:
            self.transport.close()


class Pool:
    """Connections to one endpoint (``http://`` or ``https://``), at most ``size`` at once; an
    idle one is reused for ``keepalive`` seconds."""

    def __init__(
        self,
        url: str,
        connect_timeout: float,
        read_timeout: float,
        size: int = 128,
        keepalive: float = 12.0,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) endpoint: {url}")
        secure = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if secure else 80)
        self.ssl = ssl.create_default_context() if secure else None
        default_port = parts.port is None or parts.port == (443 if secure else 80)
        # the Host header as botocore signs it: the port only when it is not the scheme's own
        authority = self.host if default_port else f"{self.host}:{self.port}"
        self.head = f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {authority}\r\n".encode()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.keepalive = keepalive
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(size)
        self._closed = False

    def request(self, headers: dict[str, str], body: bytes) -> bytes:
        """The bytes of a POST of ``body`` with ``headers`` (and Host, Content-Length)."""
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return b"%s%sContent-Length: %d\r\n\r\n%s" % (self.head, lines.encode(), len(body), body)

    async def send(self, request: bytes) -> Answer:
        """Send ``request`` (from :meth:`request`) on an idle connection or a new one."""
        async with self._slots:
            loop = asyncio.get_running_loop()
            connection = self._reuse() or await self._connect(loop)
            timer = loop.call_later(self.read_timeout, connection.fail, ReadTimeout("read timeout"))
            try:
                answer = await connection.send(request, loop)
            except BaseException as exc:
                if not isinstance(exc, ConnectionClosed | ReadTimeout):
                    connection.fail(ConnectionClosed("request cancelled"))  # mid-answer: unusable
                raise
            finally:
                timer.cancel()
            if connection.reusable and connection.open and not self._closed:
                connection.idle_since = time.monotonic()
                self._idle.append(connection)
            else:
                connection.fail(ConnectionClosed("closed after its answer"))
            return answer

    def _reuse(self) -> _Connection | None:
        idle, fresh = self._idle, time.monotonic() - self.keepalive
        while idle:
            connection = idle.pop()
            if connection.open and connection.idle_since > fresh:
                return connection
            connection.fail(ConnectionClosed("idle too long"))
        return None

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, connection = await loop.create_connection(
                    _Connection, self.host, self.port, ssl=self.ssl
                )
        except TimeoutError as exc:
            raise ConnectTimeout(f"connect timeout to {self.host}:{self.port}") from exc
        return connection

    def close(self) -> None:
        """Close the idle connections; one in use closes as its answer ends, not kept."""
        self._closed = True
        for connection in self._idle:
            connection.fail(ConnectionClosed("pool closed"))
        self._idle.clear()
