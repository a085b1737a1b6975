"""Listings of a drafted model checked by a brute force over the items: every child collection,
every edge's forward and reverse connection, every root access pattern, each asked of the served
draft and compared (ids and `totalCount`) with what the items written say it must answer."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from model import Model
from tests.model.team_tables import global_id, key_text

__all__ = ["Listing", "listings"]

Item = dict[str, Any]
PAGE = 100  # every listing of these tables fits one page

NODE_IDS = f"(first: {PAGE}) {{ totalCount edges {{ node {{ ... on Node {{ id }} }} }} }}"


@dataclass(frozen=True)
class Listing:
    """One listing: what it is, the GraphQL document asking it, the ids it must answer."""

    label: str
    query: str
    variables: dict[str, Any]
    path: tuple[str, ...]  # from `data` to the connection (or the one node)
    expected: list[str]
    one: bool = False  # a plain field of at most one node, not a connection


def _on_node(
    owner: str, field: str, selection: str, gid: str, expected: list[str], one: bool = False
) -> Listing:
    """The listing of ``owner``'s ``field`` (``selection`` under it) asked through
    ``node(id:)``."""
    return Listing(
        f"{owner}.{field} of {gid}",
        f"query($id: ID!) {{ node(id: $id) {{ ... on {owner} {{ {field}{selection} }} }} }}",
        {"id": gid},
        ("node", field),
        expected,
        one,
    )


def _text(value: Any) -> str:
    return key_text(value)


class _Items:
    """The items, each recognised as a declared node type or edge (or nothing)."""

    def __init__(self, model: Model, items: Iterable[Mapping[str, Any]]) -> None:
        self.model = model
        self.items = [dict(i) for i in items]

    def keys(self, item: Item) -> tuple[str, str]:
        return _text(item[self.model.partition_key]), _text(item[self.model.sort_key])

    def tag(self, item: Item) -> Any:
        return self.model.type_attribute and item.get(self.model.type_attribute)

    def type_of(self, item: Item) -> str | None:
        pk, sk = self.keys(item)
        for name, node in self.model.types.items():
            if node.implicit or not node.node:
                continue
            if node.single and pk != sk:
                continue
            if node.pk.parse(pk) is None or node.sk.parse(sk) is None:
                continue
            tag = self.tag(item)
            if tag and node.type_value and tag != node.type_value:
                continue
            return name
        return None

    def edge_of(self, item: Item) -> str | None:
        pk, sk = self.keys(item)
        label_attribute = self.model.label_attribute or self.model.type_attribute
        for label, edge in self.model.edges.items():
            source, target = self.model.types[edge.source], self.model.types[edge.target]
            if not (source.single and target.single):
                continue
            if source.pk.parse(pk) is None or target.sk.parse(sk) is None:
                continue
            stored = label_attribute and item.get(label_attribute)
            if stored and stored != label:
                continue
            if self.type_of(item) is None:
                return label
        return None

    def nodes(self, name: str) -> list[tuple[str, str]]:
        """(pk, sk) of every node of a type: its items, or an implicit type's keys seen."""
        node = self.model.types[name]
        if not node.implicit:
            return [self.keys(i) for i in self.items if self.type_of(i) == name]
        seen: dict[str, None] = {}
        for item in self.items:
            for key in self.keys(item):
                if node.pk.parse(key) is not None:
                    seen.setdefault(key)
        return [(k, k) for k in seen]

    def gid(self, name: str, pk: str, sk: str) -> str:
        return global_id(self.model, name, pk, sk)


def _children(found: _Items) -> list[Listing]:
    out = []
    for name, node in found.model.types.items():
        if node.parent is None:
            continue
        parent = node.parent
        for pk, sk in found.nodes(parent.type):
            expected = [
                found.gid(name, *found.keys(i))
                for i in found.items
                if found.type_of(i) == name and found.keys(i)[0] == pk
            ]
            gid = found.gid(parent.type, pk, sk)
            out.append(_on_node(parent.type, parent.collection, NODE_IDS, gid, expected))
    return out


def _edges(found: _Items) -> list[Listing]:
    out = []
    for label, edge in found.model.edges.items():
        items = [found.keys(i) for i in found.items if found.edge_of(i) == label]
        ends = (
            (edge.forward, edge.source, edge.target, 0),
            (edge.reverse, edge.target, edge.source, 1),
        )
        for end, owner, other, side in ends:
            if end is None:
                continue
            for pk, sk in found.nodes(owner):
                expected = [
                    found.gid(other, e[1 - side], e[1 - side]) for e in items if e[side] == pk
                ]
                selection = "{ id }" if end.one else NODE_IDS
                gid = found.gid(owner, pk, sk)
                out.append(_on_node(owner, end.field, selection, gid, expected, end.one))
    return out


def _composite_refs(found: _Items) -> list[Listing]:
    """Every reference to a composite key: each placeholder from a field of the item (its
    attribute, else its part of the item's own key)."""
    out = []
    for name, node in found.model.types.items():
        for field in node.fields.values():
            if field.kind != "ref" or not field.link or field.target is None:
                continue
            target = found.model.types[field.target]
            for item in (i for i in found.items if found.type_of(i) == name):
                pk, sk = found.keys(item)
                own = {**(node.pk.parse(pk) or {}), **(node.sk.parse(sk) or {})}
                values = {
                    p: _text(item[node.fields[f].attribute])
                    if node.fields[f].attribute in item
                    else own.get(f)
                    for p, f in field.link
                }
                exists = any(
                    found.type_of(i) == field.target
                    and found.keys(i) == (target.pk.format(values), target.sk.format(values))
                    for i in found.items
                )
                expected = (
                    [found.gid(field.target, target.pk.format(values), target.sk.format(values))]
                    if exists
                    else []
                )
                gid = found.gid(name, pk, sk)
                out.append(_on_node(name, field.name, " { id }", gid, expected, one=True))
    return out


def _refs(found: _Items) -> list[Listing]:
    """Every reference whose target has one template: one id, a whole key, or a list of ids."""
    out = []
    for name, node in found.model.types.items():
        for field in node.fields.values():
            if field.kind != "ref" or field.link or field.target is None:
                continue
            target = found.model.types[field.target]
            source = node.fields[field.source] if field.source else None
            if source is None or len(target.key_fields) != 1:
                continue
            for item in (i for i in found.items if found.type_of(i) == name):
                stored = item.get(source.attribute)
                values = stored if isinstance(stored, (list, set)) else [stored]
                named = [{target.key_fields[0]: v} for v in values if v is not None]
                keys = [
                    (_text(v[target.key_fields[0]]),) * 2
                    if field.holds_key
                    else (target.pk.format(v), target.sk.format(v))
                    for v in named
                ]
                pk, sk = found.keys(item)
                expected = [found.gid(field.target, *k) for k in keys]
                gid = found.gid(name, pk, sk)
                out.append(_on_node(name, field.name, " { id }", gid, expected, one=True))
    return out


def _argument(value: str, type_name: str) -> str:
    if type_name in ("Int", "Float"):
        return value
    return json.dumps(value)


def _queries(found: _Items) -> list[Listing]:
    out = []
    for name, q in found.model.queries.items():
        if q.on is not None or q.shards or q.where is not None:
            continue
        types = set(q.types or (q.type,))
        index_pk, index_sk = q.index.pk, q.index.sk
        members = [i for i in found.items if found.type_of(i) in types and index_pk in i]
        if index_sk is not None:
            members = [i for i in members if index_sk in i]
        partitions: dict[str, dict[str, str]] = {}
        for item in members:
            value = _text(item[index_pk])
            parsed = q.partition.parse(value)
            if parsed is not None:
                partitions.setdefault(value, parsed)
        typed = dict(q.arguments)
        for value, arguments in partitions.items():
            expected = [
                found.gid(t, *found.keys(i))
                for i in members
                if _text(i[index_pk]) == value and (t := found.type_of(i)) is not None
            ]
            given = ", ".join(
                f"{a}: {_argument(v, typed[a].name if a in typed else 'String')}"
                for a, v in arguments.items()
            )
            out.append(
                Listing(
                    f"{name}({given})",
                    f"{{ {name}({given}, first: {PAGE}) {{ totalCount edges "
                    f"{{ node {{ ... on Node {{ id }} }} }} }} }}",
                    {},
                    (name,),
                    expected,
                )
            )
    return out


def listings(model: Model, items: Iterable[Mapping[str, Any]]) -> list[Listing]:
    """Every listing of the draft with the ids the items say it answers."""
    found = _Items(model, items)
    return (
        _children(found) + _edges(found) + _queries(found) + _refs(found) + _composite_refs(found)
    )


def answered(listing: Listing, body: Mapping[str, Any]) -> tuple[list[str], int | None] | Any:
    """The ids a listing answered (sorted) and its totalCount, or the body when it failed."""
    if "errors" in body:
        return body
    node: Any = body["data"]
    for step in listing.path:
        node = node.get(step) if isinstance(node, dict) else None
    if listing.one:  # one node, or a list of nodes (a reference over a list)
        nodes = node if isinstance(node, list) else [node] if node else []
        return sorted(n["id"] for n in nodes), None
    ids = sorted(e["node"]["id"] for e in node["edges"])
    return ids, node["totalCount"]


def wanted(listing: Listing) -> tuple[list[str], int | None]:
    ids = sorted(listing.expected)
    return ids, None if listing.one else len(ids)
