"""The compiled model: frozen values the engine reads. Defaults are applied, names resolved and
templates compiled; nothing here does I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from .templates import Template
from .values import Access, Replica, Walk, Where

__all__ = [
    "CLOCK_SK",
    "INTERNAL",
    "JOB_PREFIX",
    "RECORD_EXPIRES",
    "RECORD_PREFIX",
    "SCALARS",
    "Deletions",
    "EdgeEnd",
    "EdgeType",
    "Field",
    "Index",
    "IndexWrite",
    "Model",
    "Mutation",
    "NodeType",
    "ObjectType",
    "Parent",
    "Query",
    "TypeRef",
    "Unique",
]

SCALARS = frozenset({"String", "Int", "Float", "Boolean", "ID", "Date", "DateTime", "JSON"})
SHARD = "shard"
# Idempotency records (graph.writes.idempotency) live under keys with this prefix, which no key
# template
# of a model starts with; readers that list whole tables (dump, infer) leave them out.
RECORD_PREFIX = "~idempotency#"
JOB_PREFIX = "~replicas#"  # graph.writes.pending: jobs of replicas written in steps
INTERNAL = (RECORD_PREFIX, JOB_PREFIX)  # partitions of Edgewise's own items, never nodes
# The sort key of the item holding the replicas' clock and pending mark of a start that has no
# item of its own (an implicit type), in its partition (graph.writes.replicas); no key template
# of a model matches it, and readers that list partitions or tables leave it out.
CLOCK_SK = "~edgewise"
RECORD_EXPIRES = "edgewiseExpiresAt"  # the table's TTL attribute: epoch seconds

FieldKind = Literal["value", "key", "ref", "first", "sum", "copy", "hook", "stamp", "path"]


@dataclass(frozen=True, slots=True)
class TypeRef:
    """A GraphQL type reference: ``name``, ``name!``, ``[name!]!`` …"""

    name: str
    non_null: bool = False
    list: bool = False
    item_non_null: bool = False

    @classmethod
    def parse(cls, text: str) -> TypeRef:
        text = text.strip()
        non_null = text.endswith("!")
        inner = text[:-1].strip() if non_null else text
        if inner.startswith("[") and inner.endswith("]"):
            item = inner[1:-1].strip()
            item_non_null = item.endswith("!")
            name = item[:-1].strip() if item_non_null else item
            return cls(name, non_null, True, item_non_null)
        return cls(inner, non_null)

    def nullable(self) -> TypeRef:
        return TypeRef(self.name, False, self.list, self.item_non_null)

    def __str__(self) -> str:
        inner = f"[{self.name}{'!' if self.item_non_null else ''}]" if self.list else self.name
        return inner + ("!" if self.non_null else "")


@dataclass(frozen=True, slots=True)
class Unique:
    key: Template
    case_insensitive: bool
    owner: str = "owner"  # the claim's attribute holding its node's key
    type_value: str | None = None  # the claim's type attribute, if any


@dataclass(frozen=True, slots=True)
class Field:
    """A GraphQL field of a type or an edge.

    ``kind``: ``value`` (an attribute), ``key`` (a key placeholder: its attribute when the item
    has one, else parsed from the key; with ``from_key``, from the key alone), ``ref`` (the
    node whose key is ``source``'s value), ``first``/``sum`` (over ``collection``), ``copy``
    (of an edge end's field), ``hook``, ``stamp`` (``createdAt``/``updatedAt``, written by
    Edgewise, read-only), ``path`` (a transitive path along edge fields, ``walk``).
    """

    name: str
    type: TypeRef
    attribute: str
    kind: FieldKind = "value"
    description: str | None = None
    target: str | None = None  # ref: the referenced type
    source: str | None = None  # ref: the field holding the id; copy: the end's field
    end: str | None = None  # copy: "from" or "to"
    collection: str | None = None  # first/sum: the collection field on the same type
    summed: str | None = None  # sum: the field of the collection's items
    unique: Unique | None = None
    hook: str | None = None
    arguments: tuple[tuple[str, TypeRef], ...] = ()
    default: str | int | float | bool | None = None  # the argument's default when written
    initial: str | int | float | bool | None = None  # written at creation, not an argument
    length: tuple[int, int] | None = None  # a String's fewest and most characters
    format: str | None = None  # a String's format: "email"
    walk: Walk | None = None  # path: the hops, the filter on the last edge, the answer's shape
    holds_key: bool = False  # ref: ``source`` holds the target's key itself
    link: tuple[tuple[str, str], ...] = ()  # ref to a composite key: (placeholder, field)
    entries: str | None = None  # a map of maps: the stored object's field holding each key
    from_key: bool = False  # key: read from the key alone, never written to ``attribute``
    keys_of: bool = False  # ref: ``source`` is a map whose keys are the targets' ids


@dataclass(frozen=True, slots=True)
class Index:
    """Where a Query reads: the table (``name`` None) or a secondary index, global or
    ``local``; ``projection``: the attributes it holds besides the keys (None: all of them)."""

    name: str | None
    pk: str
    sk: str | None
    local: bool = False
    projection: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class IndexWrite:
    """Templates written into an index's key attributes when an item is saved."""

    index: Index
    pk: Template
    sk: Template | None
    shards: int | None = None
    partial: bool = False  # a placeholder without a value is written empty, not left out


@dataclass(frozen=True, slots=True)
class Parent:
    """A child type's place in its parent's partition."""

    type: str
    field: str  # child -> parent
    collection: str  # parent -> children
    order: Literal["asc", "desc"]
    count: Literal["counter", "query"]
    link: tuple[tuple[str, str], ...]  # (child placeholder, parent placeholder)
    arguments: tuple[str, ...]  # the child's sort-key placeholders, coarse to fine
    description: str | None = None


@dataclass(frozen=True)
class NodeType:
    name: str
    pk: Template
    sk: Template
    single: bool  # one template of one placeholder: pk = sk, the key is the global id
    key_fields: tuple[str, ...]  # placeholders of pk then sk, each once
    fields: dict[str, Field]  # GraphQL fields except `id`, in file order
    indexes: tuple[IndexWrite, ...] = ()
    parent: Parent | None = None
    description: str | None = None
    names: dict[str, str] = field(default_factory=dict)  # lookup, create, update, delete …
    mutations: bool = True
    type_value: str = ""  # the type attribute's value on its items
    declared: frozenset[str] = frozenset()  # fields the file declares (key fields stored)
    node: bool = True  # implements Node: a global id, node(id:), a root lookup
    expose: tuple[str, ...] | None = None  # the GraphQL fields in order; None: every one
    implicit: bool = False  # no item of its own: exists while items are keyed under it

    @cached_property
    def ident(self) -> str:
        """The key placeholder that names one node: a one-template key's one placeholder
        (``{id}`` of ``ORDER#{id}``, ``{username}`` of ``ACCOUNT#{username}``), else ``id``.
        Edge arguments (``userUsername:``), edge index templates' ``{from}``/``{to}`` and
        shards take its value."""
        return self.key_fields[0] if self.single else "id"

    @cached_property
    def id_keyed(self) -> bool:
        """A one-template key over ``{id}``: named by a bare id or by its global id (the key),
        where another placeholder (``ACCOUNT#{username}``) is named by its value alone."""
        return self.single and self.ident == "id"

    @cached_property
    def located(self) -> bool:
        """Keyed by more than its id: ``{id}`` in the partition key and other fields in the sort
        key (``{pk: "o#{id}", sk: "c#{customerId}"}``), so its item is found by a Query of its
        partition on the sort key's literal prefix, its id alone (and its children) by its
        partition key alone."""
        return (
            not self.single
            and "id" in self.pk.placeholders
            and bool(set(self.sk.placeholders) - set(self.pk.placeholders))
        )

    @cached_property
    def unparsed(self) -> frozenset[str]:
        """Key fields a key alone may not give: those of a run (``{name}{id}``: their own
        attributes hold them) and, on a located type, those of the sort key (a node known by
        its partition: its item's key holds them)."""
        names = self.pk.runs | self.sk.runs
        if self.located:
            names |= set(self.sk.placeholders) - set(self.pk.placeholders)
        return frozenset(names)

    @cached_property
    def keyed(self) -> frozenset[str]:
        """The fields taken from the key (never read from an item)."""
        return frozenset(n for n, f in self.fields.items() if f.kind == "key")

    @cached_property
    def read_only(self) -> frozenset[str]:
        """Stored fields that write nothing: two fields may read one attribute, and the first
        declared writes it (the generated inputs leave the others out)."""
        written: set[str] = set()
        out = set()
        for name, f in self.fields.items():
            if f.kind not in ("value", "key") or f.from_key:
                continue
            if f.attribute in written:
                out.add(name)
            written.add(f.attribute)
        return frozenset(out)

    @property
    def parent_counter(self) -> str | None:
        """The attribute counting this type's items on their parent (``count: counter``)."""
        if self.parent is None or self.parent.count != "counter":
            return None
        return f"n_{self.type_value}"

    def counters(self, model: Model) -> list[str]:
        """Every counter attribute an item of this type can carry."""
        names = [e.counter("from") for e in model.edges.values() if e.source == self.name]
        names += [e.counter("to") for e in model.edges.values() if e.target == self.name]
        names += [
            t.parent_counter
            for t in model.types.values()
            if t.parent is not None and t.parent.type == self.name
        ]
        return [n for n in names if n]


@dataclass(frozen=True, slots=True)
class EdgeEnd:
    field: str
    one: bool
    index: Index | None  # reverse only
    description: str | None
    connection: str
    edge: str
    order: Literal["asc", "desc"] = "asc"


@dataclass(frozen=True)
class EdgeType:
    label: str
    source: str
    target: str
    fields: dict[str, Field]
    forward: EdgeEnd | None
    reverse: EdgeEnd | None
    indexes: tuple[IndexWrite, ...]
    count: Literal["counter", "query"]
    add: str
    remove: str
    mutations: bool = True
    owns: bool = False  # deleting the `from` node deletes the `to` node

    def counter(self, end: str) -> str | None:
        """The attribute counting these edges on the ``from`` (outgoing) or ``to`` node."""
        if self.count != "counter":
            return None
        return f"n_{self.label}" if end == "from" else f"n_{self.label}_in"


@dataclass(frozen=True)
class Query:
    """An access pattern: a Query of ``index`` at ``partition`` (placeholders from the parent
    ``on`` or from arguments; ``{shard}`` fans out), narrowed and ordered by ``sort`` (its
    leading placeholders ``equal`` by optional arguments, coarse to fine), its items filtered
    by ``where`` (a FilterExpression). ``types``: the node types it answers, one (``type``) or
    several, a GraphQL union named ``union``."""

    name: str
    type: str  # the one type answered; with a union, the first of ``types``
    on: str | None
    field: str
    index: Index
    partition: Template
    sort: Template | None
    order: Literal["asc", "desc"]
    count: Literal["counter", "query"]
    description: str | None
    arguments: tuple[tuple[str, TypeRef], ...]  # in GraphQL order
    fan_out: tuple[str, ...]  # sort placeholders that are optional enum arguments
    between: tuple[str, str] | None  # argument names bounding `target`
    target: str | None  # the sort placeholder `between` bounds
    shards: int | None
    connection: str
    exclusive: bool = False  # `between` leaves out its bounds' own values
    types: tuple[str, ...] = ()  # every type answered (``type`` alone without a union)
    union: str | None = None  # the GraphQL union of ``types``
    equal: tuple[str, ...] = ()  # sort placeholders fixed by optional arguments, coarse to fine
    where: Where | None = None  # the filter; its ``$`` arguments are among ``arguments``


@dataclass(frozen=True)
class ObjectType:
    """An object type without a key: a plain output type for paths and hooks (fields read from
    the returned value's keys), or (``stored``) the value of a map attribute, its fields read
    from and written to the map's keys (``attribute``), with a generated input type."""

    name: str
    fields: dict[str, Field]
    description: str | None
    stored: bool = False


@dataclass(frozen=True)
class Mutation:
    """A mutation served by a hook: ``await hook(context, **arguments)``."""

    name: str
    type: TypeRef
    hook: str
    arguments: tuple[tuple[str, TypeRef], ...]
    description: str | None
    ids: dict[str, str] = field(default_factory=dict)  # ID argument -> the node type it names


@dataclass(frozen=True)
class Model:
    name: str
    table: str | None  # None: --table names it
    partition_key: str
    sort_key: str
    type_attribute: str | None
    label_attribute: str | None
    version_attribute: str | None
    store_key_fields: bool
    timestamps: bool  # Edgewise writes the `stamps` attributes on every node item
    indexes: dict[str, Index]
    enums: dict[str, dict[str, str]]  # per enum: GraphQL value -> the string stored
    types: dict[str, NodeType]
    edges: dict[str, EdgeType]
    queries: dict[str, Query]
    objects: dict[str, ObjectType] = field(default_factory=dict)
    mutations: dict[str, Mutation] = field(default_factory=dict)
    expose: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Query/Mutation order
    descriptions: dict[str, str] = field(default_factory=dict)  # by schema coordinate
    access: Access | None = None  # the file's `access` rules, compiled by model.access
    deletions: Deletions | None = None
    key_types: dict[str, str] = field(default_factory=dict)  # key attributes not S: N or B
    ids: tuple[str, str] | None = None  # (pattern, description) every id must follow
    key_casing: str = "none"  # lower/upper: keys hold cased copies of their values
    stamps: tuple[str, str] = ("createdAt", "updatedAt")  # created, modified attributes
    replicas: tuple[Replica, ...] = ()  # the paths kept replicated (``materialize:``)
    generator: str | None = None  # ``package.module:function`` of sample data by size


@dataclass(frozen=True, slots=True)
class Deletions:
    """Large deletes: the node's ``attribute`` set to true and its item listed on ``index``
    under ``partition`` (the sort key its global id) until the delete is done."""

    index: Index
    partition: str
    attribute: str
