"""The lean DynamoDB data plane: every call of :class:`graph.dynamo.plane.DataPlane` POSTed
straight over one keep-alive pool (:mod:`graph.dynamo.transport`).

:class:`LeanClient` has one method per data-plane call (``get_item``, ``batch_get_item``,
``query``, ``put_item``, ``update_item``, ``delete_item``, ``transact_write_items``,
``batch_write_item``) and nothing else of DynamoDB's: the control plane (DescribeTable,
CreateTable, Scan ...) is ``control``, aioboto3's (:class:`graph.dynamo.boto.Control`), which no
data-plane call ever reaches. Every answer reaches the engine through
:func:`graph.table.from_dynamo`, which reads both clients' shapes.

What it keeps of botocore, so that the table's retry policy, deadline and trace see what they see
from aioboto3:

- requests signed by botocore's own ``SigV4Auth`` with the aioboto3 session's credentials
  (refreshable ones refreshed before they expire); only the derived signing key is cached, per
  (secret key, day, region);
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
sent: ``N`` as text, ``B`` as base64 text, which :mod:`graph.dynamo.values` decodes), and the
per-call user-agent and endpoint-rule work.
"""

from __future__ import annotations

import hmac
import http.client
import inspect
import time
import zlib
from base64 import b64encode
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

import orjson
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials

from graph.dynamo.plane import ControlPlane, Params, Response
from graph.dynamo.transport import ConnectionClosed, ConnectTimeout, Pool, ReadTimeout
from graph.errors import EdgewiseError, answered, unreachable

__all__ = ["CachingSigV4Auth", "LeanClient", "open_lean_client"]

AMZ_JSON = "application/x-amz-json-1.0"
TARGET = "DynamoDB_20120810."
SIGV4_TIMESTAMP = "%Y%m%dT%H%M%SZ"
KEEPALIVE_TIMEOUT = 12  # seconds, as aiobotocore's pool


class CachingSigV4Auth(SigV4Auth):
    """botocore's SigV4 signer for DynamoDB, less the four HMACs that derive the signing key on
    every call: the key is kept in ``keys`` per (secret key, day, region). Everything else that
    goes into the signature (canonical request, string to sign, headers) is botocore's."""

    def __init__(
        self,
        credentials: ReadOnlyCredentials,
        region: str,
        keys: dict[tuple[str, str, str], bytes],
    ) -> None:
        super().__init__(credentials, "dynamodb", region)
        self._region = region
        self._keys = keys

    def signature(self, string_to_sign: str, request: AWSRequest) -> str:
        secret = str(self.credentials.secret_key)
        day = request.context["timestamp"][0:8]
        cache_key = (secret, day, self._region)
        key = self._keys.get(cache_key)
        if key is None:
            key = f"AWS4{secret}".encode()
            for part in (day, self._region, "dynamodb", "aws4_request"):
                key = hmac.digest(key, part.encode(), "sha256")
            if len(self._keys) >= 8:  # rotated keys or past days: keep the cache small
                self._keys.clear()
            self._keys[cache_key] = key
        return hmac.digest(key, string_to_sign.encode(), "sha256").hex()

    def headers_to_sign(self, request: AWSRequest) -> Any:
        """botocore's, computed once per signing (botocore computes it twice)."""
        cached = request.context.get("edgewise_headers_to_sign")
        if cached is None:
            cached = request.context["edgewise_headers_to_sign"] = super().headers_to_sign(request)
        return cached

    def sign(self, request: AWSRequest, timestamp: str) -> None:
        """botocore's ``add_auth`` at ``timestamp`` (``%Y%m%dT%H%M%SZ``), without its logging."""
        request.context["timestamp"] = timestamp
        self._modify_request_before_signing(request)  # type: ignore[attr-defined]
        request.context.pop("edgewise_headers_to_sign", None)
        canonical_request = request.context["edgewise_canonical"] = self.canonical_request(request)
        string_to_sign = self.string_to_sign(request, canonical_request)
        signature = self.signature(string_to_sign, request)
        self._inject_signature_to_request(request, signature)  # type: ignore[attr-defined]


EMPTY_PAYLOAD = sha256(b"").hexdigest()


@dataclass(frozen=True, slots=True)
class _Template:
    """A template request botocore's signer signed, and what of it every call reuses."""

    auth: CachingSigV4Auth
    request: AWSRequest
    prefix: str  # the canonical request up to its last line, the payload hash
    hashed: bool  # False: botocore left the payload unsigned, the prefix is all of it
    headers: dict[str, str]
    authorization: str  # up to the signature

    @classmethod
    def of(cls, operation: str, url: str, stamp: str, auth: CachingSigV4Auth) -> _Template:
        headers = {"Content-Type": AMZ_JSON, "X-Amz-Target": TARGET + operation}
        request = AWSRequest("POST", url, headers, b"")
        auth.sign(request, stamp)
        prefix, _, payload = str(request.context["edgewise_canonical"]).rpartition("\n")
        signed = {k: str(v) for k, v in request.headers.items()}
        signed["Accept-Encoding"] = "identity"
        authorization = signed.pop("Authorization").rpartition("Signature=")[0] + "Signature="
        # over https botocore may leave the payload unsigned: then every call's line is the same
        hashed = payload == EMPTY_PAYLOAD
        return cls(
            auth,
            request,
            prefix + "\n" + ("" if hashed else payload),
            hashed,
            signed,
            authorization,
        )

    def sign(self, body: bytes) -> dict[str, str]:
        canonical = self.prefix + sha256(body).hexdigest() if self.hashed else self.prefix
        string_to_sign = self.auth.string_to_sign(self.request, canonical)
        headers = dict(self.headers)
        headers["Authorization"] = self.authorization + self.auth.signature(
            string_to_sign, self.request
        )
        return headers


def _blob(value: Any) -> str:
    """orjson's fallback: binary attribute values go as base64 text, as botocore sends them."""
    if isinstance(value, bytes | bytearray):
        return b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} cannot be sent to DynamoDB")


class LeanClient:
    """The DynamoDB data plane over one shared :class:`graph.dynamo.transport.Pool`; see the
    module."""

    def __init__(
        self,
        control: ControlPlane | None,  # None: a client that only signs
        pool: Pool | None,
        credentials: Any,
        url: str | None = None,
        region: str | None = None,
    ) -> None:
        self._control = control
        self.url = url or (control.endpoint if control is not None else "")
        self.region = region or (control.region if control is not None else "")
        self._pool = pool
        self._credentials = credentials
        self._keys: dict[tuple[str, str, str], bytes] = {}
        self._stamp = (0, "")
        self._frozen: tuple[float, ReadOnlyCredentials] = (0.0, ReadOnlyCredentials("", "", None))
        self._templates: dict[tuple[str | None, ...], _Template] = {}

    @property
    def control(self) -> ControlPlane:
        """The control plane of the same endpoint (aioboto3's)."""
        assert self._control is not None, "this LeanClient only signs"
        return self._control

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

    async def credentials(self) -> ReadOnlyCredentials:
        """The credentials to sign with now: botocore's frozen ones, asked for at most once a
        second (refreshable credentials refresh themselves minutes before they expire)."""
        now = time.monotonic()
        if now < self._frozen[0]:
            return self._frozen[1]
        if self._credentials is None:
            raise EdgewiseError("DynamoDB error: NoCredentialsError")
        frozen = self._credentials.get_frozen_credentials()  # refreshes when near expiry
        if inspect.isawaitable(frozen):  # aiobotocore's credentials refresh asynchronously
            frozen = await frozen
        self._frozen = (now + 1.0, frozen)
        return frozen  # type: ignore[no-any-return]

    def _timestamp(self) -> str:
        now = int(time.time())
        if self._stamp[0] != now:
            self._stamp = (now, time.strftime(SIGV4_TIMESTAMP, time.gmtime(now)))
        return self._stamp[1]

    def sign(
        self, operation: str, body: bytes, credentials: ReadOnlyCredentials
    ) -> tuple[dict[str, str], AWSRequest]:
        """The headers of one signed call, and the template request they were signed from.

        botocore's signer signs a template request (no body) once per operation, second and
        credentials; a call's canonical request is the template's with its own payload hash in
        the last line, and its string to sign and signature are made by the same signer's
        methods. The headers are exactly what botocore's signer gives the call (a test signs
        both ways)."""
        stamp = self._timestamp()
        key = (operation, stamp, credentials.access_key, credentials.secret_key, credentials.token)
        template = self._templates.get(key)
        if template is None:
            if len(self._templates) >= 32:  # past seconds
                self._templates.clear()
            template = self._templates[key] = _Template.of(
                operation, self.url, stamp, CachingSigV4Auth(credentials, self.region, self._keys)
            )
        return template.sign(body), template.request

    async def send(self, operation: str, params: Params) -> Response:
        """One call: the parsed answer (DynamoDB JSON, with botocore's ``ResponseMetadata``), or
        its failure as a :mod:`graph.errors` error."""
        try:
            body = orjson.dumps(params, default=_blob)
        except TypeError as exc:
            raise EdgewiseError(f"DynamoDB error: {type(exc).__name__}") from exc
        headers, _ = self.sign(operation, body, await self.credentials())
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


@asynccontextmanager
async def open_lean_client(
    control: ControlPlane,
    credentials: Any,
    *,
    connect_timeout: float = 2.0,
    read_timeout: float = 10.0,
    pool: int = 128,
) -> AsyncIterator[LeanClient]:
    """A :class:`LeanClient` beside ``control`` (the control plane of an open aioboto3 client,
    whose resolved endpoint and region it uses) with a pool and timeouts like
    :func:`graph.dynamo.client.client_config`'s. ``credentials`` are botocore's (None: none
    found)."""
    transport = Pool(control.endpoint, connect_timeout, read_timeout, pool, KEEPALIVE_TIMEOUT)
    try:
        yield LeanClient(control, transport, credentials)
    finally:
        transport.close()
