"""Drafting a model file from an existing table: DescribeTable's answer and a sample of items
(DynamoDB JSON, as Scan returns them) in, kinds of items out. Pure: no I/O;
``graph.sample`` reads the table."""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..types import CLOCK_SK, INTERNAL
from .libraries import (
    ELECTRODB,
    TYPE_ATTRIBUTES,
    electro_prefix,
    library_of,
    status_like,
    type_like,
)
from .table import InferError, TableInfo
from .values import (
    DATETIME,
    NAME,
    SEPARATORS,
    STAMP_FIELDS,
    STAMPS,
    TOOLBOX_STAMPS,
    VERSION_NAMES,
    WORD,
    Row,
    attribute_value,
    gql_name,
    key_text,
)

__all__ = ["Kind", "Shapes", "key_prefix", "separator_of"]


WORD_ID = re.compile(r"^([A-Za-z]+)[0-9][A-Za-z0-9]*$")  # EMPLOYEE1: a word, then the id

# ---- key shapes ------------------------------------------------------------------------------


def separator_of(rows: Sequence[Row]) -> str:
    def score(sep: str) -> int:
        return sum(1 for r in rows for k in (r.pk, r.sk) if key_prefix(k, sep))

    best = max(SEPARATORS, key=score)
    return best if score(best) else "#"


def key_of(item: Mapping[str, Any], attribute: str, types: Mapping[str, str]) -> str | None:
    """A key attribute's value as text: a string as is, a number as written in a key, binary
    as base64; None when the item's value is not of the table's declared type."""
    kind = types.get(attribute, "S")
    value = item.get(attribute, {}).get(kind)
    if value is None:
        return None
    if kind == "N":
        return key_text("N", Decimal(value))
    if kind == "B":
        try:
            raw = value if isinstance(value, bytes) else base64.b64decode(value, validate=True)
        except binascii.Error:
            return None
        return base64.b64encode(raw).decode()
    return str(value)


def key_prefix(key: str, sep: str) -> str:
    head, found, _ = key.partition(sep)
    return head + sep if found and WORD.match(head) else ""


@dataclass
class Kind:
    """Items of one key shape (and one type-attribute value, when the table has one)."""

    tag: str | None
    pk_prefix: str
    sk_prefix: str
    same: bool
    rows: list[Row]
    role: str = ""  # node, child, keyed, edge, claim, unexplained
    name: str = ""
    parent: Kind | None = None
    source: Kind | None = None
    target: Kind | None = None
    pk_template: str = ""
    sk_template: str = ""
    link: str = ""  # a child's pk placeholder
    values: list[dict[str, str]] = field(default_factory=list)  # key placeholders per row
    notes: list[str] = field(default_factory=list)
    owner: str = ""  # a claim's attribute holding its node's key
    own: bool = False  # a keyed kind whose sk repeats its partition's value: the partition's item
    constant: str = ""  # a node's constant sort key (``ORDER``)
    literal: str = ""  # the word a partition item's sort key starts with (``EMPLOYEE``1)
    implicit: bool = False  # a node with no item of its own: its keys appear in other items'
    label: str = ""  # an implicit node's name
    seen: list[str] = field(default_factory=list)  # an implicit node's ids seen in keys
    value: str | None = None  # its items' type attribute value (typeValue)

    @property
    def count(self) -> int:
        return len(self.rows)

    def shape(self) -> str:
        if self.same:
            return f'pk = sk = "{self.pk_prefix}…"'
        return f'pk "{self.pk_prefix}…", sk "{self.sk_prefix}…"'


class Shapes:
    """Items grouped into key shapes and kinds, each kind classified and named (no text yet)."""

    def __init__(
        self,
        info: TableInfo,
        raw: Sequence[Mapping[str, Any]],
        complete: bool,
        facets: Sequence[str | None] | None = None,
        origin: str = "",
    ) -> None:
        self.info = info
        self.complete = complete
        self.faceted = facets is not None  # rows named by their facets, not a type attribute
        self.origin = origin  # the header's first line, when not a sample of a live table
        self.notes: list[str] = []
        self.passed_over: list[tuple[str, list[str]]] = []  # status attributes that would fit
        raw = [  # idempotency records, replicas' jobs and clocks are Edgewise's own
            i
            for i in raw
            if not str(i.get(info.pk, {}).get("S", "")).startswith(INTERNAL)
            and (info.sk is None or i.get(info.sk, {}).get("S") != CLOCK_SK)
        ]
        if info.sk is None:
            raise InferError(
                f"table {info.name!r} has no sort key: Edgewise models an adjacency list, whose "
                "items have a partition key and a sort key"
            )
        # number (N) and binary (B) key attributes: a template over one is a bare placeholder
        self.bare = {
            a: info.key_types.get(a, "S")
            for a in (info.pk, info.sk)
            if info.key_types.get(a, "S") != "S"
        }
        if not raw:
            raise InferError(
                f"table {info.name!r} is empty: there is nothing to infer a model from; load "
                "some items first (`edgewise load FILE.jsonl --table T --model M`) or write "
                "the model by hand (see `edgewise model-schema`)"
            )
        self.sk = info.sk
        self.field_lines: dict[str, list[tuple[str, str, str]]] = {}
        self.shards: int | None = None  # the shard count the last index template matched
        self.rows: list[Row] = []
        self.read_count = len(raw)
        skipped = 0
        for n, item in enumerate(raw):
            pk, sk = key_of(item, info.pk, info.key_types), key_of(item, info.sk, info.key_types)
            if pk is None or sk is None:
                skipped += 1
                continue
            attrs = {k: attribute_value(v) for k, v in item.items() if k not in (info.pk, info.sk)}
            attrs = {k: v for k, v in attrs.items() if v[0] != "NULL"}
            if self.bare:  # a bare key's value is a field of its own (`orderId: Int!`)
                attrs |= {a: attribute_value(item[a]) for a in (info.pk, info.sk)}
            self.rows.append(Row(pk, sk, attrs, facets[n] if facets is not None else None))
        if skipped:
            self.notes.append(
                f"{skipped} sampled items without keys of the table's types were skipped"
            )
        self.sep = separator_of(self.rows)
        self.library = library_of(self.rows)
        for r in self.rows if self.bare else []:  # a string key with a prefix is no field
            for attribute, key in ((info.pk, r.pk), (info.sk, r.sk)):
                if attribute not in self.bare and self.prefix(key):
                    del r.attrs[attribute]
        self.index_attrs = {  # written from templates; a number or binary one is a field
            a
            for keys in info.indexes.values()
            for a in keys
            if a and a not in (info.pk, info.sk) and info.key_types.get(a, "S") == "S"
        }
        self.inverted = [
            name for name, (h, r) in info.indexes.items() if h == info.sk and r == info.pk
        ]

    # -- grouping --

    def shapes(self) -> dict[tuple[str, str, bool], list[Row]]:
        out: dict[tuple[str, str, bool], list[Row]] = {}
        for r in self.rows:
            key = (*self.prefixes(r), r.pk == r.sk)
            out.setdefault(key, []).append(r)
        return out

    def prefixes(self, r: Row) -> tuple[str, str]:
        """The literal prefixes of an item's keys (none for a number or binary key)."""
        pk = "" if self.info.pk in self.bare else self.prefix(r.pk)
        sk = "" if self.sk in self.bare else self.prefix(r.sk)
        if pk and not sk and r.sk == r.pk[len(pk) :] and (word := WORD_ID.match(r.sk)):
            sk = word.group(1)  # HR-EMPLOYEE1 / EMPLOYEE1: the partition's own item's word
        return pk, sk

    def prefix(self, key: str) -> str:
        """The literal prefix items are grouped by (``ORDER#``, ElectroDB's ``$app#employee_``):
        up to the table's separator, else another one (``Invoice-`` beside ``ORDER#``)."""
        if self.library is not None and self.library.name == ELECTRODB and key.startswith("$"):
            return electro_prefix(key)
        found = key_prefix(key, self.sep)
        for other in SEPARATORS:
            found = found or key_prefix(key, other)
        return found

    def type_attributes(
        self, shapes: dict[tuple[str, str, bool], list[Row]]
    ) -> tuple[str | None, str | None, str]:
        """(type attribute, label attribute, evidence). A string attribute of names is the type
        attribute where it holds one value per key shape, distinct across shapes (the keys
        separate the types and the values name them), or, when its name says so
        (``entity_type``, ``_type``, ``_et``), where its values also tell apart items of one key
        shape (``user`` and ``organization`` on ``ACCOUNT#…``). A state or status attribute
        (``status``, ``orderStatus``) is never taken: its values are states, not types."""
        self.passed_over = []
        if self.library is not None:
            name = self.library.type_attribute
            values = {r.attrs[name][1] for r in self.rows if r.attrs.get(name, ("",))[0] == "S"}
            return name, None, f"{self.library.name}'s entity attribute ({len(values)} values)"
        node_prefixes = {p for (p, _, same) in shapes if same and p}
        names = {a for r in self.rows for a in r.attrs} - self.index_attrs
        found: list[tuple[int, str, dict[tuple[str, str, bool], set[str]]]] = []
        for attribute in sorted(names):
            seen = self._type_values(attribute, shapes)
            if seen is None:
                continue
            covered, groups = seen
            split = any(len(v) > 1 for v in groups.values())
            if status_like(attribute):
                if not split:  # the keys already separate the types
                    states = sorted(v for vs in groups.values() for v in vs)
                    self.passed_over.append((attribute, states))
                continue
            if split and not type_like(attribute):
                continue
            found.append((covered, attribute, groups))
        if not found:
            return None, None, ""
        known = {name: n for n, name in enumerate(TYPE_ATTRIBUTES)}  # the libraries' names first
        found.sort(key=lambda f: (known.get(f[1], len(known)), not type_like(f[1]), -f[0], f[1]))
        covered, type_attribute, groups = found[0]
        label = None
        for _, attribute, other in found[1:]:
            edge_shaped = all(
                not same and p in node_prefixes and s in node_prefixes for (p, s, same) in other
            )
            if (
                edge_shaped
                and not set(other) & set(groups)
                and all(len(v) == 1 for v in other.values())
            ):
                label = attribute
                break
        count = sum(len(v) for v in groups.values())
        evidence = f"on {covered} of {len(self.rows)} sampled items, "
        shared = [(key, sorted(v)) for key, v in groups.items() if len(v) > 1]
        if shared:
            (pk, sk, same), split_values = shared[0]
            shape = f'pk = sk = "{pk}…"' if same else f'pk "{pk}…", sk "{sk}…"'
            shape = shape if pk or sk else "keys without a prefix"
            evidence += (
                f"{count} values; named as a type attribute, its values tell apart items of one "
                f"key shape ({shape}: {', '.join(split_values)})"
            )
        else:
            evidence += f"one value per key shape ({count} values)"
        return type_attribute, label, evidence

    def _type_values(
        self, attribute: str, shapes: dict[tuple[str, str, bool], list[Row]]
    ) -> tuple[int, dict[tuple[str, str, bool], set[str]]] | None:
        """(items covered, values per key shape) of an attribute that could be the type
        attribute: a name (``user``) on every item of each shape it is on, no value on two
        shapes, at least two values, some value on two items; else None."""
        covered = 0
        groups: dict[tuple[str, str, bool], set[str]] = {}
        for key, rows in shapes.items():
            present = [r.attrs.get(attribute) for r in rows]
            if not any(present):
                continue
            texts = {p[1] if p and p[0] == "S" else None for p in present}
            if None in texts or not all(isinstance(t, str) and NAME.match(t) for t in texts):
                return None
            groups[key] = {str(t) for t in texts}
            covered += len(rows)
        values = [v for vs in groups.values() for v in vs]
        if len(values) < 2 or len(set(values)) != len(values):
            return None
        if any(len(v) > 1 for v in groups.values()) and len(values) >= covered:
            return None  # every item a value of its own: ids, not types
        return covered, groups

    def kinds(self) -> list[Kind]:
        shapes = self.shapes()
        self.label_attribute: str | None = None
        if self.faceted:
            self.type_attribute, self.type_evidence = self.facet_type_attribute()
        else:
            self.type_attribute, self.label_attribute, self.type_evidence = self.type_attributes(
                shapes
            )
        kinds: dict[tuple[str | None, str, str, bool], Kind] = {}
        for r in self.rows:
            tag, value = r.facet, None
            for attribute in (self.type_attribute, self.label_attribute):
                if attribute and attribute in r.attrs and r.attrs[attribute][0] == "S":
                    tag = tag or str(r.attrs[attribute][1])
                    value = str(r.attrs[attribute][1]) if attribute == self.type_attribute else None
                    break
            key = (tag, *self.prefixes(r), r.pk == r.sk)
            kind = kinds.setdefault(key, Kind(*key, rows=[]))
            kind.rows.append(r)
            kind.value = kind.value or value
        return sorted(kinds.values(), key=lambda k: (not k.same, -k.count))

    def facet_type_attribute(self) -> tuple[str | None, str]:
        """(type attribute, evidence) of NoSQL Workbench rows: an attribute holding one name
        on every row of each facet that has it, a different one per facet (at least two)."""
        facets: dict[str, list[Row]] = {}
        for r in self.rows:
            if r.facet is not None:
                facets.setdefault(r.facet, []).append(r)
        names = {a for r in self.rows for a in r.attrs} - self.index_attrs
        found: list[tuple[bool, int, str, dict[str, str]]] = []
        for attribute in sorted(names):
            if status_like(attribute):
                continue
            values: dict[str, str] = {}
            for facet, rows in facets.items():
                texts = {
                    r.text(attribute) if r.attrs.get(attribute, ("",))[0] == "S" else None
                    for r in rows
                    if attribute in r.attrs
                }
                if not texts:
                    continue
                if len(texts) != 1 or len([r for r in rows if attribute in r.attrs]) != len(rows):
                    break
                value = texts.pop()
                if value is None or not NAME.match(value):
                    break
                values[facet] = value
            else:
                if len(values) >= 2 and len(set(values.values())) == len(values):
                    found.append((not type_like(attribute), -len(values), attribute, values))
        if not found:
            return None, ""
        _, _, attribute, values = min(found)
        shown = ", ".join(f"{f}: {v}" for f, v in values.items())
        return attribute, f"one value on every sample row of each facet ({shown})"

    # -- classification --

    # -- fields --

    def field_attributes(self, k: Kind) -> list[str]:
        skip = {self.type_attribute, self.label_attribute, self.version, "id"} | self.index_attrs
        if self.timestamps:
            skip |= set(STAMPS)
        if self.library is not None:
            skip |= set(self.library.metadata)
        names = Counter(a for r in k.rows for a in r.attrs)
        return [a for a in names if a not in skip and not a.startswith("n_")]

    def field_name(self, attribute: str) -> str:
        """A field's GraphQL name: ``order_id`` → ``orderId``; dynamodb-toolbox's ``_ct`` and
        ``_md`` → ``created`` and ``modified``."""
        if self.stamps is not None and attribute in self.stamps and attribute in STAMP_FIELDS:
            return STAMP_FIELDS[attribute]
        return gql_name(attribute)

    def meta(self) -> None:
        """Version attribute and timestamps."""
        self.version: str | None = None
        self.timestamps = False
        self.version_evidence = ""
        nodes = [r for r in self.rows if r.pk == r.sk] or self.rows  # edges may have none
        for name in VERSION_NAMES:
            values = [r.attrs.get(name) for r in nodes]
            present = [v for v in values if v is not None]
            if present and all(v[0] == "N" for v in present) and len(present) * 2 >= len(values):
                self.version = name
                self.version_evidence = (
                    f"a number on {len(present)} of {len(values)} items with pk = sk"
                )
                break
        self.stamps: tuple[str, str] | None = None  # (created, modified) attributes
        self.stamps_evidence = ""
        for pair in (STAMPS, TOOLBOX_STAMPS):
            stamped = [
                r for r in self.rows if all(r.attrs.get(s, ("", ""))[0] == "S" for s in pair)
            ]
            if (
                nodes
                and len(stamped) * 2 >= len(nodes)
                and all(DATETIME.match(str(r.attrs[s][1])) for r in stamped for s in pair)
            ):
                self.stamps = pair
                self.stamps_evidence = (
                    f"ISO date-times in {pair[0]} and {pair[1]} on {len(stamped)} of "
                    f"{len(self.rows)} items"
                )
                break
        self.timestamps = self.stamps == STAMPS
