"""Helpers for the security tests: JWTs (HS256, RS256, ES256 and a JWKS file), an ASGI client,
a table whose every request counts in one trace, and a seeded table on a private moto server."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.observer import Observer
from graph.table import Table
from models.demo.generate import demo_items
from tests.helpers import DEMO_LAYOUT, LEAN

__all__ = [
    "SECRET",
    "CountedTable",
    "asgi",
    "bearer",
    "ec_key",
    "hs256",
    "rsa_key",
    "seeded_table",
    "token",
    "write_jwks",
]

# PyJWT warns about HMAC keys shorter than the hash (and the suite turns warnings into errors).
SECRET = "edgewise-tests-hmac-secret-" + "0123456789abcdef" * 3


def token(
    key: Any,
    algorithm: str,
    sub: str | None = "alice",
    *,
    ttl: int = 300,
    headers: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    """A signed JWT for ``sub`` expiring in ``ttl`` seconds; ``claims`` add or (as None) drop."""
    payload: dict[str, Any] = {"sub": sub, "exp": int(time.time()) + ttl, **claims}
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=algorithm, headers=headers)


def hs256(sub: str | None = "alice", **claims: Any) -> str:
    """An HS256 token signed with :data:`SECRET` (``roles=["admin"]`` for an admin)."""
    return token(SECRET, "HS256", sub, **claims)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


@cache
def rsa_key(name: str = "main") -> rsa.RSAPrivateKey:
    """An RSA key, generated once per name for the session."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@cache
def ec_key(name: str = "main") -> ec.EllipticCurvePrivateKey:
    """A P-256 key, generated once per name for the session."""
    return ec.generate_private_key(ec.SECP256R1())


def write_jwks(path: Path, keys: dict[str, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey]) -> str:
    """Write the public halves of ``keys`` (kid -> private key) as a JWKS file; its path."""
    entries = []
    for kid, private in keys.items():
        if isinstance(private, rsa.RSAPrivateKey):
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key(), as_dict=True)
        else:
            jwk = jwt.algorithms.ECAlgorithm.to_jwk(private.public_key(), as_dict=True)
        entries.append({**jwk, "kid": kid})
    path.write_text(json.dumps({"keys": entries}))
    return str(path)


@asynccontextmanager
async def asgi(app: Starlette, raise_errors: bool = True) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for ``app`` over ASGI (``raise_errors=False`` turns crashes into 500s)."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_errors)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


class CountedTable(Table):
    """A table whose per-request copies all count in this table's trace, so a test can see how
    many DynamoDB calls a request made even when its response carries no trace."""

    def for_request(self, observer: Observer | None = None) -> Table:
        return Table(
            self.client,
            self.name,
            self.policy,
            self.trace,
            self.max_in_flight,
            layout=self.layout,
            observer=observer,
        )


@asynccontextmanager
async def seeded_table(name: str = "graph") -> AsyncIterator[CountedTable]:
    """The demo data on a moto server of its own, for a module's read-only tests: the shared
    server is reset by every function-scoped ``table`` fixture."""
    with EmbeddedDynamoDB() as server:
        async with open_client(Endpoint(server.url), lean=LEAN) as client:
            await create_table(client.control, name, layout=DEMO_LAYOUT)
            table = CountedTable(client, name, layout=DEMO_LAYOUT)
            await table.batch_write(demo_items())
            yield table
