"""Tables as teams have them, written straight into moto with boto3 (nothing of Edgewise writes
them), and the round trip of a draft: infer, check-model, serve, ``node(id:)`` per type."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import httpx

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from model import Model, load_model
from model.types import Field
from server.cli.main import main
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import gql

__all__ = [
    "Index",
    "draft",
    "expected",
    "global_id",
    "key_text",
    "lookups",
    "served",
    "served_nodes",
    "write_table",
]

Item = dict[str, Any]

Index = tuple[str, str, str | None]  # name, partition key, sort key


def _client(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def write_table(
    url: str,
    name: str,
    items: Iterable[Mapping[str, Any]],
    keys: tuple[str, str] = ("PK", "SK"),
    indexes: Sequence[Index] = (),
    types: Mapping[str, str] | None = None,
    local: Sequence[tuple[str, str, Sequence[str]]] = (),
) -> None:
    """CreateTable (on demand; ``types``: attribute types other than S; ``local``: local
    indexes as (name, sort key, attributes projected besides the keys)) and the items, as a
    team's own code would write them."""
    types = types or {}
    attributes = {
        *keys,
        *(a for _, h, r in indexes for a in (h, r) if a),
        *(r for _, r, _ in local),
    }

    def schema(hash_key: str, range_key: str | None) -> list[dict[str, str]]:
        out = [{"AttributeName": hash_key, "KeyType": "HASH"}]
        return out + ([{"AttributeName": range_key, "KeyType": "RANGE"}] if range_key else [])

    params: dict[str, Any] = {
        "TableName": name,
        "KeySchema": schema(*keys),
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": types.get(a, "S")} for a in sorted(attributes)
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if indexes:
        params["GlobalSecondaryIndexes"] = [
            {"IndexName": n, "KeySchema": schema(h, r), "Projection": {"ProjectionType": "ALL"}}
            for n, h, r in indexes
        ]
    if local:
        params["LocalSecondaryIndexes"] = [
            {
                "IndexName": n,
                "KeySchema": schema(keys[0], r),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projected)}
                if projected
                else {"ProjectionType": "ALL"},
            }
            for n, r, projected in local
        ]
    client = _client(url)
    try:
        client.create_table(**params)
    finally:
        client.close()  # its pooled sockets, else a ResourceWarning in a later test
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    try:
        with resource.Table(name).batch_writer() as batch:
            for item in items:
                batch.put_item(Item=dict(item))
    finally:
        resource.meta.client.close()


def draft(dynamodb: EmbeddedDynamoDB, table: str, tmp_path: Path, *extra: str) -> tuple[Path, str]:
    """``edgewise infer`` into a file, then ``edgewise check-model`` on it (raises if refused)."""
    output = tmp_path / f"{table}.yaml"
    main(["infer", "--dynamodb", dynamodb.url, "--table", table, "--output", str(output), *extra])
    main(["check-model", str(output)])
    return output, output.read_text()


def global_id(model: Model, name: str, pk: str, sk: str) -> str:
    if model.types[name].single:
        return pk
    raw = json.dumps([name, pk, sk], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def lookups(model: Model, items: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, Item]]:
    """A brute force over the items: per declared type, the global id of the first item its
    key templates (and type value) fit, and that item."""
    out: dict[str, tuple[str, Item]] = {}
    for item in items:
        pk, sk = key_text(item[model.partition_key]), key_text(item[model.sort_key])
        for name, node in model.types.items():
            if name in out or not node.node:
                continue
            if node.implicit:  # no item of its own: a key of another item is its key
                key = next((k for k in (pk, sk) if node.pk.parse(k) is not None), None)
                if key is not None:
                    out[name] = (global_id(model, name, key, key), dict(item))
                continue
            if node.pk.parse(pk) is None or node.sk.parse(sk) is None:
                continue
            tag = model.type_attribute and item.get(model.type_attribute)
            if tag and node.type_value and tag != node.type_value:
                continue
            out[name] = (global_id(model, name, pk, sk), dict(item))
    return out


def key_text(value: Any) -> str:
    """A key attribute's value as Edgewise's templates hold it: binary as base64."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)


def _stored(value: Any) -> Any:
    """An attribute as GraphQL answers it (numbers as numbers, sets as lists, bytes as
    base64)."""
    if isinstance(value, bytes):
        return key_text(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, set):
        return sorted(_stored(v) for v in value)
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value


def _instant(value: Any) -> Any:
    """A date-time as an instant: today's DateTime scalar answers ``…T00:00:00+00:00`` for a
    stored ``….000Z`` (issue 21 returns values as stored)."""
    if not isinstance(value, str):
        return value
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.replace(tzinfo=parsed.tzinfo or UTC).isoformat()


def _times(model: Model, name: str, answer: dict[str, Any]) -> dict[str, Any]:
    fields = model.types[name].fields
    return {
        k: _instant(v) if k in fields and str(fields[k].type).startswith("DateTime") else v
        for k, v in answer.items()
    }


def _cased(model: Model, name: str, answer: dict[str, Any], item: Item) -> dict[str, Any]:
    """A key field answered as the key's lower-cased copy of its attribute (this branch's
    engine reads key fields from the key) taken for the attribute itself, as issue 21's engine
    answers it; a set's elements in order (sets have none)."""
    out = dict(answer)
    for field, attribute in _scalars(model, name).items():
        stored = item.get(attribute)
        if isinstance(stored, str) and out.get(field) == stored.lower() != stored:
            out[field] = stored
        if isinstance(stored, set) and isinstance(out.get(field), list):
            out[field] = sorted(out[field])  # a set (SS, NS) has no order of its own
    return out


def _scalars(model: Model, name: str) -> dict[str, str]:
    """The type's fields read from one attribute each, to the attribute (JSON and stored
    objects left out)."""
    return {
        f.name: f.attribute
        for f in _stored_fields(model, name)
        if "JSON" not in str(f.type) and f.type.name not in model.objects
    }


def _stored_fields(model: Model, name: str) -> list[Field]:
    """The type's fields read from one attribute each, stored objects included."""
    return [f for f in model.types[name].fields.values() if f.kind in ("value", "key")]


def _selection(model: Model, fields: Iterable[Field]) -> str:
    """A selection of these fields, each stored object's fields selected in turn."""
    out = []
    for f in fields:
        plain = model.objects.get(f.type.name)
        if plain is not None:
            out.append(f"{f.name} {{ {_selection(model, plain.fields.values())} }}")
        elif "JSON" not in str(f.type):
            out.append(f.name)
    return " ".join(out)


def _object(model: Model, f: Field, value: Any) -> Any:
    """A stored object's answer, by brute force over the attribute: a map, a list of maps or,
    with ``entries``, a map of maps as a list in byte-wise order of its keys."""
    plain = model.objects[f.type.name]
    if value is None:
        return None
    if f.entries is not None:
        maps = [
            {**m, f.entries: k} for k, m in sorted(value.items(), key=lambda kv: kv[0].encode())
        ]
        return [_map(model, plain.fields.values(), m, f.entries) for m in maps]
    if isinstance(value, list):
        return [_map(model, plain.fields.values(), m) for m in value]
    return _map(model, plain.fields.values(), value)


def _map(model: Model, fields: Iterable[Field], value: Mapping[str, Any], key: str = "") -> Any:
    out = {}
    for f in fields:
        stored = value.get(key if f.name == key else f.attribute)
        if f.type.name in model.objects:
            out[f.name] = _object(model, f, stored)
        elif "JSON" not in str(f.type):
            out[f.name] = _stored(stored)
    return out


@asynccontextmanager
async def served(dynamodb: EmbeddedDynamoDB, path: Path, table: str) -> AsyncIterator[Any]:
    """The draft served in-process: an HTTP client of its app."""
    engine = engine_for(str(path))
    async with open_client(Endpoint(dynamodb.url)) as client:
        opened = Table(client, table, layout=engine.layout)
        app = create_app(Settings(model=str(path)), table=opened)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
        ) as http:
            yield http


async def served_nodes(
    dynamodb: EmbeddedDynamoDB, path: Path, table: str, ids: Mapping[str, tuple[str, Item]]
) -> dict[str, Any]:
    """Serves the draft in-process and asks ``node(id:)`` for each id with the type's stored
    fields: type name → the answer, or the response when it has errors."""
    model = engine_for(str(path)).model
    answers: dict[str, Any] = {}
    async with served(dynamodb, path, table) as http:
        for name, (gid, _) in ids.items():
            selection = _selection(model, _stored_fields(model, name))
            query = (
                f"query($id: ID!) {{ node(id: $id) {{ __typename id ... on {name} "
                f"{{ {selection or '__typename'} }} }} }}"
            )
            body = await gql(http, query, {"id": gid})
            node = body.get("data", {}).get("node")
            if node and "errors" not in body:
                node = _cased(model, name, node, ids[name][1])
            answers[name] = _times(model, name, node) if node and "errors" not in body else body
    return answers


def expected(model: Model, ids: Mapping[str, tuple[str, Item]]) -> dict[str, Any]:
    """What ``served_nodes`` must answer, by brute force over the items: each stored field's
    attribute as stored, a key field's own attribute when the item has one, else its part of
    the key. Before issue 21's engine, a key field is answered from the key: a lower-cased copy
    (ElectroDB's `jlowe` for `JLowe`) is taken for its attribute (see ``served_nodes``)."""
    out: dict[str, Any] = {}
    for name, (gid, item) in ids.items():
        node = model.types[name]
        keyed = {
            **(node.pk.parse(key_text(item[model.partition_key])) or {}),
            **(node.sk.parse(key_text(item[model.sort_key])) or {}),
        }
        answer: dict[str, Any] = {"__typename": name, "id": gid}
        for field, attribute in _scalars(model, name).items():
            value = item[attribute] if attribute in item else keyed.get(field)
            enum = model.enums.get(node.fields[field].type.name, {})
            value = next((g for g, s in enum.items() if s == value), value)  # its GraphQL value
            answer[field] = _stored(value)
        for f in _stored_fields(model, name):
            if f.type.name in model.objects:
                answer[f.name] = _object(model, f, item.get(f.attribute))
        out[name] = _times(model, name, answer)
    return out


def load(path: Path) -> Model:
    return load_model(str(path))
