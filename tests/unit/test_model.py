"""Unit tests of graph.model: the access rule, edge directions, and item construction."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.keys import NodeKey, NodeType
from graph.model import (
    EDGE_TYPES,
    HAS_MEMBER,
    MEMBER_OF,
    OPENED,
    SUBSCRIBES_TO,
    Edges,
    EdgeType,
    edge_item,
    grants_access,
    node_item,
    now_iso,
)

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
ALICE = NodeKey(NodeType.USER, "alice")
GROUP1 = NodeKey(NodeType.GROUP, "group1")
PROD1 = NodeKey(NodeType.PRODUCT, "prod1")
ORG = NodeKey(NodeType.ORG, "microsoft")
TICKET = NodeKey(NodeType.TICKET, "t1")


# --- grants_access -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscription", "expected"),
    [
        ({"status": "ACTIVE"}, True),
        ({"status": "ACTIVE", "validUntil": None}, True),
        ({"status": "ACTIVE", "validUntil": ""}, True),
        ({"status": "CANCELED"}, False),
        ({"status": "CANCELED", "validUntil": "2099-01-01T00:00:00.000Z"}, False),
        ({"status": "active"}, False),
        ({}, False),
        ({"status": "ACTIVE", "validUntil": "2025-06-01T12:00:01.000Z"}, True),
        ({"status": "ACTIVE", "validUntil": "2025-06-01T11:59:59.999Z"}, False),
        ({"status": "ACTIVE", "validUntil": "2025-06-01T12:00:00.000Z"}, False),
        ({"status": "ACTIVE", "validUntil": "2024-01-15T09:00:00.000Z"}, False),
        ({"status": "ACTIVE", "validUntil": "2099-01-01T00:00:00Z"}, True),
        ({"status": "ACTIVE", "validUntil": "2025-06-01T12:30:00+00:00"}, True),
        # 13:30 at +02:00 is 11:30 UTC: already over
        ({"status": "ACTIVE", "validUntil": "2025-06-01T13:30:00+02:00"}, False),
        # 09:00 at -05:00 is 14:00 UTC: still running
        ({"status": "ACTIVE", "validUntil": "2025-06-01T09:00:00-05:00"}, True),
    ],
)
def test_grants_access(subscription: dict[str, Any], expected: bool) -> None:
    assert grants_access(subscription, NOW) is expected


@pytest.mark.parametrize(
    ("offset", "expected"), [(timedelta(days=1), True), (-timedelta(1), False)]
)
def test_grants_access_defaults_to_the_current_time(offset: timedelta, expected: bool) -> None:
    until = (datetime.now(UTC) + offset).isoformat().replace("+00:00", "Z")
    assert until.endswith("Z")
    assert grants_access({"status": "ACTIVE", "validUntil": until}) is expected


def test_now_iso_is_utc_milliseconds_with_z() -> None:
    value = now_iso()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", value)
    assert grants_access({"status": "ACTIVE", "validUntil": value}, NOW) is True


# --- Edges ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edge", "node", "reverse", "prefix", "index"),
    [
        (MEMBER_OF, ALICE, False, "GROUP#", None),
        (MEMBER_OF, GROUP1, True, "USER#", "inverted"),
        (SUBSCRIBES_TO, GROUP1, False, "PRODUCT#", None),
        (SUBSCRIBES_TO, PROD1, True, "GROUP#", "inverted"),
        (HAS_MEMBER, ORG, False, "USER#", None),
        (HAS_MEMBER, ALICE, True, "ORG#", "inverted"),
        (OPENED, ALICE, False, "TICKET#", None),
        (OPENED, TICKET, True, "USER#", "inverted"),
    ],
)
def test_edges_prefix_and_index(
    edge: EdgeType, node: NodeKey, reverse: bool, prefix: str, index: str | None
) -> None:
    edges = Edges(node, edge, reverse)
    assert edges.prefix == prefix
    assert edges.index == index


def test_edges_default_to_forward() -> None:
    assert Edges(ALICE, MEMBER_OF) == Edges(ALICE, MEMBER_OF, reverse=False)
    assert Edges(ALICE, MEMBER_OF).index is None


def test_edges_far_end_forward_is_the_target() -> None:
    item = edge_item(MEMBER_OF, ALICE, GROUP1, {})
    assert Edges(ALICE, MEMBER_OF).far_end(item) == GROUP1


def test_edges_far_end_reverse_is_the_source() -> None:
    item = edge_item(MEMBER_OF, ALICE, GROUP1, {})
    assert Edges(GROUP1, MEMBER_OF, reverse=True).far_end(item) == ALICE


def test_edges_are_hashable_loader_keys() -> None:
    assert (
        len({Edges(ALICE, MEMBER_OF), Edges(ALICE, MEMBER_OF), Edges(GROUP1, MEMBER_OF, True)}) == 2
    )


def test_edge_types_have_distinct_type_pairs() -> None:
    pairs = [(e.source, e.target) for e in EDGE_TYPES.values()]
    assert len(pairs) == len(set(pairs))
    assert all(label == e.label for label, e in EDGE_TYPES.items())


# --- edge_item -----------------------------------------------------------------------------


def test_edge_item_is_stored_in_the_source_partition() -> None:
    item = edge_item(SUBSCRIBES_TO, GROUP1, PROD1, {"plan": "pro", "status": "ACTIVE"})
    assert item == {
        "PK": "GROUP#group1",
        "SK": "PRODUCT#prod1",
        "edge": "SUBSCRIBES_TO",
        "plan": "pro",
        "status": "ACTIVE",
    }


def test_edge_item_leaves_out_none_fields() -> None:
    item = edge_item(SUBSCRIBES_TO, GROUP1, PROD1, {"plan": "pro", "validUntil": None, "n": 0})
    assert "validUntil" not in item
    assert item["n"] == 0


@pytest.mark.parametrize(
    ("edge", "source", "target"),
    [
        (MEMBER_OF, GROUP1, ALICE),  # reversed
        (MEMBER_OF, ALICE, PROD1),  # wrong target
        (MEMBER_OF, ORG, GROUP1),  # wrong source
        (SUBSCRIBES_TO, ALICE, PROD1),
        (HAS_MEMBER, ALICE, ORG),
        (OPENED, ALICE, GROUP1),
    ],
)
def test_edge_item_refuses_wrong_types(edge: EdgeType, source: NodeKey, target: NodeKey) -> None:
    with pytest.raises(ValueError, match=f"{edge.label} goes from {edge.source.value} to"):
        edge_item(edge, source, target, {})


# --- node_item -----------------------------------------------------------------------------


def test_node_item_is_version_one_with_timestamps() -> None:
    at = "2024-01-15T09:00:00.000Z"
    item = node_item(ALICE, {"name": "Alice", "email": None, "age": 0, "bio": ""}, at)
    assert item == {
        "PK": "USER#alice",
        "SK": "USER#alice",
        "type": "USER",
        "version": 1,
        "createdAt": at,
        "updatedAt": at,
        "name": "Alice",
        "age": 0,
        "bio": "",
    }


def test_node_item_defaults_to_now() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    item = node_item(GROUP1, {})
    created = datetime.fromisoformat(item["createdAt"].replace("Z", "+00:00"))
    assert item["createdAt"] == item["updatedAt"]
    assert before <= created <= datetime.now(UTC)
    assert item["version"] == 1
    assert item["type"] == "GROUP"
