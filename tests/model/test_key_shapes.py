"""Key shapes of MODELS.md's "Items decide their type; stored objects" as check-model sees them:
what it accepts (an implicit parent, a parent keyed by more than its id, runs of placeholders
stored in their own attributes, a reference over a map's keys, a replica over implicit nodes),
each mistake it still refuses as one line, and the cost its summary prints."""

from __future__ import annotations

import pytest

from model import ModelError, parse_model
from model.templates import Template
from server.cli.summary import summary

SHAPES = """\
table:
  name: shapes
  partitionKey: PK
  sortKey: SK
  storeKeyFields: true
  indexes:
    gs1: {partitionKey: gs1pk, sortKey: gs1sk}
types:
  Device: {key: "DEVICE#{id}", implicit: true}
  Log:
    key: {pk: "DEVICE#{deviceId}", sk: "{date}#{state}"}
    parent: {type: Device, field: device, collection: logs}
    fields: {date: String!, state: String!}
  Order:
    key: {pk: "o#{id}", sk: "c#{customerId}"}
    fields: {total: Float}
  Shipment:
    key: {pk: "o#{orderId}", sk: "sh#{id}"}
    parent: {type: Order, field: order, collection: shipments}
  Org:
    key: "ORG#{id}"
  User:
    key: "USER#{id}"
    fields:
      name: String!
      roles: {type: JSON, attribute: OrganizationRoles}
      orgs: {type: "[Org!]!", ref: {keysOf: roles}}
    indexes:
      gs1: {pk: "users", sk: "user#{name}{id}"}
queries:
  usersByName:
    type: User
    index: gs1
    partition: "users"
    sort: {template: "user#{name}{id}", arguments: [name, id]}
"""


def test_the_key_shapes_compile() -> None:
    model = parse_model(SHAPES, "shapes.yaml")
    types = model.types
    assert types["Log"].parent is not None and types["Device"].implicit
    assert types["Order"].located and not types["Shipment"].located
    assert types["Order"].unparsed == {"customerId"}
    assert types["User"].fields["orgs"].keys_of
    assert model.queries["usersByName"].sort is not None
    assert model.queries["usersByName"].sort.runs == {"name", "id"}


def test_the_summary_prints_what_each_shape_reads() -> None:
    rows = summary(parse_model(SHAPES, "shapes.yaml")).splitlines()
    line = {row.split()[0]: row for row in rows if row.startswith("  ")}
    assert "no read" in line["device(id:)"]
    assert "Query the table, begins_with(SK, 'c#'), Limit 2" in line["order(id:)"]
    assert line["Device.logs"].split(None, 1)[1] == 'Query the table: PK = "DEVICE#{deviceId}"'
    assert "the keys of roles" in line["User.orgs"] and "key order" in line["User.orgs"]


# (what changes in SHAPES, the line check-model prints)
MISTAKES = [
    (
        "  storeKeyFields: true\n",
        "",
        "types.User.indexes.gs1.sk (line 28): 'user#{name}{id}': {name}{id} has no text "
        "between them, so the key cannot be split and each value is read from its own "
        "attribute, which {id} has not; put a separator such as # between them, or store it",
    ),
    (
        'key: {pk: "o#{id}", sk: "c#{customerId}"}',
        'key: {pk: "o#{id}{customerId}", sk: "c"}',
        "types.Order.key.pk (line 15): 'o#{id}{customerId}': {id}{customerId} has no text "
        "between them, so the key could not be split",
    ),
    (
        '    sort: {template: "user#{name}{id}", arguments: [name, id]}',
        '    sort: {template: "user#{name}{id}", between: [from, to]}',
        "queries.usersByName.sort.between (line 35): {name} has no text between it and a "
        "neighbour, so the key does not order by its value",
    ),
    (
        'key: {pk: "o#{id}", sk: "c#{customerId}"}',
        'key: {pk: "o#{orderNo}", sk: "c#{customerId}"}',
        "types.Shipment.parent.type (line 19): a parent is one node per partition: a "
        "one-template key such as 'ORDER#{id}', a constant sort key such as {pk: "
        "'ORDER#{id}', sk: ORDER}, or {id} in its pk and other fields in its sk",
    ),
    (
        "collection: logs}",
        "collection: logs, count: counter}",
        "types.Log.parent.count (line 12): Device is implicit (no item to hold a counter); "
        "write `count: query`",
    ),
    (
        "collection: shipments}",
        "collection: shipments, count: counter}",
        "types.Shipment.parent.count (line 19): Order is found by a Query of its partition (its "
        "key is not known to count on); write `count: query`",
    ),
    (
        'orgs: {type: "[Org!]!", ref: {keysOf: roles}}',
        "orgs: {type: Org, ref: {keysOf: roles}}",
        "types.User.fields.orgs.type (line 27): a ref over a map's keys names several nodes; "
        'write `type: "[Org!]!"`',
    ),
    (
        "roles: {type: JSON, attribute: OrganizationRoles}",
        "roles: {type: String, attribute: OrganizationRoles}",
        "types.User.fields.orgs.ref.keysOf (line 27): keysOf names a field over a map "
        "attribute, and roles is a String value field; declare it `roles: {type: JSON, "
        "attribute: OrganizationRoles}` (or a stored object's map with `entries:`)",
    ),
    (
        'orgs: {type: "[Org!]!", ref: {keysOf: roles}}',
        'orgs: {type: "[Order!]!", ref: {keysOf: roles}}',
        "types.User.fields.orgs.ref (line 27): Order's key has {id}, {customerId}: a map's keys "
        "name nodes whose key has one placeholder",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), MISTAKES, ids=[m[2][:40] for m in MISTAKES])
def test_each_key_shape_mistake_is_one_line(old: str, new: str, expected: str) -> None:
    assert old in SHAPES
    with pytest.raises(ModelError) as raised:
        parse_model(SHAPES.replace(old, new, 1), "shapes.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


def test_implicit_types_overlap_nothing_with_or_without_a_type_attribute() -> None:
    overlapping = """
table: {name: t, partitionKey: PK, sortKey: SK}
types:
  Device: {key: "DEVICE#{id}", implicit: true}
  Sensor: {key: "DEVICE#{id}", implicit: true}
  Log:
    key: {pk: "DEVICE#{deviceId}", sk: "{date}"}
    parent: {type: Device, field: device, collection: logs}
"""
    assert list(parse_model(overlapping).types) == ["Device", "Sensor", "Log"]
    explicit = overlapping.replace(
        'Sensor: {key: "DEVICE#{id}", implicit: true}', 'Sensor: {key: "DEVICE#{id}"}'
    )
    with pytest.raises(ModelError) as raised:
        parse_model(explicit)
    assert any(
        "items of Log and Sensor can have the same keys" in line for line in raised.value.lines
    )


REPLICATED = """
table:
  name: t
  partitionKey: PK
  sortKey: SK
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
types:
  User:
    key: "USER#{id}"
    implicit: true
    fields:
      groupIds:
        type: "[Group!]!"
        path: [groups]
        materialize:
          key: {pk: "USER#{from}", sk: "G#{to}"}
  Group: {key: "GROUP#{id}"}
edges:
  MEMBER_OF:
    from: User
    to: Group
    forward: groups
    reverse: {field: members, index: inverted}
"""


def test_a_replica_over_implicit_nodes_keeps_their_clock_in_their_partition() -> None:
    model = parse_model(REPLICATED)
    assert [r.start for r in model.replicas] == ["User"]
    shared = """
table: {name: t, partitionKey: PK, sortKey: SK}
types:
  Member:
    key: {pk: "MEMBERS", sk: "MEMBER#{id}"}
    implicit: true
    fields:
      tagIds: "[String!]"
      tags: {type: "[Tag!]", ref: tagIds}
      reach:
        type: "[Tag!]!"
        path: [tags]
        materialize: {key: {pk: "MEMBER#{from}", sk: "T#{to}"}}
  Tag: {key: "TAG#{id}"}
"""
    with pytest.raises(ModelError) as raised:
        parse_model(shared)
    assert any(
        line.startswith(
            "types.Member.fields.reach.materialize (line 13): a replica keeps a clock on every "
            "node of its path, and Member, which has no item of its own, keeps it in its "
            "partition, so its partition key must hold {id}"
        )
        for line in raised.value.lines
    ), raised.value.lines


@pytest.mark.parametrize(
    ("template", "key", "values"),
    [
        ("account#{name}{id}", "account#Acme1", {}),
        ("a#{x}#{name}{id}|z{w}", "a#1#Ab|zq", {"x": "1", "w": "q"}),
        ("account#{name}{id}", "account#A", None),  # each value of a run holds a character
        ("{a}{b}#{c}", "xy#z", {"c": "z"}),
    ],
)
def test_a_run_of_placeholders_parses_the_rest_of_its_key(
    template: str, key: str, values: dict[str, str] | None
) -> None:
    assert Template.compile(template, runs=True).parse(key) == values


def test_a_run_prefix_goes_as_far_as_the_values_given() -> None:
    run = Template.compile("account#{name}{id}#{rest}", runs=True)
    assert run.prefix({"name": "Acme"}) == "account#Acme"
    assert run.prefix({"name": "Acme", "id": "1"}) == "account#Acme1#"
    assert run.format({"name": "Acme", "id": "1", "rest": "x"}) == "account#Acme1#x"


# ---- a one-template key over a named placeholder (MODELS.md's own example) -------------------
NAMED = """\
table: {name: t, partitionKey: PK, sortKey: SK, typeAttribute: entity_type}
types:
  User:         {key: "ACCOUNT#{username}", typeValue: user}
  Organization: {key: "ACCOUNT#{name}", typeValue: organization}
  Repo:
    key: {pk: "ACCOUNT#{ownerName}", sk: "REPO#{id}"}
    parent: {type: Organization, field: owner, collection: repos}
edges:
  FOLLOWS: {from: User, to: User, forward: following}
  STARS: {from: User, to: Organization, forward: starred}
"""


def test_a_one_template_key_over_a_named_placeholder_is_looked_up_by_it() -> None:
    """Refused before: a one-template key held exactly {id}."""
    model = parse_model(NAMED)
    user, org = model.types["User"], model.types["Organization"]
    assert user.single and user.ident == "username" and not user.id_keyed
    assert org.ident == "name" and org.fields["name"].kind == "key"
    assert model.types["Repo"].parent is not None
    rows = summary(model).splitlines()
    calls = {row.split()[0] for row in rows if row.startswith("  ")}
    assert {"user(username:)", "organization(name:)", "repo(ownerName:,"} <= calls


NAMED_MISTAKES = [
    (
        'User:         {key: "ACCOUNT#{username}", typeValue: user}',
        'User:         {key: "ACCOUNT#{org}#{username}", typeValue: user}',
        "types.User.key (line 3): a one-template key holds one placeholder (its global id is "
        "the key: 'ORDER#{id}', 'ACCOUNT#{username}'), not {org, username}; write {pk, sk} for "
        "a composite key",
    ),
    (  # `id` is the key itself here: no value an index could hold
        'User:         {key: "ACCOUNT#{username}", typeValue: user}',
        'User: {key: "ACCOUNT#{username}", typeValue: user, indexes: {gsi1: {pk: "U#{id}"}}}',
        "types.User.indexes.gsi1 (line 3): unknown placeholder {id}",
    ),
    (  # without the type attribute nothing tells the two apart
        ", typeAttribute: entity_type}",
        "}",
        "types.Organization.key (line 4): items of Organization and User can have the same keys",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), NAMED_MISTAKES, ids=[m[2][:40] for m in NAMED_MISTAKES]
)
def test_each_named_key_mistake_is_one_line(old: str, new: str, expected: str) -> None:
    assert old in NAMED
    text = NAMED.replace(old, new, 1)
    if "gsi1" in new:
        text = text.replace("typeAttribute", "indexes: {gsi1: {partitionKey: G}}, typeAttribute")
    with pytest.raises(ModelError) as raised:
        parse_model(text)
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines
