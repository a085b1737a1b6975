"""What a DynamoDB-compatible endpoint can do, found by probing it once at start-up.

Mutations need ``TransactWriteItems``. Some compatible servers lack it (dynalite answers
``UnknownOperationException``; ScyllaDB Alternator's answer is a ``ValidationException``
saying the operation is unsupported), and an IAM policy may deny it. The probe sends one
transaction holding a single ``ConditionCheck`` on a key no item uses: a condition check never
writes, whether its condition holds or not, so probing changes nothing.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from graph.dynamo.plane import Response
from graph.dynamo.streams import stream_arn
from graph.errors import EdgewiseError
from graph.table import Layout, Table

__all__ = ["PROBE_KEY", "Capabilities", "disagreements", "probe"]

PROBE_KEY = "EDGEWISE#capability-probe"  # a key value no Edgewise item has
PROBE_VALUES = {"S": {"S": PROBE_KEY}, "N": {"N": "0"}, "B": {"B": PROBE_KEY.encode()}}
MISSING_CODES = frozenset(
    {
        "UnknownOperationException",
        "UnsupportedOperationException",
        "NotImplemented",
        "NotImplementedException",
        "AccessDeniedException",
    }
)
UNSUPPORTED = re.compile(r"unknown operation|unsupported|not (yet )?(implemented|supported)", re.I)


@dataclass(frozen=True)
class Capabilities:
    """``transactions``: whether ``TransactWriteItems`` works; None when the probe could not
    tell (the table missing, the endpoint down), to be probed again later. ``detail`` says why."""

    endpoint: str
    transactions: bool | None
    detail: str = ""
    stream: bool | None = None  # whether the table has a stream (live queries need it)
    disagreements: tuple[str, ...] = ()  # how the table's keys differ from the model's

    @property
    def missing(self) -> bool:
        return self.transactions is False

    def explain(self) -> str:
        """What is missing and how to proceed, for the error at start-up and ``/readyz``."""
        return (
            f"the DynamoDB endpoint {self.endpoint} does not support TransactWriteItems "
            f"({self.detail}), which every mutation needs: serve it with --read-only "
            "(queries only, no mutations in the schema), or use an endpoint with transactions "
            "(DynamoDB, DynamoDB Local, LocalStack, moto)"
        )


def _refusal(exc: EdgewiseError) -> str | None:
    """Why the endpoint refused the operation itself (not the request), or None."""
    code = exc.code
    message = str(exc.answer.get("Error", {}).get("Message", ""))
    status = int(exc.answer.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    if code in MISSING_CODES or status == 501:
        return f"{code or status}: {message}".rstrip(": ")
    if code == "ValidationException" and UNSUPPORTED.search(message):
        return f"{code}: {message}"
    return None


def _key_schema(schema: list[dict[str, str]]) -> tuple[str | None, str | None]:
    found = {k["KeyType"]: k["AttributeName"] for k in schema}
    return found.get("HASH"), found.get("RANGE")


def disagreements(layout: Layout, described: dict[str, Any]) -> list[str]:
    """How the table (a DescribeTable answer) differs from the model's layout: each key and
    index the model reads, by attribute name and type, one line each, naming what to write."""
    types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
    declared = described.get("GlobalSecondaryIndexes", []) + described.get(
        "LocalSecondaryIndexes", []
    )
    indexes = {i["IndexName"]: _key_schema(i["KeySchema"]) for i in declared}
    projected = {i["IndexName"]: i.get("Projection", {}) for i in declared}
    wanted: dict[str | None, tuple[str, str | None]] = {None: (layout.pk, layout.sk)}
    wanted.update(dict(layout.indexes))
    out = []
    for index, (hash_key, range_key) in wanted.items():
        where = "the table" if index is None else f"index {index}"
        if index is not None and index not in indexes:
            out.append(
                f"{where} does not exist on the table (it has: {', '.join(indexes) or 'none'})"
            )
            continue
        actual = _key_schema(described["KeySchema"]) if index is None else indexes[index]
        projection = projected.get(index or "", {})
        if (
            index is not None
            and layout.complete(index)
            and projection.get("ProjectionType") != "ALL"
        ):
            held = projection.get("NonKeyAttributes", [])
            out.append(
                f"{where} projects {projection.get('ProjectionType')} {held or ''} in the table, "
                f"ALL in the model; declare `projection: {held or 'KEYS_ONLY'}`".replace("  ", " ")
            )
        for role, mine, theirs in (
            ("partition", hash_key, actual[0]),
            ("sort", range_key, actual[1]),
        ):
            if mine != theirs:
                out.append(
                    f"{where}'s {role} key is {theirs or 'none'}, the model says {mine or 'none'}"
                )
            elif mine is not None and types.get(mine, "S") != layout.types.get(mine, "S"):
                kind = types.get(mine, "S")
                out.append(
                    f"{where}'s {role} key {mine} is of type {kind} in the table, "
                    f"{layout.types.get(mine, 'S')} in the model; declare it as "
                    f"`{{name: {mine}, type: {kind}}}`"
                )
    return out


async def probe(table: Table) -> Capabilities:
    """Probe ``table``'s endpoint: DescribeTable (for the key schema) and, at the same time, a
    transaction of one ConditionCheck that can change nothing, on a key made of the model's key
    attributes (a table whose keys differ is refused for that anyway). Never raises: an
    undecided probe has ``transactions=None``."""
    endpoint = table.client.control.endpoint
    layout = table.layout
    names = [layout.pk, layout.sk]
    check = {
        "TableName": table.name,
        "Key": {name: PROBE_VALUES[layout.types.get(name, "S")] for name in names},
        "ConditionExpression": "attribute_not_exists(#k)",
        "ExpressionAttributeNames": {"#k": names[0]},
    }
    params = {"TransactItems": [{"ConditionCheck": check}]}
    described: dict[str, Any] | BaseException
    checked: Response | BaseException
    described, checked = await asyncio.gather(
        table.describe(),
        table.call("TransactWriteItems", table.client.transact_write_items, params),
        return_exceptions=True,
    )
    stream = None
    disagree: tuple[str, ...] = ()
    try:
        if isinstance(described, BaseException):
            raise described
        stream = stream_arn(described) is not None
        disagree = tuple(disagreements(layout, described))
        if isinstance(checked, BaseException):
            raise checked
    except EdgewiseError as exc:
        if exc.code == "TransactionCanceledException":  # ran, and the condition failed
            return Capabilities(endpoint, True, stream=stream, disagreements=disagree)
        if (why := _refusal(exc)) is not None:
            return Capabilities(endpoint, False, why, stream, disagree)
        return Capabilities(endpoint, None, str(exc), stream, disagree)
    except Exception as exc:  # e.g. an unexpected answer shape: undecided, not fatal
        return Capabilities(endpoint, None, f"{type(exc).__name__}: {exc}", stream)
    return Capabilities(endpoint, True, stream=stream, disagreements=disagree)
