"""The lean DynamoDB client: every call of :class:`graph.dynamo.plane.DataPlane` and of the
:class:`graph.dynamo.plane.ControlPlane` POSTed straight over one keep-alive pool
(:mod:`graph.dynamo.transport`), with nothing of botocore imported.

:class:`LeanClient` has one method per data-plane call (``get_item``, ``batch_get_item``,
``query``, ``put_item``, ``update_item``, ``delete_item``, ``transact_write_items``,
``batch_write_item``) and nothing else of DynamoDB's; its ``control`` (:class:`LeanControl`) has
the calls of the commands (DescribeTable, CreateTable, Scan ...) over the same pool. Every answer
reaches the engine through :func:`graph.table.from_dynamo`, which reads both clients' shapes.

What it keeps of botocore's behaviour, so that the table's retry policy, deadline and trace see
what they see from aioboto3:

- requests signed with AWS Signature Version 4 exactly as botocore's ``SigV4Auth`` signs them (the
  tests sign the same calls both ways), with the credentials :mod:`graph.dynamo.client` found
  (the environment's, or botocore's chain, refreshable ones refreshed before they expire); the
  derived signing key is cached per (secret key, day, region), the canonical request's fixed
  part per (operation, second, credentials);
- the answer's ``x-amz-crc32`` verified;
- its failures translated here, at its boundary, as :mod:`graph.dynamo.boto` translates
  botocore's: an error answer through :func:`graph.errors.answered` (the same ``code``, status and
  fields, ``Item`` and ``CancellationReasons`` at the top level of ``answer``), a failure to get
  one through :func:`graph.errors.unreachable`, named as botocore names it
  (``ConnectionClosedError``: a connection closed before a whole answer, a truncated or
  unreadable answer; ``ConnectTimeoutError``, ``ReadTimeoutError``, ``EndpointConnectionError``,
  ``ChecksumError``), the transport's exception kept as the cause.

What it drops: parameter validation (DynamoDB validates, answering ``ValidationException``),
botocore's event hooks, response parsing into botocore's shapes (the answer is DynamoDB JSON as
sent: ``N`` as text, ``B`` as base64 text, which :mod:`graph.dynamo.values` decodes; a Scan's
binary values are decoded to bytes, as botocore gives them to the commands; DescribeTable's
times stay epoch seconds), and the per-call user-agent and endpoint-rule work.
"""

from __future__ import annotations

import hmac
import http.client
import inspect
import time
import zlib
from base64 import b64decode, b64encode
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from hashlib import sha256
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import orjson

from graph.dynamo.plane import Params, Response
from graph.dynamo.transport import ConnectionClosed, ConnectTimeout, Pool, ReadTimeout
from graph.errors import EdgewiseError, answered, unreachable

__all__ = ["Frozen", "LeanClient", "LeanControl", "Signer", "StaticCredentials", "open_lean_client"]

AMZ_JSON = "application/x-amz-json-1.0"
TARGET = "DynamoDB_20120810."
SIGV4_TIMESTAMP = "%Y%m%dT%H%M%SZ"
KEEPALIVE_TIMEOUT = 12  # seconds, as aiobotocore's pool


class Frozen(NamedTuple):
    """Credentials at one moment, as botocore's ``ReadOnlyCredentials`` (same fields)."""

    access_key: str
    secret_key: str
    token: str | None = None


class StaticCredentials:
    """Credentials that do not change (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and
    ``AWS_SESSION_TOKEN``, as a Lambda function has them; a local endpoint's dummies), with
    botocore's ``get_frozen_credentials``."""

    def __init__(self, access_key: str, secret_key: str, token: str | None = None) -> None:
        self.frozen = Frozen(access_key, secret_key, token)

    def get_frozen_credentials(self) -> Frozen:
        return self.frozen


def authority(url: str) -> str:
    """The Host header (and the signed ``host``) of ``url``: the port only when it is not the
    scheme's own, as botocore signs it."""
    parts = urlsplit(url)
    default = parts.port is None or parts.port == (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    return host if default else f"{host}:{parts.port}"


class Signer:
    """AWS Signature Version 4 of a DynamoDB POST, as botocore's ``SigV4Auth`` makes it (the
    headers it signs: ``content-type``, ``host``, ``x-amz-date``, ``x-amz-security-token`` with
    session credentials, ``x-amz-target``; the payload's SHA-256, over http and https alike).

    The canonical request but its last line (the payload's hash) is made once per operation,
    second and credentials, and the signing key once per secret key, day and region."""

    def __init__(self, url: str, region: str) -> None:
        self.host = authority(url)
        self.path = urlsplit(url).path or "/"
        self.region = region
        self._keys: dict[tuple[str, str], bytes] = {}
        self._prefixes: dict[tuple[str, str, str, str | None], tuple[str, str]] = {}

    def key(self, secret: str, day: str) -> bytes:
        key = self._keys.get((secret, day))
        if key is None:
            key = f"AWS4{secret}".encode()
            for part in (day, self.region, "dynamodb", "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            if len(self._keys) >= 8:  # rotated keys or past days: keep the cache small
                self._keys.clear()
            self._keys[(secret, day)] = key
        return key

    def _prefix(self, operation: str, stamp: str, credentials: Frozen) -> tuple[str, str]:
        """The canonical request up to its payload hash, and the signed headers' names."""
        cached = (operation, stamp, credentials.access_key, credentials.token)
        found = self._prefixes.get(cached)
        if found is None:
            headers = [
                f"content-type:{AMZ_JSON}",
                f"host:{self.host}",
                f"x-amz-date:{stamp}",
                *(
                    [f"x-amz-security-token:{_trim(credentials.token)}"]
                    if credentials.token
                    else []
                ),
                f"x-amz-target:{TARGET}{operation}",
            ]
            names = ";".join(header.partition(":")[0] for header in headers)
            prefix = "\n".join(["POST", self.path, "", *headers, "", names, ""])
            if len(self._prefixes) >= 32:  # past seconds
                self._prefixes.clear()
            found = self._prefixes[cached] = (prefix, names)
        return found

    def sign(self, operation: str, body: bytes, credentials: Frozen, stamp: str) -> dict[str, str]:
        """The headers of one call at ``stamp`` (``%Y%m%dT%H%M%SZ``), Authorization included."""
        prefix, names = self._prefix(operation, stamp, credentials)
        canonical = prefix + sha256(body).hexdigest()
        day = stamp[:8]
        scope = f"{day}/{self.region}/dynamodb/aws4_request"
        string_to_sign = (
            f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{sha256(canonical.encode()).hexdigest()}"
        )
        signature = hmac.digest(
            self.key(credentials.secret_key, day), string_to_sign.encode(), "sha256"
        ).hex()
        headers = {
            "Content-Type": AMZ_JSON,
            "X-Amz-Target": TARGET + operation,
            "X-Amz-Date": stamp,
        }
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}"
        )
        headers["Accept-Encoding"] = "identity"
        return headers


def _trim(value: str) -> str:
    """A header's value as SigV4 canonicalizes it: runs of white space made one space."""
    return " ".join(value.split())


def _blob(value: Any) -> str:
    """orjson's fallback: binary attribute values go as base64 text, as botocore sends them."""
    if isinstance(value, bytes | bytearray):
        return b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} cannot be sent to DynamoDB")


class LeanClient:
    """The DynamoDB data plane over one shared :class:`graph.dynamo.transport.Pool`; see the
    module."""

    def __init__(self, pool: Pool | None, credentials: Any, url: str, region: str) -> None:
        """``pool``: None for a client that only signs; ``credentials``: anything with
        botocore's ``get_frozen_credentials`` (maybe awaitable), None when none were found."""
        self.url = url
        self.region = region
        self.signer = Signer(url, region)
        self._pool = pool
        self._credentials = credentials
        self._stamp = (0, "")
        self._frozen: tuple[float, Frozen] = (0.0, Frozen("", ""))
        self.control = LeanControl(self)

    # the data plane: each method returns send's coroutine (no frame of its own per call)
    def get_item(self, params: Params) -> Awaitable[Response]:
        return self.send("GetItem", params)

    def batch_get_item(self, params: Params) -> Awaitable[Response]:
        return self.send("BatchGetItem", params)

    def query(self, params: Params) -> Awaitable[Response]:
        return self.send("Query", params)

    def put_item(self, params: Params) -> Awaitable[Response]:
        return self.send("PutItem", params)

    def update_item(self, params: Params) -> Awaitable[Response]:
        return self.send("UpdateItem", params)

    def delete_item(self, params: Params) -> Awaitable[Response]:
        return self.send("DeleteItem", params)

    def transact_write_items(self, params: Params) -> Awaitable[Response]:
        return self.send("TransactWriteItems", params)

    def batch_write_item(self, params: Params) -> Awaitable[Response]:
        return self.send("BatchWriteItem", params)

    async def credentials(self) -> Frozen:
        """The credentials to sign with now: frozen ones, asked for at most once a second
        (botocore's refreshable credentials refresh themselves minutes before they expire)."""
        now = time.monotonic()
        if now < self._frozen[0]:
            return self._frozen[1]
        if self._credentials is None:
            raise EdgewiseError("DynamoDB error: NoCredentialsError")
        frozen = self._credentials.get_frozen_credentials()  # refreshes when near expiry
        if inspect.isawaitable(frozen):  # aiobotocore's credentials refresh asynchronously
            frozen = await frozen
        frozen = Frozen(frozen.access_key, frozen.secret_key, frozen.token)
        self._frozen = (now + 1.0, frozen)
        return frozen

    def _timestamp(self) -> str:
        now = int(time.time())
        if self._stamp[0] != now:
            self._stamp = (now, time.strftime(SIGV4_TIMESTAMP, time.gmtime(now)))
        return self._stamp[1]

    def sign(
        self, operation: str, body: bytes, credentials: Frozen, stamp: str | None = None
    ) -> dict[str, str]:
        """The headers of one signed call, now (or at ``stamp``)."""
        return self.signer.sign(operation, body, credentials, stamp or self._timestamp())

    async def send(self, operation: str, params: Params) -> Response:
        """One call: the parsed answer (DynamoDB JSON, with botocore's ``ResponseMetadata``), or
        its failure as a :mod:`graph.errors` error."""
        try:
            body = orjson.dumps(params, default=_blob)
        except TypeError as exc:
            raise EdgewiseError(f"DynamoDB error: {type(exc).__name__}") from exc
        headers = self.sign(operation, body, await self.credentials())
        pool = self._pool
        assert pool is not None, "this LeanClient only signs"
        try:
            status, answer_headers, raw = await pool.send(pool.request(headers, body))
        except ConnectionClosed as exc:
            raise unreachable("ConnectionClosedError") from exc
        except ConnectTimeout as exc:
            raise unreachable("ConnectTimeoutError") from exc
        except ReadTimeout as exc:
            raise unreachable("ReadTimeoutError") from exc
        except OSError as exc:  # refused, unreachable, no such host
            raise unreachable("EndpointConnectionError") from exc
        except Exception as exc:  # anything else the HTTP layer raises, as aiobotocore wraps it
            raise unreachable("HTTPClientError") from exc
        expected = answer_headers.get("x-amz-crc32")
        if expected is not None and zlib.crc32(raw) & 0xFFFFFFFF != int(expected):
            raise unreachable("ChecksumError")
        metadata = {
            "RequestId": answer_headers.get("x-amzn-requestid", ""),
            "HTTPStatusCode": status,
            "HTTPHeaders": answer_headers,
            "RetryAttempts": 0,
        }
        if status >= 300:
            raise _error(status, raw, metadata)
        parsed: Response = orjson.loads(raw) if raw else {}
        parsed["ResponseMetadata"] = metadata
        return parsed


def _error(status: int, raw: bytes, metadata: dict[str, Any]) -> EdgewiseError:
    """An error answer as botocore's JSON protocol parser reads it (code, message, the body's
    modeled fields at the top level), translated as :mod:`graph.dynamo.boto` translates
    botocore's ClientError."""
    body: dict[str, Any] = {}
    stripped = raw.strip()
    if status >= 500 and (not stripped or stripped.startswith(b"<html>")):
        code, message = str(status), http.client.responses.get(status, "")
    else:
        try:
            loaded = orjson.loads(raw) if raw else {}
            body = loaded if isinstance(loaded, dict) else {}
        except orjson.JSONDecodeError:
            body = {"message": raw.decode("utf-8", "replace")}
        message = body.get("message", body.get("Message", ""))
        code = str(body.get("__type", str(status)))
        code = code.split(":", 1)[0].rsplit("#", 1)[-1]
    fields = {k: v for k, v in body.items() if k != "__type"}
    answer = {**fields, "Error": {"Message": message, "Code": code}, "ResponseMetadata": metadata}
    return answered(code, status, answer)


class LeanControl:
    """The control plane (:class:`graph.dynamo.plane.ControlPlane`) of a :class:`LeanClient`:
    the same pool, signer and error translation. A Scan's binary values are bytes, as botocore
    parses them for the commands that read them."""

    def __init__(self, client: LeanClient) -> None:
        self._client = client

    @property
    def endpoint(self) -> str:
        return self._client.url

    @property
    def region(self) -> str:
        return self._client.region

    def describe_table(self, params: Params) -> Awaitable[Response]:
        return self._client.send("DescribeTable", params)

    def create_table(self, params: Params) -> Awaitable[Response]:
        return self._client.send("CreateTable", params)

    def update_table(self, params: Params) -> Awaitable[Response]:
        return self._client.send("UpdateTable", params)

    def delete_table(self, params: Params) -> Awaitable[Response]:
        return self._client.send("DeleteTable", params)

    def describe_time_to_live(self, params: Params) -> Awaitable[Response]:
        return self._client.send("DescribeTimeToLive", params)

    def update_time_to_live(self, params: Params) -> Awaitable[Response]:
        return self._client.send("UpdateTimeToLive", params)

    async def scan(self, params: Params) -> Response:
        answer = await self._client.send("Scan", params)
        for name in ("Items", "LastEvaluatedKey"):
            if name in answer:
                answer[name] = _bytes(answer[name])
        return answer


def _bytes(value: Any) -> Any:
    """``value`` (DynamoDB JSON) with every ``B`` and ``BS`` decoded from base64 to bytes."""
    if isinstance(value, list):
        return [_bytes(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for name, inner in value.items():
        if name == "B" and isinstance(inner, str):
            out[name] = b64decode(inner)
        elif name == "BS" and isinstance(inner, list):
            out[name] = [b64decode(b) for b in inner]
        else:
            out[name] = _bytes(inner)
    return out


@asynccontextmanager
async def open_lean_client(
    url: str,
    region: str,
    credentials: Any,
    *,
    connect_timeout: float = 2.0,
    read_timeout: float = 5.0,
    pool: int = 128,
) -> AsyncIterator[LeanClient]:
    """A :class:`LeanClient` of the endpoint ``url`` in ``region``, with a pool and timeouts
    like :func:`graph.dynamo.client.client_config`'s. ``credentials``: see LeanClient."""
    transport = Pool(url, connect_timeout, read_timeout, pool, KEEPALIVE_TIMEOUT)
    try:
        yield LeanClient(transport, credentials, url, region)
    finally:
        transport.close()
