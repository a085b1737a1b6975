"""Stored objects in the model file: what `check-model` refuses, each mistake one line naming
its place and the fix; an object accepted is one the server builds a schema for."""

from __future__ import annotations

import pytest
from graphql import GraphQLSchema, validate_schema

from graph.items import Codec
from model import ModelError, parse_model
from server.engine.schema import build_schema

GOOD = """\
table: {name: customers, partitionKey: PK, sortKey: SK, indexes: {GSI1: {partitionKey: GPK}}}
types:
  Customer:
    key: "CUSTOMER#{id}"
    fields:
      firstName: {type: String!, attribute: FirstName}
      mailingAddresses: {type: "[MailingAddress!]!", attribute: MailingAddresses, entries: label}
      billing: {type: Address, attribute: Billing}
      history: {type: "[Address!]!", attribute: History}
  Store:
    key: "STORE#{id}"
    fields: {name: String!}
edges:
  SHIPS_FROM:
    from: Customer
    to: Store
    fields: {returnTo: Address}
    forward: stores
objects:
  Address:
    stored: true
    fields:
      street: {type: String!, attribute: StreetAddress}
      geo: {type: Geo, attribute: Geo}
  Geo:
    stored: true
    fields: {lat: Float!, lng: Float!}
  MailingAddress:
    stored: true
    fields:
      label: String!
      street: {type: String!, attribute: StreetAddress}
  Summary:
    fields: {count: Int!}
"""

BROKEN = [
    (  # the failure this refusal replaces: accepted, then HTTP 500 on every request
        "  Address:\n    stored: true\n",
        "  Address:\n",
        "types.Customer.fields.billing.type (line 8): Address is not stored, so it cannot hold "
        "the attribute 'Billing'; add `stored: true` to objects.Address",
    ),
    (
        "fields: {returnTo: Address}",
        "fields: {returnTo: Summary}",
        "edges.SHIPS_FROM.fields.returnTo (line 17): Summary is not stored, so it cannot hold "
        "the attribute 'returnTo'; add `stored: true` to objects.Summary",
    ),
    (
        "      geo: {type: Geo, attribute: Geo}",
        "      geo: {type: Summary, attribute: Geo}",
        "objects.Address.fields.geo.type (line 24): Summary is not stored",
    ),
    (
        "    fields: {count: Int!}",
        "    fields: {count: {type: Int!, attribute: Count}}",
        "objects.Summary.fields.count (line 34): an object's field has a type only; add "
        "`stored: true` to objects.Summary to read it from a map attribute",
    ),
    (
        "      geo: {type: Geo, attribute: Geo}",
        "      geo: {type: Geo, attribute: Geo, unique: {key: 'G#{geo}'}}",
        "objects.Address.fields.geo.unique (line 24): a stored object's field has a type, an "
        "attribute and entries only; remove unique",
    ),
    (
        "      geo: {type: Geo, attribute: Geo}",
        "      geo: {type: Store, attribute: Geo}",
        "objects.Address.fields.geo.type (line 24): Store is a node type; a stored object's "
        "field holds a scalar, an enum, JSON or a stored object",
    ),
    (
        "attribute: MailingAddresses, entries: label}",
        "attribute: MailingAddresses, entries: name}",
        "types.Customer.fields.mailingAddresses.entries (line 7): MailingAddress has no field "
        "'name'; use one of: label, street",
    ),
    (
        "      label: String!",
        "      label: Int!",
        "types.Customer.fields.mailingAddresses.entries (line 7): MailingAddress.label holds "
        "each entry's key (a map's keys are strings); declare `label: String!`",
    ),
    (
        '{type: "[MailingAddress!]!", attribute: MailingAddresses, entries: label}',
        "{type: MailingAddress, attribute: MailingAddresses, entries: label}",
        "types.Customer.fields.mailingAddresses.entries (line 7): entries reads a map of maps "
        "into a list of a stored object; type the field as one, e.g. `[MailingAddress!]!`",
    ),
    (
        "      firstName: {type: String!, attribute: FirstName}",
        "      firstName: {type: String!, attribute: FirstName, entries: label}",
        "types.Customer.fields.firstName.entries (line 6): entries reads a map of maps into a "
        "list of a stored object; type the field as one, e.g. `[Address!]!`",
    ),
    (
        "      billing: {type: Address, attribute: Billing}",
        "      billing: {type: Address, attribute: Billing, default: home}",
        "types.Customer.fields.billing.default (line 8): default is for a scalar; remove it from "
        "this Address field",
    ),
    (
        '    key: "CUSTOMER#{id}"\n',
        '    key: {pk: "CUSTOMER#{id}", sk: "AT#{billing}"}\n',
        "types.Customer.fields.billing.type (line 8): billing is a key placeholder, which holds "
        "text; give it a scalar",
    ),
    (
        "      geo: {type: Geo, attribute: Geo}",
        "      geo: {type: Address!, attribute: Geo}",
        "objects.Address.fields.geo (line 24): Address holds itself through non-null fields "
        "(Address.geo → Address), so no input can be written; make one of them nullable",
    ),
    (
        "  Summary:\n    fields: {count: Int!}\n",
        "  Summary:\n    fields: {count: Int!}\n  Customer:\n    fields: {x: Int}\n",
        "objects.Customer (line 35): Customer is already a type; rename the object",
    ),
    (
        "  Summary:\n    fields: {count: Int!}\n",
        "  Summary:\n    fields: {count: Int!}\n  CreateStore:\n    stored: true\n"
        "    fields: {x: Int}\n",
        "objects.CreateStore (line 35): CreateStoreInput, the input generated to write it, is "
        "already a type; rename the object",
    ),
    (
        "  Summary:\n    fields: {count: Int!}\n",
        "  Summary:\n    fields: {count: Int!}\n"
        'queries:\n  at: {type: Customer, partition: "AT#{billing}"}\n',
        "queries.at (line 36): {billing} is an object (Address), which a key cannot hold; use a "
        "scalar field",
    ),
    (
        '      history: {type: "[Address!]!", attribute: History}\n',
        '      history: {type: "[Address!]!", attribute: History}\n'
        '    indexes: {GSI1: {pk: "AT#{billing}"}}\n',
        "types.Customer.indexes.GSI1 (line 10): {billing} is an object (Address), which a key "
        "cannot hold",
    ),
    (
        "  Summary:\n    fields: {count: Int!}\n",
        "  Summary:\n    fields: {}\n",
        "objects.Summary.fields (line 34): an object needs a field; write e.g. `{name: String!}`",
    ),
]


def test_the_good_objects_compile_and_build_a_schema() -> None:
    model = parse_model(GOOD)
    assert model.objects["Address"].stored and not model.objects["Summary"].stored
    assert model.types["Customer"].fields["mailingAddresses"].entries == "label"
    assert model.objects["Address"].fields["street"].attribute == "StreetAddress"
    schema = build_schema(model, Codec(model))
    assert isinstance(schema, GraphQLSchema)
    assert validate_schema(schema) == []
    inputs = schema.type_map["CreateCustomerInput"].fields  # type: ignore[union-attr]
    assert str(inputs["mailingAddresses"].type) == "[MailingAddressInput!]!"
    assert str(inputs["billing"].type) == "AddressInput"
    assert "SummaryInput" not in schema.type_map  # output only


@pytest.mark.parametrize(("old", "new", "expected"), BROKEN, ids=[b[2][:50] for b in BROKEN])
def test_each_stored_object_mistake_names_its_place_and_the_fix(
    old: str, new: str, expected: str
) -> None:
    assert old in GOOD
    with pytest.raises(ModelError) as raised:
        parse_model(GOOD.replace(old, new, 1), "customers.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


def test_an_output_object_over_a_map_attribute_is_refused_not_served_as_http_500() -> None:
    """Before: accepted by check-model, then every request answered HTTP 500 (`must be Input
    Type but got: Address`), the create input naming an output type."""
    text = """\
table: {name: customers, partitionKey: PK, sortKey: SK}
types:
  Customer:
    key: "CUSTOMER#{id}"
    fields:
      billing: {type: Address, attribute: Billing}
objects:
  Address:
    fields: {street: String!}
"""
    with pytest.raises(ModelError) as raised:
        parse_model(text, "customers.yaml")
    assert raised.value.lines == [
        "types.Customer.fields.billing.type (line 6): Address is not stored, so it cannot hold "
        "the attribute 'Billing'; add `stored: true` to objects.Address"
    ]
    stored = parse_model(text.replace("  Address:\n", "  Address:\n    stored: true\n"))
    assert validate_schema(build_schema(stored, Codec(stored))) == []
