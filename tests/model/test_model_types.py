"""Model files whose items decide their type (MODELS.md, "Items decide their type; stored
objects"): overlapping keys a type attribute separates, `from: key`, and the key condition
`check-model` prints for every access pattern and collection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from model import ModelError, parse_model
from server.cli.summary import access_patterns

ACCOUNTS = """\
table:
  name: accounts
  partitionKey: PK
  sortKey: SK
  typeAttribute: entity_type
  indexes:
    GSI1: {partitionKey: GSI1PK, sortKey: GSI1SK}
types:
  User:
    key: "ACCOUNT#{id}"
    typeValue: user
    fields: {name: String!}
  Organization:
    key: "ACCOUNT#{id}"
    typeValue: organization
    fields: {name: String!, status: Status!, since: Date!}
    indexes: {GSI1: {pk: "ORGS#{status}", sk: "{since}#{id}"}}
  Order:
    key: {pk: "{customerId}", sk: "{orderId}"}
    typeValue: order
  Address:
    key: {pk: "{customerId}", sk: "{label}"}
    typeValue: address
    fields:
      label: {type: String!, from: key}
      street: String!
      note: {type: String, attribute: street}
  Shipment:
    key: {pk: "o#{orderId}", sk: "sh#{id}"}
    parent: {type: Parcel, field: parcel, collection: shipments}
  Parcel:
    key: "o#{id}"
enums:
  Status: [ACTIVE, CLOSED]
edges:
  STARS: {from: User, to: Organization, forward: starred}
queries:
  shipmentsOfParcel: {type: Shipment, partition: "o#{orderId}", sort: {template: "sh#"}}
  orgsSince:
    type: Organization
    index: GSI1
    partition: "ORGS#{status}"
    sort: {template: "{since}#{id}", between: [from, to]}
  ordersOf: {type: Order, partition: "{customerId}"}
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(ModelError) as raised:
        parse_model(text, "accounts.yaml")
    return raised.value.lines


def test_keys_a_type_attribute_separates_may_overlap() -> None:
    model = parse_model(ACCOUNTS)
    assert model.types["User"].pk == model.types["Organization"].pk
    assert model.types["Address"].fields["label"].from_key
    # the same file without the type attribute: the keys alone cannot tell the items apart
    untyped = _problems(ACCOUNTS.replace("  typeAttribute: entity_type\n", ""))
    assert any(
        line.startswith("types.Organization.key (line 13): items of Organization and User can")
        for line in untyped
    ), untyped
    assert any(
        line.startswith("types.Address.key (line 21): items of Address and Order")
        for line in untyped
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "    typeValue: organization\n",
            "    typeValue: user\n",
            "types.Organization.key (line 14): items of Organization and User can have the same "
            "keys and the same entity_type value 'user', so nothing tells them apart; give one "
            "of them another typeValue or a distinct literal prefix",
        ),
        (
            "    typeValue: address\n",
            "    typeValue: order\n",
            "types.Address.key (line 22): items of Address and Order can have the same keys and "
            "the same entity_type value 'order'",
        ),
        (
            "    typeValue: user\n",
            "    typeValue: STARS\n",
            "edges.STARS (line 36): items of STARS and User can have the same keys and the same "
            "entity_type value 'STARS', so nothing tells them apart; give the type another "
            "typeValue or a distinct literal prefix",
        ),
        (
            "      street: String!\n",
            "      street: {type: String!, from: key}\n",
            "types.Address.fields.street.from (line 26): `from: key` reads a key placeholder, and "
            "street is none of {customerId, label}; remove `from`",
        ),
        (
            "  STARS: {from: User, to: Organization, forward: starred}\n",
            "  STARS: {from: User, to: Organization, forward: starred, fields: "
            "{at: {type: Date, from: key}}}\n",
            "edges.STARS.fields.at.from (line 36): `from: key` belongs to a field of a type",
        ),
        (
            '  ordersOf: {type: Order, partition: "{customerId}"}\n',
            '  ordersOf: {type: Address, partition: "{customerId}", where: {label: home}}\n',
            "queries.ordersOf.where.label (line 44): label is read from the key (`from: key`)",
        ),
    ],
)
def test_what_nothing_separates_is_refused_with_its_line(old: str, new: str, expected: str) -> None:
    assert old in ACCOUNTS
    problems = _problems(ACCOUNTS.replace(old, new, 1))
    assert any(line.startswith(expected) for line in problems), problems


def test_the_key_condition_of_every_pattern_and_collection_is_summarised() -> None:
    rows = dict(access_patterns(parse_model(ACCOUNTS)))
    # a sort template without a placeholder is a prefix
    assert rows["shipmentsOfParcel(orderId:)"] == (
        'Query the table: PK = "o#{orderId}" AND begins_with(SK, "sh#"), in key order'
    )
    assert rows["Parcel.shipments"].startswith(
        'Query the table: PK = "o#{orderId}" AND begins_with(SK, "sh#")'
    )
    assert rows["User.starred"] == (
        'Query the table: PK = "ACCOUNT#{id}" AND begins_with(SK, "ACCOUNT#")'
    )
    assert rows["orgsSince(status:, from:, to:)"] == (
        'Query GSI1: GSI1PK = "ORGS#{status}" AND GSI1SK BETWEEN "{from}" AND "{to}", in key order'
    )
    assert rows["ordersOf(customerId:)"] == 'Query the table: PK = "{customerId}", in key order'


REFS = """\
table: {name: refs, partitionKey: PK, sortKey: SK}
types:
  User:
    key: "USER#{id}"
    fields:
      products: {type: "[Product!]!", path: [groups, products]}
  Group:
    key: "GROUP#{id}"
    fields:
      productIds: {type: "[String!]!"}
      products: {type: "[Product!]!", ref: productIds}
  Product:
    key: "PRODUCT#{id}"
edges:
  MEMBER_OF: {from: User, to: Group, forward: groups}
"""


def test_check_model_summarises_a_path_over_a_reference(tmp_path: Path) -> None:
    """Ended in a traceback before (`KeyError: ''` in the summary)."""
    path = tmp_path / "refs.yaml"
    path.write_text(REFS)
    result = subprocess.run(
        [sys.executable, "-m", "server", "check-model", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    line = next(line for line in result.stdout.splitlines() if "User.products" in line)
    assert "then a BatchGetItem of the Group items (the products they name)" in line
