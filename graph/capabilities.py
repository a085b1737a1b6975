"""What a DynamoDB-compatible endpoint can do, found by probing it once at start-up.

Mutations need ``TransactWriteItems``. Some compatible servers lack it (dynalite answers
``UnknownOperationException``; ScyllaDB Alternator's answer is a ``ValidationException``
saying the operation is unsupported), and an IAM policy may deny it. The probe sends one
transaction holding a single ``ConditionCheck`` on a key no item uses: a condition check never
writes, whether its condition holds or not, so probing changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import EdgewiseError, error_code
from .streams import stream_arn
from .table import Table

__all__ = ["PROBE_KEY", "Capabilities", "probe"]

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


def _refusal(exc: BaseException) -> str | None:
    """Why the endpoint refused the operation itself (not the request), or None."""
    code = error_code(exc)
    message = str(getattr(exc, "response", {}).get("Error", {}).get("Message", ""))
    status = int(getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    if code in MISSING_CODES or status == 501:
        return f"{code or status}: {message}".rstrip(": ")
    if code == "ValidationException" and UNSUPPORTED.search(message):
        return f"{code}: {message}"
    return None


async def probe(table: Table) -> Capabilities:
    """Probe ``table``'s endpoint: DescribeTable (for the key schema), then a transaction of one
    ConditionCheck that can change nothing. Never raises: an undecided probe has
    ``transactions=None``."""
    endpoint = str(table.client.meta.endpoint_url)
    stream = None
    try:
        described = await table.describe()
        stream = stream_arn(described) is not None
        types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
        names = [k["AttributeName"] for k in described["KeySchema"]]
        key: dict[str, Any] = {name: PROBE_VALUES[types[name]] for name in names}
        check = {
            "TableName": table.name,
            "Key": key,
            "ConditionExpression": "attribute_not_exists(#k)",
            "ExpressionAttributeNames": {"#k": names[0]},
        }
        await table.call("TransactWriteItems", TransactItems=[{"ConditionCheck": check}])
    except EdgewiseError as exc:
        cause = exc.__cause__ or exc
        if error_code(cause) == "TransactionCanceledException":  # ran, and the condition failed
            return Capabilities(endpoint, True, stream=stream)
        if (why := _refusal(cause)) is not None:
            return Capabilities(endpoint, False, why, stream)
        return Capabilities(endpoint, None, str(exc), stream)
    except Exception as exc:  # e.g. an unexpected answer shape: undecided, not fatal
        return Capabilities(endpoint, None, f"{type(exc).__name__}: {exc}", stream)
    return Capabilities(endpoint, True, stream=stream)
