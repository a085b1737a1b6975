"""Drafting a model file from an existing table: DescribeTable's answer and a sample of items
(DynamoDB JSON, as Scan returns them) in, the text of a commented model file out. Pure: no I/O;
``graph.sample`` reads the table.

The rules, in order:

1. Items are grouped by *key shape*: the literal prefix of the partition and sort keys (the text
   up to the first separator, ``ORDER#``) and whether both keys are equal.
2. A type attribute is an attribute of string values, constant within each shape it appears in,
   naming at least two shapes; an edge-only one becomes the label attribute.
3. A shape with pk = sk is a node type (``ORDER#{id}``). A shape whose pk is a node's key is an
   edge when its sk is another node's key too (unless the type attribute names it like a type,
   ``Inventory``), else a child collection; any other shape is a keyed node.
4. Placeholders are named after the attribute holding the same value on every item; index keys
   are templated the same way, with ``{shard}`` where a small number is crc32(id) mod N.
5. Fields and their GraphQL types come from the attribute values; each guess carries a comment
   with its evidence.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .compile import lower_first, upper_first
from .load import ModelError, parse_model
from .templates import Template
from .types import RECORD_PREFIX

__all__ = ["Draft", "InferError", "TableInfo", "infer", "table_info"]

SEPARATORS = ("#", "|", "/", ":")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*!?$")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
VERSION_NAMES = ("version", "_version", "__version")
STAMPS = ("createdAt", "updatedAt")
MAX_ENUM = 12
MAX_SHARDS = 1000


class InferError(Exception):
    """A table no model can be drafted from (empty, keys that are not strings …)."""


@dataclass(frozen=True)
class TableInfo:
    """What DescribeTable says: key attributes and their types, global secondary indexes."""

    name: str
    pk: str
    sk: str | None
    key_types: Mapping[str, str]
    indexes: Mapping[str, tuple[str, str | None]]
    projections: Mapping[str, str] = field(default_factory=dict)
    item_count: int | None = None


def table_info(described: Mapping[str, Any]) -> TableInfo:
    """A :class:`TableInfo` from DescribeTable's ``Table``."""

    def keys(schema: Sequence[Mapping[str, str]]) -> tuple[str, str | None]:
        hash_key = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
        range_key = next((k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"), None)
        return hash_key, range_key

    pk, sk = keys(described["KeySchema"])
    types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
    indexes, projections = {}, {}
    for gsi in described.get("GlobalSecondaryIndexes") or []:
        indexes[gsi["IndexName"]] = keys(gsi["KeySchema"])
        projections[gsi["IndexName"]] = gsi.get("Projection", {}).get("ProjectionType", "ALL")
    return TableInfo(
        described["TableName"], pk, sk, types, indexes, projections, described.get("ItemCount")
    )


@dataclass(frozen=True)
class Draft:
    """The drafted model file and what the draft could not explain (for stderr)."""

    text: str
    notes: tuple[str, ...]


# ---- values ----------------------------------------------------------------------------------


def _value(raw: Mapping[str, Any]) -> tuple[str, Any]:
    [(kind, inner)] = raw.items()
    if kind == "N":
        return kind, Decimal(inner)
    return kind, inner


def _text(kind: str, value: Any) -> str | None:
    """A scalar as it would appear inside a key."""
    if kind == "S":
        return str(value)
    if kind == "N":
        number = Decimal(value)
        return str(int(number)) if number == number.to_integral_value() else str(number)
    return None


@dataclass
class Row:
    pk: str
    sk: str
    attrs: dict[str, tuple[str, Any]]

    def text(self, attribute: str) -> str | None:
        found = self.attrs.get(attribute)
        return None if found is None else _text(*found)


def gql_name(attribute: str) -> str:
    """``order_id`` → ``orderId``, ``GSI1PK`` → ``gsi1pk``, ``hireDate`` stays."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", attribute) if p]
    if not parts:
        return "field"
    words = [p.lower() if p.isupper() else p for p in parts]
    name = lower_first(words[0]) + "".join(upper_first(w) for w in words[1:])
    return name if _NAME.match(name) else f"f{name}"


def type_name(word: str) -> str:
    """``ORDER_ITEM`` / ``order-item`` / ``OrderItem`` → ``OrderItem``."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", word) if p]
    name = "".join(upper_first(p.lower() if p.isupper() or p.islower() else p) for p in parts)
    if not name or not _NAME.match(name):
        name = f"T{name}"
    return name


def plural(word: str) -> str:
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"


def label_name(word: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", word)
    return name if _NAME.match(name) else f"E_{name}"


# ---- key shapes ------------------------------------------------------------------------------


def _separator(rows: Sequence[Row]) -> str:
    def score(sep: str) -> int:
        return sum(1 for r in rows for k in (r.pk, r.sk) if _prefix(k, sep))

    best = max(SEPARATORS, key=score)
    return best if score(best) else "#"


def _prefix(key: str, sep: str) -> str:
    head, found, _ = key.partition(sep)
    return head + sep if found and _WORD.match(head) else ""


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

    @property
    def count(self) -> int:
        return len(self.rows)

    def shape(self) -> str:
        if self.same:
            return f'pk = sk = "{self.pk_prefix}…"'
        return f'pk "{self.pk_prefix}…", sk "{self.sk_prefix}…"'


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


# ---- the inference ---------------------------------------------------------------------------


class _Inference:
    def __init__(self, info: TableInfo, raw: Sequence[Mapping[str, Any]], complete: bool) -> None:
        self.info = info
        self.complete = complete
        self.notes: list[str] = []
        raw = [  # idempotency records are Edgewise's own, not the graph's
            i for i in raw if not str(i.get(info.pk, {}).get("S", "")).startswith(RECORD_PREFIX)
        ]
        if info.sk is None:
            raise InferError(
                f"table {info.name!r} has no sort key: Edgewise models an adjacency list, whose "
                "items have a partition key and a sort key"
            )
        for attribute in (info.pk, info.sk):
            kind = info.key_types.get(attribute, "S")
            if kind != "S":
                word = {"N": "a number (N)", "B": "binary (B)"}.get(kind, kind)
                raise InferError(
                    f"the key attribute {attribute!r} of table {info.name!r} is {word}: Edgewise "
                    "keys are strings built from templates such as 'ORDER#{id}', so this table "
                    "cannot be drafted; write the model by hand if another table holds the graph"
                )
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
        skipped = 0
        for item in raw:
            pk, sk = item.get(info.pk, {}).get("S"), item.get(info.sk, {}).get("S")
            if pk is None or sk is None:
                skipped += 1
                continue
            attrs = {k: _value(v) for k, v in item.items() if k not in (info.pk, info.sk)}
            attrs = {k: v for k, v in attrs.items() if v[0] != "NULL"}
            self.rows.append(Row(pk, sk, attrs))
        if skipped:
            self.notes.append(f"{skipped} sampled items without string keys were skipped")
        self.sep = _separator(self.rows)
        self.index_attrs = {a for keys in info.indexes.values() for a in keys if a}
        self.inverted = [
            name for name, (h, r) in info.indexes.items() if h == info.sk and r == info.pk
        ]

    # -- grouping --

    def shapes(self) -> dict[tuple[str, str, bool], list[Row]]:
        out: dict[tuple[str, str, bool], list[Row]] = {}
        for r in self.rows:
            key = (_prefix(r.pk, self.sep), _prefix(r.sk, self.sep), r.pk == r.sk)
            out.setdefault(key, []).append(r)
        return out

    def type_attributes(
        self, shapes: dict[tuple[str, str, bool], list[Row]]
    ) -> tuple[str | None, str | None, str]:
        """(type attribute, label attribute, evidence)."""
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
                if not isinstance(value, str) or not _NAME.match(value):
                    ok = False
                    break
                values.add(value)
                groups.add(key)
                covered += len(rows)
            if ok and len(values) >= 2 and len(values) == len(groups):
                found.append((covered, attribute, groups))
        if not found:
            return None, None, ""
        found.sort(key=lambda f: (-f[0], f[1]))
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
        self.type_attribute, self.label_attribute, self.type_evidence = self.type_attributes(shapes)
        kinds: dict[tuple[str | None, str, str, bool], Kind] = {}
        for r in self.rows:
            tag = None
            for attribute in (self.type_attribute, self.label_attribute):
                if attribute and attribute in r.attrs and r.attrs[attribute][0] == "S":
                    tag = str(r.attrs[attribute][1])
                    break
            key = (tag, _prefix(r.pk, self.sep), _prefix(r.sk, self.sep), r.pk == r.sk)
            kinds.setdefault(key, Kind(*key, rows=[])).rows.append(r)
        return sorted(kinds.values(), key=lambda k: (not k.same, -k.count))

    # -- classification --

    def classify(self, kinds: list[Kind]) -> None:
        nodes: dict[str, Kind] = {}
        for k in kinds:
            if k.same and (k.pk_prefix or len(kinds) == 1 or self.type_attribute):
                k.role = "node"
                nodes.setdefault(k.pk_prefix, k)
        for k in kinds:
            if k.role:
                continue
            parent = nodes.get(k.pk_prefix) if k.pk_prefix else None
            target = nodes.get(k.sk_prefix) if k.sk_prefix else None
            typed = k.tag is not None and not _UPPER.match(k.tag) and k.tag != self._label_of(k)
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
            if k.role in ("child", "keyed") and not k.sk_prefix and not self.type_attribute:
                k.role = "unexplained"
                k.notes.append(
                    "a sort key with no literal prefix: without a type attribute, Edgewise "
                    "could not tell these items from the other items of their partitions"
                )
        self.claims(kinds)
        self.name_kinds(kinds)

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
                        f"{_items(k.count)} {k.shape()} whose {attribute!r} holds the key of a "
                        f"{owner_kind.pk_prefix}… item with the same {field_attr}: a uniqueness "
                        "claim"
                    )
                    break

    def name_kinds(self, kinds: list[Kind]) -> None:
        taken: set[str] = set()
        for k in kinds:
            if k.role in ("claim", "unexplained"):
                continue
            if k.role == "edge":
                if k.tag:
                    base = label_name(k.tag)
                else:
                    assert k.source is not None and k.target is not None
                    src, dst = (x.pk_prefix.rstrip(self.sep).upper() for x in (k.source, k.target))
                    base = label_name(f"{src}_TO_{dst}")
            elif k.tag:
                base = type_name(k.tag)
            else:
                prefix = (k.sk_prefix if k.role != "node" else k.pk_prefix).rstrip(self.sep)
                base = type_name(prefix or "Item")
            name, n = base, 2
            while name in taken:
                name, n = f"{base}{n}", n + 1
            taken.add(name)
            k.name = name

    # -- key templates --

    def match(
        self,
        k: Kind,
        segments: list[list[str]],
        known: list[dict[str, str]],
        used: set[str],
        key: bool = False,
    ) -> list[str] | None:
        """Name each position of split keys: a known placeholder value, an attribute with the
        same value on every item, a constant literal, or ``{shard}``; None if one is unknown."""
        out: list[str] = []
        positions = len(segments[0])
        for i in range(positions):
            column = [s[i] for s in segments]
            last = i == positions - 1
            name = self._known(column, known, used) or self._attribute(k, column, used)
            if name:
                used.add(name.split(":")[0])
                out.append("{" + name + "}")
                continue
            if len(set(column)) == 1 and not (key and last and i > 0 and k.count > 1):
                out.append(column[0])
                continue
            shards = None if key else self._shards(k, column)
            if shards:
                out.append("{shard}")
                self.shards = shards
                continue
            if key and last and "id" not in used:  # a key's last part is the item's own id
                out.append("{id}")
                continue
            return None
        return out

    @staticmethod
    def _known(column: list[str], known: list[dict[str, str]], used: set[str]) -> str | None:
        for name in known[0]:
            if name not in used and all(
                kv.get(name) == c for kv, c in zip(known, column, strict=True)
            ):
                return name
        return None

    def _attribute(self, k: Kind, column: list[str], used: set[str]) -> str | None:
        for attribute in self.field_attributes(k):
            name = gql_name(attribute)
            if name in used:
                continue
            values = [r.attrs.get(attribute) for r in k.rows]
            if not all(values):
                continue
            if all(v is not None and _text(*v) == c for v, c in zip(values, column, strict=True)):
                return name
            widths = {len(c) for c in column}
            if (
                all(v is not None and v[0] == "N" for v in values)
                and len(widths) == 1
                and any(c.startswith("0") and len(c) > 1 for c in column)
            ):
                try:
                    equal = all(
                        v is not None and Decimal(c) == v[1]
                        for v, c in zip(values, column, strict=True)
                    )
                except InvalidOperation:
                    equal = False
                if equal:
                    return f"{name}:0{widths.pop()}d"
        return None

    def _shards(self, k: Kind, column: list[str]) -> int | None:
        if not all(c.isdigit() for c in column) or k.role == "edge":
            return None
        numbers = [int(c) for c in column]
        ids = [v.get("id") for v in k.values]
        if not ids or not all(ids) or max(numbers) >= MAX_SHARDS:
            return None
        crcs = [zlib.crc32(str(i).encode()) for i in ids]
        for n in range(max(numbers) + 1, MAX_SHARDS + 1):
            if all(crc % n == v for crc, v in zip(crcs, numbers, strict=True)):
                return n
        return None

    def split(self, key: str, prefix: str) -> list[str]:
        rest = key[len(prefix) :]
        return rest.split(self.sep) if rest else [""]

    def key_templates(self, k: Kind) -> None:
        if k.role == "node":
            k.pk_template = k.sk_template = f"{k.pk_prefix}{{id}}"
            k.values = [{"id": r.pk[len(k.pk_prefix) :]} for r in k.rows]
            return
        if k.role == "edge":
            assert k.source is not None and k.target is not None
            k.values = [
                {
                    "from": r.pk[len(k.source.pk_prefix) :],
                    "to": r.sk[len(k.target.pk_prefix) :],
                }
                for r in k.rows
            ]
            return
        pk_rest = [r.pk[len(k.pk_prefix) :] for r in k.rows]
        if k.parent is not None:
            fallback = lower_first(k.parent.name) + "Id"
        else:
            fallback = lower_first(type_name(k.pk_prefix.rstrip(self.sep) or "partition")) + "Id"
        link = self._attribute(k, pk_rest, set())
        link = link if link and ":" not in link and link != "id" else fallback
        k.link = link
        k.pk_template = f"{k.pk_prefix}{{{link}}}"
        segments = [self.split(r.sk, k.sk_prefix) for r in k.rows]
        known = [{link: p} for p in pk_rest]
        names: list[str] | None = None
        if len({len(s) for s in segments}) == 1:
            names = self.match(k, segments, [{} for _ in k.rows], {link}, key=True)
            if names is not None and not any(n.startswith("{") for n in names):
                names = None
        if names is None or any(n == "{shard}" for n in names):
            rest = [r.sk[len(k.sk_prefix) :] for r in k.rows]
            single = self._attribute(k, rest, {link}) or "id"
            names = ["{" + single + "}"]
        if not any(n.startswith("{") for n in names[-1:]):
            names[-1] = "{id}"
        k.sk_template = k.sk_prefix + self.sep.join(names)
        sk = Template.compile(k.sk_template)
        k.values = []
        for r, kv in zip(k.rows, known, strict=True):
            parsed = sk.parse(r.sk) or {}
            k.values.append({**kv, **parsed})

    # -- fields --

    def field_attributes(self, k: Kind) -> list[str]:
        skip = {self.type_attribute, self.label_attribute, self.version, "id"} | self.index_attrs
        if self.timestamps:
            skip |= set(STAMPS)
        names = Counter(a for r in k.rows for a in r.attrs)
        return [a for a in names if a not in skip and not a.startswith("n_")]

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
        stamped = [r for r in self.rows if all(r.attrs.get(s, ("", ""))[0] == "S" for s in STAMPS)]
        if (
            nodes
            and len(stamped) * 2 >= len(nodes)
            and all(_DATETIME.match(str(r.attrs[s][1])) for r in stamped for s in STAMPS)
        ):
            self.timestamps = True

    def scalar(self, k: Kind, attribute: str, owner: str) -> tuple[str, str] | None:
        """(GraphQL type, evidence) of an attribute over a kind's items, None for binary."""
        values = [r.attrs[attribute] for r in k.rows if attribute in r.attrs]
        kinds = {v[0] for v in values}
        n, total = len(values), k.count
        bang = "!" if n == total else ""
        presence = f"on {n} of {total} items" if n < total else f"on all {_items(total)}"
        presence = "on the only item" if total == 1 else presence
        if kinds <= {"B", "BS"}:
            return None
        if len(kinds) > 1:
            return "JSON" + bang, f"{presence}, mixed types {'/'.join(sorted(kinds))}: JSON"
        (kind,) = kinds
        if kind == "S":
            texts = [str(v[1]) for v in values]
            if all(_DATE.match(t) for t in texts):
                return "Date" + bang, f"{presence}, ISO dates"
            if all(_DATETIME.match(t) for t in texts):
                return "DateTime" + bang, f"{presence}, ISO date-times"
            distinct = sorted(set(texts))
            if (
                2 <= len(distinct) <= MAX_ENUM
                and n >= 2 * len(distinct)
                and all(_UPPER.match(t) and t not in ("TRUE", "FALSE", "NULL") for t in texts)
            ):
                enum = self.enum(owner + upper_first(gql_name(attribute)), distinct)
                return enum + bang, f"{presence}, {len(distinct)} distinct values: an enum"
            return "String" + bang, presence
        if kind == "N":
            numbers = [Decimal(v[1]) for v in values]
            if all(x == x.to_integral_value() and abs(x) < 2**31 for x in numbers):
                return "Int" + bang, f"{presence}, whole numbers"
            return "Float" + bang, f"{presence}, numbers with a fraction"
        if kind == "BOOL":
            return "Boolean" + bang, presence
        if kind == "SS":
            return "[String!]" + bang, f"{presence}, string sets"
        if kind == "NS":
            numbers = [Decimal(x) for v in values for x in v[1]]
            whole = all(x == x.to_integral_value() for x in numbers)
            return f"[{'Int' if whole else 'Float'}!]" + bang, f"{presence}, number sets"
        return "JSON" + bang, f"{presence}, {'lists' if kind == 'L' else 'maps'}: JSON"

    def enum(self, name: str, values: list[str]) -> str:
        for existing, known in self.enums.items():
            if known == values:
                return existing
        self.enums[name] = values
        self.enum_evidence[name] = f"{len(values)} values seen"
        return name

    # -- the draft --

    def run(self) -> Draft:
        self.meta()
        self.enums: dict[str, list[str]] = {}
        self.enum_evidence: dict[str, str] = {}
        kinds = self.kinds()
        self.classify(kinds)
        for k in kinds:
            if k.role in ("node", "child", "keyed", "edge"):
                self.key_templates(k)
        self.ids = {
            k.name: {v["id"] for v in k.values} for k in kinds if k.role == "node" and k.values
        }
        self.type_names = {k.name for k in kinds if k.role in ("node", "child", "keyed")}
        self.claimed: dict[str, set[str]] = {}
        if not any(k.role in ("node", "child", "keyed") for k in kinds):
            reasons = "; ".join(
                f"{_items(k.count)} like {self.info.pk}={k.rows[0].pk!r}, "
                f"{self.sk}={k.rows[0].sk!r}: {k.notes[0] if k.notes else k.role}"
                for k in kinds
            )
            raise InferError(
                f"no item of table {self.info.name!r} fits a rule of this draft ({reasons}); "
                "Edgewise recognises types by key prefixes such as 'ORDER#' or by a type "
                "attribute: write the model by hand (see `edgewise model-schema`)"
            )
        body = self.render(kinds)
        unexplained = [k for k in kinds if k.role == "unexplained"]
        for k in unexplained:
            example = k.rows[0]
            self.notes.append(
                f"{_items(k.count)} left out (e.g. {self.info.pk}={example.pk!r}, "
                f"{self.sk}={example.sk!r}): {k.notes[0]}"
            )
        text = self.header(kinds) + body
        try:
            parse_model(text, "<inferred>", self.info.name)
        except ModelError as exc:  # a bug of these rules: say so rather than print a bad file
            raise InferError(
                "the drafted model does not pass check-model (please report this):\n"
                + "\n".join(exc.lines)
                + "\n--- draft ---\n"
                + text
            ) from None
        return Draft(text, tuple(self.notes))

    def header(self, kinds: list[Kind]) -> str:
        total = self.info.item_count
        scope = f"about {total} items" if total else "an unknown number of items"
        lines = [
            f"# Drafted by `edgewise infer` from {_items(len(self.rows))} sampled of table "
            f"{self.info.name!r} ({scope}"
            + ("; the whole table)" if self.complete else "; a sample)")
            + ".",
            "# Every guess carries a comment with its evidence. Edit the names, then run",
            "# `edgewise check-model FILE` and `edgewise serve --model FILE`.",
        ]
        if not self.complete:
            lines.append(
                "# Types, edges and values that no sampled item shows are missing: "
                "sample more with --sample N."
            )
        lines += [f"# note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def claim(self, owner: str, name: str) -> str:
        taken = self.claimed.setdefault(owner, {"id"})
        candidate, n = name, 2
        while candidate in taken:
            candidate, n = f"{name}{n}", n + 1
        taken.add(candidate)
        return candidate

    def render(self, kinds: list[Kind]) -> str:
        out: list[str] = []
        w = out.append
        table = [
            "table:",
            f"  name: {_q(self.info.name)}",
            f"  partitionKey: {_q(self.info.pk)}",
            f"  sortKey: {_q(self.sk)}",
        ]
        if self.type_attribute:
            table.append(
                f"  typeAttribute: {_q(self.type_attribute)}  # guess: {self.type_evidence}"
            )
        if self.label_attribute:
            table.append(
                f"  labelAttribute: {_q(self.label_attribute)}  # guess: on edge items only"
            )
        if self.version:
            table.append(
                f"  versionAttribute: {_q(self.version)}  # guess: {self.version_evidence}"
            )
        stored = [r for k in kinds if k.role == "node" for r in k.rows if "id" in r.attrs]
        store_keys = bool(stored) and all(
            r.text("id") == r.pk.split(self.sep, 1)[-1] for r in stored
        )
        if store_keys:
            table.append(
                f"  storeKeyFields: true  # guess: {len(stored)} node items carry their id "
                "as an attribute"
            )
        if self.timestamps:
            table.append("  timestamps: true  # guess: createdAt/updatedAt on the node items")
        types_out: list[str] = []
        edges_out: list[str] = []
        queries_out: list[str] = []
        self.claimed["Query"] = {"id", "node", "nodes"}
        for k in kinds:
            if k.role in ("node", "child", "keyed"):
                self.claimed["Query"].add(lower_first(k.name))
                self.fields_of(k)
        for k in kinds:
            if k.role in ("node", "child", "keyed"):
                types_out += self.type_block(k, kinds, queries_out)
        for k in kinds:
            if k.role == "edge":
                edges_out += self.edge_block(k, queries_out)
        if self.info.indexes:
            table.append("  indexes:")
            for name, (h, r) in self.info.indexes.items():
                keys = f"partitionKey: {_q(h)}" + (f", sortKey: {_q(r)}" if r else "")
                projection = self.info.projections.get(name, "ALL")
                notes = []
                if projection != "ALL":
                    notes.append(f"projection {projection}: Edgewise reads whole items")
                if name in self.inverted:
                    notes.append("the table's keys swapped: reverse edges")
                elif not any(row.text(h) is not None for row in self.rows):
                    notes.append(f"no sampled item carries {h}: its uses are unknown")
                note = f"  # {'; '.join(notes)}" if notes else ""
                table.append(f"    {_q(name)}: {{{keys}}}{note}")
        out += table
        if self.enums:
            w("enums:")
            for name, values in self.enums.items():
                w(f"  {name}: [{', '.join(values)}]  # guess: {self.enum_evidence[name]}")
        w("types:")
        out += types_out
        if edges_out:
            w("edges:")
            out += edges_out
        if queries_out:
            w("queries:")
            out += queries_out
        return "\n".join(out) + "\n"

    # -- fields of a type --

    def fields_of(self, k: Kind) -> None:
        """Computes ``k.field_lines`` (name, declaration, comment) and refs."""
        key_names = set().union(*(v.keys() for v in k.values)) if k.values else set()
        self.claimed.setdefault(k.name, {"id"}).update(key_names)
        lines: list[tuple[str, str, str]] = []
        refs: list[tuple[str, str, str]] = []
        for attribute in self.field_attributes(k):
            name = gql_name(attribute)
            typed = self.scalar(k, attribute, k.name)
            if typed is None:
                k.notes.append(f"binary attribute {attribute!r} left out (GraphQL has no bytes)")
                continue
            graphql, evidence = typed
            target = self.ref_target(k, attribute, name)
            name = self.claim(k.name, name) if name not in key_names else name
            if name == k.link and k.parent is not None:
                graphql = "ID!"
                evidence += f"; the id of the parent {k.parent.name}"
            elif target:
                graphql = "ID" + ("!" if graphql.endswith("!") else "")
                stem = name[:-2] if name.endswith("Id") and len(name) > 2 else f"{name}Node"
                ref = self.claim(k.name, stem)
                evidence_ref = (
                    f"guess: every {name} is the id of a sampled {target} item; "
                    f"{ref} resolves it (batched)"
                )
                refs.append((ref, f"{{type: {target}, ref: {name}}}", evidence_ref))
            elif name.endswith("Id") or attribute.endswith("_id"):
                evidence += f"; {self.ref_hint(k, attribute)}"
            lines.append((name, _decl(graphql, name, attribute), evidence))
        k_lines = lines + refs
        self.field_lines[k.name] = k_lines

    def ref_target(self, k: Kind, attribute: str, name: str) -> str | None:
        values = [r.text(attribute) for r in k.rows if attribute in r.attrs]
        if not values or not all(v for v in values):
            return None
        for type_, ids in self.ids.items():
            if type_ == k.name and name == "id":
                continue
            if all(v in ids for v in values):
                return type_
        return None

    def ref_hint(self, k: Kind, attribute: str) -> str:
        values = [r.text(attribute) for r in k.rows if attribute in r.attrs]
        counts = {t: sum(1 for v in values if v in ids) for t, ids in self.ids.items()}
        best = max(counts, key=lambda t: counts[t], default=None)
        if best is not None and counts[best]:
            return (
                f"only {counts[best]} of {len(values)} values are ids of sampled {best} items: "
                "the sample may be too small to see this reference (sample more with --sample N)"
            )
        return "no sampled type has these ids: the sample may be too small to see a relation"

    def type_block(self, k: Kind, kinds: list[Kind], queries: list[str]) -> list[str]:
        out: list[str] = []
        evidence = f"{_items(k.count)}, {k.shape()}"
        if k.tag:
            evidence += f", {self.type_attribute} = {k.tag}"
        if k.count == 1:
            evidence += "; one item only: a thin guess"
        what = {
            "node": "a node",
            "child": f"a child of {k.parent.name if k.parent else ''}",
            "keyed": "a keyed node (no parent node item seen)",
        }[k.role]
        out.append(f"  {k.name}:  # {what}: {evidence}")
        if k.role == "keyed" and k.pk_prefix:
            out.append(
                f'    # no item has pk = sk = "{k.pk_prefix}…": if that is a type, the sample '
                "may be too small to see it (sample more), and this becomes its child"
            )
        for note in k.notes:
            out.append(f"    # {note}")
        if k.role == "node":
            out.append(f"    key: {_q(k.pk_template)}")
        else:
            out.append(f"    key: {{pk: {_q(k.pk_template)}, sk: {_q(k.sk_template)}}}")
        if k.tag and k.tag != k.name:
            out.append(f"    typeValue: {_q(k.tag)}")
        if k.role == "child" and k.parent is not None:
            parent = k.parent
            field_name = self.claim(k.name, lower_first(parent.name))
            collection = self.claim(parent.name, plural(lower_first(k.name)))
            order = "asc"
            first = _first_placeholder(k.sk_template)
            first_type = self.placeholder_type(k, first) if first else ""
            comment = f"guess: {_items(k.count)} under {parent.name}'s partition"
            if first_type.startswith(("Date", "DateTime")):
                order = "desc"
                comment += f"; newest first, as the sort key starts with {{{first}}}"
            counter = f"n_{k.tag or k.name}"
            count = ""
            if any(counter in r.attrs for r in parent.rows):
                count = ", count: counter"
                comment += f"; {parent.name} items carry {counter}"
            out.append(
                f"    parent: {{type: {parent.name}, field: {field_name}, "
                f"collection: {collection}, order: {order}{count}}}  # {comment}"
            )
        lines = self.field_lines.get(k.name, [])
        claims = [c for c in kinds if c.role == "claim" and c.parent is k]
        if lines or claims:
            out.append("    fields:")
            for name, declaration, comment in lines:
                claim = next((c for c in claims if gql_name(c.link) == name), None)
                if claim is not None:
                    lowered = all(
                        (v := r.pk[len(claim.pk_prefix) :]) == v.lower() for r in claim.rows
                    )
                    unique = (
                        f"{{key: {_q(claim.pk_prefix + '{' + name + '}')}"
                        + (", caseInsensitive: true" if lowered else "")
                        + (f", owner: {_q(claim.owner)}" if claim.owner != "owner" else "")
                        + (
                            f", typeValue: {_q(claim.tag)}"
                            if claim.tag and self.type_attribute
                            else ""
                        )
                        + "}"
                    )
                    type_ = re.sub(r"^\{type: |, attribute: .*\}$|\}$", "", declaration)
                    stored = (
                        declaration[declaration.index(", attribute") : -1]
                        if (", attribute" in declaration)
                        else ""
                    )
                    declaration = f"{{type: {type_}{stored}, unique: {unique}}}"
                    comment += f"; unique: {claim.notes[0]}"
                out.append(f"      {name}: {declaration}  # {comment}")
        indexes = self.index_lines(k, queries)
        if indexes:
            out.append("    indexes:")
            out += indexes
        return out

    def placeholder_type(self, k: Kind, name: str) -> str:
        for field_name, declaration, _ in self.field_lines.get(k.name, []):
            if field_name == name:
                match = re.search(r"(?:type: )?\"?\[?([A-Za-z]+)", declaration)
                return match.group(1) if match else ""
        return "ID" if name == "id" else "String"

    # -- indexes and access patterns --

    def index_templates(self, k: Kind) -> dict[str, tuple[str, str | None, int | None, str]]:
        out: dict[str, tuple[str, str | None, int | None, str]] = {}
        for index, (h, r) in self.info.indexes.items():
            if index in self.inverted:
                continue
            rows = [
                row
                for row in k.rows
                if row.text(h) is not None and (r is None or row.text(r) is not None)
            ]
            if not rows:
                continue
            if len(rows) < k.count:
                k.notes.append(
                    f"{index}: {h} on {len(rows)} of {k.count} items (a sparse index?); "
                    "not declared, as Edgewise writes index keys on every save"
                )
                continue
            self.shards = None
            templates: list[str | None] = []
            for attribute in (h, r):
                if attribute is None:
                    templates.append(None)
                    continue
                values = [row.text(attribute) or "" for row in rows]
                prefix = ""
                heads = {_prefix(v, self.sep) for v in values}
                if len(heads) == 1:
                    prefix = heads.pop()
                segments = [self.split(v, prefix) for v in values]
                names = None
                if len({len(s) for s in segments}) == 1:
                    names = self.match(k, segments, k.values, set())
                if names is None:
                    k.notes.append(
                        f"{index}: a part of {attribute} (e.g. {values[0]!r}) matches no "
                        "attribute or key part; declare its template by hand"
                    )
                    break
                templates.append(prefix + self.sep.join(names))
            else:
                pk_t, sk_t = templates
                assert pk_t is not None
                evidence = f"{h}{', ' + r if r else ''} on all {_items(k.count)}"
                if self.shards:
                    evidence += f"; {{shard}} = crc32(id) mod {self.shards} fits every item"
                out[index] = (pk_t, sk_t, self.shards, evidence)
        return out

    def index_lines(self, k: Kind, queries: list[str]) -> list[str]:
        out = []
        for index, (pk_t, sk_t, shards, evidence) in self.index_templates(k).items():
            entry = f"pk: {_q(pk_t)}" + (f", sk: {_q(sk_t)}" if sk_t else "")
            entry += f", shards: {shards}" if shards else ""
            out.append(f"      {_q(index)}: {{{entry}}}  # guess: {evidence}")
            queries += self.query_for(k, index, pk_t, sk_t)
        return out

    def query_for(self, k: Kind, index: str, pk_t: str, sk_t: str | None) -> list[str]:
        placeholders = [p for p in Template.compile(pk_t).placeholders if p != "shard"]
        on = None
        partition = pk_t
        if len(placeholders) == 1:
            target = self.ref_type_of(k, placeholders[0])
            if target:
                on = target
                partition = pk_t.replace("{" + placeholders[0] + "}", "{id}")
        return self.query_lines(k.name, on, index, partition, sk_t, k, placeholders)

    def ref_type_of(self, k: Kind, name: str) -> str | None:
        if k.parent is not None and name == k.link:
            return k.parent.name
        for _, declaration, _ in self.field_lines.get(k.name, []):
            match = re.match(r"\{type: (\w+), ref: (\w+)\}", declaration)
            if match and match.group(2) == name:
                return match.group(1)
        return None

    def query_lines(
        self,
        result: str,
        on: str | None,
        index: str,
        partition: str,
        sort: str | None,
        k: Kind,
        placeholders: list[str],
    ) -> list[str]:
        base = plural(lower_first(result))
        if on:
            name = self.claim(on, base)
            key = self.claim("Query", f"{name}Of{on}")
        else:
            by = placeholders or (
                [p for p in Template.compile(sort).placeholders if p != "id"][:1] if sort else []
            )
            key = self.claim(
                "Query", base + "By" + "And".join(upper_first(p) for p in by) if by else base
            )
        lines = [f"  {key}:  # guess: {result} items are written to {index} this way"]
        if on:
            lines += [f"    on: {on}", f"    field: {name}"]
        lines += [
            f"    type: {result}",
            f"    index: {_q(index)}",
            f"    partition: {_q(partition)}",
        ]
        if sort:
            order, between = "asc", ""
            enums_first = True
            for p in Template.compile(sort).placeholders:
                type_ = self.placeholder_type(k, p)
                if type_ in self.enums and enums_first:
                    continue
                enums_first = False
                if type_ in ("Date", "DateTime", "Int", "Float") and p != "id":
                    between = ", between: [from, to]"
                    order = "desc"
                break
            lines.append(f"    sort: {{template: {_q(sort)}{between}}}")
            if order == "desc":
                lines.append("    order: desc  # guess: newest or largest first")
        return lines

    def edge_block(self, k: Kind, queries: list[str]) -> list[str]:
        assert k.source is not None and k.target is not None
        src, dst = k.source, k.target
        evidence = f"{_items(k.count)}, {k.shape()}: both keys are node keys"
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
            name = gql_name(attribute)
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
                stored = "" if name == attribute else f", attribute: {_q(attribute)}"
                fields.append(
                    f"      {name}: {{copyOf: from.{name}{stored}}}  # guess: equals the "
                    f"{src.name}'s {name} on all {_items(len(ends))}"
                )
                continue
            typed = self.scalar(k, attribute, k.name)
            if typed is None:
                continue
            fields.append(f"      {name}: {_decl(typed[0], name, attribute)}  # {typed[1]}")
        if fields:
            out.append("    fields:")
            out += fields
        per_source = Counter(r.pk for r in k.rows)
        if k.count >= 3 and max(per_source.values()) == 1:
            forward = self.claim(src.name, lower_first(dst.name))
            out.append(
                f"    forward: {{field: {forward}, one: true}}  # guess: no sampled {src.name} "
                f"has two (of {_items(k.count)})"
            )
        else:
            forward = self.claim(src.name, plural(lower_first(dst.name)))
            out.append(f"    forward: {forward}")
        templates = self.index_templates(k)
        reverse = None
        for index in self.inverted:
            reverse = (index, f"{index} is the table's keys swapped")
        entries = []
        for index, (pk_t, sk_t, _, evidence) in templates.items():
            entry = f"pk: {_q(pk_t)}" + (f", sk: {_q(sk_t)}" if sk_t else "")
            entries.append(f"      {_q(index)}: {{{entry}}}  # guess: {evidence}")
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
                f"    reverse: {{field: {field_name}, index: {_q(reverse[0])}"
                f"{', one: true' if one else ''}}}  # guess: {reverse[1]}{why}"
            )
        counters = [f"n_{k.tag or k.name}" in r.attrs for r in src.rows]
        if k.tag and any(counters):
            out.append(f"    count: counter  # guess: {src.name} items carry n_{k.tag}")
        if entries:
            out.append("    indexes:")
            out += entries
        return out


def _first_placeholder(text: str) -> str:
    names = Template.compile(text).placeholders
    return names[0] if names else ""


def _q(text: str) -> str:
    """A YAML scalar: plain when safe, else double-quoted (JSON strings are YAML)."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def _decl(graphql: str, name: str, attribute: str) -> str:
    """A field declaration: its type, or ``{type, attribute}`` when the names differ."""
    if name == attribute:
        return _q(graphql)
    return f"{{type: {_q(graphql)}, attribute: {_q(attribute)}}}"


def infer(info: TableInfo, items: Sequence[Mapping[str, Any]], complete: bool = False) -> Draft:
    """Draft a model from DescribeTable's :class:`TableInfo` and sampled items (DynamoDB JSON).
    ``complete`` says the sample is the whole table. Raises :class:`InferError`."""
    return _Inference(info, items, complete).run()
