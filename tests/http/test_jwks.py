"""The JWKS at a URL: fetched without blocking other requests, within a timeout, cached, and
refreshed on an unknown kid at most once per interval. The identity provider is a tiny HTTP
server on a free loopback port that counts its hits, and can hang."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from graph.errors import BadUserInput
from graph.table import Table
from server.http.app import create_app
from server.http.auth import Authenticator
from server.http.jwks import RemoteJwks
from tests.tokens import SECRET, asgi, bearer, hs256, rsa_key, token

QUERY = {"query": '{ user(id: "alice") { name } }'}
ALICE = {"data": {"user": {"name": "Alice"}}}


def jwks(keys: dict[str, rsa.RSAPrivateKey]) -> dict[str, Any]:
    entries = [
        {**jwt.algorithms.RSAAlgorithm.to_jwk(k.public_key(), as_dict=True), "kid": kid}
        for kid, k in keys.items()
    ]
    return {"keys": entries}


class Provider:
    """Serves ``document`` as JSON on any path (or never answers while ``hang``); ``hits``
    counts the requests it received."""

    def __init__(self, document: dict[str, Any] | None = None, hang: bool = False) -> None:
        self.document = document or {"keys": []}
        self.hang = hang
        self.hits = 0
        self.url = ""
        self._released = asyncio.Event()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.readuntil(b"\r\n\r\n")
            self.hits += 1
            if self.hang:
                await self._released.wait()
            else:
                body = json.dumps(self.document).encode()
                head = (
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                )
                writer.write(head.encode() + body)
                await writer.drain()
        writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Provider]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/.well-known/jwks.json"
        try:
            yield self
        finally:
            self._released.set()
            server.close()
            await server.wait_closed()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def rs256(kid: str, name: str = "main") -> dict[str, str]:
    return bearer(token(rsa_key(name), "RS256", headers={"kid": kid}))


async def test_a_hanging_identity_provider_delays_no_other_request(demo: Table) -> None:
    async with Provider(hang=True).running() as idp:
        authenticator = Authenticator(secret=SECRET, jwks=idp.url, jwks_timeout=1.0)
        async with asgi(create_app(table=demo, authenticator=authenticator)) as client:
            started = time.monotonic()
            waiting = [
                asyncio.create_task(client.post("/graphql", json=QUERY, headers=rs256("rsa1")))
                for _ in range(3)
            ]
            await asyncio.sleep(0.1)  # the fetch is under way, and hangs
            others_started = time.monotonic()
            health = await client.get("/healthz")
            hs = await client.post("/graphql", json=QUERY, headers=bearer(hs256()))
            others = time.monotonic() - others_started
            stalled = await asyncio.gather(*waiting)
            waited = time.monotonic() - started
    assert health.status_code == 200
    assert hs.json() == ALICE
    assert others < 0.5, f"other requests waited {others:.2f}s for the identity provider"
    for response in stalled:
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        [error] = response.json()["errors"]
        assert error["extensions"]["code"] == "UNAVAILABLE"
        assert f"the JWKS at {idp.url} did not answer within 1 s" in error["message"]
    assert 0.9 < waited < 2.5
    assert idp.hits == 1  # the three requests shared one fetch


async def test_keys_are_cached_and_an_unknown_kid_refreshes_once_per_interval(
    demo: Table,
) -> None:
    clock = Clock()
    async with Provider(jwks({"rsa1": rsa_key("main")})).running() as idp:
        authenticator = Authenticator(jwks=idp.url)
        authenticator.jwks_client = RemoteJwks(idp.url, refresh_interval=30, clock=clock)
        async with asgi(create_app(table=demo, authenticator=authenticator)) as client:

            async def status(headers: dict[str, str]) -> int:
                response = await client.post("/graphql", json=QUERY, headers=headers)
                return response.status_code

            assert [await status(rs256("rsa1")) for _ in range(3)] == [200] * 3
            assert idp.hits == 1  # cached

            # a kid the JWKS lacks: fetched again once, then not within the interval (which
            # started with the first fetch)
            assert await status(rs256("rsa2", "rotated")) == 401
            assert idp.hits == 1
            clock.now += 30
            assert await status(rs256("rsa2", "rotated")) == 401
            assert idp.hits == 2
            assert await status(rs256("made-up", "rotated")) == 401
            idp.document = jwks({"rsa1": rsa_key("main"), "rsa2": rsa_key("rotated")})
            clock.now += 29
            assert await status(rs256("rsa2", "rotated")) == 401
            assert idp.hits == 2  # rate-limited: the new key is not seen yet

            clock.now += 1
            assert await status(rs256("rsa2", "rotated")) == 200
            assert idp.hits == 3
            assert await status(rs256("rsa1")) == 200  # the first key is still there
            assert idp.hits == 3

            # past its lifespan the JWKS still verifies while a background fetch replaces it
            clock.now += 601
            assert await status(rs256("rsa2", "rotated")) == 200
            for _ in range(100):
                if idp.hits == 4:
                    break
                await asyncio.sleep(0.01)
            assert idp.hits == 4


async def test_unknown_kid_during_an_outage_keeps_the_cached_keys(demo: Table) -> None:
    clock = Clock()
    async with Provider(jwks({"rsa1": rsa_key("main")})).running() as idp:
        authenticator = Authenticator(jwks=idp.url)
        authenticator.jwks_client = RemoteJwks(idp.url, timeout=0.3, clock=clock)
        async with asgi(create_app(table=demo, authenticator=authenticator)) as client:
            ok = await client.post("/graphql", json=QUERY, headers=rs256("rsa1"))
            idp.hang = True
            clock.now += 60
            unknown = await client.post("/graphql", json=QUERY, headers=rs256("x", "other"))
            known = await client.post("/graphql", json=QUERY, headers=rs256("rsa1"))
    assert ok.json() == ALICE
    assert unknown.status_code == 401
    assert known.json() == ALICE
    assert idp.hits == 2


def test_plain_http_jwks_is_refused_off_loopback() -> None:
    with pytest.raises(BadUserInput, match="https://"):
        Authenticator(jwks="http://idp.example.com/jwks.json")
