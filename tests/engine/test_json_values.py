"""A JSON field's numbers are DynamoDB's: up to 38 digits, past what orjson encodes (64 bits).
The answer falls back to ``json`` for them, and every digit arrives."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from tests.helpers import gql

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

METERS = """
table: {name: meters, partitionKey: pk, sortKey: sk}
types:
  Meter:
    key: "M#{id}"
    fields: {name: String!, reading: JSON!}
"""

SAMPLE = """
nodes:
  - {type: Meter, id: small, name: Small, reading: {total: 12, unit: kWh}}
  - {type: Meter, id: big, name: Big, reading: {total: 12345678901234567890123456789012345678}}
"""


async def test_a_number_past_64_bits_arrives_whole(model_http: Serve, tmp_path: Path) -> None:
    (tmp_path / "meters.yaml").write_text(METERS)
    (tmp_path / "sample.yaml").write_text(SAMPLE)
    http = await model_http(str(tmp_path / "meters.yaml"))
    body = await gql(http, '{ a: meter(id: "small") { reading } b: meter(id: "big") { reading } }')
    assert body["data"] == {
        "a": {"reading": {"total": 12, "unit": "kWh"}},
        "b": {"reading": {"total": 12345678901234567890123456789012345678}},
    }
