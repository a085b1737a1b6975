"""The demo's model file: a description for a schema coordinate that names nothing, or a hook
mutation's unknown result type, is a model error; its sample data is written as its mutations
write it (tests/engine/test_schema_file.py checks that the
schema built from the file is schema.graphql byte for byte)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.items import Codec
from graph.table import Table
from model import ModelError, parse_model
from server.engine import engine_for
from server.engine.schema import build_schema
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import LEAN

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo" / "model.yaml"
AT = "2026-01-15T09:00:00.000Z"


def test_a_description_for_a_coordinate_that_names_nothing_is_a_model_error() -> None:
    text = DEMO.read_text().replace("  User.createdAt:", "  User.createdAtt:", 1)
    model = parse_model(text, "demo.yaml")
    with pytest.raises(ModelError) as raised:
        build_schema(model, Codec(model))
    assert raised.value.lines == [
        "descriptions.User.createdAtt: names nothing in the schema; write `Type`, "
        "`Type.field`, `Type.field(argument:)` or `Enum.VALUE`"
    ]


def test_a_hook_mutation_returning_an_unknown_type_is_a_model_error() -> None:
    text = DEMO.read_text().replace("type: OfficeEdge!", "type: OficeEdge!", 1)
    model = parse_model(text, "demo.yaml")
    with pytest.raises(ModelError) as raised:
        build_schema(model, Codec(model))
    assert raised.value.lines[0].startswith(
        "mutations.addOffice.type: unknown type 'OficeEdge'; did you mean 'OfficeEdge'?"
    )


async def test_sample_data_takes_the_defaults_and_initial_values_a_mutation_writes(
    dynamodb: EmbeddedDynamoDB,
) -> None:
    """A sample edge left without `role` (`default: MEMBER`) or `since` (`initial: now`) is
    written as addGroupMember writes it, so reading it answers data, not a non-null field's
    INTERNAL_SERVER_ERROR (found by the model fuzz test's review, issue 30 item 6)."""
    dynamodb.reset()
    engine = engine_for("demo")
    sample = {
        "time": AT,
        "nodes": [
            {"type": "User", "id": "ann", "name": "Ann"},
            {"type": "Group", "id": "g1", "name": "G"},
        ],
        "edges": [{"label": "MEMBER_OF", "from": "ann", "to": "g1"}],
    }
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await create_table(client.control, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        await table.batch_write(engine.items(table, sample))
        app = create_app(Settings(model="demo", table=engine.table_name), table=table)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://demo") as http:
            query = '{ user(id: "ann") { groups { edges { role since node { id } } } } }'
            response = await http.post("/graphql", json={"query": query})
    assert response.json() == {
        "data": {
            "user": {
                "groups": {"edges": [{"role": "MEMBER", "since": AT, "node": {"id": "GROUP#g1"}}]}
            }
        }
    }
