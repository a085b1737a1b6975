"""The model's constraints on the values a mutation writes: a non-null field is never cleared, a
String keeps to its ``length`` (a value of only whitespace counts as empty) and its ``format``,
and an item stays within DynamoDB's 400 KB. Every violation is BAD_USER_INPUT naming the field,
raised before anything is written."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from graph.dynamo.values import Binary
from graph.errors import BadUserInput
from model import Field

__all__ = ["ITEM_LIMIT", "check_size", "check_value", "check_values", "item_size"]

EMAIL_MAX = 254
ITEM_LIMIT = 400 * 1024  # DynamoDB's item size limit, in bytes


def check_values(fields: Mapping[str, Field], values: Mapping[str, Any]) -> None:
    """Check each of ``values`` (GraphQL names) that is a field of ``fields``."""
    for name, value in values.items():
        field = fields.get(name)
        if field is not None:
            check_value(field, value)


def check_value(field: Field, value: Any) -> None:
    if value is None:
        if field.type.non_null:
            raise BadUserInput(f"{field.name} cannot be null")
        return
    if not isinstance(value, str):
        return
    if field.length is not None:
        fewest, most = field.length
        size = len(value) if value.strip() else 0
        if not fewest <= size <= most:
            raise BadUserInput(f"{field.name} must be {fewest} to {most} characters")
    if field.format == "email" and not _is_email(value):
        raise BadUserInput(f"invalid {field.name} {value[:260]!r}: expected name@domain.tld")


def _is_email(text: str) -> bool:
    local, at, domain = text.partition("@")
    return bool(
        at
        and local
        and "." in domain
        and len(text) <= EMAIL_MAX
        and not any(c.isspace() for c in text)
    )


def item_size(item: Mapping[str, Any]) -> int:
    """An item's size as DynamoDB counts it against its 400 KB limit ("DynamoDB item sizes and
    formats"): each attribute's name (UTF-8 bytes) plus its value's size."""
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


def check_size(what: str, item: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    """BAD_USER_INPUT when ``item`` (``what``: its type and key) is over DynamoDB's item limit,
    naming its largest attribute by its field of ``fields`` (or by its attribute)."""
    size = item_size(item)
    if size <= ITEM_LIMIT:
        return
    sizes = {a: len(a.encode()) + value_size(v) for a, v in item.items()}
    largest = max(sizes, key=sizes.__getitem__)
    name = next((n for n, f in fields.items() if f.attribute == largest), largest)
    raise BadUserInput(
        f"{name} is too large: it makes the item of {what} {size:,} bytes, over DynamoDB's "
        f"limit of 400 KB ({ITEM_LIMIT:,} bytes) for an item; it holds {sizes[largest]:,} of "
        "them: store less in it"
    )
