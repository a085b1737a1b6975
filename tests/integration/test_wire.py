"""The lean data plane (graph/dynamo/wire.py) against aioboto3's: same signatures, same answers,
same errors, and each kind of bad input handled as the botocore path handles it (through the fault
proxy of tests/faults.py, over real HTTP to moto)."""

from __future__ import annotations

import datetime
import inspect
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials, RefreshableCredentials

from graph.dynamo.boto import error_code
from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.wire import Frozen, LeanClient, Signer
from graph.errors import EdgewiseError
from graph.keys import ItemKey
from graph.table import RetryPolicy, Table, from_dynamo
from server.errors import code_of
from tests.faults import FaultProxy
from tests.helpers import DEMO_LAYOUT

CLIENTS = ["lean", "botocore"]
FAST = RetryPolicy(base_delay=0.001, max_delay=0.01, deadline=10)
ITEMS = [{"PK": f"USER#u{i}", "SK": "USER", "name": f"u{i}", "n": i} for i in range(20)]
KEYS = [ItemKey(f"USER#u{i}", "USER") for i in range(20)]


def _botocore_signature(request: AWSRequest, credentials: Any, region: str, stamp: str) -> str:
    """What botocore's own SigV4Auth.add_auth puts in Authorization at ``stamp``."""
    signer = SigV4Auth(credentials, "dynamodb", region)
    request.context["timestamp"] = stamp
    signer._modify_request_before_signing(request)
    string_to_sign = signer.string_to_sign(request, signer.canonical_request(request))
    signer._inject_signature_to_request(request, signer.signature(string_to_sign, request))
    return str(request.headers["Authorization"])


@pytest.mark.parametrize(
    ("secret", "token", "region", "stamp"),
    [
        ("s1", None, "us-east-1", "20260101T000000Z"),
        ("s1", None, "us-east-1", "20260101T235959Z"),  # same day: the cached key
        ("s1", None, "us-east-1", "20260102T000001Z"),  # next day: a new key
        ("s1", None, "eu-west-1", "20260102T000001Z"),
        ("s2", "session-token", "eu-west-1", "20260102T000001Z"),  # rotated credentials
        ("s2", "  spaced   token ", "eu-west-1", "20260102T000001Z"),  # trimmed when signed
    ],
)
def test_the_signer_signs_as_botocore_does(
    secret: str, token: str | None, region: str, stamp: str
) -> None:
    """botocore is not imported by the lean client: its signature is the yardstick here."""
    credentials = Frozen("AKID", secret, token)
    url = "https://dynamodb.x.amazonaws.com"
    signer = Signer(url, region)
    for _ in range(2):  # the second time from the caches
        headers = signer.sign("GetItem", b"{}", credentials, stamp)
        theirs = AWSRequest("POST", url, _signed(headers), b"{}")
        assert headers["Authorization"] == _botocore_signature(
            theirs, ReadOnlyCredentials("AKID", secret, token), region, stamp
        )
        assert headers.get("X-Amz-Security-Token") == token
        assert headers["X-Amz-Date"] == stamp


async def test_a_lean_request_is_signed_as_aioboto3_signs_the_same_call(
    dynamodb: EmbeddedDynamoDB,
) -> None:
    """The headers aioboto3 sends for a GetItem, re-signed by the lean signer at the same time,
    give the same Authorization."""
    sent: list[AWSRequest] = []

    def record(request: AWSRequest, **_: Any) -> None:
        sent.append(request)

    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=False) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        raw = client.raw  # type: ignore[attr-defined]
        raw.meta.events.register("before-send.dynamodb.GetItem", record)
        await raw.get_item(TableName="graph", Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
        frozen = raw._request_signer._credentials.get_frozen_credentials()
        if inspect.isawaitable(frozen):
            frozen = await frozen
    request = sent[0]
    authorization = request.headers["Authorization"].decode()
    stamp = request.headers["X-Amz-Date"]
    stamp = stamp.decode() if isinstance(stamp, bytes) else stamp
    async with open_client(Endpoint(dynamodb.url), lean=True) as lean:
        assert isinstance(lean, LeanClient)
        credentials = Frozen(frozen.access_key, frozen.secret_key, frozen.token)
        headers = lean.sign("GetItem", request.body, credentials, stamp)
    assert headers["Authorization"] == authorization


async def test_refreshable_credentials_are_refreshed_before_signing() -> None:
    def refresh() -> dict[str, str]:
        later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
        return {
            "access_key": "NEWKEY",
            "secret_key": "new-secret",
            "token": "new-token",
            "expiry_time": later.isoformat(),
        }

    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
    credentials = RefreshableCredentials("OLDKEY", "old", "old-token", soon, refresh, "test")
    client = LeanClient(None, credentials, "https://dynamodb.x.amazonaws.com", "x")
    headers = client.sign("GetItem", b"{}", await client.credentials())
    assert "Credential=NEWKEY/" in headers["Authorization"]
    assert headers["X-Amz-Security-Token"] == "new-token"
    expected = _botocore_signature(
        AWSRequest("POST", client.url, _signed(headers), b"{}"),
        ReadOnlyCredentials("NEWKEY", "new-secret", "new-token"),
        "x",
        headers["X-Amz-Date"],
    )
    assert headers["Authorization"] == expected


def _signed(headers: dict[str, str]) -> dict[str, str]:
    """The headers a call sends, less what botocore adds when signing."""
    dropped = {"authorization", "x-amz-date", "x-amz-security-token", "accept-encoding"}
    return {k: v for k, v in headers.items() if k.lower() not in dropped}


@pytest.mark.parametrize(
    "url",
    [
        "https://dynamodb.x.amazonaws.com",
        "https://dynamodb.x.amazonaws.com:443",
        "http://127.0.0.1:8000",
        "http://localhost:80",
    ],
)
@pytest.mark.parametrize("token", [None, "session-token"])
async def test_every_call_is_signed_as_botocore_signs_it_whole(url: str, token: str | None) -> None:
    """Calls signed from one cached prefix (same operation and second) each carry the
    Authorization botocore's signer gives that very call, body and all."""
    credentials = Frozen("AKID", "secret", token)
    client = LeanClient(None, credentials, url, "eu-west-1")
    bodies = [b"", b"{}", b'{"TableName": "graph"}', '{"k": "ü 漢"}'.encode(), b"x" * 5000]
    for operation in ("GetItem", "Query", "GetItem", "DescribeTable"):
        for body in bodies:
            headers = client.sign(operation, body, credentials)
            theirs = AWSRequest("POST", url, _signed(headers), body)
            stamp = headers["X-Amz-Date"]
            assert headers["Authorization"] == _botocore_signature(
                theirs, ReadOnlyCredentials("AKID", "secret", token), "eu-west-1", stamp
            )
            assert headers["X-Amz-Target"] == f"DynamoDB_20120810.{operation}"
            assert headers.get("X-Amz-Security-Token") == token


@pytest.fixture(params=CLIENTS)
async def proxied(
    request: pytest.FixtureRequest, dynamodb: EmbeddedDynamoDB
) -> AsyncIterator[tuple[Table, FaultProxy]]:
    """A table holding ITEMS, reached through a fault proxy by the lean or the botocore client."""
    dynamodb.reset()
    async with FaultProxy(dynamodb.url) as proxy:
        config = client_config(read_timeout=0.5)
        lean = request.param == "lean"
        async with open_client(Endpoint(proxy.url), config, lean=lean) as client:
            await create_table(client.control, "graph", layout=DEMO_LAYOUT)
            table = Table(client, "graph", FAST, layout=DEMO_LAYOUT)
            await table.batch_write(ITEMS)
            yield table, proxy


async def test_each_bad_answer_is_handled_as_on_the_botocore_path(
    proxied: tuple[Table, FaultProxy],
) -> None:
    """A bad CRC32, a truncated body, a 5xx, throttling, a dropped connection and a hung answer
    (past the read timeout) are retried, and the read is exact; the same every time is
    UNAVAILABLE after every attempt; expired credentials fail at once (same code, same
    attempts counted in the trace, whichever client: the fixture runs both)."""
    table, proxy = proxied
    for kind in ("bad_crc32", "truncated", "server_error", "throttle", "drop", "hang"):
        request = table.for_request()
        proxy.inject("BatchGetItem", kind, times=2)
        found = await request.get_many(KEYS)
        assert [found[k]["name"] for k in KEYS] == [f"u{i}" for i in range(20)], kind
        assert proxy.stats[kind] == 2, kind
        assert request.trace.operations["BatchGetItem"] == 3, kind  # two faulted, one answer

    for kind in ("bad_crc32", "truncated", "server_error", "throttle"):
        request = table.for_request()
        proxy.inject("GetItem", kind, times=FAST.attempts)
        with pytest.raises(EdgewiseError) as caught:
            await request.get_item(KEYS[0])
        assert (code_of(caught.value), caught.value.attempts) == ("UNAVAILABLE", FAST.attempts), (
            kind
        )
        assert request.trace.operations["GetItem"] == FAST.attempts, kind

    request = table.for_request()
    proxy.inject("Query", "expired_token")
    with pytest.raises(EdgewiseError) as caught:
        await request.query(
            KeyConditionExpression="#h = :h",
            ExpressionAttributeNames={"#h": "PK"},
            ExpressionAttributeValues={":h": {"S": "USER#u1"}},
        )
    assert (code_of(caught.value), caught.value.attempts) == ("INTERNAL_SERVER_ERROR", 1)
    assert str(caught.value) == "DynamoDB error: ExpiredTokenException"
    assert caught.value.code == "ExpiredTokenException"
    assert request.trace.operations["Query"] == 1


async def test_a_failed_condition_is_the_same_error_on_both_clients(
    dynamodb: EmbeddedDynamoDB,
) -> None:
    """ConditionalCheckFailedException with the old item, and a cancelled transaction's reasons,
    translated alike by each client at its boundary (class, code, status, fields at the top
    level of ``answer``, message); botocore's ClientError kept as the botocore client's cause."""
    dynamodb.reset()
    seen = []
    for lean in (True, False):
        async with open_client(Endpoint(dynamodb.url), lean=lean) as client:
            await create_table(client.control, "graph", layout=DEMO_LAYOUT)
            item = {"PK": {"S": "K"}, "SK": {"S": "K"}, "n": {"N": "1.50"}, "b": {"B": b"\x00"}}
            await client.put_item(dict(TableName="graph", Item=item))
            with pytest.raises(EdgewiseError) as put_failed:
                await client.put_item(
                    dict(
                        TableName="graph",
                        Item=item,
                        ConditionExpression="attribute_not_exists(PK)",
                        ReturnValuesOnConditionCheckFailure="ALL_OLD",
                    )
                )
            check = {"TableName": "graph", "Key": {"PK": {"S": "K"}, "SK": {"S": "K"}}}
            check["ConditionExpression"] = "attribute_not_exists(PK)"
            with pytest.raises(EdgewiseError) as cancelled:
                await client.transact_write_items(dict(TransactItems=[{"ConditionCheck": check}]))
            seen.append(
                [
                    (
                        type(exc).__name__,
                        exc.code,
                        exc.answer["ResponseMetadata"]["HTTPStatusCode"],
                        from_dynamo(exc.answer["Item"]) if "Item" in exc.answer else None,
                        exc.answer.get("CancellationReasons"),
                        exc.retryable,
                        str(exc),
                    )
                    for exc in (put_failed.value, cancelled.value)
                ]
            )
            for exc in (put_failed.value, cancelled.value):
                cause = exc.__cause__
                assert (error_code(cause) if not lean else None) == (None if lean else exc.code)
    assert seen[0] == seen[1]
    assert seen[0][0][:2] == ("EdgewiseError", "ConditionalCheckFailedException")
    assert seen[0][0][3] == {"PK": "K", "SK": "K", "n": Decimal("1.50"), "b": b"\x00"}
    assert seen[0][1][1] == "TransactionCanceledException"
