"""An item's size as DynamoDB counts it against its 400 KB limit, which every write checks
before it is sent (graph.writes.constraints)."""

from __future__ import annotations

from decimal import Decimal

from boto3.dynamodb.types import Binary

from graph.writes.constraints import ITEM_LIMIT, item_size


def test_item_size_counts_as_dynamodb_documents_it() -> None:
    # "DynamoDB item sizes and formats": names and values in UTF-8 bytes, numbers 1 byte per two
    # significant digits plus 1, null and Boolean 1, lists and maps 3 plus 1 per element
    assert item_size({"ab": "xyz"}) == 2 + 3
    assert item_size({"ä": "é"}) == 2 + 2
    assert item_size({"n": Decimal("12345")}) == 1 + 3 + 1
    assert item_size({"n": Decimal("0.00100")}) == 1 + 1 + 1  # zeros at both ends trimmed
    assert item_size({"n": 100}) == 1 + 2
    assert item_size({"t": True, "z": None}) == (1 + 1) + (1 + 1)
    assert item_size({"b": b"\x00\x01\x02", "c": Binary(b"\x00")}) == (1 + 3) + (1 + 1)
    assert item_size({"m": {}}) == 1 + 3
    assert item_size({"m": {"k": "v"}}) == 1 + 3 + (1 + 1 + 1)
    assert item_size({"l": ["ab", Decimal(1)]}) == 1 + 3 + (2 + 1) + (2 + 1)
    assert item_size({"s": {"a", "bc"}}) == 1 + 3
    assert ITEM_LIMIT == 409_600
    assert item_size({"ns": {Decimal(1), Decimal("12.5")}}) == 2 + (1 + 1) + (2 + 1)
