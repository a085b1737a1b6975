"""DynamoDB JSON to the engine's values, as boto3's ``TypeDeserializer`` gives them, faster.

The values are exactly TypeDeserializer's: ``S`` a str, ``N`` a ``Decimal`` made in DynamoDB's
decimal context (38 digits, inexact or rounded numbers raise), ``B`` a boto3 ``Binary``,
``BOOL`` a bool, ``NULL`` None, ``L`` a list, ``M`` a dict, ``SS``/``NS``/``BS`` sets. ``B``
may be bytes (botocore has decoded it) or base64 text (the raw wire JSON of
:mod:`graph.dynamo.wire`), so one decoder serves both clients.
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Callable, Mapping
from typing import Any

from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary

__all__ = ["decode_item", "decode_value"]

_number = DYNAMODB_CONTEXT.create_decimal


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
                item[name] = _number(inner)
            else:
                item[name] = decode_value(value)
            break
        else:
            decode_value(value)  # raises: an empty value
    return item


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "N": _number,
    "BOOL": lambda flag: flag,
    "NULL": lambda _: None,
    "B": _binary,
    "L": lambda values: [decode_value(v) for v in values],
    "M": lambda values: {k: decode_value(v) for k, v in values.items()},
    "SS": set,
    "NS": lambda values: set(map(_number, values)),
    "BS": lambda values: set(map(_binary, values)),
}
