"""Authentication end to end: ``Authorization: Bearer <JWT>`` with HS256 or a JWKS (RS256/ES256),
the 401 answer to every bad token, and the no-key development mode."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization

from graph.table import Table
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.tokens import (
    SECRET,
    asgi,
    bearer,
    ec_key,
    hs256,
    rsa_key,
    seeded_table,
    token,
    write_jwks,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

OTHER_SECRET = "another-hmac-secret-" + "fedcba9876543210" * 3
ISSUER = "https://issuer.edgewise.test"
AUDIENCE = "edgewise-api"
EMAIL = '{ user(id: "alice") { email } }'


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def graph() -> AsyncIterator[Table]:
    """The demo data, read-only here, on a moto server of this module's own."""
    async with seeded_table() as table:
        yield table


@pytest.fixture(scope="module")
def jwks(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A JWKS file with one RSA key (kid rsa1) and one P-256 key (kid ec1)."""
    path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    return write_jwks(path, {"rsa1": rsa_key(), "ec1": ec_key()})


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsigned(alg: str = "none", **claims: Any) -> str:
    """A token with header ``alg`` and no signature."""
    header = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    body = {"sub": "alice", "exp": int(time.time()) + 300, "roles": ["admin"], **claims}
    return f"{header}.{b64(json.dumps(body).encode())}."


def hs256_with_raw_key(key: bytes, **header: Any) -> str:
    """An HS256 token whose HMAC key is arbitrary bytes (PyJWT refuses PEM keys for HMAC)."""
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", **header}).encode())
    body = b64(json.dumps({"sub": "alice", "exp": int(time.time()) + 300}).encode())
    signature = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


async def post(
    table: Table,
    authenticator: Authenticator,
    headers: dict[str, str],
    query: str = EMAIL,
    settings: Settings | None = None,
) -> httpx.Response:
    app = create_app(settings, table=table, authenticator=authenticator)
    async with asgi(app) as client:
        return await client.post("/graphql", json={"query": query}, headers=headers)


def assert_unauthenticated(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert "data" not in body
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]


def assert_alice(response: httpx.Response) -> None:
    """The request ran as alice: she sees her own email."""
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {"user": {"email": "alice@example.com"}}}


# ---- HS256 ---------------------------------------------------------------------------------


def now() -> int:
    return int(time.time())


def auth(value: str) -> Any:
    return lambda: {"Authorization": value}


# Tokens are made when the test runs (made at collection, a token could drift out of the skew).
BAD_HS256: list[tuple[str, Any]] = [
    ("missing header", lambda: {}),
    ("empty header", auth("")),
    ("wrong scheme", auth("Basic YWxpY2U6cGFzc3dvcmQ=")),
    ("token without scheme", lambda: {"Authorization": hs256()}),
    ("scheme only", auth("Bearer")),
    ("scheme and blanks", auth("Bearer    ")),
    ("malformed: one segment", auth("Bearer not-a-jwt")),
    ("malformed: garbage segments", auth("Bearer a.b.c")),
    ("malformed: header not an object", auth(f"Bearer {b64(b'[]')}.{b64(b'{}')}.x")),
    ("bad signature: other secret", lambda: bearer(token(OTHER_SECRET, "HS256"))),
    ("alg none", lambda: bearer(unsigned())),
    ("alg None", lambda: bearer(unsigned("None"))),
    ("alg NONE", lambda: bearer(unsigned("NONE"))),
    ("alg HS512 with the right secret", lambda: bearer(token(SECRET, "HS512"))),
    ("RS256 when only a secret is configured", lambda: bearer(token(rsa_key(), "RS256"))),
    ("expired 65 s ago", lambda: bearer(hs256(exp=now() - 65))),
    ("expired 90 s ago", lambda: bearer(hs256(exp=now() - 90))),
    ("expired an hour ago", lambda: bearer(hs256(exp=now() - 3600))),
    ("not yet valid: nbf in 2 min", lambda: bearer(hs256(nbf=now() + 120))),
    ("not yet valid: iat in an hour", lambda: bearer(hs256(iat=now() + 3600))),
    ("missing exp", lambda: bearer(hs256(exp=None))),
    ("exp not a number", lambda: bearer(hs256(exp="tomorrow"))),
    ("missing sub", lambda: bearer(hs256(None))),
    ("sub not a string", lambda: bearer(hs256(42))),  # type: ignore[arg-type]
    ("sub not a user id", lambda: bearer(hs256("alice smith"))),
    ("sub a global id of another type", lambda: bearer(hs256("GROUP#group1"))),
]


@pytest.mark.parametrize("make", [m for _, m in BAD_HS256], ids=[n for n, _ in BAD_HS256])
async def test_bad_token_is_401_unauthenticated(graph: Table, make: Any) -> None:
    assert_unauthenticated(await post(graph, Authenticator(secret=SECRET), make()))


async def test_tampered_payload_is_401(graph: Table) -> None:
    head, _, signature = hs256("bob").split(".")
    forged = b64(json.dumps({"sub": "bob", "exp": now() + 300, "roles": ["admin"]}).encode())
    headers = bearer(f"{head}.{forged}.{signature}")
    assert_unauthenticated(await post(graph, Authenticator(secret=SECRET), headers))


async def test_get_with_a_bad_token_is_401_too(graph: Table) -> None:
    app = create_app(table=graph, authenticator=Authenticator(secret=SECRET))
    async with asgi(app) as client:
        response = await client.get("/graphql", params={"query": EMAIL}, headers=bearer(unsigned()))
    assert_unauthenticated(response)


@pytest.mark.parametrize(
    "offsets",
    [
        {},
        {"exp": 86400},
        {"exp": -30},  # expired, but within the 60 s of allowed skew
        {"nbf": 30},  # not yet valid, but within the skew
        {"iat": 30},
        {"nbf": -10, "iat": -10},
    ],
    ids=repr,
)
async def test_token_within_the_clock_skew_is_accepted(
    graph: Table, offsets: dict[str, int]
) -> None:
    claims = {name: now() + offset for name, offset in offsets.items()}
    response = await post(graph, Authenticator(secret=SECRET), bearer(hs256("alice", **claims)))
    assert_alice(response)


@pytest.mark.parametrize(
    "claims",
    [
        {},
        {"roles": []},
        {"roles": ["user"]},
        {"roles": "admin"},  # not a list: no role
        {"aud": "anyone", "iss": "anywhere"},  # not checked unless configured
    ],
    ids=repr,
)
async def test_valid_token_acts_as_its_subject(graph: Table, claims: dict[str, Any]) -> None:
    response = await post(graph, Authenticator(secret=SECRET), bearer(hs256("alice", **claims)))
    assert_alice(response)
    other = await post(graph, Authenticator(secret=SECRET), bearer(hs256("bob", **claims)))
    assert other.json()["data"] == {"user": {"email": None}}
    assert other.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize(
    "authorization",
    ["Bearer {t}", "bearer {t}", "BEARER {t}", "Bearer  {t} "],
    ids=["Bearer", "bearer", "BEARER", "extra blanks"],
)
async def test_bearer_scheme_is_case_insensitive(graph: Table, authorization: str) -> None:
    headers = {"Authorization": authorization.format(t=hs256("alice"))}
    assert_alice(await post(graph, Authenticator(secret=SECRET), headers))


ADMIN_ONLY = '{ user(id: "jeffbezos") { name email } organization(id: "amazon") { name } }'


async def test_admin_role_acts_as_admin(graph: Table) -> None:
    authenticator = Authenticator(secret=SECRET)
    admin = await post(graph, authenticator, bearer(hs256("bob", roles=["admin"])), ADMIN_ONLY)
    assert admin.json() == {
        "data": {"user": {"name": "Jeff Bezos", "email": None}, "organization": {"name": "Amazon"}}
    }
    plain = await post(graph, authenticator, bearer(hs256("bob", roles=["user"])), ADMIN_ONLY)
    assert plain.json() == {"data": {"user": None, "organization": None}}  # as if missing


async def test_a_plain_user_is_told_forbidden_under_explain_forbidden(graph: Table) -> None:
    authenticator = Authenticator(secret=SECRET)
    explain = Settings(explain_forbidden=True)
    token = bearer(hs256("bob", roles=["user"]))
    plain = (await post(graph, authenticator, token, ADMIN_ONLY, explain)).json()
    assert plain["data"] == {"user": None, "organization": None}
    assert {e["extensions"]["code"] for e in plain["errors"]} == {"FORBIDDEN"}


async def test_admin_role_may_mutate_and_a_plain_user_may_not(graph: Table) -> None:
    mutation = 'mutation { createProduct(input: {id: "auth-admin", name: "A"}) { id } }'
    authenticator = Authenticator(secret=SECRET)
    denied = (await post(graph, authenticator, bearer(hs256("bob")), mutation)).json()
    assert denied["data"] is None
    assert denied["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    allowed = await post(graph, authenticator, bearer(hs256("bob", roles=["admin"])), mutation)
    assert allowed.json() == {"data": {"createProduct": {"id": "PRODUCT#auth-admin"}}}


# ---- issuer and audience -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claims", "accepted"),
    [
        ({"iss": ISSUER, "aud": AUDIENCE}, True),
        ({"iss": ISSUER, "aud": [AUDIENCE, "other-api"]}, True),
        ({"iss": ISSUER, "aud": "other-api"}, False),
        ({"iss": ISSUER, "aud": ["other-api"]}, False),
        ({"iss": ISSUER}, False),  # audience missing
        ({"iss": "https://evil.test", "aud": AUDIENCE}, False),
        ({"aud": AUDIENCE}, False),  # issuer missing
    ],
    ids=repr,
)
async def test_issuer_and_audience_are_checked_when_configured(
    graph: Table, claims: dict[str, Any], accepted: bool
) -> None:
    authenticator = Authenticator(secret=SECRET, issuer=ISSUER, audience=AUDIENCE)
    response = await post(graph, authenticator, bearer(hs256("alice", **claims)))
    if accepted:
        assert_alice(response)
    else:
        assert_unauthenticated(response)


# ---- RS256 / ES256 with a JWKS file ---------------------------------------------------------


@pytest.mark.parametrize(
    ("algorithm", "kid"),
    [("RS256", "rsa1"), ("ES256", "ec1")],
)
async def test_jwks_signed_token_is_accepted(
    graph: Table, jwks: str, algorithm: str, kid: str
) -> None:
    key = rsa_key() if algorithm == "RS256" else ec_key()
    signed = token(key, algorithm, "alice", headers={"kid": kid})
    assert_alice(await post(graph, Authenticator(jwks=jwks), bearer(signed)))


async def test_jwks_token_with_issuer_and_audience(graph: Table, jwks: str) -> None:
    authenticator = Authenticator(jwks=jwks, issuer=ISSUER, audience=AUDIENCE)
    good = token(ec_key(), "ES256", headers={"kid": "ec1"}, iss=ISSUER, aud=AUDIENCE)
    assert_alice(await post(graph, authenticator, bearer(good)))
    bad = token(ec_key(), "ES256", headers={"kid": "ec1"}, iss=ISSUER, aud="other-api")
    assert_unauthenticated(await post(graph, authenticator, bearer(bad)))


def rsa_public_pem() -> bytes:
    return (
        rsa_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


BAD_JWKS_TOKENS: list[tuple[str, Any]] = [
    ("HS256 when only a JWKS is configured", lambda: token(SECRET, "HS256")),
    ("HS256 keyed with the RSA public key", lambda: hs256_with_raw_key(rsa_public_pem())),
    ("alg none", lambda: unsigned()),
    (
        "RS256 by a key not in the JWKS",
        lambda: token(rsa_key("x"), "RS256", headers={"kid": "rsa1"}),
    ),
    ("RS256 with an unknown kid", lambda: token(rsa_key(), "RS256", headers={"kid": "nope"})),
    ("ES256 by a key not in the JWKS", lambda: token(ec_key("x"), "ES256", headers={"kid": "ec1"})),
    ("RS512 by the right key", lambda: token(rsa_key(), "RS512", headers={"kid": "rsa1"})),
    ("PS256 by the right key", lambda: token(rsa_key(), "PS256", headers={"kid": "rsa1"})),
    ("ES384 alg with the P-256 key", lambda: unsigned("ES384")),
    ("RS256 expired", lambda: token(rsa_key(), "RS256", headers={"kid": "rsa1"}, ttl=-120)),
    (
        "ES256 not yet valid",
        lambda: token(ec_key(), "ES256", headers={"kid": "ec1"}, nbf=now() + 600),
    ),
]


@pytest.mark.parametrize(
    "make", [m for _, m in BAD_JWKS_TOKENS], ids=[n for n, _ in BAD_JWKS_TOKENS]
)
async def test_bad_token_against_a_jwks_is_401(graph: Table, jwks: str, make: Any) -> None:
    assert_unauthenticated(await post(graph, Authenticator(jwks=jwks), bearer(make())))


async def test_rs256_token_naming_an_ec_key_is_401(graph: Table, tmp_path: Path) -> None:
    path = write_jwks(tmp_path / "jwks.json", {"ec1": ec_key(), "rsa1": rsa_key()})
    app = create_app(table=graph, authenticator=Authenticator(jwks=path))
    signed = token(rsa_key(), "RS256", headers={"kid": "ec1"})
    async with asgi(app, raise_errors=False) as client:
        response = await client.post("/graphql", json={"query": EMAIL}, headers=bearer(signed))
    assert_unauthenticated(response)


async def test_rs256_token_without_kid_finds_the_rsa_key_after_an_ec_one(
    graph: Table, tmp_path: Path
) -> None:
    path = write_jwks(tmp_path / "jwks.json", {"ec1": ec_key(), "rsa1": rsa_key()})
    app = create_app(table=graph, authenticator=Authenticator(jwks=path))
    async with asgi(app, raise_errors=False) as client:
        response = await client.post(
            "/graphql", json={"query": EMAIL}, headers=bearer(token(rsa_key(), "RS256"))
        )
    assert response.status_code == 200, response.text
    assert "errors" not in response.json()


# ---- no key, production, health -------------------------------------------------------------


async def test_without_a_key_every_request_acts_as_admin_with_a_warning(
    graph: Table, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="edgewise"):
        app = create_app(table=graph, authenticator=Authenticator())
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "admin" in message and "EDGEWISE_JWT_SECRET" in message
    mutation = 'mutation { createGroup(input: {id: "auth-nokey", name: "N"}) { id } }'
    async with asgi(app) as client:
        created = await client.post("/graphql", json={"query": mutation})
        email = await client.post("/graphql", json={"query": EMAIL})
        # a token, even a forged one, changes nothing when no key is configured
        forged = await client.post("/graphql", json={"query": EMAIL}, headers=bearer("x.y.z"))
    assert created.json() == {"data": {"createGroup": {"id": "GROUP#auth-nokey"}}}
    assert_alice(email)
    assert_alice(forged)


async def test_a_configured_key_logs_no_warning(
    graph: Table, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="edgewise"):
        create_app(table=graph, authenticator=Authenticator(secret=SECRET))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_production_refuses_to_start_without_a_key(graph: Table) -> None:
    with pytest.raises(SystemExit) as raised:
        create_app(Settings(production=True), table=graph, authenticator=Authenticator())
    assert "EDGEWISE_JWT_SECRET" in str(raised.value)


async def test_production_requires_a_token(graph: Table) -> None:
    app = create_app(
        Settings(production=True), table=graph, authenticator=Authenticator(secret=SECRET)
    )
    async with asgi(app) as client:
        anonymous = await client.post("/graphql", json={"query": EMAIL})
        signed = await client.post("/graphql", json={"query": EMAIL}, headers=bearer(hs256()))
    assert_unauthenticated(anonymous)
    assert_alice(signed)


async def test_healthz_needs_no_token(graph: Table) -> None:
    app = create_app(
        Settings(production=True), table=graph, authenticator=Authenticator(secret=SECRET)
    )
    async with asgi(app) as client:
        response = await client.get("/healthz")
    assert response.status_code == 200
