"""The demo's model file: a description for a schema coordinate that names nothing, or a hook
mutation's unknown result type, is a model error (tests/engine/test_schema_file.py checks that the
schema built from the file is schema.graphql byte for byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.items import Codec
from model import ModelError, parse_model
from server.engine.schema import build_schema

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo" / "model.yaml"


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
