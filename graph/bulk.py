"""Bulk load and dump of a table's items as DynamoDB JSON, one item a line.

The file format: each non-blank line is one item's attribute-value map exactly as DynamoDB's
low-level API has it, every value an object with one type descriptor (``S``, ``N``, ``B``,
``BOOL``, ``NULL``, ``L``, ``M``, ``SS``, ``NS``, ``BS``)::

    {"PK":{"S":"USER#alice"},"SK":{"S":"USER#alice"},"name":{"S":"Alice"},"version":{"N":"1"}}

It is chosen over plain JSON because it is lossless: numbers are strings in ``N`` so they keep all
their (up to 38) digits, and binary, sets and NULL stay what they are. A dump holds numbers as
the endpoint answers them: DynamoDB writes 1.5E+100 as 101 plain digits, which load takes
(zeros at the end of a whole number are not significant digits). ``B`` and ``BS`` values are
base64, as on DynamoDB's wire. :func:`dump` writes each line with sorted keys, compact separators
and set members sorted, so one item always gives the same line; the order of the lines follows
the parallel Scan, so compare two dumps as sorted lines. Blank lines are skipped when loading (and
counted in line numbers). Validation checks the format and the keys, not DynamoDB's size limits.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import suppress
from decimal import Decimal, DecimalException
from pathlib import Path
from typing import IO, Any

from graph.dynamo import values
from graph.errors import BadUserInput
from graph.table import Layout, Table, from_dynamo
from graph.writes.idempotency import is_record

__all__ = ["dump", "load", "scan", "validate"]

Progress = Callable[[int], object]

LOAD_CHUNK = 1000
"""Items per ``Table.batch_write`` call: 40 BatchWriteItem calls of 25 in flight together."""

DESCRIPTORS = ("B", "BOOL", "BS", "L", "M", "N", "NS", "NULL", "S", "SS")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


class _Invalid(Exception):
    """What is wrong with one line (the caller adds the line number)."""


def _number(text: Any, where: str) -> Decimal:
    if not isinstance(text, str) or not _NUMBER.fullmatch(text):
        raise _Invalid(f"{where}: {json.dumps(text)} is not a number string")
    try:
        return values.number(text)  # 1.5E+100 as DynamoDB dumps it, 101 plain digits, fits
    except DecimalException:
        raise _Invalid(f"{where}: {text} does not fit DynamoDB's numbers (38 digits)") from None


def _binary(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise _Invalid(f"{where}: a binary value must be a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:  # binascii.Error, or a character outside ASCII
        raise _Invalid(f"{where}: {json.dumps(text)} is not base64") from None


def _decode(value: Any, where: str) -> dict[str, Any]:
    """Check one attribute value; return it as the low-level client has it (binary as bytes)."""
    if not isinstance(value, dict) or len(value) != 1:
        raise _Invalid(f'{where} must be an object with one type descriptor, like {{"S": ...}}')
    [(kind, inner)] = value.items()
    if kind == "S" and isinstance(inner, str):
        return value
    if kind == "N":
        _number(inner, where)
        return value
    if kind == "B":
        return {"B": _binary(inner, where)}
    if kind == "BOOL" and isinstance(inner, bool):
        return value
    if kind == "NULL" and inner is True:
        return value
    if kind == "L" and isinstance(inner, list):
        return {"L": [_decode(v, f"{where}[{i}]") for i, v in enumerate(inner)]}
    if kind == "M" and isinstance(inner, dict):
        return {"M": {k: _decode(v, f"{where}.{k}") for k, v in inner.items()}}
    if kind in ("SS", "NS", "BS") and isinstance(inner, list) and inner:
        members: list[Any] = inner
        if kind == "SS" and not all(isinstance(s, str) for s in inner):
            raise _Invalid(f"{where}: SS members must be strings")
        if kind == "NS":
            members = [_number(n, where) for n in inner]  # "1" and "1.0" are the same member
        if kind == "BS":
            members = [_binary(b, where) for b in inner]
        if len(set(members)) != len(members):
            raise _Invalid(f"{where}: {kind} has duplicate members")
        return {kind: members if kind == "BS" else inner}
    if kind not in DESCRIPTORS:
        expected = ", ".join(DESCRIPTORS)
        raise _Invalid(f"{where}: unknown type descriptor {json.dumps(kind)} (not {expected})")
    raise _Invalid(f"{where}: {json.dumps(inner)} is not a valid {kind} value")


def _item(raw: bytes, layout: Layout) -> dict[str, Any]:
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        raise _Invalid(f"not valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise _Invalid("not a JSON object (one item's attribute map a line)")
    if "" in parsed:
        raise _Invalid("an attribute name is empty")
    item = {name: _decode(value, name) for name, value in parsed.items()}
    keys = (layout.pk, layout.sk)
    index_keys = {k for pair in layout.indexes.values() for k in pair if k} - set(keys)
    for name in (*keys, *sorted(index_keys)):  # index keys are optional, but of their type
        kind = layout.types.get(name, "S")
        if name not in item:
            if name in keys:
                raise _Invalid(f"{name} is missing (every item has {keys[0]} and {keys[1]})")
        elif kind not in item[name]:
            what = {"S": "a string", "N": "a number", "B": "a binary"}[kind]
            raise _Invalid(f'{name} must be {what} attribute {{"{kind}": ...}}')
        elif item[name][kind] in ("", b""):
            raise _Invalid(f"{name} is empty (DynamoDB refuses empty keys)")
    return item


def _items(path: str | os.PathLike[str], layout: Layout) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, item as the low-level client has it) for each non-blank line."""
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, 1):
            if raw.strip():
                try:
                    yield number, _item(raw, layout)
                except _Invalid as exc:
                    raise BadUserInput(f"line {number}: {exc}") from None


def _key_text(value: dict[str, Any]) -> Any:
    """A key value to compare (numbers by value: ``1`` and ``1.0`` are one key)."""
    [(kind, inner)] = value.items()
    return Layout.text(Decimal(inner)) if kind == "N" else inner


def validate(path: str | os.PathLike[str], layout: Layout) -> int:
    """Check the whole file, streaming it; return how many items it holds.

    Raises :class:`~graph.errors.BadUserInput` naming the first bad line and what is wrong with
    it, a duplicate (PK, SK) included. Only the keys are kept in memory.
    """
    seen: dict[tuple[Any, Any], int] = {}
    for number, item in _items(path, layout):
        key = (_key_text(item[layout.pk]), _key_text(item[layout.sk]))
        if key in seen:
            raise BadUserInput(
                f"line {number}: duplicate key {layout.pk}={key[0]!r} {layout.sk}={key[1]!r} "
                f"(also line {seen[key]})"
            )
        seen[key] = number
    return len(seen)


async def load(table: Table, path: str | os.PathLike[str], progress: Progress | None = None) -> int:
    """Validate the file (nothing is written if it is invalid), then write its items.

    Items go to :meth:`Table.batch_write` :data:`LOAD_CHUNK` at a time (BatchWriteItem calls of
    25, sent together, unprocessed items retried); ``progress(n)`` follows each chunk.
    Returns how many items were written. An item already in the table is replaced.
    """
    validate(path, table.layout)
    items = (from_dynamo(item) for _, item in _items(path, table.layout))
    written = 0
    while chunk := list(itertools.islice(items, LOAD_CHUNK)):
        written += await table.batch_write(chunk)
        if progress is not None:
            progress(len(chunk))
    return written


def _encode(value: dict[str, Any]) -> dict[str, Any]:
    """A low-level attribute value as JSON: binary as base64, set members sorted."""
    [(kind, inner)] = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode() for b in sorted(inner)]}
    if kind == "SS":
        return {"SS": sorted(inner)}
    if kind == "NS":
        return {"NS": sorted(inner, key=Decimal)}
    if kind == "L":
        return {"L": [_encode(v) for v in inner]}
    if kind == "M":
        return {"M": {k: _encode(v) for k, v in inner.items()}}
    return value


def _line(item: dict[str, Any]) -> str:
    encoded = {name: _encode(value) for name, value in item.items()}
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


async def _pages(table: Table, segment: int, segments: int) -> AsyncIterator[list[dict[str, Any]]]:
    """One segment of a parallel, strongly consistent Scan (the control plane's, under the
    table's retries), page by page (DynamoDB JSON), Edgewise's own items (idempotency records,
    replicas' jobs and clocks) left out."""
    params: dict[str, Any] = {
        "TableName": table.name,
        "Segment": segment,
        "TotalSegments": segments,
        "ConsistentRead": True,
        "ReturnConsumedCapacity": "TOTAL",
    }
    pk, sk = table.layout.pk, table.layout.sk
    scan = table.client.control.scan
    while True:
        response = await table.call("Scan", scan, params)
        yield [
            i
            for i in response.get("Items", [])
            if not is_record(i.get(pk, {}).get("S"), i.get(sk, {}).get("S"))
        ]
        if not response.get("LastEvaluatedKey"):
            return
        params = {**params, "ExclusiveStartKey": response["LastEvaluatedKey"]}


async def _scan_segment(
    table: Table, segment: int, segments: int, out: IO[str], progress: Progress | None
) -> int:
    count = 0
    async for items in _pages(table, segment, segments):
        out.write("".join(_line(item) for item in items))
        count += len(items)
        if progress is not None:
            progress(len(items))
    return count


async def scan(
    table: Table, segments: int = 4, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Every item of the table (a parallel Scan of ``segments`` segments)."""

    async def segment(number: int) -> list[dict[str, Any]]:
        found = []
        async for items in _pages(table, number, segments):
            found += [from_dynamo(item) for item in items]
            if progress is not None:
                progress(len(items))
        return found

    parts = await asyncio.gather(*(segment(n) for n in range(segments)))
    return [item for part in parts for item in part]


async def dump(
    table: Table, path: str | os.PathLike[str], segments: int = 4, progress: Progress | None = None
) -> int:
    """Write every item of the table to ``path``, one line each; return how many.

    A parallel Scan (``segments`` segments, one task each) writes each page as it arrives, to a
    temporary file beside ``path`` that replaces it only once complete (``os.replace``), so
    ``path`` always holds a whole dump. ``progress(n)`` follows each page.
    """
    target = Path(path)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            tasks = [
                asyncio.create_task(_scan_segment(table, s, segments, out, progress))
                for s in range(segments)
            ]
            try:
                counts = await asyncio.gather(*tasks)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return sum(counts)
