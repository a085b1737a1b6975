"""Unit tests of graph.table.Table over a fake DynamoDB client (no server, no network)."""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from graph.dynamo.boto import translate
from graph.errors import Conflict, EdgewiseError, Unavailable
from graph.keys import ItemKey
from graph.table import RetryPolicy, Table, Trace
from server.errors import code_of
from tests.helpers import DEMO_LAYOUT

NAME = "graph"
FAST = RetryPolicy(attempts=8, base_delay=0.001, max_delay=0.002, deadline=1.0)

Response = dict[str, Any]
Handler = Callable[[dict[str, Any]], Response | Awaitable[Response]]
Outcome = Response | Exception | Handler


def client_error(code: str, status: int = 400) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "Query",
    )


def raw_item(key: ItemKey, **extra: dict[str, Any]) -> dict[str, Any]:
    """An item in DynamoDB's wire format."""
    return {"PK": {"S": key.pk}, "SK": {"S": key.sk}, **extra}


def keys_of(n: int, prefix: str = "USER#u") -> list[ItemKey]:
    return [ItemKey(f"{prefix}{i}", f"{prefix}{i}") for i in range(n)]


class FakeClient:
    """A data plane that records every call; answers from ``script[operation]`` first (a
    response, a botocore exception to raise, translated as the botocore client translates it, or
    a function of the params), then from the operation's default behaviour: BatchGetItem reads
    ``store`` (answering in reverse order), the others succeed with an empty response."""

    def __init__(self, store: dict[ItemKey, dict[str, Any]] | None = None, delay: float = 0.0):
        self.store = store or {}
        self.delay = delay
        self.script: defaultdict[str, list[Outcome]] = defaultdict(list)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.in_flight = 0
        self.max_in_flight = 0

    def ops(self, operation: str) -> list[dict[str, Any]]:
        return [params for op, params in self.calls if op == operation]

    async def _answer(self, operation: str, params: dict[str, Any], default: Handler) -> Response:
        self.calls.append((operation, params))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            outcome = self.script[operation].pop(0) if self.script[operation] else default
            if isinstance(outcome, Exception):
                raise translate(outcome) from outcome
            answer = outcome(params) if callable(outcome) else outcome
            return await answer if inspect.isawaitable(answer) else answer
        finally:
            self.in_flight -= 1

    def _get_from_store(self, params: dict[str, Any]) -> Response:
        (name, request), *_ = params["RequestItems"].items()
        found = []
        for raw_key in request["Keys"]:
            key = ItemKey(raw_key["PK"]["S"], raw_key["SK"]["S"])
            if key in self.store:
                found.append(self.store[key])
        return {"Responses": {name: found[::-1]}, "UnprocessedKeys": {}}

    async def batch_get_item(self, params: dict[str, Any]) -> Response:
        return await self._answer("batch_get_item", params, self._get_from_store)

    async def batch_write_item(self, params: dict[str, Any]) -> Response:
        return await self._answer("batch_write_item", params, lambda _: {"UnprocessedItems": {}})

    async def query(self, params: dict[str, Any]) -> Response:
        return await self._answer("query", params, lambda _: {"Items": [], "Count": 0})

    async def put_item(self, params: dict[str, Any]) -> Response:
        return await self._answer("put_item", params, lambda _: {})

    async def transact_write_items(self, params: dict[str, Any]) -> Response:
        return await self._answer("transact_write_items", params, lambda _: {})


def sent_keys(params: dict[str, Any]) -> list[ItemKey]:
    return [ItemKey(k["PK"]["S"], k["SK"]["S"]) for k in params["RequestItems"][NAME]["Keys"]]


def make_table(client: FakeClient, policy: RetryPolicy = FAST) -> Table:
    return Table(client, NAME, policy, layout=DEMO_LAYOUT)  # type: ignore[arg-type]


async def query(table: Table) -> Response:
    return await table.call("Query", table.client.query, {"TableName": NAME})


async def put(table: Table) -> Response:
    return await table.call("PutItem", table.client.put_item, {"TableName": NAME, "Item": {}})


# --- get_many ------------------------------------------------------------------------------


async def test_get_many_of_nothing_makes_no_call() -> None:
    client = FakeClient()
    table = make_table(client)
    assert await table.get_many([]) == {}
    assert client.calls == []
    assert table.trace.requests == 0


async def test_get_many_removes_duplicate_keys() -> None:
    keys = keys_of(150)
    client = FakeClient({k: raw_item(k) for k in keys})
    table = make_table(client)

    found = await table.get_many(keys + keys[::-1] + keys[:10])

    calls = client.ops("batch_get_item")
    sent = [key for params in calls for key in sent_keys(params)]
    assert sorted(len(sent_keys(params)) for params in calls) == [50, 100]
    assert len(sent) == len(set(sent)) == 150
    assert set(sent) == set(keys)
    assert set(found) == set(keys)


@pytest.mark.parametrize(
    ("n", "sizes"),
    [(1, [1]), (99, [99]), (100, [100]), (101, [1, 100]), (250, [50, 100, 100]), (300, [100] * 3)],
)
async def test_get_many_sends_at_most_100_keys_per_call(n: int, sizes: list[int]) -> None:
    keys = keys_of(n)
    client = FakeClient({k: raw_item(k) for k in keys})
    table = make_table(client)

    found = await table.get_many(keys)

    calls = client.ops("batch_get_item")
    assert sorted(len(sent_keys(params)) for params in calls) == sizes
    assert len(found) == n
    assert table.trace.operations["BatchGetItem"] == len(sizes)
    for params in calls:
        assert set(params["RequestItems"]) == {NAME}
        assert params["ReturnConsumedCapacity"] == "TOTAL"


async def test_get_many_sends_chunks_concurrently() -> None:
    keys = keys_of(250)
    client = FakeClient({k: raw_item(k) for k in keys}, delay=0.01)
    table = make_table(client)

    await table.get_many(keys)

    assert len(client.ops("batch_get_item")) == 3
    assert client.max_in_flight == 3
    assert table.trace.rounds == 1
    assert table.trace.requests == 3


async def test_get_many_maps_results_by_key_and_leaves_missing_keys_absent() -> None:
    keys = keys_of(230)
    present = keys[::2]
    store = {k: raw_item(k, name={"S": f"name of {k.pk}"}) for k in present}
    client = FakeClient(store)  # answers each chunk in reverse order
    table = make_table(client)

    found = await table.get_many(keys)

    assert set(found) == set(present)
    for key in present:
        assert found[key] == {"PK": key.pk, "SK": key.sk, "name": f"name of {key.pk}"}
    for key in keys[1::2]:
        assert key not in found


async def test_get_many_distinguishes_keys_by_sort_key() -> None:
    a, b = ItemKey("GROUP#g", "PRODUCT#p1"), ItemKey("GROUP#g", "PRODUCT#p2")
    client = FakeClient({a: raw_item(a, plan={"S": "a"}), b: raw_item(b, plan={"S": "b"})})
    found = await make_table(client).get_many([b, a])
    assert found[a]["plan"] == "a"
    assert found[b]["plan"] == "b"


async def test_get_many_retries_unprocessed_keys() -> None:
    keys = keys_of(10)
    client = FakeClient({k: raw_item(k) for k in keys})
    table = make_table(client)
    unprocessed = [DEMO_LAYOUT.key(k) for k in keys[4:]]
    client.script["batch_get_item"] = [
        {
            "Responses": {NAME: [raw_item(k) for k in keys[:4]]},
            "UnprocessedKeys": {NAME: {"Keys": unprocessed}},
        },
        {
            "Responses": {NAME: [raw_item(k) for k in keys[4:7]]},
            "UnprocessedKeys": {NAME: {"Keys": unprocessed[3:]}},
        },
    ]

    found = await table.get_many(keys)

    assert set(found) == set(keys)
    calls = client.ops("batch_get_item")
    assert [sent_keys(params) for params in calls] == [keys, keys[4:], keys[7:]]
    assert table.trace.requests == 3
    assert table.trace.operations["BatchGetItem"] == 3
    assert table.trace.rounds == 3


async def test_get_many_gives_up_when_keys_stay_unprocessed_past_the_deadline() -> None:
    keys = keys_of(5)

    def nothing_processed(params: dict[str, Any]) -> Response:
        return {"Responses": {NAME: []}, "UnprocessedKeys": params["RequestItems"]}

    client = FakeClient()
    client.script["batch_get_item"] = [nothing_processed] * 10_000
    table = make_table(client, RetryPolicy(base_delay=0.001, max_delay=0.002, deadline=0.05))

    started = time.monotonic()
    with pytest.raises(Unavailable, match="unprocessed"):
        await table.get_many(keys)

    assert time.monotonic() - started < 0.5
    attempts = len(client.ops("batch_get_item"))
    assert attempts >= 2
    assert table.trace.operations["BatchGetItem"] == attempts


async def test_get_many_translates_a_failing_chunk() -> None:
    client = FakeClient()
    client.script["batch_get_item"] = [client_error("ResourceNotFoundException")]
    with pytest.raises(Unavailable, match="create-table"):
        await make_table(client).get_many(keys_of(3))


# --- call: retries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        client_error("ProvisionedThroughputExceededException"),
        client_error("ThrottlingException"),
        client_error("InternalServerError", 500),
        EndpointConnectionError(endpoint_url="http://localhost:1"),
    ],
    ids=lambda e: type(e).__name__ + ":" + str(getattr(e, "response", {}).get("Error", "")),
)
async def test_call_retries_retryable_failures_then_succeeds(failure: Exception) -> None:
    client = FakeClient()
    ok = {"Items": [], "Count": 0}
    client.script["query"] = [failure, failure, ok]
    table = make_table(client)

    assert await query(table) is ok

    assert len(client.ops("query")) == 3
    assert table.trace.requests == 3
    assert table.trace.operations == Counter({"Query": 3})


@pytest.mark.parametrize(
    "code", ["ConditionalCheckFailedException", "ValidationException", "ResourceNotFoundException"]
)
async def test_call_does_not_retry_client_errors(code: str) -> None:
    client = FakeClient()
    failure = client_error(code)
    client.script["put_item"] = [failure, {}]
    table = make_table(client)

    with pytest.raises(EdgewiseError) as caught:
        await put(table)

    assert len(client.ops("put_item")) == 1
    assert table.trace.requests == 1
    assert caught.value.__cause__ is failure


async def test_call_conditional_check_failure_is_a_plain_internal_error() -> None:
    client = FakeClient()
    client.script["put_item"] = [client_error("ConditionalCheckFailedException")]
    with pytest.raises(EdgewiseError) as caught:
        await put(make_table(client))
    assert type(caught.value) is EdgewiseError
    assert code_of(caught.value) == "INTERNAL_SERVER_ERROR"


@pytest.mark.parametrize("attempts", [1, 2, 5])
async def test_call_stops_after_the_policy_attempts(attempts: int) -> None:
    client = FakeClient()
    failures = [client_error("InternalServerError", 500) for _ in range(attempts + 5)]
    client.script["query"] = list(failures)
    table = make_table(client, RetryPolicy(attempts, base_delay=0.001, max_delay=0.002))

    with pytest.raises(Unavailable) as caught:
        await query(table)

    assert len(client.ops("query")) == attempts
    assert table.trace.requests == attempts
    assert caught.value.__cause__ is failures[attempts - 1]


async def test_throttling_is_retried_past_the_attempts_while_the_deadline_allows() -> None:
    """DynamoDB throttling is busy, not down: retried until it answers, within the deadline."""
    client = FakeClient()
    client.script["query"] = [client_error("ThrottlingException") for _ in range(12)]
    table = make_table(client, RetryPolicy(3, base_delay=0.001, max_delay=0.002))

    assert await query(table) == {"Items": [], "Count": 0}
    assert len(client.ops("query")) == 13


def cancelled(*reasons: str) -> ClientError:
    error = client_error("TransactionCanceledException")
    error.response["CancellationReasons"] = [{"Code": r} for r in reasons]
    return error


async def test_a_conflicting_transaction_is_retried_until_the_deadline_then_conflict() -> None:
    client = FakeClient(delay=0.002)
    client.script["transact_write_items"] = [cancelled("None", "TransactionConflict")] * 1000
    policy = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.002, deadline=0.1)
    table = make_table(client, policy)

    with pytest.raises(Conflict) as caught:
        await table.transact_write([{"Put": {}}, {"Put": {}}], [None, None])

    assert code_of(caught.value) == "CONFLICT"
    assert 5 < len(client.ops("transact_write_items")) < 100


async def test_a_conflict_that_clears_commits() -> None:
    client = FakeClient()
    client.script["transact_write_items"] = [cancelled("TransactionConflict", "None")] * 3
    table = make_table(client)
    puts = [{"Put": {"Item": {"PK": {"S": f"USER#{n}"}, "SK": {"S": f"USER#{n}"}}}} for n in "ab"]

    await table.transact_write(puts, [None, None])

    assert len(client.ops("transact_write_items")) == 4


async def test_an_attempt_that_times_out_is_sent_again_within_the_deadline() -> None:
    """A call with no answer in its own time is given up and sent again, the next attempt
    waiting twice as long; the request's deadline bounds them all."""
    client = FakeClient()
    hung = asyncio.Event()

    async def hang(params: dict[str, Any]) -> Response:
        await hung.wait()
        return {}

    client.script["query"] = [hang, {"Items": [], "Count": 1}]
    policy = RetryPolicy(base_delay=0.001, max_delay=0.002, deadline=5.0, timeout=0.05)
    table = make_table(client, policy)
    started = time.monotonic()
    assert await query(table) == {"Items": [], "Count": 1}
    assert time.monotonic() - started < 1.0
    assert len(client.ops("query")) == 2


async def test_a_write_retrying_a_conflict_that_runs_out_of_time_answers_conflict() -> None:
    """A write read again after a conflict whose next attempt is cut short by the deadline
    answers the conflict (CONFLICT), not the timeout (UNAVAILABLE); after the retries, a
    timeout is a timeout again."""
    client = FakeClient()

    async def hang(params: dict[str, Any]) -> Response:
        await asyncio.Event().wait()
        return {}

    client.script["query"] = [hang, hang]
    table = make_table(client, RetryPolicy(base_delay=0.001, max_delay=0.002, deadline=5.0))
    view = table.for_request()
    view.deadline = time.monotonic() + 0.3
    async with view.retries() as retries:
        try:
            raise Conflict("the clock moved")
        except Conflict:
            assert await retries.again()
        with pytest.raises(Conflict, match="the clock moved"):
            await query(view)
    view.deadline = time.monotonic() + 0.1
    with pytest.raises(Unavailable):
        await query(view)


def test_each_attempt_after_a_timeout_waits_twice_as_long() -> None:
    assert [RetryPolicy(timeout=0.5).wait(n) for n in range(3)] == [0.5, 1.0, 2.0]
    assert RetryPolicy(deadline=8.0).wait(0) == math.inf  # by default: the deadline alone


async def test_call_stops_at_the_policy_deadline() -> None:
    client = FakeClient(delay=0.005)
    client.script["query"] = [client_error("ThrottlingException") for _ in range(1000)]
    policy = RetryPolicy(attempts=1000, base_delay=0.001, max_delay=0.002, deadline=0.05)
    table = make_table(client, policy)

    started = time.monotonic()
    with pytest.raises(Unavailable):
        await query(table)

    assert time.monotonic() - started < 0.5
    assert 2 <= len(client.ops("query")) < 50


# --- batch_write ---------------------------------------------------------------------------


def put_item(i: int) -> dict[str, Any]:
    return {"PK": f"USER#u{i}", "SK": f"USER#u{i}", "n": i}


async def test_batch_write_of_nothing_makes_no_call() -> None:
    client = FakeClient()
    assert await make_table(client).batch_write() == 0
    assert client.calls == []


@pytest.mark.parametrize(
    ("puts", "deletes", "sizes"),
    [(60, 0, [10, 25, 25]), (25, 0, [25]), (26, 0, [1, 25]), (20, 10, [5, 25]), (0, 3, [3])],
)
async def test_batch_write_sends_at_most_25_items_per_call(
    puts: int, deletes: int, sizes: list[int]
) -> None:
    client = FakeClient(delay=0.005)
    table = make_table(client)

    written = await table.batch_write(
        [put_item(i) for i in range(puts)], keys_of(deletes, "GROUP#g")
    )

    assert written == puts + deletes
    calls = client.ops("batch_write_item")
    assert sorted(len(params["RequestItems"][NAME]) for params in calls) == sizes
    requests = [r for params in calls for r in params["RequestItems"][NAME]]
    assert len(requests) == puts + deletes
    assert table.trace.operations["BatchWriteItem"] == len(sizes)
    assert client.max_in_flight == len(sizes)


async def test_batch_write_serializes_puts_and_deletes() -> None:
    client = FakeClient()
    await make_table(client).batch_write(
        [{"PK": "USER#a", "SK": "USER#a", "n": 1, "name": "A"}], [ItemKey("GROUP#g", "GROUP#g")]
    )
    (params,) = client.ops("batch_write_item")
    assert params["RequestItems"] == {
        NAME: [
            {
                "PutRequest": {
                    "Item": {
                        "PK": {"S": "USER#a"},
                        "SK": {"S": "USER#a"},
                        "n": {"N": "1"},
                        "name": {"S": "A"},
                    }
                }
            },
            {"DeleteRequest": {"Key": {"PK": {"S": "GROUP#g"}, "SK": {"S": "GROUP#g"}}}},
        ]
    }


async def test_batch_write_retries_unprocessed_items() -> None:
    client = FakeClient()
    table = make_table(client)
    items = [put_item(i) for i in range(10)]

    def leave_last_three(params: dict[str, Any]) -> Response:
        return {"UnprocessedItems": {NAME: params["RequestItems"][NAME][-3:]}}

    client.script["batch_write_item"] = [leave_last_three, leave_last_three]

    assert await table.batch_write(items) == 10

    calls = client.ops("batch_write_item")
    firsts = calls[0]["RequestItems"][NAME]
    assert [len(params["RequestItems"][NAME]) for params in calls] == [10, 3, 3]
    assert calls[1]["RequestItems"][NAME] == firsts[-3:]
    assert calls[2]["RequestItems"][NAME] == firsts[-3:]
    assert table.trace.operations["BatchWriteItem"] == 3


# --- Trace ---------------------------------------------------------------------------------


async def test_trace_counts_calls_in_flight_together_as_one_round() -> None:
    client = FakeClient(delay=0.01)
    table = make_table(client)

    await asyncio.gather(query(table), query(table))
    assert client.max_in_flight == 2
    assert (table.trace.requests, table.trace.rounds) == (2, 1)

    await query(table)
    assert (table.trace.requests, table.trace.rounds) == (3, 2)
    assert table.trace.in_flight == 0


async def test_trace_counts_sequential_calls_as_separate_rounds() -> None:
    table = make_table(FakeClient())
    for _ in range(3):
        await query(table)
    assert table.trace.rounds == 3
    assert table.trace.as_dict()["operations"] == {"Query": 3}


async def test_trace_rounds_count_rises_of_in_flight_from_zero() -> None:
    trace = Trace()
    first_in, second_in = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with trace.call("Query"):
            first_in.set()
            await second_in.wait()

    async def second() -> None:
        await first_in.wait()
        async with trace.call("BatchGetItem"):
            second_in.set()

    # The second starts while the first is in flight and ends first: still one round.
    await asyncio.gather(first(), second())
    assert (trace.requests, trace.rounds, trace.in_flight) == (2, 1, 0)

    async with trace.call("Query"):
        assert trace.in_flight == 1
    assert (trace.requests, trace.rounds) == (3, 2)
    assert trace.operations == Counter({"Query": 2, "BatchGetItem": 1})


async def test_trace_releases_in_flight_on_failure() -> None:
    client = FakeClient()
    client.script["query"] = [client_error("ValidationException")]
    table = make_table(client)
    with pytest.raises(EdgewiseError):
        await query(table)
    assert table.trace.in_flight == 0
    await query(table)
    assert table.trace.rounds == 2


async def test_trace_sums_consumed_capacity() -> None:
    client = FakeClient()
    client.script["query"] = [
        {"Items": [], "ConsumedCapacity": {"TableName": NAME, "ReadCapacityUnits": 1.5}},
        {"Items": [], "ConsumedCapacity": {"TableName": NAME, "CapacityUnits": 0.5}},
    ]
    table = make_table(client)
    await query(table)
    await query(table)
    assert table.trace.as_dict()["consumedReadUnits"] == 2.0
    assert table.trace.as_dict()["consumedWriteUnits"] == 0.0


async def test_trace_counts_batch_write_capacity_as_write_units() -> None:
    client = FakeClient()
    client.script["batch_write_item"] = [
        {"UnprocessedItems": {}, "ConsumedCapacity": [{"TableName": NAME, "CapacityUnits": 6.0}]}
    ]
    table = make_table(client)
    await table.batch_write([put_item(i) for i in range(6)])
    assert table.trace.consumed_write_units == 6.0
    assert table.trace.consumed_read_units == 0.0


def test_for_request_shares_the_client_with_a_fresh_trace() -> None:
    client = FakeClient()
    table = make_table(client)
    table.trace.requests = 7
    view = table.for_request()
    assert view.client is client
    assert view.name == NAME
    assert view.policy == FAST
    assert view.trace is not table.trace
    assert view.trace.requests == 0


# --- query ----------------------------------------------------------------------------------


async def test_query_deserializes_typed_values() -> None:
    client = FakeClient()
    client.script["query"] = [
        {
            "Items": [
                raw_item(
                    ItemKey("GROUP#g", "PRODUCT#p"),
                    plan={"S": "pro"},
                    seats={"N": "3"},
                    price={"N": "9.99"},
                    active={"BOOL": True},
                    gone={"NULL": True},
                    tags={"SS": ["a", "b"]},
                    extra={"M": {"k": {"L": [{"N": "1"}, {"S": "x"}]}}},
                )
            ]
        }
    ]
    (item,), _, _ = await make_table(client).query(KeyConditionExpression="#h = :h")
    assert item == {
        "PK": "GROUP#g",
        "SK": "PRODUCT#p",
        "plan": "pro",
        "seats": Decimal("3"),
        "price": Decimal("9.99"),
        "active": True,
        "gone": None,
        "tags": {"a", "b"},
        "extra": {"k": [Decimal("1"), "x"]},
    }
    assert type(item["seats"]) is Decimal
    assert type(item["plan"]) is str


async def test_get_many_deserializes_typed_values() -> None:
    key = ItemKey("USER#alice", "USER#alice")
    client = FakeClient({key: raw_item(key, version={"N": "1"}, name={"S": "Alice"})})
    found = await make_table(client).get_many([key])
    assert found == {key: {"PK": key.pk, "SK": key.sk, "version": Decimal(1), "name": "Alice"}}
    assert type(found[key]["version"]) is Decimal


def test_an_item_key_made_in_c_is_an_item_key() -> None:
    made = ItemKey.of("USER#a", "GROUP#b")
    assert made == ItemKey("USER#a", "GROUP#b") and type(made) is ItemKey
    assert (made.pk, made.sk) == ("USER#a", "GROUP#b")
    assert hash(made) == hash(ItemKey("USER#a", "GROUP#b"))
