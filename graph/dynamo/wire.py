"""The lean DynamoDB data plane: the hot calls POSTed straight over one keep-alive pool
(:mod:`graph.dynamo.transport`).

:class:`LeanClient` has the coroutine methods :class:`graph.table.Table` calls on the hot path
(``get_item``, ``batch_get_item``, ``query``, ``put_item``, ``update_item``, ``delete_item``,
``transact_write_items``, ``batch_write_item``) and hands every other attribute (``meta``,
``exceptions``, ``describe_table``, ``create_table``, waiters, and ``scan``, whose raw items
``dump``, ``sample`` and ``infer`` read as botocore shapes them) to the aioboto3 client it wraps,
which stays the control plane. Every answer of the hot calls reaches the engine through
:func:`graph.table.from_dynamo`, which reads both shapes.

What it keeps of botocore, so that the table's retry policy, deadline, translation and trace
see exactly what they see from aioboto3:

- requests signed by botocore's own ``SigV4Auth`` with the aioboto3 session's credentials
  (refreshable ones refreshed before they expire); only the derived signing key is cached, per
  (secret key, day, region);
- the answer's ``x-amz-crc32`` verified, a mismatch raising botocore's ``ChecksumError``;
- an error answer raised as botocore's modeled ``ClientError`` subclass, with the same
  ``Error``/``ResponseMetadata`` and the body's modeled fields (``Item``,
  ``CancellationReasons``) at the top level;
- connection failures and timeouts raised as the botocore exceptions aiobotocore raises for them
  (a connection closed before a whole answer, a truncated or unreadable answer:
  ``ConnectionClosedError``; ``ConnectTimeoutError``, ``ReadTimeoutError``,
  ``EndpointConnectionError``).

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
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

import orjson
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    NoCredentialsError,
    ReadTimeoutError,
)

from graph.dynamo.transport import ConnectionClosed, ConnectTimeout, Pool, ReadTimeout

__all__ = ["CachingSigV4Auth", "LeanClient", "open_lean_client"]

AMZ_JSON = "application/x-amz-json-1.0"
TARGET = "DynamoDB_20120810."
SIGV4_TIMESTAMP = "%Y%m%dT%H%M%SZ"
KEEPALIVE_TIMEOUT = 12  # seconds, as aiobotocore's pool
HOT = {  # the calls sent here, by the client method Table calls
    "get_item": "GetItem",
    "batch_get_item": "BatchGetItem",
    "query": "Query",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "transact_write_items": "TransactWriteItems",
    "batch_write_item": "BatchWriteItem",
}


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
        control: Any,
        pool: Pool | None,  # None: a client that only signs
        credentials: Any,
        url: str | None = None,
        region: str | None = None,
    ) -> None:
        self.control = control  # the aioboto3 client: control plane and fallback
        self.url = url or str(control.meta.endpoint_url)
        self.region = region or str(control.meta.region_name)
        self._pool = pool
        self._credentials = credentials
        self._keys: dict[tuple[str, str, str], bytes] = {}
        self._stamp = (0, "")
        self._frozen: tuple[float, ReadOnlyCredentials] = (0.0, ReadOnlyCredentials("", "", None))
        self._templates: dict[tuple[str | None, ...], _Template] = {}

    def __getattr__(self, name: str) -> Any:
        """A hot call (``get_item(**params)`` ...) sent by :meth:`send`; anything else is the
        aioboto3 client's."""
        operation = HOT.get(name)
        if operation is None:
            return getattr(self.control, name)

        async def call(**params: Any) -> dict[str, Any]:
            return await self.send(operation, params)

        return call

    async def credentials(self) -> ReadOnlyCredentials:
        """The credentials to sign with now: botocore's frozen ones, asked for at most once a
        second (refreshable credentials refresh themselves minutes before they expire)."""
        now = time.monotonic()
        if now < self._frozen[0]:
            return self._frozen[1]
        if self._credentials is None:
            raise NoCredentialsError()
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

    async def send(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """One call: the parsed answer (DynamoDB JSON, with botocore's ``ResponseMetadata``), or
        the exception aioboto3 would raise for it."""
        body = orjson.dumps(params, default=_blob)
        headers, request = self.sign(operation, body, await self.credentials())
        pool = self._pool
        assert pool is not None, "this LeanClient only signs"
        try:
            status, answer_headers, raw = await pool.send(pool.request(headers, body))
        except ConnectionClosed as exc:
            raise ConnectionClosedError(error=exc, request=request, endpoint_url=self.url) from exc
        except ConnectTimeout as exc:
            raise ConnectTimeoutError(endpoint_url=self.url, error=exc) from exc
        except ReadTimeout as exc:
            raise ReadTimeoutError(endpoint_url=self.url, error=exc) from exc
        except OSError as exc:  # refused, unreachable, no such host
            raise EndpointConnectionError(endpoint_url=self.url, error=exc) from exc
        except Exception as exc:  # anything else the HTTP layer raises, as aiobotocore wraps it
            raise HTTPClientError(error=exc) from exc
        expected = answer_headers.get("x-amz-crc32")
        if expected is not None:
            actual = zlib.crc32(raw) & 0xFFFFFFFF
            if actual != int(expected):
                raise ChecksumError(
                    checksum_type="crc32", expected_checksum=expected, actual_checksum=str(actual)
                )
        metadata = {
            "RequestId": answer_headers.get("x-amzn-requestid", ""),
            "HTTPStatusCode": status,
            "HTTPHeaders": answer_headers,
            "RetryAttempts": 0,
        }
        if status >= 300:
            raise self._error(operation, status, raw, metadata)
        parsed: dict[str, Any] = orjson.loads(raw) if raw else {}
        parsed["ResponseMetadata"] = metadata
        return parsed

    def _error(
        self, operation: str, status: int, raw: bytes, metadata: dict[str, Any]
    ) -> ClientError:
        """The ClientError botocore's JSON protocol parser makes of an error answer."""
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
        error = {**fields, "Error": {"Message": message, "Code": code}}
        error["ResponseMetadata"] = metadata
        error_class = self.control.exceptions.from_code(code)
        return error_class(error, operation)  # type: ignore[no-any-return]


@asynccontextmanager
async def open_lean_client(
    control: Any,
    credentials: Any,
    *,
    connect_timeout: float = 2.0,
    read_timeout: float = 5.0,
    pool: int = 128,
) -> AsyncIterator[LeanClient]:
    """A :class:`LeanClient` over ``control`` (an open aioboto3 DynamoDB client, whose resolved
    endpoint and region it uses) with a pool and timeouts like
    :func:`graph.dynamo.client.client_config`'s. ``credentials`` are botocore's (None: none
    found)."""
    transport = Pool(
        str(control.meta.endpoint_url), connect_timeout, read_timeout, pool, KEEPALIVE_TIMEOUT
    )
    try:
        yield LeanClient(control, transport, credentials)
    finally:
        transport.close()
