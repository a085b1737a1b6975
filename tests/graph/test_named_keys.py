"""The items a one-template key over a named placeholder (`ACCOUNT#{username}`) leaves: its
shard is of that value (as `{shard}` is of an `{id}`), an edge index's `{from}`/`{to}` hold it,
and what an argument names such a node by is the value alone."""

from __future__ import annotations

import zlib

from graph.items import Codec
from graph.writes.items import Items
from model import parse_model

MODEL = """
table:
  name: t
  partitionKey: PK
  sortKey: SK
  typeAttribute: kind
  indexes: {gsi1: {partitionKey: G1PK, sortKey: G1SK}}
types:
  User:
    key: "ACCOUNT#{username}"
    fields: {plan: String!}
    indexes: {gsi1: {pk: "PLAN#{plan}#{shard}", sk: "{username}", shards: 7}}
edges:
  FOLLOWS:
    from: User
    to: User
    forward: following
    reverse: {field: followers, index: gsi1}
    indexes: {gsi1: {pk: "FOLLOWERS#{to}", sk: "{from}"}}
"""


def test_a_named_key_shards_and_names_its_edges_by_its_placeholder() -> None:
    model = parse_model(MODEL)
    codec = Codec(model)
    items = Items(codec, codec.layout)
    user = model.types["User"]
    item = items.node_item(user, {"username": "alice", "plan": "pro"}, None)
    shard = zlib.crc32(b"alice") % 7
    assert shard != 0  # crc32 of an absent id ("") is 0: this tells the two apart
    assert item["G1PK"] == f"PLAN#pro#{shard}" and item["G1SK"] == "alice"
    alice, bob = codec.by_id(user, "alice"), codec.by_id(user, "bob")
    assert alice is not None and bob is not None
    assert alice.key.pk == "ACCOUNT#alice" and codec.global_id(alice) == "ACCOUNT#alice"
    assert codec.id_of(alice) == "alice"
    # a value that looks like a key is a value here (no global id form in arguments)
    looks_like_a_key = codec.by_id(user, "ACCOUNT#x")
    assert looks_like_a_key is not None and looks_like_a_key.key.pk == "ACCOUNT#ACCOUNT#x"
    edge = items.edge_item(model.edges["FOLLOWS"], bob, alice, {}, {"from": {}, "to": {}})
    assert (edge["PK"], edge["SK"]) == ("ACCOUNT#bob", "ACCOUNT#alice")
    assert (edge["G1PK"], edge["G1SK"]) == ("FOLLOWERS#alice", "bob")
    listing = codec.edges_at(model.edges["FOLLOWS"], alice.key, "to")
    assert listing is not None and listing.branches[0].partition == "FOLLOWERS#alice"
