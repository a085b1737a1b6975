"""The lean client's HTTP/1.1 (graph/dynamo/transport.py) against a socket server that records the
bytes it receives: what goes on the wire is what botocore signs, connections are kept alive
unless the server says otherwise, and a bad answer fails only its own call."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from botocore.auth import _host_from_url
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials

from graph.dynamo.transport import ConnectionClosed, Pool, ReadTimeout
from graph.dynamo.wire import LeanClient
from graph.errors import Unavailable
from tests.integration.test_wire import _botocore_signature

BODY = b'{"Item": {"PK": {"S": "a"}, "n": {"N": "1"}}}'


@dataclass
class Server:
    """Answers every request with an answer of BODY, closing the connection after it when
    ``close``; with ``answer``, sends those bytes instead and closes; with ``hang``, nothing."""

    requests: list[tuple[bytes, dict[str, str], bytes]] = field(default_factory=list)
    connections: int = 0
    close: bool = False
    answer: bytes | None = None
    hang: bool = False
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                line, *lines = head.decode("latin-1").split("\r\n")
                headers = dict(h.split(": ", 1) for h in lines if h)
                body = await reader.readexactly(int(headers["Content-Length"]))
                self.requests.append((line.encode(), headers, body))
                if self.hang:
                    await reader.read()
                    break
                writer.write(_answer(BODY, self.close) if self.answer is None else self.answer)
                await writer.drain()
                if self.close or self.answer is not None:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def _answer(body: bytes, close: bool = False, crc: int | None = None) -> bytes:
    crc = zlib.crc32(body) if crc is None else crc
    extra = "Connection: close\r\n" if close else ""
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nx-amz-crc32: {crc}\r\n"
        f"x-amzn-RequestId: r1\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    recorded = Server()
    listening = await asyncio.start_server(recorded.handle, "127.0.0.1", 0)
    recorded.port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield recorded


def _client(url: str, read_timeout: float = 5.0) -> tuple[LeanClient, Pool]:
    pool = Pool(url, connect_timeout=1, read_timeout=read_timeout)
    credentials = Credentials("AKID", "secret", "token")
    return LeanClient(pool, credentials, url, "eu-west-1"), pool


async def test_the_bytes_sent_are_what_botocore_signs(server: Server) -> None:
    """The server checks a signature as DynamoDB does: from the headers it received, Host
    included. botocore's signer, given those headers and body, gives the Authorization sent."""
    url = f"http://127.0.0.1:{server.port}"
    client, pool = _client(url)
    answer = await client.send("GetItem", {"TableName": "graph", "Key": {"PK": {"S": "ü"}}})
    assert answer["Item"] == {"PK": {"S": "a"}, "n": {"N": "1"}}
    line, headers, body = server.requests[0]
    assert line == b"POST / HTTP/1.1"
    assert headers["Host"] == f"127.0.0.1:{server.port}"
    signed = headers["Authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    assert "host" in signed
    received = {k: v for k, v in headers.items() if k.lower() in signed and k != "Authorization"}
    credentials = ReadOnlyCredentials("AKID", "secret", "token")
    expected = _botocore_signature(
        AWSRequest("POST", url, received, body), credentials, "eu-west-1", headers["X-Amz-Date"]
    )
    assert headers["Authorization"] == expected
    pool.close()


@pytest.mark.parametrize(
    "url",
    [
        "https://dynamodb.eu-west-1.amazonaws.com",
        "https://dynamodb.eu-west-1.amazonaws.com:443",
        "http://localhost:8000",
        "http://localhost:80",
    ],
)
def test_the_host_header_is_the_host_botocore_signs(url: str) -> None:
    request = Pool(url, 1, 1).request({"X-Amz-Target": "t"}, b"{}")
    assert request.startswith(f"POST / HTTP/1.1\r\nHost: {_host_from_url(url)}\r\n".encode())
    assert request.endswith(b"X-Amz-Target: t\r\nContent-Length: 2\r\n\r\n{}")


async def test_one_connection_is_kept_alive_unless_the_server_closes_it(server: Server) -> None:
    client, pool = _client(f"http://127.0.0.1:{server.port}")
    for _ in range(5):
        await client.send("GetItem", {"TableName": "graph"})
    assert server.connections == 1
    await asyncio.gather(*(client.send("GetItem", {"TableName": "graph"}) for _ in range(4)))
    assert server.connections == 4  # one busy connection each, then kept
    server.close = True  # each answer now says `Connection: close`
    for _ in range(6):
        await client.send("GetItem", {"TableName": "graph"})
    assert server.connections == 4 + 2  # the four kept ones, each used once, then new ones
    assert len(server.requests) == 15
    pool.close()


async def test_a_connection_in_use_when_the_pool_closes_is_closed_not_kept(
    server: Server,
) -> None:
    client, pool = _client(f"http://127.0.0.1:{server.port}")
    sending = asyncio.ensure_future(client.send("GetItem", {"TableName": "graph"}))
    await asyncio.sleep(0)  # the call is under way
    pool.close()
    await sending  # answered as usual
    assert pool._idle == []  # not kept: a socket left for the collector to report
    assert server.connections == 1


@pytest.mark.parametrize(
    ("answer", "error", "cause"),
    [
        (_answer(BODY)[:-5], "ConnectionClosedError", ConnectionClosed),  # truncated, then closed
        (b"HTTP/1.1 2x0 Nonsense\r\n\r\n", "ConnectionClosedError", ConnectionClosed),
        (b"", "ConnectionClosedError", ConnectionClosed),  # closed without a word
        (None, "ReadTimeoutError", ReadTimeout),  # no answer at all
    ],
)
async def test_a_bad_answer_fails_its_call_and_its_connection_only(
    server: Server, answer: bytes | None, error: str, cause: type[Exception]
) -> None:
    """Each fails as unavailable (retryable), named as botocore names it, the transport's
    exception kept as the cause."""
    client, pool = _client(f"http://127.0.0.1:{server.port}", read_timeout=0.3)
    await client.send("GetItem", {"TableName": "graph"})
    server.answer, server.hang = answer, answer is None
    with pytest.raises(Unavailable) as caught:
        await client.send("GetItem", {"TableName": "graph"})
    assert str(caught.value) == f"DynamoDB is unavailable: {error}"
    assert caught.value.retryable and isinstance(caught.value.__cause__, cause)
    server.answer, server.hang = None, False
    answer_after = await client.send("GetItem", {"TableName": "graph"})
    assert answer_after["Item"]["PK"] == {"S": "a"}
    assert server.connections == 2  # the failed one is not reused
    pool.close()
