"""Opening the aioboto3 client for an endpoint, and creating the table of CONTRACT.md."""

from __future__ import annotations

import asyncio
import os
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aioboto3
from botocore.config import Config
from botocore.exceptions import ChecksumError

from .errors import error_code, translate
from .table import DEMO_LAYOUT, Layout

__all__ = ["Endpoint", "client_config", "create_table", "open_client"]


@dataclass(frozen=True)
class Endpoint:
    """Where DynamoDB is: ``url=None`` means AWS itself (credential chain, region, env)."""

    url: str | None
    region: str = "us-east-1"

    @classmethod
    def parse(cls, value: str) -> Endpoint:
        if value == "aws":
            return cls(
                None, os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or ""
            )
        return cls(value)


def client_config(
    connect_timeout: float = 2.0, read_timeout: float = 5.0, pool: int = 128
) -> Config:
    """botocore retries are off (one attempt): ``graph.table.Table`` owns the retry policy, so
    attempts never multiply across layers and every attempt is counted in the trace."""
    return Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=pool,
        retries={"mode": "standard", "total_max_attempts": 1},
    )


async def _check_crc32(response: Any = None, **_: Any) -> None:
    """Raise ChecksumError when an answer's body does not match its ``x-amz-crc32``.

    botocore checks that header only in its retry handler (a mismatch is a reason to retry), and
    its retries are off (see :func:`client_config`), so the check is made here; ``Table.call``
    retries the error like any other transient one."""
    if response is None:
        return
    http_response = response[0]
    expected = http_response.headers.get("x-amz-crc32")
    if expected is None:
        return
    actual = zlib.crc32(await http_response.content) & 0xFFFFFFFF
    if actual != int(expected):
        raise ChecksumError(
            checksum_type="crc32", expected_checksum=expected, actual_checksum=str(actual)
        )


@asynccontextmanager
async def open_client(endpoint: Endpoint, config: Config | None = None) -> AsyncIterator[Any]:
    """One DynamoDB client; non-AWS endpoints get dummy credentials unless the env has some."""
    session = aioboto3.Session()
    kwargs: dict[str, Any] = {"config": config or client_config()}
    if endpoint.url is not None:
        kwargs["endpoint_url"] = endpoint.url
        kwargs["region_name"] = endpoint.region
        # aioboto3's session returns a coroutine here, whatever its stubs say
        if await session.get_credentials() is None:  # type: ignore[misc]
            kwargs["aws_access_key_id"] = "edgewise"
            kwargs["aws_secret_access_key"] = "edgewise"
    elif endpoint.region:
        kwargs["region_name"] = endpoint.region
    async with session.client("dynamodb", **kwargs) as client:
        # aiobotocore awaits a coroutine handler, whatever the stubs say
        client.meta.events.register("needs-retry.dynamodb", _check_crc32)  # type: ignore[arg-type]
        yield client


def _gsi(name: str, hash_key: str, range_key: str) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [
            {"AttributeName": hash_key, "KeyType": "HASH"},
            {"AttributeName": range_key, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
    }


def _gsi_of(name: str, hash_key: str, range_key: str | None) -> dict[str, Any]:
    index = _gsi(name, hash_key, range_key or "")
    if range_key is None:
        index["KeySchema"] = index["KeySchema"][:1]
    return index


async def create_table(
    client: Any, name: str, *, wait: float = 120.0, layout: Layout = DEMO_LAYOUT
) -> bool:
    """Create the table and its indexes (as ``layout`` names them) unless it exists; wait
    until ACTIVE.

    Returns whether it was created by this call.
    """
    created = True
    attributes = dict.fromkeys(
        [layout.pk, layout.sk, *(k for pair in layout.indexes.values() for k in pair if k)]
    )
    params: dict[str, Any] = {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in attributes],
        "KeySchema": [
            {"AttributeName": layout.pk, "KeyType": "HASH"},
            {"AttributeName": layout.sk, "KeyType": "RANGE"},
        ],
    }
    if layout.indexes:
        params["GlobalSecondaryIndexes"] = [
            _gsi_of(index, hash_key, range_key)
            for index, (hash_key, range_key) in layout.indexes.items()
        ]
    try:
        await client.create_table(**params)
    except Exception as exc:
        if error_code(exc) != "ResourceInUseException":
            raise translate(exc) from exc
        created = False
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        described = (await client.describe_table(TableName=name))["Table"]
        indexes = described.get("GlobalSecondaryIndexes", [])
        if described["TableStatus"] == "ACTIVE" and all(
            i.get("IndexStatus", "ACTIVE") == "ACTIVE" for i in indexes
        ):
            return created
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"table {name} is not ACTIVE after {wait:.0f}s")
        await asyncio.sleep(1.0)
