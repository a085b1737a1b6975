"""Edges of the draft (their fields, ends, reverse indexes) and ElectroDB collections' union
queries, as YAML."""

from __future__ import annotations

from collections import Counter

from ..compile import lower_first
from ..templates import Template
from .header import Header
from .indexes import MEANINGS
from .shapes import Kind
from .values import (
    field_decl,
    gql_name,
    n_items,
    plural,
    type_name,
    yaml_str,
)

__all__ = ["Edges"]


class Edges(Header):
    """Edge blocks and union queries."""

    def sort_key_index(self, k: Kind) -> tuple[str, str, tuple[str, str]] | None:
        """An index keyed on the table's sort key with another attribute as its sort key (AWS's
        ``GSI_1: {SK, Data}``) that every edge item carries: (index, attribute, its type)."""
        for index, (h, r) in self.info.indexes.items():
            if h != self.sk or r in (None, self.info.pk) or index in self.inverted:
                continue
            assert r is not None
            typed = self.scalar(k, r, k.name) if all(r in x.attrs for x in k.rows) else None
            if typed is not None:
                return index, r, typed
        return None

    def union_lines(self, name: str, index: str, partition: str, types: list[str]) -> list[str]:
        """A query of an ElectroDB collection: its entities in one Query of their shared
        index partition, a connection of their union."""
        key = self.claim("Query", gql_name(name))
        union = type_name(name[:-1] if name.endswith("s") else name)
        union = union if union not in self.type_names else f"{union}Item"
        return [
            f"  {key}:  # guess: ElectroDB's collection {name!r} ({', '.join(types)} written "
            f"under {index}'s partition {partition!r})",
            f"    types: [{', '.join(types)}]",
            f"    union: {union}",
            f"    index: {yaml_str(index)}",
            f"    partition: {yaml_str(partition)}",
        ]

    def edge_block(self, k: Kind, queries: list[str]) -> list[str]:
        assert k.source is not None and k.target is not None
        src, dst = k.source, k.target
        evidence = f"{n_items(k.count)}, {k.shape()}: both keys are node keys"
        if k.count == 1:
            evidence += "; one item only: a thin guess"
        out = [f"  {k.name}:  # guess: an edge {src.name} -> {dst.name}: {evidence}"]
        for note in k.notes:
            out.append(f"    # {note}")
        out += [f"    from: {src.name}", f"    to: {dst.name}"]
        source_rows = {r.pk: r for r in src.rows}
        fields: list[str] = []
        copies: set[str] = set()
        for attribute in self.field_attributes(k):
            name = self.field_name(attribute)
            ends = [source_rows.get(r.pk) for r in k.rows if attribute in r.attrs]
            if (
                ends
                and all(
                    e is not None and e.attrs.get(attribute) == r.attrs.get(attribute)
                    for e, r in zip(ends, [r for r in k.rows if attribute in r.attrs], strict=True)
                )
                and any(
                    n == name and "ref:" not in d for n, d, _ in self.field_lines.get(src.name, [])
                )
            ):
                copies.add(name)
                stored = "" if name == attribute else f", attribute: {yaml_str(attribute)}"
                fields.append(
                    f"      {name}: {{copyOf: from.{name}{stored}}}  # guess: equals the "
                    f"{src.name}'s {name} on all {n_items(len(ends))}"
                )
                continue
            typed = self.scalar(k, attribute, k.name)
            if typed is None:
                continue
            declaration = self.declare(typed[0], name, attribute, k.name)
            fields.append(f"      {name}: {declaration}  # {typed[1]}")
        sorted_by = self.sort_key_index(k)
        if sorted_by is not None:
            index, attribute, typed = sorted_by
            name = self.claim(k.name, MEANINGS.get(typed[0].rstrip("!"), gql_name(attribute)))
            fields.append(
                f"      {name}: {field_decl(typed[0], name, attribute)}  # {typed[1]}; "
                f"overloaded: {attribute} ({index}'s sort key) holds the edge's own value"
            )
        if fields:
            out.append("    fields:")
            out += fields
        per_source = Counter(r.pk for r in k.rows)
        if k.count >= 3 and max(per_source.values()) == 1:
            forward = self.claim(src.name, lower_first(dst.name))
            out.append(
                f"    forward: {{field: {forward}, one: true}}  # guess: no sampled {src.name} "
                f"has two (of {n_items(k.count)})"
            )
        else:
            forward = self.claim(src.name, plural(lower_first(dst.name)))
            out.append(f"    forward: {forward}")
        templates = self.index_templates(k)
        reverse = None
        for index in self.inverted:
            reverse = (index, f"{index} is the table's keys swapped")
        if reverse is None and sorted_by is not None:
            reverse = (
                sorted_by[0],
                f"{sorted_by[0]} is keyed on the table's sort key (the {dst.name} end), sorted "
                f"by {sorted_by[1]}",
            )
        entries = []
        for index, (pk_t, sk_t, _, evidence) in templates.items():
            entry = f"pk: {yaml_str(pk_t)}" + (f", sk: {yaml_str(sk_t)}" if sk_t else "")
            entries.append(f"      {yaml_str(index)}: {{{entry}}}  # guess: {evidence}")
            if pk_t.endswith("{to}") and sk_t == f"{src.pk_prefix}{{from}}" and reverse is None:
                reverse = (index, f"{index} holds the {dst.name} end in its pk, {src.name} in sk")
            elif "{to}" in pk_t and "{from}" in (sk_t or ""):
                partition = pk_t.replace("{to}", "{id}")
                sort = (sk_t or "").replace("{from}", "{id}")
                readable = {"id", *copies}  # placeholders the from type can fill
                if (
                    set(Template.compile(partition).placeholders) <= {"id"}
                    and set(Template.compile(sort).placeholders) <= readable
                ):
                    queries += self.query_lines(src.name, dst.name, index, partition, sort, src, [])
        if reverse is not None:
            per_target = Counter(r.sk for r in k.rows)
            one = k.count >= 3 and max(per_target.values()) == 1
            field_name = self.claim(
                dst.name, lower_first(src.name) if one else plural(lower_first(src.name))
            )
            why = f"; no sampled {dst.name} has two" if one else ""
            out.append(
                f"    reverse: {{field: {field_name}, index: {yaml_str(reverse[0])}"
                f"{', one: true' if one else ''}}}  # guess: {reverse[1]}{why}"
            )
        counters = [f"n_{k.tag or k.name}" in r.attrs for r in src.rows]
        if k.tag and any(counters):
            out.append(f"    count: counter  # guess: {src.name} items carry n_{k.tag}")
        if entries:
            out.append("    indexes:")
            out += entries
        return out
