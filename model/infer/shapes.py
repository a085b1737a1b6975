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

from ..types import RECORD_PREFIX
from .libraries import ELECTRODB, TYPE_ATTRIBUTES, electro_prefix, library_of
from .table import InferError, TableInfo
from .values import (
    DATETIME,
    ID,
    NAME,
    SEPARATOR_CHARS,
    SEPARATORS,
    STAMP_FIELDS,
    STAMPS,
    TOOLBOX_STAMPS,
    UPPER,
    VERSION_NAMES,
    WORD,
    Row,
    attribute_value,
    gql_name,
    key_text,
    label_name,
    n_items,
    type_name,
)

__all__ = ["Kind", "Shapes", "key_prefix", "separator_of"]

NAMED_ID = re.compile(r"^([A-Za-z]*[a-z])(?:ID|Id)[#|/:\-_]$")  # a prefix naming an id: orderID#
WORD_ID = re.compile(r"^([A-Za-z]+)[0-9][A-Za-z0-9]*$")  # EMPLOYEE1: a word, then the id
CONSTANT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # a constant sort key (``ORDER``, ``METADATA``)

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
        raw = [  # idempotency records are Edgewise's own, not the graph's
            i for i in raw if not str(i.get(info.pk, {}).get("S", "")).startswith(RECORD_PREFIX)
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
        return pk, "" if self.sk in self.bare else self.prefix(r.sk)

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
        """(type attribute, label attribute, evidence)."""
        if self.library is not None:
            name = self.library.type_attribute
            values = {r.attrs[name][1] for r in self.rows if r.attrs.get(name, ("",))[0] == "S"}
            return name, None, f"{self.library.name}'s entity attribute ({len(values)} values)"
        node_prefixes = {p for (p, _, same) in shapes if same and p}
        names = {a for r in self.rows for a in r.attrs} - self.index_attrs
        found: list[tuple[int, str, set[tuple[str, str, bool]]]] = []
        for attribute in sorted(names):
            covered, values, groups, ok = 0, set(), set(), True
            for key, rows in shapes.items():
                present = [r.attrs.get(attribute) for r in rows]
                if not any(present):
                    continue
                texts = {p[1] if p and p[0] == "S" else None for p in present}
                if len(texts) != 1 or None in texts:
                    ok = False
                    break
                value = texts.pop()
                if not isinstance(value, str) or not NAME.match(value):
                    ok = False
                    break
                values.add(value)
                groups.add(key)
                covered += len(rows)
            if ok and len(values) >= 2 and len(values) == len(groups):
                found.append((covered, attribute, groups))
        if not found:
            return None, None, ""
        known = {name: n for n, name in enumerate(TYPE_ATTRIBUTES)}  # the libraries' names first
        found.sort(key=lambda f: (known.get(f[1], len(known)), -f[0], f[1]))
        covered, type_attribute, groups = found[0]
        label = None
        for _, attribute, other in found[1:]:
            edge_shaped = all(
                not same and p in node_prefixes and s in node_prefixes for (p, s, same) in other
            )
            if edge_shaped and not other & groups:
                label = attribute
                break
        evidence = (
            f"on {covered} of {len(self.rows)} sampled items, one value per key shape "
            f"({len(groups)} values)"
        )
        return type_attribute, label, evidence

    def kinds(self) -> list[Kind]:
        shapes = self.shapes()
        self.type_attribute, self.label_attribute, self.type_evidence = (
            (None, None, "") if self.faceted else self.type_attributes(shapes)
        )
        kinds: dict[tuple[str | None, str, str, bool], Kind] = {}
        for r in self.rows:
            tag = r.facet
            for attribute in (self.type_attribute, self.label_attribute):
                if attribute and attribute in r.attrs and r.attrs[attribute][0] == "S":
                    tag = str(r.attrs[attribute][1])
                    break
            key = (tag, *self.prefixes(r), r.pk == r.sk)
            kinds.setdefault(key, Kind(*key, rows=[])).rows.append(r)
        return sorted(kinds.values(), key=lambda k: (not k.same, -k.count))

    # -- classification --

    def classify(self, kinds: list[Kind]) -> None:
        if self.bare:  # a number or binary key: no prefix tells nodes, children or edges apart
            for k in kinds:
                k.role = "keyed"
            self.name_kinds(kinds)
            return
        nodes: dict[str, Kind] = {}
        for k in kinds:
            if k.same and (k.pk_prefix or len(kinds) == 1 or self.type_attribute):
                k.role = "node"
                nodes.setdefault(k.pk_prefix, k)
        for k in kinds:
            if not k.role and self.constant_sort_key(k, kinds):
                k.role = "node"
                nodes.setdefault(k.pk_prefix, k)
        # a node whose ids fall outside the id alphabet gets a composite key, which today's
        # format allows neither as a parent nor as an edge's end
        plain = {p: n for p, n in nodes.items() if all(ID.match(r.pk[len(p) :]) for r in n.rows)}
        for k in kinds:
            if k.role:
                continue
            parent = plain.get(k.pk_prefix) if k.pk_prefix else None
            target = plain.get(k.sk_prefix) if k.sk_prefix else None
            target = None if target is not None and target.constant else target
            if k.pk_prefix in nodes and parent is None:
                k.notes.append(
                    f'under "{k.pk_prefix}…" items whose ids fall outside the id alphabet: a '
                    "keyed node, as a parent needs a one-template key such as 'ORDER#{id}'"
                )
            typed = (
                k.tag is not None
                and not self.faceted  # a facet's name says nothing of edges
                and not UPPER.match(k.tag)
                and k.tag != self._label_of(k)
            )
            if parent is not None and target is not None and not typed:
                k.role, k.source, k.target = "edge", parent, target
            elif parent is not None:
                k.role, k.parent = "child", parent
            elif k.pk_prefix or (self.type_attribute and k.tag):
                k.role = "keyed"
            else:
                k.role = "unexplained"
                k.notes.append("no key prefix this draft could explain")
            if k.role == "edge" and k.source is k.target and not self.type_attribute:
                k.role = "unexplained"
                k.notes.append(
                    f"an edge between two {k.pk_prefix}… items: without a type or label "
                    "attribute, Edgewise could not tell it from those node items"
                )
            if k.role == "keyed" and self.partition_item(k):
                continue
            if k.role in ("child", "keyed") and not k.sk_prefix and not self.type_attribute:
                k.role = "unexplained"
                k.notes.append(
                    "a sort key with no literal prefix: without a type attribute, Edgewise "
                    "could not tell these items from the other items of their partitions"
                )
        for k in kinds:
            k.own = k.own or (
                k.role == "keyed"
                and bool(k.pk_prefix and k.sk_prefix)
                and k.pk_prefix != k.sk_prefix
                and all(r.pk[len(k.pk_prefix) :] == r.sk[len(k.sk_prefix) :] for r in k.rows)
            )
        self.claims(kinds)
        self.name_kinds(kinds)

    def partition_item(self, k: Kind) -> bool:
        """AWS's GSI-overloading example: ``HR-EMPLOYEE1`` / ``EMPLOYEE1``, a sort key that is
        its partition's value after the prefix, all starting with one word (``EMPLOYEE``): the
        partition's own item, keyed ``{pk: "HR-EMPLOYEE{id}", sk: "EMPLOYEE{id}"}``."""
        if k.sk_prefix or not k.pk_prefix or k.tag is not None:
            return False
        if not all(r.sk == r.pk[len(k.pk_prefix) :] for r in k.rows):
            return False
        words = {m.group(1) if (m := WORD_ID.match(r.sk)) else "" for r in k.rows}
        if len(words) != 1 or "" in words:
            return False
        k.own, k.literal = True, words.pop()
        k.notes.append(
            f"every sort key repeats its partition's value after {k.pk_prefix!r} "
            f"({k.rows[0].pk} / {k.rows[0].sk}): the partition's own item"
        )
        return True

    def constant_sort_key(self, k: Kind, kinds: list[Kind]) -> bool:
        """A node whose sort key is one constant word (``orderID#10248`` / ``ORDER``): still
        one placeholder, so a parent and a ref target."""
        if k.same or not k.pk_prefix or k.sk_prefix or self.library is not None:
            return False
        constants = {r.sk for r in k.rows}
        if len(constants) != 1 or any(c.same and c.pk_prefix == k.pk_prefix for c in kinds):
            return False
        (constant,) = constants
        if not CONSTANT.match(constant) or len({r.pk for r in k.rows}) != k.count:
            return False
        k.constant = constant
        k.notes.append(
            f"every item of this shape has the sort key {constant!r}, one per partition: the "
            "partition's own item"
        )
        return True

    def _label_of(self, k: Kind) -> str | None:
        if self.label_attribute and k.rows and self.label_attribute in k.rows[0].attrs:
            return k.tag
        return None

    def claims(self, kinds: list[Kind]) -> None:
        """Uniqueness claims: items keyed by a value whose only attribute names a node's key
        (the demo's ``EMAIL#<email>`` → ``USER#alice``)."""
        keys = {(r.pk, r.sk): (k, r) for k in kinds if k.role == "node" for r in k.rows}
        for k in kinds:
            if not (k.role == "node" and k.pk_prefix):
                continue
            extra = {a for r in k.rows for a in r.attrs} - {
                self.type_attribute,
                self.label_attribute,
            }
            if len(extra) != 1:
                continue
            (attribute,) = extra
            owners = [keys.get((r.text(attribute) or "",) * 2) for r in k.rows]
            if not all(owners) or len({o[0].pk_prefix for o in owners if o}) != 1:
                continue
            owner_kind = owners[0][0] if owners[0] else None
            assert owner_kind is not None
            value_of = [r.pk[len(k.pk_prefix) :] for r in k.rows]
            for field_attr in sorted({a for _, o in filter(None, owners) for a in o.attrs}):
                texts = [o[1].text(field_attr) if o else None for o in owners]
                if all(
                    t is not None and t.lower() == v.lower()
                    for t, v in zip(texts, value_of, strict=True)
                ):
                    k.role = "claim"
                    k.parent = owner_kind
                    k.link = field_attr
                    k.owner = attribute
                    k.notes.append(
                        f"{n_items(k.count)} {k.shape()} whose {attribute!r} holds the key of a "
                        f"{owner_kind.pk_prefix}… item with the same {field_attr}: a uniqueness "
                        "claim"
                    )
                    break

    def name_kinds(self, kinds: list[Kind]) -> None:
        taken: set[str] = set()
        for k in sorted(kinds, key=lambda k: k.role != "node"):  # parents named first
            if k.role in ("claim", "unexplained"):
                continue
            if k.role == "edge":
                if k.tag:
                    base = label_name(k.tag)
                else:
                    assert k.source is not None and k.target is not None
                    src, dst = (
                        x.label.upper()
                        if x.implicit
                        else x.pk_prefix.rstrip(SEPARATOR_CHARS).upper()
                        for x in (k.source, k.target)
                    )
                    base = label_name(f"{src}_TO_{dst}")
            elif k.implicit:
                base = k.label
            elif k.tag:
                base = type_name(k.tag)
            elif k.role == "keyed" and k.count > 1 and len({r.sk for r in k.rows}) == 1:
                base = type_name(k.rows[0].sk)  # HR_confidential: named by its constant sort key
            elif k.own:  # ORG#MICROSOFT / METADATA#MICROSOFT: named by its partition
                base = type_name(k.literal or k.pk_prefix.rstrip(SEPARATOR_CHARS))
            elif self.between_partitions(k, kinds):  # stu#101 / cs#201: named by both ends
                base = type_name(k.pk_prefix.rstrip(SEPARATOR_CHARS)) + type_name(k.sk_prefix)
            elif k.role == "node" and (named := NAMED_ID.match(k.pk_prefix)):  # customerID#
                base = type_name(named.group(1))
            elif k.parent is not None and (named := NAMED_ID.match(k.sk_prefix)):  # productID#
                base = type_name(named.group(1))
                base = k.parent.name + base if base in taken else base  # OrderProduct
            else:
                prefix = (k.sk_prefix if k.role != "node" else k.pk_prefix).rstrip(SEPARATOR_CHARS)
                base = type_name(prefix or (self.singular_table() if self.bare else "Item"))
            name, n = base, 2
            while name in taken:
                name, n = f"{base}{n}", n + 1
            taken.add(name)
            k.name = name

    def singular_table(self) -> str:
        """The table's name as one item's (``customer-orders`` → ``customer-order``)."""
        name = self.info.name
        return name[:-1] if name.endswith("s") and not name.endswith("ss") else name

    def between_partitions(self, k: Kind, kinds: list[Kind]) -> bool:
        """A keyed kind whose pk and sk prefixes are both never an item's own key (pk = sk): its
        items relate two things that exist only as key values, as seed 002's enrolments."""
        if k.role != "keyed" or not k.pk_prefix or not k.sk_prefix or k.tag or k.own:
            return False
        own = {c.pk_prefix for c in kinds if c.same or c.own}
        return k.pk_prefix not in own and k.sk_prefix not in own

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
