"""Tables as teams have them, written straight into moto with boto3 (nothing of Edgewise writes
them), and the round trip of a draft: infer, check-model, serve, ``node(id:)`` per type."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import boto3
import httpx

from graph.client import Endpoint, open_client
from graph.embedded import EmbeddedDynamoDB
from graph.table import Table
from model import Model, load_model
from server.app import create_app
from server.cli import main
from server.engine import engine_for
from server.settings import Settings
from tests.helpers import gql

__all__ = ["Index", "draft", "lookups", "served_nodes", "write_table"]

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
) -> None:
    """CreateTable (on demand; ``types``: attribute types other than S) and the items, as a
    team's own code would write them."""
    types = types or {}
    attributes = {*keys, *(a for _, h, r in indexes for a in (h, r) if a)}

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
    _client(url).create_table(**params)
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    with resource.Table(name).batch_writer() as batch:
        for item in items:
            batch.put_item(Item=dict(item))


def draft(dynamodb: EmbeddedDynamoDB, table: str, tmp_path: Path, *extra: str) -> tuple[Path, str]:
    """``edgewise infer`` into a file, then ``edgewise check-model`` on it (raises if refused)."""
    output = tmp_path / f"{table}.yaml"
    main(["infer", "--dynamodb", dynamodb.url, "--table", table, "--output", str(output), *extra])
    main(["check-model", str(output)])
    return output, output.read_text()


def _global_id(model: Model, name: str, pk: str, sk: str) -> str:
    if model.types[name].single:
        return pk
    raw = json.dumps([name, pk, sk], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def lookups(model: Model, items: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """A brute force over the items: per declared type, the global id of the first item its
    key templates (and type value) fit, and the stored attribute values its fields read."""
    out: dict[str, tuple[str, str]] = {}
    for item in items:
        pk, sk = str(item[model.partition_key]), str(item[model.sort_key])
        for name, node in model.types.items():
            if name in out or not node.node:
                continue
            if node.pk.parse(pk) is None or node.sk.parse(sk) is None:
                continue
            tag = model.type_attribute and item.get(model.type_attribute)
            if tag and node.type_value and tag != node.type_value:
                continue
            out[name] = (_global_id(model, name, pk, sk), pk)
    return out


async def served_nodes(
    dynamodb: EmbeddedDynamoDB, path: Path, table: str, ids: Mapping[str, tuple[str, str]]
) -> dict[str, Any]:
    """Serves the draft in-process and asks ``node(id:)`` for each id: type name → answer."""
    engine = engine_for(str(path))
    answers: dict[str, Any] = {}
    async with open_client(Endpoint(dynamodb.url)) as client:
        opened = Table(client, table, layout=engine.layout)
        app = create_app(Settings(model=str(path)), table=opened)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
        ) as http:
            for name, (global_id, _) in ids.items():
                body = await gql(
                    http, "query($id: ID!) { node(id: $id) { __typename id } }", {"id": global_id}
                )
                answers[name] = body.get("data", {}).get("node") if "errors" not in body else body
    return answers


def load(path: Path) -> Model:
    return load_model(str(path))
