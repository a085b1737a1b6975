"""Scalars of model-built schemas, and the conversion of stored values to GraphQL values.

A stored value of the wrong DynamoDB type (a string where the model says Int) raises
:class:`WrongType`: a field error on that field only, logged with the item's key."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLError,
    GraphQLFloat,
    GraphQLID,
    GraphQLInt,
    GraphQLScalarType,
    GraphQLString,
    StringValueNode,
    ValueNode,
)

from graph.dynamo.values import Binary
from graph.errors import BadUserInput
from model import TypeRef
from model.types import ObjectType

__all__ = ["BUILT_IN", "DATE", "DATETIME", "JSON", "WrongType", "from_graphql", "to_graphql"]


EMPTY: Mapping[str, ObjectType] = MappingProxyType({})


class WrongType(Exception):
    """A stored attribute that does not hold the type the model says."""


def _date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            dt.date.fromisoformat(value)
            return value  # as stored
        except ValueError:
            pass
    raise GraphQLError(f"Date cannot represent {value!r}: expected YYYY-MM-DD")


def _date_input(value: Any) -> str:
    """An argument in one form (``YYYY-MM-DD``), so it compares with stored values and keys."""
    return dt.date.fromisoformat(_date(value)).isoformat()


def _datetime(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value)
            return value  # as stored: `2020-08-10T09:30:00.145Z` answers itself
        except ValueError:
            pass
    raise GraphQLError(f"DateTime cannot represent {value!r}: expected an ISO 8601 date-time")


def _datetime_input(value: Any) -> str:
    """An argument as Edgewise stores date-times (UTC, milliseconds, `Z`, as `createdAt` is
    written), so it compares with stored values and the keys made of them."""
    moment = dt.datetime.fromisoformat(_datetime(value))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _literal(parse: Any) -> Any:
    def parse_literal(node: ValueNode, _variables: Any = None) -> Any:
        if not isinstance(node, StringValueNode):
            raise GraphQLError("expected a string")
        return parse(node.value)

    return parse_literal


DATE = GraphQLScalarType(
    "Date",
    serialize=_date,
    parse_value=_date_input,
    parse_literal=_literal(_date_input),
    description="Date (isoformat)",
)
DATETIME = GraphQLScalarType(
    "DateTime",
    serialize=_datetime,
    parse_value=_datetime_input,
    parse_literal=_literal(_datetime_input),
    description="Date with time (isoformat)",
)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | set | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return value


JSON = GraphQLScalarType(
    "JSON",
    serialize=_plain,
    parse_value=lambda v: v,
    description="Any JSON value (a DynamoDB map, list or set).",
)

BUILT_IN = {
    "String": GraphQLString,
    "Int": GraphQLInt,
    "Float": GraphQLFloat,
    "Boolean": GraphQLBoolean,
    "ID": GraphQLID,
    "Date": DATE,
    "DateTime": DATETIME,
    "JSON": JSON,
}


def _scalar(name: str, value: Any, enums: frozenset[str]) -> Any:
    if name in ("Date", "DateTime"):
        try:
            return (_date if name == "Date" else _datetime)(value)
        except GraphQLError as exc:
            raise WrongType(f"holds {str(value)[:40]!r}: {exc.message}") from None
    if name in ("String", "ID") or name in enums:
        if isinstance(value, str):
            return value
        if isinstance(value, Binary | bytes):  # binary (B): base64, as a key's text holds it
            return base64.b64encode(value.value if isinstance(value, Binary) else value).decode()
    elif name == "Int":
        if isinstance(value, Decimal) and value == value.to_integral_value():
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif name == "Float":
        if isinstance(value, Decimal | int | float) and not isinstance(value, bool):
            return float(value)
    elif name == "Boolean":
        if isinstance(value, bool):
            return value
    elif name == "JSON":
        return value
    else:
        return value
    raise WrongType(f"holds {type(value).__name__} {repr(value)[:40]}, not {name}")


def to_graphql(
    ref: TypeRef,
    value: Any,
    enums: frozenset[str],
    objects: Mapping[str, ObjectType] = EMPTY,
    entries: str | None = None,
) -> Any:
    """A stored value as the GraphQL value of ``ref`` (None stays None): a stored object's map
    as a dict of its fields (``entries``: a map of maps as a list, in byte-wise key order), a
    set in order."""
    if value is None:
        return None
    plain = objects.get(ref.name)
    if plain is not None and plain.stored:
        return _objects(plain, ref, value, enums, objects, entries)
    if ref.list:
        if isinstance(value, set | frozenset):  # no order of its own: its elements' order
            value = sorted(value, key=_order)
        if not isinstance(value, list | tuple):
            raise WrongType(f"holds {type(value).__name__}, not a list")
        return [None if v is None else _scalar(ref.name, v, enums) for v in value]
    return _scalar(ref.name, value, enums)


def _order(value: Any) -> Any:
    """A set element's place: strings and binary byte-wise, numbers by value."""
    if isinstance(value, str):
        return value.encode()
    return value.value if isinstance(value, Binary) else value


def _objects(
    plain: ObjectType,
    ref: TypeRef,
    value: Any,
    enums: frozenset[str],
    objects: Mapping[str, ObjectType],
    entries: str | None,
) -> Any:
    if entries is not None:
        if not isinstance(value, dict):
            raise WrongType(f"holds {type(value).__name__}, not a map of {plain.name} maps")
        return [  # UTF-8 orders as code points do: byte-wise
            _object(plain, value[key], enums, objects) | {entries: key} for key in sorted(value)
        ]
    if ref.list:
        if not isinstance(value, list):
            raise WrongType(f"holds {type(value).__name__}, not a list of {plain.name} maps")
        return [None if v is None else _object(plain, v, enums, objects) for v in value]
    return _object(plain, value, enums, objects)


def _object(
    plain: ObjectType, value: Any, enums: frozenset[str], objects: Mapping[str, ObjectType]
) -> dict[str, Any]:
    """A map as its object: each field from its attribute, null where the map has none."""
    if not isinstance(value, dict):
        raise WrongType(f"holds {type(value).__name__}, not a {plain.name} map")
    return {
        name: to_graphql(f.type, value.get(f.attribute), enums, objects, f.entries)
        for name, f in plain.fields.items()
    }


def from_graphql(
    ref: TypeRef,
    value: Any,
    objects: Mapping[str, ObjectType] = EMPTY,
    entries: str | None = None,
    name: str = "",
) -> Any:
    """An input value as stored: floats as Decimal (DynamoDB numbers), a stored object as its
    map (its fields under their attributes, null ones left out; ``entries``: a list as a map of
    maps keyed by that field, BAD_USER_INPUT naming the field ``name`` for a key given twice or
    empty), the rest as given."""
    if value is None:
        return None
    plain = objects.get(ref.name)
    if plain is not None and plain.stored:
        single = TypeRef(ref.name)
        if entries is not None:
            out: dict[str, Any] = {}
            for v in value:
                key = v[entries]
                if not key or key in out:
                    given = f"two entries with the {entries} {key!r}" if key else "an empty one"
                    raise BadUserInput(
                        f"{name} holds {given}; each {entries} is a key of the map: give "
                        "each once, and not empty"
                    )
                inner = {k: x for k, x in v.items() if k != entries}
                out[key] = from_graphql(single, inner, objects, name=f"{name}.{key}")
            return out
        if ref.list:
            return [from_graphql(single, v, objects, name=name) for v in value]
        return {
            f.attribute: from_graphql(f.type, value[n], objects, f.entries, f"{name}.{n}")
            for n, f in plain.fields.items()
            if value.get(n) is not None
        }
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, list):
        return [from_graphql(ref, v) for v in value]
    if isinstance(value, dict):
        return {k: from_graphql(ref, v) for k, v in value.items()}
    return value
