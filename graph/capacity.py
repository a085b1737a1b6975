"""The capacity units a DynamoDB call consumes, computed as DynamoDB documents them, for an
endpoint that does not report them (or reports them its own way: moto).

An item's size is DynamoDB's ("Item sizes and formats"): each attribute's name in UTF-8 bytes
plus its value's size. The units ("DynamoDB read and write operations", "Managing capacity for
transactions", "Provisioned throughput considerations for global secondary indexes"):

- a read: the item's size rounded up to 4 KB, one unit per 4 KB, half a unit when eventually
  consistent. A missing item costs what a smallest item does. BatchGetItem rounds each item;
  a Query or Scan page rounds the sum of its items' sizes, once per page, and an empty page
  costs the smallest read.
- a write: the item's size rounded up to 1 KB, one unit per KB; a write of a transaction costs
  twice that, a ConditionCheck too. Each index the write changes costs a write of the item as
  the index holds it (all its attributes when the index projects ALL).

An update or a delete is charged its item's size as an earlier read of the same request
found it (``sizes``: Edgewise reads an item before it updates it), else one unit. What a
call's parameters, its answer and the request's earlier reads do not show is not counted, so
some figures are lower bounds: a Query's items its filter dropped or a ``Select=COUNT`` (the
page's size is not known: counted as the smallest page), an update's growth past its item's
size as read, an item a put overwrote, and the index writes of an item the request does not
show to be in an index (an update that moves an item within an index is one index write here,
two in DynamoDB: a delete and a put)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, MutableMapping
from decimal import Decimal
from typing import Any, Protocol

from graph.dynamo.values import Binary, decode_item

__all__ = ["KeyLayout", "computed_units", "item_size", "value_size"]

READ_UNIT = 4096  # bytes per read capacity unit
WRITE_UNIT = 1024  # bytes per write capacity unit
_WORDS = re.compile(r"[#:.]?[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset({"set", "remove", "add", "delete", "if_not_exists", "list_append"})


class KeyLayout(Protocol):
    """What the units need of a table's layout (:class:`graph.table.Layout` has it)."""

    @property
    def pk(self) -> str: ...
    @property
    def sk(self) -> str: ...
    @property
    def indexes(self) -> Mapping[str, tuple[str, str | None]]: ...
    @property
    def projections(self) -> Mapping[str, tuple[str, ...]]: ...


def item_size(item: Mapping[str, Any]) -> int:
    """An item's size as DynamoDB counts it ("DynamoDB item sizes and formats"), against its
    400 KB limit and for capacity: each attribute's name (UTF-8 bytes) plus its value's size."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def value_size(value: Any) -> int:
    """A value's size: a string its UTF-8 bytes, binary its raw bytes, a number 1 byte per two
    significant digits plus 1, null and a Boolean 1; a list or map 3 bytes plus 1 per element
    plus its elements (a map's with their names). Sets are not in the documented rules: counted
    as their elements."""
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float | Decimal):
        digits = Decimal(str(value)).normalize().as_tuple().digits  # zeros at both ends gone
        return (len(digits) + 1) // 2 + 1
    if isinstance(value, Binary) or type(value).__name__ == "Binary":  # boto3's too
        return len(value.value)
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, Mapping):
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(value_size(v) + 1 for v in value)
    if isinstance(value, set | frozenset):
        return sum(value_size(v) for v in value)
    raise TypeError(f"not a DynamoDB value: {type(value).__name__}")


def _size(raw: Mapping[str, Any]) -> int:
    """The size of an item in DynamoDB JSON."""
    return item_size(decode_item(raw))


def _reads(size: int) -> int:
    return max(1, math.ceil(size / READ_UNIT))


def _writes(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


def _half(consistent: Any) -> float:
    return 1.0 if consistent else 0.5


def computed_units(
    operation: str,
    params: Mapping[str, Any],
    response: Mapping[str, Any],
    layout: KeyLayout,
    sizes: MutableMapping[str, int] | None = None,
) -> tuple[float, float]:
    """The (read, write) capacity units DynamoDB charges for one call that answered
    ``response`` to ``params`` (this module's rules); (0, 0) for a call that consumes none
    (DescribeTable and the other calls of the control plane). ``sizes``, kept across one
    request's calls, holds the sizes of the items its GetItem and BatchGetItem calls found, by
    key, for the updates and deletes that follow."""
    sizes = {} if sizes is None else sizes
    if operation == "GetItem":
        size = _size(response["Item"]) if "Item" in response else 0
        if size:
            sizes[_key(response["Item"], layout)] = size
        return _reads(size) * _half(params.get("ConsistentRead")), 0.0
    if operation in ("Query", "Scan"):
        size = sum(_size(raw) for raw in response.get("Items", ()))
        return _reads(size) * _half(params.get("ConsistentRead")), 0.0
    if operation == "BatchGetItem":
        return _batch_get(params, response, layout, sizes), 0.0
    if operation in ("PutItem", "UpdateItem", "DeleteItem"):
        return 0.0, float(_write(operation, params, layout, sizes))
    if operation == "BatchWriteItem":
        return 0.0, float(_batch_write(params, response, layout))
    if operation == "TransactWriteItems":
        units = 0
        for action in params.get("TransactItems", ()):
            [(kind, body)] = action.items()
            if kind == "ConditionCheck":
                units += 1
            else:
                units += _write(kind + "Item", body, layout, sizes)
        return 0.0, 2.0 * units
    return 0.0, 0.0


def _key(raw: Mapping[str, Any], layout: KeyLayout) -> str:
    """An item's key (in DynamoDB JSON) as one string."""
    return json.dumps([raw.get(layout.pk), raw.get(layout.sk)], sort_keys=True)


def _batch_get(
    params: Mapping[str, Any],
    response: Mapping[str, Any],
    layout: KeyLayout,
    sizes: MutableMapping[str, int],
) -> float:
    units = 0.0
    unprocessed = response.get("UnprocessedKeys") or {}
    for table, request in params.get("RequestItems", {}).items():
        found = response.get("Responses", {}).get(table, ())
        left = len(unprocessed.get(table, {}).get("Keys", ()))
        missing = max(0, len(request.get("Keys", ())) - left - len(found))
        read = missing
        for raw in found:
            size = sizes[_key(raw, layout)] = _size(raw)
            read += _reads(size)
        units += read * _half(request.get("ConsistentRead"))
    return units


def _batch_write(params: Mapping[str, Any], response: Mapping[str, Any], layout: KeyLayout) -> int:
    units = 0
    for table, requests in params.get("RequestItems", {}).items():
        unprocessed = (response.get("UnprocessedItems") or {}).get(table, ())
        for request in requests:
            if request in unprocessed:
                continue
            if "PutRequest" in request:
                units += _write("PutItem", request["PutRequest"], layout, {})
            else:
                units += _write("DeleteItem", request["DeleteRequest"], layout, {})
    return units


def _write(
    operation: str, body: Mapping[str, Any], layout: KeyLayout, sizes: Mapping[str, int]
) -> int:
    """A write of one item and of the indexes it changes: the item's units (a put's from its
    item; an update's or delete's from its size in ``sizes``, else 1) and a write of each index
    the request shows it changes (of the item's units where the index holds all of it)."""
    if operation == "PutItem":
        item = decode_item(body["Item"])
        units = _writes(item_size(item))
        for index, keys in layout.indexes.items():
            if all(k is None or k in item for k in keys):
                units += _writes(item_size(_projected(item, index, keys, layout)))
        return units
    if operation == "DeleteItem":
        touched: set[str] | None = None
    else:
        touched = _updated(body)
    whole = _writes(sizes.get(_key(body["Key"], layout), 0))
    units = whole
    table_keys = {layout.pk, layout.sk}
    for index, keys in layout.indexes.items():
        named = {k for k in keys if k is not None}
        projected = layout.projections.get(index)
        if named <= table_keys:  # the index holds every item
            if touched is None or projected is None or touched & set(projected):
                units += whole if projected is None else 1
        elif touched is not None and touched & named:  # the update moves it in or out
            units += whole if projected is None else 1
    return units


def _projected(
    item: Mapping[str, Any], index: str, keys: tuple[str, str | None], layout: KeyLayout
) -> Mapping[str, Any]:
    """``item`` as ``index`` holds it."""
    projected = layout.projections.get(index)
    if projected is None:
        return item
    kept = {layout.pk, layout.sk, *(k for k in keys if k is not None), *projected}
    return {name: value for name, value in item.items() if name in kept}


def _updated(body: Mapping[str, Any]) -> set[str]:
    """The top-level attributes an UpdateExpression sets, adds to, removes or deletes from."""
    names = body.get("ExpressionAttributeNames", {})
    found = set()
    for word in _WORDS.findall(body.get("UpdateExpression", "")):
        if word[0] == "#":
            found.add(names.get(word, word))
        elif word[0] not in ":." and word.lower() not in _KEYWORDS:
            found.add(word)
    return found
