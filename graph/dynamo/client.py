"""Opening a DynamoDB client for an endpoint (the lean one, or aioboto3's), and creating the
table of CONTRACT.md.

The lean client (the default) imports nothing of botocore when the environment says where and
as whom to call, as a Lambda function's does: credentials in ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), for AWS itself a region in ``AWS_REGION``
or ``AWS_DEFAULT_REGION``. Otherwise botocore finds them as it always did (its credential chain:
profiles, SSO, containers, instance metadata; its endpoint resolution: FIPS, dual-stack, other
partitions, endpoints set in the config file), imported only then."""

from __future__ import annotations

import asyncio
import os
import zlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.dynamo.plane import ControlPlane, DataPlane
from graph.dynamo.wire import LeanClient, StaticCredentials, open_lean_client
from graph.errors import EdgewiseError
from graph.table import Layout
from model.types import RECORD_EXPIRES

if TYPE_CHECKING:
    import aioboto3
    from botocore.config import Config

__all__ = [
    "CLIENTS",
    "DEFAULT_CLIENT",
    "ClientConfig",
    "Endpoint",
    "client_config",
    "cloudformation_table",
    "create_table",
    "open_client",
    "open_streams_client",
    "table_definition",
]


# The TTL of the idempotency records (graph.writes.idempotency): CreateTable has no parameter for
# it.
TTL = {"AttributeName": RECORD_EXPIRES, "Enabled": True}

# The data plane: graph.dynamo.wire's lean client, or aioboto3's for every call.
CLIENTS = ("lean", "botocore")
DEFAULT_CLIENT = "lean"
# The table's stream: each record names the item that changed (live queries read it again).
STREAM = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
# Partitions whose DynamoDB endpoint is https://dynamodb.<region>.amazonaws.com (the others, and
# FIPS or dual-stack endpoints, are left to botocore's resolver)
STANDARD_REGIONS = ("us-", "eu-", "ap-", "ca-", "sa-", "me-", "af-", "il-", "mx-")


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


@dataclass(frozen=True)
class ClientConfig:
    """A client's timeouts (seconds) and connection pool size. botocore retries are off (one
    attempt): ``graph.table.Table`` owns the retry policy, so attempts never multiply across
    layers and every attempt is counted in the trace."""

    connect_timeout: float = 2.0
    read_timeout: float = 5.0
    max_pool_connections: int = 128

    def botocore(self) -> Config:
        """The same as botocore's ``Config`` (for aioboto3's clients)."""
        from botocore.config import Config

        return Config(
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            max_pool_connections=self.max_pool_connections,
            retries={"mode": "standard", "total_max_attempts": 1},
        )


def client_config(
    connect_timeout: float = 2.0, read_timeout: float = 5.0, pool: int = 128
) -> ClientConfig:
    """See :class:`ClientConfig`."""
    return ClientConfig(connect_timeout, read_timeout, pool)


async def _check_crc32(response: Any = None, **_: Any) -> None:
    """Raise ChecksumError when an answer's body does not match its ``x-amz-crc32``.

    botocore checks that header only in its retry handler (a mismatch is a reason to retry), and
    its retries are off (see :func:`client_config`), so the check is made here; ``Table.call``
    retries the error like any other transient one."""
    from botocore.exceptions import ChecksumError

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
async def open_client(
    endpoint: Endpoint, config: ClientConfig | None = None, *, lean: bool = True
) -> AsyncIterator[DataPlane]:
    """One DynamoDB client: its data plane, whose ``control`` is its control plane; non-AWS
    endpoints get dummy credentials unless the environment (or botocore's chain) has some.

    ``lean`` (the default, ``--client lean``): :class:`graph.dynamo.wire.LeanClient` (the same
    endpoint, credentials, timeouts and pool size as the aioboto3 client would have, and its
    own control plane); else :class:`graph.dynamo.boto.BotocoreClient`, aioboto3's, whose
    control plane is aioboto3's too."""
    config = config or client_config()
    if not lean:
        async with _aioboto3_client(endpoint, config) as (_, client):
            from graph.dynamo.boto import BotocoreClient

            yield BotocoreClient(client)
        return
    found = _from_environment(endpoint)
    if found is not None:
        url, region, credentials = found
        async with _lean(url, region, credentials, config) as opened:
            yield opened
        return
    # botocore's chain and resolver, as aioboto3 has them (its client kept open beside, as the
    # session that refreshes the credentials expects)
    async with _aioboto3_client(endpoint, config) as (session, client):
        url, region = str(client.meta.endpoint_url), str(client.meta.region_name)
        credentials = await session.get_credentials()  # type: ignore[misc]
        if endpoint.url is not None and credentials is None:
            credentials = StaticCredentials("edgewise", "edgewise")
        async with _lean(url, region, credentials, config) as opened:
            yield opened


def _lean(
    url: str, region: str, credentials: Any, config: ClientConfig
) -> AbstractAsyncContextManager[LeanClient]:
    return open_lean_client(
        url,
        region or "us-east-1",
        credentials,
        connect_timeout=config.connect_timeout,
        read_timeout=config.read_timeout,
        pool=config.max_pool_connections,
    )


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() == "true"


def _from_environment(endpoint: Endpoint) -> tuple[str, str, StaticCredentials] | None:
    """The endpoint's URL, region and credentials when the environment says all three without
    botocore (credentials in ``AWS_*`` variables; for AWS itself a region, an ordinary partition,
    no FIPS or dual-stack endpoint, no config file that could name an endpoint); else None."""
    env = os.environ
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return None
    token = env.get("AWS_SESSION_TOKEN") or env.get("AWS_SECURITY_TOKEN") or None
    credentials = StaticCredentials(key, secret, token)
    if endpoint.url is not None:
        return endpoint.url, endpoint.region, credentials
    region = endpoint.region
    configured = None
    if not _true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        configured = env.get("AWS_ENDPOINT_URL_DYNAMODB") or env.get("AWS_ENDPOINT_URL")
    if configured and region:
        return configured, region, credentials
    config_file = Path(env.get("AWS_CONFIG_FILE") or Path.home() / ".aws" / "config")
    if (
        not region.startswith(STANDARD_REGIONS)
        or _true("AWS_USE_FIPS_ENDPOINT")
        or _true("AWS_USE_DUALSTACK_ENDPOINT")
        or config_file.is_file()
    ):
        return None
    return f"https://dynamodb.{region}.amazonaws.com", region, credentials


@asynccontextmanager
async def _aioboto3_client(
    endpoint: Endpoint, config: ClientConfig, service: str = "dynamodb"
) -> AsyncIterator[tuple[aioboto3.Session, Any]]:
    """An aioboto3 session and its client of ``service`` for ``endpoint`` (dummy credentials for
    a non-AWS endpoint when the chain finds none)."""
    import aioboto3

    session = aioboto3.Session()
    kwargs: dict[str, Any] = {"config": config.botocore()}
    if endpoint.url is not None:
        kwargs["endpoint_url"] = endpoint.url
        kwargs["region_name"] = endpoint.region
        # aioboto3's session returns a coroutine here, whatever its stubs say
        if await session.get_credentials() is None:  # type: ignore[misc]
            kwargs["aws_access_key_id"] = "edgewise"
            kwargs["aws_secret_access_key"] = "edgewise"
    elif endpoint.region:
        kwargs["region_name"] = endpoint.region
    async with session.client(service, **kwargs) as client:  # type: ignore[call-overload]
        if service == "dynamodb":
            # aiobotocore awaits a coroutine handler, whatever the stubs say
            client.meta.events.register("needs-retry.dynamodb", _check_crc32)
        yield session, client


@asynccontextmanager
async def open_streams_client(
    endpoint: Endpoint, config: ClientConfig | None = None
) -> AsyncIterator[Any]:
    """An aioboto3 ``dynamodbstreams`` client for the same endpoint (DynamoDB Streams is off
    the hot path: no lean client for it)."""
    async with _aioboto3_client(endpoint, config or client_config(), "dynamodbstreams") as opened:
        yield opened[1]


def table_definition(name: str | None, layout: Layout) -> dict[str, Any]:
    """The table as CreateTable's parameters, which are also the properties of a CloudFormation
    ``AWS::DynamoDB::Table``: keys named and typed by ``layout`` (the model's),
    its global and local indexes projecting what it says, on-demand billing, the stream on
    (``KEYS_ONLY``).

    The one definition of the table: ``create_table`` sends it and ``edgewise create-table
    --print-cloudformation`` prints it. ``name=None`` leaves ``TableName`` out.
    """
    attributes = list(
        dict.fromkeys(
            [layout.pk, layout.sk, *(k for pair in layout.indexes.values() for k in pair if k)]
        )
    )
    definition: dict[str, Any] = {} if name is None else {"TableName": name}
    definition |= {
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": layout.types.get(a, "S")} for a in attributes
        ],
        "KeySchema": [
            {"AttributeName": layout.pk, "KeyType": "HASH"},
            {"AttributeName": layout.sk, "KeyType": "RANGE"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
        "StreamSpecification": dict(STREAM),
    }
    indexes: dict[str, list[dict[str, Any]]] = {}
    for index, (hash_key, range_key) in layout.indexes.items():
        projected = layout.projections.get(index)
        projection: dict[str, Any] = {"ProjectionType": "ALL"}
        if projected is not None:
            projection = {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projected)}
            if not projected:
                projection = {"ProjectionType": "KEYS_ONLY"}
        kind = "LocalSecondaryIndexes" if index in layout.local else "GlobalSecondaryIndexes"
        indexes.setdefault(kind, []).append(
            {
                "IndexName": index,
                "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}]
                + ([{"AttributeName": range_key, "KeyType": "RANGE"}] if range_key else []),
                "Projection": projection,
            }
        )
    return definition | indexes


def cloudformation_table(definition: dict[str, Any]) -> dict[str, Any]:
    """A CloudFormation resource for a :func:`table_definition` (whose stream CloudFormation
    names by its view type alone), with the TTL that :func:`create_table` turns on."""
    properties = definition | {"TimeToLiveSpecification": TTL}
    if "StreamSpecification" in properties:
        view = properties["StreamSpecification"]["StreamViewType"]
        properties["StreamSpecification"] = {"StreamViewType": view}
    return {"Type": "AWS::DynamoDB::Table", "Properties": properties}


async def create_table(
    control: ControlPlane, name: str, *, layout: Layout, wait: float = 120.0
) -> bool:
    """Create the table and its indexes (as ``layout`` names them) unless it exists; wait
    until ACTIVE. A table that exists without a stream gets one (where the endpoint can).

    Returns whether it was created by this call.
    """
    params = table_definition(name, layout)
    created = True
    try:
        await control.create_table(params)
    except EdgewiseError as exc:
        if exc.code != "ResourceInUseException":
            raise
        created = False
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        described = (await control.describe_table({"TableName": name}))["Table"]
        indexes = described.get("GlobalSecondaryIndexes", [])
        if described["TableStatus"] == "ACTIVE" and all(
            i.get("IndexStatus", "ACTIVE") == "ACTIVE" for i in indexes
        ):
            await _enable_ttl(control, name)
            if not created and "LatestStreamArn" not in described:
                await _enable_stream(control, name)
            return created
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"table {name} is not ACTIVE after {wait:.0f}s")
        await asyncio.sleep(1.0)


async def _enable_ttl(control: ControlPlane, name: str) -> None:
    """Turn on the table's TTL on the idempotency records' expiry attribute, unless TTL is on
    already (a table has one TTL attribute) or the endpoint has no TTL (dynalite): expired
    records are treated as absent anyway, TTL only deletes them."""
    try:
        described = await control.describe_time_to_live({"TableName": name})
        status = described.get("TimeToLiveDescription", {}).get("TimeToLiveStatus", "DISABLED")
        if status in ("ENABLED", "ENABLING"):
            return
        await control.update_time_to_live({"TableName": name, "TimeToLiveSpecification": TTL})
    except EdgewiseError as exc:
        if not exc.code:  # not an answer of the endpoint: unreachable, say so
            raise


async def _enable_stream(control: ControlPlane, name: str) -> None:
    """Turn an existing table's stream on; an endpoint without streams keeps it off (``serve``
    then says so and serves no Subscription type)."""
    try:
        await control.update_table({"TableName": name, "StreamSpecification": dict(STREAM)})
    except EdgewiseError as exc:
        if exc.code in ("", "InternalFailure", "InternalServerError"):
            raise
