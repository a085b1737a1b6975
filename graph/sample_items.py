"""A model's sample data (``nodes`` and ``edges``, as in a model's ``sample.yaml``) as the items
the mutations would write: keys, claims, counters, copies, index attributes and replicas."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from graph.keys import ItemKey
from graph.table import Item
from graph.writes.replicas import digest_attribute, edge_hash, joined
from graph.writes.writer import Writer
from model import Field

__all__ = ["build_items"]


def build_items(writer: Writer, sample: Mapping[str, Any], at: str) -> list[Item]:
    """Items for sample data: ``nodes`` (``type`` and field values, key placeholders included)
    and ``edges`` (``label``, ``from`` and ``to`` ids, and fields), built as the mutations build
    them (keys, index attributes, copies, defaults and initial values)."""
    model, codec = writer.model, writer.codec
    items: list[Item] = []
    values: dict[tuple[str, str], dict[str, Any]] = {}
    counts: dict[ItemKey, Counter[str]] = defaultdict(Counter)
    for entry in sample.get("nodes", []):
        node = model.types[entry["type"]]
        fields = {k: _stored(v) for k, v in entry.items() if k != "type"}
        fields = _filled(model.enums, node.fields, fields, at)
        items.append(writer.node_item(node, fields, at))
        key = codec.item_key(items[-1])
        items += [
            writer.claim_item(f, fields[name], key)
            for name, f in node.fields.items()
            if f.unique is not None and fields.get(name) is not None
        ]
        if node.ident in fields:  # what an edge's `from` or `to` names it by
            values[(node.name, str(fields[node.ident]))] = fields
    for entry in sample.get("edges", []):
        edge = model.edges[entry["label"]]
        source = codec.by_id(model.types[edge.source], str(entry["from"]))
        target = codec.by_id(model.types[edge.target], str(entry["to"]))
        assert source is not None and target is not None
        fields = {k: _stored(v) for k, v in entry.items() if k not in ("label", "from", "to")}
        fields = _filled(model.enums, edge.fields, fields, at)
        ends = {
            "from": values.get((edge.source, str(entry["from"])), {}),
            "to": values.get((edge.target, str(entry["to"])), {}),
        }
        items.append(writer.edge_item(edge, source, target, fields, ends))
        for end, ref in (("from", source), ("to", target)):
            if (counter := edge.counter(end)) is not None:
                counts[ref.key][counter] += 1
        if writer.upkeep is not None and edge.label in writer.upkeep.digested:
            counts[target.key][digest_attribute(edge)] += edge_hash(source.key)
    for item in items:
        kind = codec.node_type(item)
        if kind is not None and writer.upkeep is not None:  # known, even with no edge
            for attribute in writer.upkeep.digests(kind):
                counts[codec.item_key(item)][attribute] += 0
        if kind is not None and kind.parent_counter is not None:
            counts[writer.items.parent_key(kind, codec.item_key(item))][kind.parent_counter] += 1
    items += joined(codec, items).values()
    return [item | counts.get(codec.item_key(item), {}) for item in items]


def _filled(
    enums: Mapping[str, Mapping[str, str]],
    fields: Mapping[str, Field],
    given: dict[str, Any],
    at: str,
) -> dict[str, Any]:
    """``given`` with the values a mutation writes where the sample gives none: a field's
    ``default``, else its ``initial`` (``now``: the sample's time), an enum's as stored."""
    out = dict(given)
    for name, f in fields.items():
        value = f.default if f.default is not None else f.initial
        if f.kind != "value" or value is None or out.get(name) is not None:
            continue
        if value == "now" and f.initial == "now":
            value = at
        stored = enums.get(f.type.name)
        out[name] = _stored(
            stored.get(value, value) if stored and isinstance(value, str) else value
        )
    return out


def _stored(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value
