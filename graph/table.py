"""The async table: batched, retried, bounded and counted DynamoDB calls over one data plane
(:class:`graph.dynamo.plane.DataPlane`, whichever client implements it)."""

from __future__ import annotations

import asyncio
import base64
import copy
import math
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from graph.capacity import computed_units
from graph.dynamo.plane import DataPlane, Params, Response
from graph.dynamo.values import Binary, decode_item, encode_value
from graph.errors import (
    Conflict,
    EdgewiseError,
    Unavailable,
    cancellation_codes,
    unreachable,
)
from graph.keys import ItemKey
from graph.observer import Observer, Sent, outcome
from model import KeyValueError

__all__ = [
    "DEADLINE",
    "MAX_ACTIONS",
    "UNITS",
    "Failure",
    "Item",
    "Layout",
    "Retries",
    "RetryPolicy",
    "Send",
    "Table",
    "Trace",
    "from_dynamo",
    "to_dynamo",
]

Item = dict[str, Any]
# What a failed condition of one transaction action means, given the item as it was (if known).
Failure = Callable[[Item | None], EdgewiseError]
# One call of a data or control plane, e.g. ``client.query``.
Send = Callable[[Params], Awaitable[Response]]

WRITE_OPERATIONS = frozenset(
    {"BatchWriteItem", "TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"}
)
UNITS = ("reported", "computed")  # where a table's consumed units come from
GET_BATCH = 100
WRITE_BATCH = 25
MAX_ACTIONS = 100  # TransactWriteItems holds at most this many actions on DynamoDB
DEADLINE = 10.0  # seconds, by default, for a request's calls (or one call's, outside a request)


@dataclass(frozen=True)
class Layout:
    """The key attribute names of a table (``pk``, ``sk``) and of its indexes (name to
    ``(hash, range)``; range None for a hash-only index)."""

    pk: str
    sk: str
    indexes: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)  # key attributes of type N or B
    local: frozenset[str] = frozenset()  # local secondary indexes
    projections: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # not ALL

    def complete(self, index: str | None) -> bool:
        """Whether ``index``'s items hold every attribute of the table's (projection ALL)."""
        return index is None or index not in self.projections

    def keys(self, index: str | None) -> tuple[str, str | None]:
        return (self.pk, self.sk) if index is None else self.indexes[index]

    def key(self, key: ItemKey) -> dict[str, dict[str, Any]]:
        """A primary key in DynamoDB JSON."""
        if not self.types:
            return {self.pk: {"S": key.pk}, self.sk: {"S": key.sk}}
        return to_dynamo({self.pk: key.pk, self.sk: key.sk})

    def value(self, attribute: str | None, text: Any) -> Any:
        """A key attribute's value from its text in a template, cursor or argument: a string
        as is, a number (N) as a Decimal, binary (B) from base64. A value no key of that type
        can hold raises :class:`model.KeyValueError`."""
        kind = self.types.get(attribute or "")
        if kind is None or not isinstance(text, str):
            return text
        if kind == "N":
            try:
                number = Decimal(text)
            except ArithmeticError:
                number = None
            if number is None or not number.is_finite():
                raise KeyValueError(f"{attribute} is a number key, got {text[:80]!r}")
            return number
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:  # binascii.Error, or a character outside ASCII
            raise KeyValueError(
                f"{attribute} is a binary key: give base64, got {text[:80]!r}"
            ) from None

    @staticmethod
    def text(value: Any) -> str:
        """A key attribute's value as text (the inverse of :meth:`value`)."""
        if isinstance(value, str):
            return value
        if isinstance(value, Binary):
            value = value.value
        if isinstance(value, bytes | bytearray):
            return base64.b64encode(value).decode()
        text = format(value, "f") if isinstance(value, Decimal) else str(value)
        return text.rstrip("0").rstrip(".") if "." in text else text  # as DynamoDB writes it

    def item_key(self, item: Mapping[str, Any]) -> ItemKey:
        return ItemKey.of(item[self.pk], item[self.sk])


def to_dynamo(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: encode_value(v) for k, v in item.items()}


def from_dynamo(raw: Mapping[str, Any]) -> Item:
    """TypeDeserializer's values, from botocore's answers or the lean client's raw JSON."""
    return decode_item(raw)


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@dataclass(frozen=True)
class RetryPolicy:
    """How a failing DynamoDB call is retried: exponential backoff with full jitter.

    Bounded by ``deadline`` seconds from the first attempt, and by ``attempts`` unless
    DynamoDB is only busy (throttling, a transaction conflict, a timeout: those are retried
    as long as the deadline allows). One attempt waits ``timeout`` seconds for its answer,
    each attempt after a timed-out one twice as long, never past the deadline; without a
    ``timeout`` an attempt waits as long as the deadline allows (a write is not sent again
    while it may still be applying, which an endpoint ignoring ClientRequestToken, such as
    moto, would apply twice). botocore's own retries are switched off (see
    :func:`graph.dynamo.client.client_config`) so the two layers never multiply; every
    attempt is made, and counted, here.
    """

    attempts: int = 10
    base_delay: float = 0.02
    max_delay: float = 1.0
    deadline: float = DEADLINE
    timeout: float | None = None

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))

    def wait(self, timeouts: int) -> float:
        """How long an attempt waits for its answer after ``timeouts`` attempts timed out."""
        return math.inf if self.timeout is None else self.timeout * (1 << timeouts)


class Retries:
    """The attempts of a write that reads again when what it read changed before its commit
    (a version, a clock): full-jitter backoff between them, until the deadline leaves no time
    for one more (as long as the last one took), so that the last failure is the write's
    answer (CONFLICT) rather than a timeout. ``async with table.retries() as retries``: inside,
    a call cut short by the deadline after a conflict raises that conflict."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.policy = table.policy
        self.began = time.monotonic()
        self.ends = table._ends(self.began)
        self.attempt = 0
        self._outer: Conflict | None = None

    async def __aenter__(self) -> Retries:
        self._outer = self.table.conflicted
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.table.conflicted = self._outer

    async def again(self) -> bool:
        """Wait before the next attempt (called while handling the conflict); False when there
        is no time left for one."""
        conflict = sys.exception()
        if isinstance(conflict, Conflict):
            self.table.conflicted = conflict
        now = time.monotonic()
        self.attempt += 1
        delay = self.policy.backoff(self.attempt)
        if now + delay + (now - self.began) > self.ends:
            return False
        await asyncio.sleep(delay)
        self.began = time.monotonic()
        return True


@dataclass
class Trace:
    """What one GraphQL request cost DynamoDB. ``rounds`` counts rises of in-flight calls from 0.
    ``computed``: whether any of its consumed units are Edgewise's computation
    (:mod:`graph.capacity`) rather than what the endpoint reported."""

    requests: int = 0
    rounds: int = 0
    operations: Counter[str] = field(default_factory=Counter)
    consumed_read_units: float = 0.0
    consumed_write_units: float = 0.0
    in_flight: int = 0
    computed: bool = False
    sizes: dict[str, int] = field(default_factory=dict)  # items read, for graph.capacity

    @asynccontextmanager
    async def call(self, operation: str) -> AsyncIterator[None]:
        self.started(operation)
        try:
            yield
        finally:
            self.ended()

    def started(self, operation: str) -> None:
        """A call is sent; :meth:`ended` when it ends, however it ends."""
        if self.in_flight == 0:
            self.rounds += 1
        self.in_flight += 1
        self.requests += 1
        self.operations[operation] += 1

    def ended(self) -> None:
        self.in_flight -= 1

    def consumed(self, operation: str, response: Mapping[str, Any]) -> None:
        """Add a response's ConsumedCapacity (TOTAL gives only CapacityUnits, so the operation
        says whether they are reads or writes)."""
        capacity = response.get("ConsumedCapacity")
        writes = operation in WRITE_OPERATIONS
        for entry in capacity if isinstance(capacity, list) else [capacity] if capacity else []:
            read = float(entry.get("ReadCapacityUnits", 0) or 0)
            write = float(entry.get("WriteCapacityUnits", 0) or 0)
            if not read and not write:
                total = float(entry.get("CapacityUnits", 0) or 0)
                read, write = (0.0, total) if writes else (total, 0.0)
            self.consumed_read_units += read
            self.consumed_write_units += write

    def add(self, read: float, write: float) -> None:
        """Add units Edgewise computed (:func:`graph.capacity.computed_units`)."""
        self.consumed_read_units += read
        self.consumed_write_units += write
        self.computed = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "rounds": self.rounds,
            "operations": dict(self.operations),
            "consumedReadUnits": self.consumed_read_units,
            "consumedWriteUnits": self.consumed_write_units,
            "consumedUnitsSource": "computed" if self.computed else "reported",
        }


class Table:
    """One DynamoDB table over a shared data plane, its keys named by ``layout`` (the model's).

    Make one per process and a :meth:`for_request` copy per request: the copy counts its calls in
    its own :class:`Trace` and bounds how many it has in flight.
    """

    def __init__(
        self,
        client: DataPlane | None,  # None: a table that only keys items, never sends a call
        name: str,
        policy: RetryPolicy = RetryPolicy(),
        trace: Trace | None = None,
        max_in_flight: int = 64,
        deadline: float | None = None,
        *,
        layout: Layout,
        observer: Observer | None = None,
        max_actions: int = MAX_ACTIONS,
        units: str = "reported",
    ) -> None:
        self.client = cast(DataPlane, client)
        self.name = name
        self.layout = layout
        self.policy = policy
        self.trace = trace if trace is not None else Trace()
        self.max_in_flight = max_in_flight
        self.deadline = deadline  # time.monotonic() by which every call must have ended
        self.observer = observer
        self.max_actions = max_actions  # what one TransactWriteItems holds at this endpoint
        self.conflicted: Conflict | None = None  # a write's, while it retries (Retries)
        # "computed": every call's consumed units are computed (graph.capacity), for an endpoint
        # that reports them its own way (moto); "reported": the endpoint's, computed only for a
        # call whose answer carries none.
        if units not in UNITS:
            raise ValueError(f"units={units!r}: use {' or '.join(UNITS)}")
        self.units = units
        self._gate = asyncio.Semaphore(max_in_flight)

    def _view(self, trace: Trace, deadline: float | None, observer: Observer | None) -> Table:
        view = copy.copy(self)  # a subclass's view is one too
        view.trace, view.deadline, view.observer = trace, deadline, observer
        view.conflicted = None
        view._gate = asyncio.Semaphore(self.max_in_flight)
        return view

    def for_request(self, observer: Observer | None = None) -> Table:
        """A view for one request: its own trace, in-flight bound, and a deadline of
        ``policy.deadline`` seconds from now shared by all its calls and retries; ``observer``
        (else this table's) is told of its calls."""
        deadline = time.monotonic() + self.policy.deadline
        observer = observer if observer is not None else self.observer
        return self._view(Trace(computed=self.units == "computed"), deadline, observer)

    def detached(self) -> Table:
        """A view for work that may outlive the request that started it (the replicas written
        after its change committed): no deadline but each call's own; its calls are counted in
        this view's trace (the request's, while it waits for them) and told its observer."""
        return self._view(self.trace, None, self.observer)

    def retries(self) -> Retries:
        """The attempts of a write that reads again when what it read changed."""
        return Retries(self)

    def _ends(self, started: float) -> float:
        ends = started + self.policy.deadline
        return ends if self.deadline is None else min(ends, self.deadline)

    async def _send(self, operation: str, send: Send, params: Params) -> Response:
        observer = self.observer
        trace = self.trace
        if observer is None:
            async with self._gate:
                trace.started(operation)
                try:
                    response = await send(params)
                finally:
                    trace.ended()
            self._consumed(operation, params, response)
            return response
        async with self._gate:
            if trace.in_flight == 0:
                observer.round_started()
            started = time.perf_counter()
            trace.started(operation)
            try:
                response = await send(params)
            except BaseException as exc:
                observer.sent(Sent(operation, outcome(exc), time.perf_counter() - started))
                raise
            else:
                read, write = trace.consumed_read_units, trace.consumed_write_units
                self._consumed(operation, params, response)
                read, write = trace.consumed_read_units - read, trace.consumed_write_units - write
                partial = bool(response.get("UnprocessedKeys") or response.get("UnprocessedItems"))
                elapsed = time.perf_counter() - started
                observer.sent(Sent(operation, "ok", elapsed, read, write, partial))
                return response
            finally:
                trace.ended()
                if trace.in_flight == 0:
                    observer.round_ended()

    def _consumed(self, operation: str, params: Params, response: Response) -> None:
        """Count the units a call consumed: as its answer reports them, else (where the table
        computes them, or the answer carries none) computed, if the call asked for them."""
        if self.units == "reported" and response.get("ConsumedCapacity"):
            self.trace.consumed(operation, response)
        elif params.get("ReturnConsumedCapacity", "NONE") != "NONE":
            units = computed_units(operation, params, response, self.layout, self.trace.sizes)
            self.trace.add(*units)

    async def call(self, operation: str, send: Send, params: Params) -> Response:
        """``send(params)`` (one call of the data plane, or of the control plane, counted as
        ``operation``), retrying what is retryable under the policy, within the deadline.

        The clients raise only :class:`graph.errors.EdgewiseError`; the one that ends the
        retries is raised with its ``attempts``."""
        ends = self._ends(time.monotonic())
        attempt = timeouts = 0
        conflict: Conflict | None = None  # the last attempt's, while retrying it
        while True:
            began = time.monotonic()
            try:
                remaining = ends - began
                if remaining <= 0:
                    raise TimeoutError(f"{operation} ran out of time")
                wait = min(remaining, self.policy.wait(timeouts))
                async with asyncio.timeout(wait):  # no task per call, unlike wait_for
                    return await self._send(operation, send, params)
            except (EdgewiseError, TimeoutError) as exc:
                error = exc if isinstance(exc, EdgewiseError) else unreachable("TimeoutError")
                timeouts += error.busy and not error.code  # no answer in time: wait longer
                attempt += 1
                delay = self.policy.backoff(attempt)
                now = time.monotonic()
                if now >= ends - 0.01 and error is not exc:  # the deadline cut this call short
                    # a conflict retried until the deadline answers CONFLICT
                    error = conflict or self.conflicted or error
                conflict = error if isinstance(error, Conflict) else None
                # a conflict is retried only while another attempt as long still fits
                took = now - began if conflict is not None else 0.0
                out_of_time = now + delay + took > ends
                spent = attempt >= self.policy.attempts and not error.busy
                if not error.retryable or spent or out_of_time:
                    error.attempts = attempt
                    if error is exc:
                        raise
                    raise error from exc
                if self.observer is not None:
                    self.observer.retrying(operation)
                await asyncio.sleep(delay)

    async def _drain(
        self, operation: str, send: Send, params: Params, field_name: str
    ) -> list[Response]:
        """Repeat a batch call with its unprocessed remainder until none is left or time is up."""
        ends = self._ends(time.monotonic())
        responses = []
        attempt = 0
        while True:
            response = await self.call(operation, send, params)
            responses.append(response)
            remainder = response.get(field_name) or {}
            if not remainder:
                return responses
            attempt += 1
            delay = self.policy.backoff(attempt)
            if time.monotonic() + delay > ends:
                raise Unavailable(f"DynamoDB left {operation} items unprocessed past the deadline")
            await asyncio.sleep(delay)
            params = {**params, "RequestItems": remainder}

    async def describe(self) -> dict[str, Any]:
        """DescribeTable's ``Table`` (a call of the control plane, retried as any other): key
        schema, attribute types, indexes, approximate count."""
        control = self.client.control
        response = await self.call(
            "DescribeTable", control.describe_table, {"TableName": self.name}
        )
        described: dict[str, Any] = response["Table"]
        return described

    async def get_many(
        self, keys: Iterable[ItemKey], consistent: bool = False
    ) -> dict[ItemKey, Item]:
        """BatchGetItem: distinct keys in chunks of 100 sent together; missing keys are absent."""
        distinct = list(dict.fromkeys(keys))
        chunks = _chunks(distinct, GET_BATCH)
        results = await asyncio.gather(*(self._get_chunk(chunk, consistent) for chunk in chunks))
        found: dict[ItemKey, Item] = {}
        for items in results:
            for item in items:
                found[self.layout.item_key(item)] = item
        return found

    async def _get_chunk(self, keys: Sequence[ItemKey], consistent: bool = False) -> list[Item]:
        request: dict[str, Any] = {self.name: {"Keys": [self.layout.key(k) for k in keys]}}
        if consistent:
            request[self.name]["ConsistentRead"] = True
        params = {"RequestItems": request, "ReturnConsumedCapacity": "TOTAL"}
        send = self.client.batch_get_item
        responses = await self._drain("BatchGetItem", send, params, "UnprocessedKeys")
        return [
            from_dynamo(raw) for r in responses for raw in r.get("Responses", {}).get(self.name, [])
        ]

    async def get_item(self, key: ItemKey) -> Item | None:
        """A strongly consistent read of one item, for read-modify-write."""
        params = {
            "TableName": self.name,
            "Key": self.layout.key(key),
            "ConsistentRead": True,
            "ReturnConsumedCapacity": "TOTAL",
        }
        response = await self.call("GetItem", self.client.get_item, params)
        return from_dynamo(response["Item"]) if "Item" in response else None

    async def transact_write(
        self,
        actions: Sequence[dict[str, Any]],
        failures: Sequence[Failure | None],
        token: str | None = None,
    ) -> None:
        """One TransactWriteItems. A failed condition raises that action's ``failures`` entry.

        The ClientRequestToken (``token``, else a random one) is reused by every retry in
        :meth:`call`, so a commit whose response was lost is applied once (DynamoDB dedupes for
        10 minutes).
        """
        params = {
            "TransactItems": list(actions),
            "ClientRequestToken": token or uuid.uuid4().hex,
            "ReturnConsumedCapacity": "TOTAL",
        }
        try:
            await self.call("TransactWriteItems", self.client.transact_write_items, params)
        except EdgewiseError as exc:
            reasons = exc.answer.get("CancellationReasons", [])
            for code, reason, failure in zip(
                cancellation_codes(exc), reasons, failures, strict=False
            ):
                if code == "ConditionalCheckFailed" and failure is not None:
                    old = from_dynamo(reason["Item"]) if "Item" in reason else None
                    raise failure(old) from exc
            raise

    async def query(self, **params: Any) -> tuple[list[Item], dict[str, Any] | None, int]:
        """One Query page as built by the caller: its items, LastEvaluatedKey and Count."""
        params = {"TableName": self.name, "ReturnConsumedCapacity": "TOTAL", **params}
        response = await self.call("Query", self.client.query, params)
        items = [from_dynamo(raw) for raw in response.get("Items", [])]
        return items, response.get("LastEvaluatedKey"), int(response.get("Count", 0))

    async def write(
        self,
        operation: str,
        params: dict[str, Any],
        on_fail: Failure | None = None,
        leaves: Item | None = None,
    ) -> dict[str, Any]:
        """One PutItem, UpdateItem or DeleteItem. A failed condition raises ``on_fail(old)``,
        ``old`` being the item as it was (None when there was none), unless the call was
        retried and the item is already ``leaves``, what this write leaves: then an earlier
        attempt applied (single-item writes have no client token to dedupe them)."""
        if operation == "PutItem":
            send = self.client.put_item
        elif operation == "UpdateItem":
            send = self.client.update_item
        elif operation == "DeleteItem":
            send = self.client.delete_item
        else:
            raise ValueError(f"{operation} is not a single-item write")
        params = {"TableName": self.name, "ReturnConsumedCapacity": "TOTAL", **params}
        if on_fail is not None and "ConditionExpression" in params:
            params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        try:
            return await self.call(operation, send, params)
        except EdgewiseError as exc:
            if on_fail is None or exc.code != "ConditionalCheckFailedException":
                raise
            raw = exc.answer.get("Item")
            old = from_dynamo(raw) if raw else None
            if exc.attempts > 1 and leaves is not None and old == leaves:
                return {}
            raise on_fail(old) from exc

    async def batch_write(
        self, puts: Iterable[Mapping[str, Any]] = (), deletes: Iterable[ItemKey] = ()
    ) -> int:
        """BatchWriteItem in chunks of 25, sent concurrently; returns how many were written."""
        requests = [{"PutRequest": {"Item": to_dynamo(item)}} for item in puts]
        requests += [{"DeleteRequest": {"Key": self.layout.key(key)}} for key in deletes]
        await asyncio.gather(*(self._write_chunk(c) for c in _chunks(requests, WRITE_BATCH)))
        return len(requests)

    async def _write_chunk(self, requests: Sequence[dict[str, Any]]) -> None:
        params = {"RequestItems": {self.name: list(requests)}, "ReturnConsumedCapacity": "TOTAL"}
        send = self.client.batch_write_item
        await self._drain("BatchWriteItem", send, params, "UnprocessedItems")
