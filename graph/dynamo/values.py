"""DynamoDB JSON to the engine's values and back, as boto3's ``TypeDeserializer`` and
``TypeSerializer`` convert them, without importing boto3 (whose package imports botocore: a
third of a second of a cold start, for four small classes).

The values are TypeDeserializer's: ``S`` a str, ``N`` a ``Decimal`` made in DynamoDB's decimal
context (38 significant digits, inexact numbers raise), ``B`` a :class:`Binary` (this module's:
it equals boto3's ``Binary`` of the same bytes, both ways, and hashes alike), ``BOOL`` a bool,
``NULL`` None, ``L`` a list, ``M`` a dict, ``SS``/``NS``/``BS`` sets. ``B`` may be bytes
(botocore has decoded it) or base64 text (the raw wire JSON of :mod:`graph.dynamo.wire`), so one
decoder serves both clients. :func:`encode_value` is TypeSerializer's ``serialize`` (binary values
as bytes, which each client sends as base64).

One departure: DynamoDB answers a number in plain digits, 1.5E+100 as 101 of them, which
TypeDeserializer refuses (its context counts the zeros as digits: ``decimal.Rounded``,
boto/boto3#2500); :func:`number` reads it exactly, without the zeros, so it serializes again.
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Callable, Mapping, Set
from decimal import Clamped, Context, Decimal, Inexact, Overflow, Rounded, Underflow
from typing import Any

__all__ = ["DYNAMODB_CONTEXT", "Binary", "decode_item", "decode_value", "encode_value", "number"]

# boto3's: DynamoDB's numbers, 38 significant digits; anything else raises
DYNAMODB_CONTEXT = Context(
    Emin=-128, Emax=126, prec=38, traps=[Clamped, Overflow, Inexact, Rounded, Underflow]
)

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


class Binary:
    """A binary (``B``) attribute value, as boto3's ``Binary``: ``value`` is its bytes; it
    equals its bytes, and any object whose ``value`` is the same bytes."""

    __slots__ = ("value",)

    def __init__(self, value: bytes | bytearray) -> None:
        if not isinstance(value, bytes | bytearray):
            raise TypeError(
                "Value must be of the following types: <class 'bytearray'>, <class 'bytes'>"
            )
        self.value = value

    def __eq__(self, other: object) -> bool:
        return bool(self.value == getattr(other, "value", other))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Binary({self.value!r})"

    def __bytes__(self) -> bytes:
        return bytes(self.value)


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


def _is_number(value: Any) -> bool:
    if isinstance(value, float):
        raise TypeError("Float types are not supported. Use Decimal types instead.")
    return isinstance(value, int | Decimal)


def _is_binary(value: Any) -> bool:
    return isinstance(value, Binary | bytes | bytearray) or type(value).__name__ == "Binary"


def _encode_number(value: int | Decimal) -> str:
    number = str(_create(value))
    if number in ("Infinity", "NaN"):
        raise TypeError("Infinity and NaN not supported")
    return number


def _encode_binary(value: Any) -> bytes | bytearray:
    return value if isinstance(value, bytes | bytearray) else value.value


def encode_value(value: Any) -> dict[str, Any]:
    """One Python value in DynamoDB JSON, as TypeSerializer's ``serialize`` makes it (the same
    tags, in the same order of tests, and the same errors)."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if _is_number(value):
        return {"N": _encode_number(value)}
    if isinstance(value, str):
        return {"S": value}
    if _is_binary(value):
        return {"B": _encode_binary(value)}
    if isinstance(value, Set):
        if all(map(_is_number, value)):
            return {"NS": [_encode_number(n) for n in value]}
        if all(isinstance(s, str) for s in value):
            return {"SS": list(value)}
        if all(map(_is_binary, value)):
            return {"BS": [_encode_binary(b) for b in value]}
    if isinstance(value, Mapping):
        return {"M": {k: encode_value(v) for k, v in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [encode_value(v) for v in value]}
    raise TypeError(f'Unsupported type "{type(value)}" for value "{value}"')
