"""The dedicated DynamoDB-JSON decoder gives boto3's TypeDeserializer values, from botocore's
answers (``B`` as bytes) and from the raw wire JSON (``B`` as base64 text), and the encoder
TypeSerializer's; neither imports boto3 (its ``Binary`` is graph.dynamo.values' own, equal to
boto3's both ways)."""

from __future__ import annotations

import base64
import random
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary as BotoBinary
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError

from graph.dynamo.values import Binary, decode_item, decode_value, encode_value

CASES: list[dict[str, Any]] = [
    {"S": ""},
    {"S": "héllo ✓"},
    {"N": "0"},
    {"N": "-1"},
    {"N": "1.50"},
    {"N": "1E+5"},
    {"N": "12345678901234567890123456789012345678"},
    {"N": "0.000000000000000000000000000000000000000001"},
    {"B": b""},
    {"B": b"\x00\xff"},
    {"BOOL": True},
    {"BOOL": False},
    {"NULL": True},
    {"SS": ["a", "b"]},
    {"NS": ["1", "2.5", "-3"]},
    {"BS": [b"\x01", b"\x02"]},
    {"L": []},
    {"L": [{"S": "x"}, {"N": "1"}, {"L": [{"NULL": True}]}, {"M": {"k": {"B": b"z"}}}]},
    {"M": {}},
    {"M": {"a": {"M": {"b": {"SS": ["c"]}}}, "n": {"NS": ["7"]}}},
]


def _wire(value: Any) -> Any:
    """The same value as DynamoDB sends it: binary as base64 text."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(v).decode() if k == "B" else _wire(v) for k, v in value.items()
        } | ({"BS": [base64.b64encode(b).decode() for b in value["BS"]]} if "BS" in value else {})
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (Decimal('1.50') is not Decimal('1.5'));
    this module's Binary stands for boto3's."""
    if isinstance(a, Binary) and isinstance(b, BotoBinary):
        return type(a.value) is type(b.value) and a.value == b.value
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Decimal):
        return str(a) == str(b)
    return bool(a == b)


@pytest.mark.parametrize("value", CASES, ids=lambda v: next(iter(v)))
def test_each_type_decodes_as_type_deserializer_does(value: dict[str, Any]) -> None:
    expected = TypeDeserializer().deserialize(value)
    assert _same(decode_value(value), expected)
    assert _same(decode_value(_wire(value)), expected)
    if "B" in value:
        assert isinstance(decode_value(_wire(value)), Binary)


def test_random_items_decode_as_type_deserializer_does() -> None:
    rng = random.Random(14)
    serializer, deserializer = TypeSerializer(), TypeDeserializer()

    def value(depth: int) -> Any:
        kind = rng.choice(["s", "n", "b", "bool", "null", "l", "m", "ss", "ns"][: 9 - 2 * depth])
        if kind == "s":
            return rng.choice(["", "a", "ünï", "x" * 40])
        if kind == "n":
            return Decimal(rng.choice(["0", "-7", "3.25", "1e10", "0.001"]))
        if kind == "b":
            return rng.randbytes(rng.randint(0, 8))
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "l":
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        if kind == "m":
            return {f"k{i}": value(depth + 1) for i in range(rng.randint(0, 4))}
        if kind == "ss":
            return {rng.choice("abcdef") for _ in range(rng.randint(1, 4))}
        return {Decimal(rng.randint(-50, 50)) for _ in range(rng.randint(1, 4))}

    for _ in range(300):
        item = {f"a{i}": value(0) for i in range(rng.randint(1, 6))}
        raw = {k: serializer.serialize(v) for k, v in item.items()}
        expected = {k: deserializer.deserialize(v) for k, v in raw.items()}
        assert _same(decode_item(raw), expected)
        assert _same(decode_item(_wire(raw)), expected)


@pytest.mark.parametrize("value", [{}, {"X": "1"}])
def test_a_malformed_value_raises_type_error_as_type_deserializer_does(value: Any) -> None:
    with pytest.raises(TypeError):
        TypeDeserializer().deserialize(value)
    with pytest.raises(TypeError):
        decode_value(value)


def test_a_number_past_38_digits_raises_as_type_deserializer_does() -> None:
    too_precise = {"N": "1.234567890123456789012345678901234567891"}
    with pytest.raises(Exception) as theirs:
        TypeDeserializer().deserialize(too_precise)
    with pytest.raises(type(theirs.value)):
        decode_value(too_precise)
    assert not isinstance(theirs.value, BotoCoreError)


def test_binary_equals_and_hashes_as_boto3s() -> None:
    ours, theirs = Binary(b"\x00z"), BotoBinary(b"\x00z")
    assert ours == theirs and theirs == ours and ours == b"\x00z"
    assert b"\x00z" == ours  # noqa: SIM300
    assert ours != Binary(b"z") and hash(ours) == hash(theirs)
    assert {ours} == {theirs} and bytes(ours) == b"\x00z" and repr(ours) == repr(theirs)
    with pytest.raises(TypeError):
        Binary("text")  # type: ignore[arg-type]


ENCODED: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    Decimal("1.50"),
    Decimal("1E+5"),
    "",
    "héllo",
    b"",
    b"\x00\xff",
    bytearray(b"ab"),
    {"a", "b"},
    {Decimal(1), 2},
    {b"\x01", b"\x02"},
    {True},
    [],
    ["x", Decimal(1), [None], {"k": b"z"}],
    (1, "t"),
    {},
    {"a": {"b": {"c"}}, "n": {Decimal(7)}},
]


@pytest.mark.parametrize("value", ENCODED, ids=[type(v).__name__ for v in ENCODED])
def test_each_value_encodes_as_type_serializer_does(value: Any) -> None:
    assert encode_value(value) == TypeSerializer().serialize(value)
    if isinstance(value, bytes):  # boto3's Binary, and ours, encode as the bytes they hold
        assert encode_value(Binary(value)) == encode_value(BotoBinary(value)) == {"B": value}


@pytest.mark.parametrize(
    "value",
    [1.5, Decimal("NaN"), Decimal("1.234567890123456789012345678901234567891"), object()],
    ids=["float", "nan", "39-digits", "object"],
)
def test_what_type_serializer_refuses_is_refused(value: Any) -> None:
    with pytest.raises(Exception) as theirs:
        TypeSerializer().serialize(value)
    with pytest.raises(type(theirs.value)):
        encode_value(value)


PLAIN = [
    "15" + "0" * 99,  # 1.5E+100, as DynamoDB answers it
    "-1" + "0" * 125,  # -1E+125, near DynamoDB's largest exponent
    "12345678901234567890123456789012345678" + "0" * 10,  # 38 digits, then zeros
]


@pytest.mark.parametrize("digits", PLAIN, ids=["1.5E+100", "-1E+125", "38 digits"])
def test_a_number_in_plain_digits_past_38_is_read_exactly(digits: str) -> None:
    """DynamoDB keeps 38 significant digits but answers a number in plain digits, so 1.5E+100
    comes back as 101 of them, which boto3's TypeDeserializer refuses (``decimal.Rounded``:
    its 38-digit context counts the zeros; boto/boto3#2500). It is read exactly, and a value
    read serializes again (the item can be written back, or dumped and loaded)."""
    with pytest.raises(ArithmeticError):
        TypeDeserializer().deserialize({"N": digits})
    value = decode_value({"N": digits})
    assert value == Decimal(digits)
    assert Decimal(TypeSerializer().serialize(value)["N"]) == Decimal(digits)
    item = decode_item(
        {"n": {"N": digits}, "ns": {"NS": [digits, "1"]}, "l": {"L": [{"N": digits}]}}
    )
    assert item == {"n": value, "ns": {value, Decimal(1)}, "l": [value]}
    assert TypeSerializer().serialize(item["ns"])  # each member fits 38 digits again


def test_a_number_past_38_significant_digits_still_raises() -> None:
    """Zeros at the end do not count; a 39th significant digit does, as in DynamoDB."""
    with pytest.raises(ArithmeticError):
        decode_value({"N": "1" * 39 + "0" * 5})
