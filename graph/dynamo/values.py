"""DynamoDB JSON to the engine's values, as boto3's ``TypeDeserializer`` gives them, faster.

The values are exactly TypeDeserializer's: ``S`` a str, ``N`` a ``Decimal`` made in DynamoDB's
decimal context (38 significant digits, inexact numbers raise), ``B`` a boto3 ``Binary``,
``BOOL`` a bool, ``NULL`` None, ``L`` a list, ``M`` a dict, ``SS``/``NS``/``BS`` sets. ``B``
may be bytes (botocore has decoded it) or base64 text (the raw wire JSON of
:mod:`graph.dynamo.wire`), so one decoder serves both clients. One departure: DynamoDB answers a
number in plain digits, 1.5E+100 as 101 of them, which TypeDeserializer refuses (its context
counts the zeros as digits: ``decimal.Rounded``, boto/boto3#2500); :func:`number` reads it
exactly, without the zeros, so it serializes again.
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Callable, Mapping
from decimal import Decimal, Rounded
from typing import Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary

__all__ = ["decode_item", "decode_value", "number"]

_create: Callable[[Any], Decimal] = DYNAMODB_CONTEXT.create_decimal


def number(text: str) -> Decimal:
    """A number as DynamoDB holds it: at most 38 significant digits, zeros at the end of a
    whole number not counted (DynamoDB writes 1.5E+100 as 101 digits), exact; a number with
    more digits than that, or out of DynamoDB's range, raises as in TypeDeserializer."""
    try:
        return _create(text)
    except Rounded:  # more than 38 digits: zeros at the end, else too many (raises again)
        sign, digits, exponent = Decimal(text).as_tuple()
        kept = len(bytes(digits).rstrip(b"\0"))
        return _create(Decimal((sign, digits[:kept], int(exponent) + len(digits) - kept)))


def _binary(value: bytes | str) -> Binary:
    return Binary(value if isinstance(value, bytes) else b64decode(value))


def decode_value(value: Mapping[str, Any]) -> Any:
    """One attribute value (``{"S": "x"}``, ``{"N": "1"}``, ...); its first key decides, as in
    TypeDeserializer."""
    for tag, inner in value.items():
        if tag == "S":
            return inner
        decoder = _DECODERS.get(tag)
        if decoder is None:
            raise TypeError(f"Dynamodb type {tag} is not supported")
        return decoder(inner)
    raise TypeError("Value must be a nonempty dictionary whose key is a valid dynamodb type.")


def decode_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An item (attribute name to attribute value); :func:`decode_value` inlined for the common
    top-level ``S`` and ``N``."""
    item: dict[str, Any] = {}
    for name, value in raw.items():
        for tag, inner in value.items():
            if tag == "S":
                item[name] = inner
            elif tag == "N":
                item[name] = number(inner)
            else:
                item[name] = decode_value(value)
            break
        else:
            decode_value(value)  # raises: an empty value
    return item


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "N": number,
    "BOOL": lambda flag: flag,
    "NULL": lambda _: None,
    "B": _binary,
    "L": lambda values: [decode_value(v) for v in values],
    "M": lambda values: {k: decode_value(v) for k, v in values.items()},
    "SS": set,
    "NS": lambda values: set(map(number, values)),
    "BS": lambda values: set(map(_binary, values)),
}
