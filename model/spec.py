"""The model file format, as pydantic models: what a file may say, its defaults and its JSON
Schema (``edgewise model-schema``). Cross-references (a type named by an edge, a placeholder
naming a field) are checked afterwards, in :mod:`model.compile`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

__all__ = [
    "AccessSpec",
    "DeletionsSpec",
    "EdgeEnd",
    "EdgeSpec",
    "FieldSpec",
    "IdsSpec",
    "IndexKeys",
    "IndexSpec",
    "KeyAttribute",
    "KeyPair",
    "KeysOfSpec",
    "ModelSpec",
    "MutationSpec",
    "Names",
    "ObjectSpec",
    "ParentSpec",
    "QuerySpec",
    "RefSpec",
    "SortSpec",
    "TableSpec",
    "TimestampsSpec",
    "TypeSpec",
    "UniqueSpec",
    "key_name",
    "key_type",
]

GraphQLName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
Order = Literal["asc", "desc"]
Count = Literal["counter", "query"]


class Spec(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


KeyType = Literal["S", "N", "B"]


class KeyAttribute(Spec):
    """A key attribute of another type than a string."""

    name: str = Field(description="The attribute's name.")
    type: KeyType = Field(
        "S",
        description="`S` (string), `N` (number: its template is one placeholder of an Int or "
        "Float field) or `B` (binary: one placeholder of a base64 String field).",
    )


KeyDecl = str | KeyAttribute


def key_name(key: KeyDecl) -> str:
    return key if isinstance(key, str) else key.name


def key_type(key: KeyDecl) -> str:
    return "S" if isinstance(key, str) else key.type


class IndexSpec(Spec):
    """A secondary index: its key attributes, whether it is local, and what it projects."""

    partition_key: KeyDecl = Field(
        description="The index's partition key: an attribute name (a string), or "
        "`{name, type: N}` for a number, `{name, type: B}` for binary."
    )
    sort_key: KeyDecl | None = Field(None, description="The index's sort key, likewise.")
    local: bool = Field(
        False,
        description="A local secondary index: its partition key is the table's, and it is read "
        "as strongly as the table.",
    )
    projection: Literal["ALL", "KEYS_ONLY"] | list[str] = Field(
        "ALL",
        description="What the index holds besides the keys: every attribute (ALL), none "
        "(KEYS_ONLY), or the attributes listed. A selection that needs an attribute outside it "
        "reads the item (batched).",
    )


class DeletionsSpec(Spec):
    """Where a node is marked and listed while a delete too large for one transaction runs."""

    index: str = Field(
        description="A global secondary index whose key attributes are not the table's keys "
        "(a sparse one such as `gsi2`): a marked node is listed there until its delete is done."
    )
    partition: str = Field(
        "DELETING",
        min_length=1,
        description="The index partition listing marked nodes (sort key: their global id).",
    )
    attribute: str = Field(
        "deleting", min_length=1, description="The attribute marking a node (`true`)."
    )


class IdsSpec(Spec):
    """A rule every id of the model must follow, beyond what its key template can hold."""

    pattern: str = Field(description="A regular expression an id must match in full.")
    description: str = Field(
        description="What the pattern allows, in words, for the error message "
        "(`ids are <description>`)."
    )


class TimestampsSpec(Spec):
    """The attributes holding when an item was created and last modified."""

    created: str = Field("createdAt", description="Written once, when the item is created.")
    modified: str = Field("updatedAt", description="Written on creation and every update.")


class TableSpec(Spec):
    """The table: its name, its key attributes, what its items say about themselves, its
    indexes."""

    name: str | None = Field(
        None,
        description="The default table name (`--table` or EDGEWISE_TABLE overrides it); "
        "without it, one of those must name the table.",
    )
    partition_key: KeyDecl = Field(
        "PK",
        description="The table's partition key: an attribute name (a string), or "
        "`{name, type: N}` for a number, `{name, type: B}` for binary.",
    )
    sort_key: KeyDecl = Field("SK", description="The table's sort key, likewise.")
    type_attribute: str | None = Field(
        None,
        description="Attribute holding an item's type name; without it an item's type is "
        "recognised from its key templates.",
    )
    label_attribute: str | None = Field(
        None, description="Attribute holding an edge item's label; defaults to typeAttribute."
    )
    version_attribute: str | None = Field(
        None, description="Attribute for optimistic locking (`expectedVersion`)."
    )
    key_casing: Literal["none", "lower", "upper"] = Field(
        "none",
        description="Lower- or upper-case the values placed into keys (writes, arguments, a "
        "parent's fields), as ElectroDB does; stored attributes keep their case. A key "
        "placeholder field is then read from its own attribute, not from the key.",
    )
    ids: IdsSpec | None = Field(
        None,
        description="A rule for ids; without it an id is any non-empty string (at most 1,024 "
        "bytes) that its template can hold: a value may not contain the literal text that "
        "follows its placeholder.",
    )
    store_key_fields: bool = Field(
        False, description="Also write key placeholders as attributes of their own."
    )
    timestamps: bool | TimestampsSpec = Field(
        False,
        description="`true`: write `createdAt` and `updatedAt` on every node item and serve "
        "them on every type; `{created, modified}`: the attributes to write instead (`_ct`, "
        "`_md`, as dynamodb-toolbox names them), served where a type declares fields over them "
        "(`created: {type: DateTime!, attribute: _ct}`). `modified` is rewritten by every update.",
    )
    indexes: dict[str, IndexSpec] = Field(
        default_factory=dict,
        description="The table's secondary indexes by name (`inverted`, `GSI1`): their key "
        "attributes, whether local, what they project.",
    )
    deletions: DeletionsSpec | None = Field(
        None,
        description="Deletes that do not fit one transaction (100 items: the node, its "
        "children, edges, unique claims and far-end counters): the node is first marked "
        "(read as gone, no edge can be added to it) and listed on an index, then its edges and "
        "children are removed in several idempotent transactions, then the node; a delete "
        "interrupted part-way is finished at the next start. Without it such a delete removes "
        "them in several transactions with no mark, and a crash part-way leaves the node with "
        "part of its edges.",
    )


class KeyPair(Spec):
    """A key made of two templates: the partition key and the sort key."""

    pk: str = Field(description="Template of the partition key (`order#{orderId}`).")
    sk: str = Field(description="Template of the sort key (`item#{id}`).")


class IndexKeys(Spec):
    """The templates written into an index's key attributes on every save."""

    pk: str = Field(
        description="Template written into the index's partition-key attribute "
        "(`ORDERS#{status}#{shard}`). An item whose values leave a template unfilled is left "
        "out of the index (sparse), unless `partial`."
    )
    sk: str | None = Field(
        None, description="Template written into the index's sort-key attribute (`{date}#{id}`)."
    )
    shards: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="`{shard}` = crc32(id) mod shards (write sharding; "
        "of a one-template key's placeholder, `{username}`, where it is not `{id}`).",
    )
    partial: bool = Field(
        False,
        description="Write the keys with an empty value where a placeholder has none (as "
        "ElectroDB does), instead of leaving the item out of the index.",
    )


class UniqueSpec(Spec):
    """A field unique across the table: a claim item keyed by the value, written with it."""

    key: str = Field(description="Template of the claim item's key, e.g. `EMAIL#{email}`.")
    case_insensitive: bool = Field(
        False,
        description="Lower-case the value in the claim's key, so values differing only in case "
        "claim the same item (`EMAIL#<lowercased>`).",
    )
    owner: str = Field("owner", description="Attribute of the claim item holding its node's key.")
    type_value: str | None = Field(
        None,
        description="Value of the table's typeAttribute on the claim item; none by default.",
    )


class RefSpec(Spec):
    """A reference whose field holds the target's whole key."""

    field: str = Field(description="The field holding the key.")
    holds: Literal["key"] = Field(description="`key`: the value is the target's key itself.")


class KeysOfSpec(Spec):
    """A reference per key of a map attribute: the map's keys are the targets' ids."""

    keys_of: str = Field(
        description="The field over the map attribute (a JSON field, or a map of stored objects "
        "with `entries:`) whose keys name the targets (`organizationRoles: {org1: admin}`): the "
        "targets come in the keys' byte-wise "
        "order, read in one wave, and a key with no item is left out."
    )


class MaterializeSpec(Spec):
    """A replica of a path: one item per instance of the path, in the start's partition, kept
    exact by every write Edgewise makes (MODELS.md, "Replicas of a path")."""

    key: KeyPair = Field(
        description="The replica item's key: `{from}` (the start's id) in `pk`, `{to}` (the "
        "end's id) and `{via}` (the node between, on a path of 2 hops; `{via1}`, `{via2}` … "
        'for longer ones) in `sk`: `{pk: "USER#{from}", sk: "GROUPSUB#{to}|{via}"}`.'
    )
    copies: list[str] = Field(
        default_factory=list,
        alias="copy",
        description="The last hop's edge fields kept on each replica (under the edge's "
        "attribute names), so the path's `where` is checked at read time.",
    )
    type: str | None = Field(
        None,
        description="A type under `types:` that names the replica items (read-only; its key "
        "has the literal text of `key`, its placeholders matched to `{from}`, `{to}`, `{via}` "
        "by position). Without it the items carry the type value `<Type>.<field>`.",
    )


class FieldSpec(Spec):
    """A field of a type, an edge or an object: `name: Type`, or this mapping."""

    type: str | None = Field(
        None,
        description="GraphQL type: String, Int, Float, Boolean, ID, Date, DateTime, JSON, "
        "an enum or a type of the model; `!` for non-null, `[T]` for a list.",
    )
    attribute: str | None = Field(None, description="Attribute name; defaults to the field name.")
    from_: Literal["key"] | None = Field(
        None,
        alias="from",
        description="`key`: a field over a key placeholder is read from the key even where the "
        "item has an attribute of that name (a library may keep another value there, such as "
        "an encrypted copy); writes put the value in the key only and leave that attribute "
        "alone. Without it such a field is read from its attribute when the item has one, "
        "else parsed from the key.",
    )
    description: str | None = Field(None, description="The GraphQL field's description.")
    copy_of: str | None = Field(
        None, description="On an edge: a copy of an end's field (`from.status`), kept in sync."
    )
    ref: str | RefSpec | KeysOfSpec | dict[str, str] | None = Field(
        None,
        union_mode="left_to_right",
        description="A reference to the node of the field's type: `productId` (the field "
        "holding the value of its one key placeholder; a list or set holds one per element), "
        "`{field: customerID, holds: key}` (the field holds the target's key itself, "
        "`customerID#VINET`), `{orderId: orderId, id: itemId}` (a composite key: each "
        "placeholder from a field), or `{keysOf: organizationRoles}` (a list type, "
        '`"[Org!]!"`: one node per key of that map field, in the keys\' byte-wise order, a key '
        "with no item left out).",
    )
    first: str | None = Field(None, description="The first item of this collection, in its order.")
    sum: str | None = Field(None, description="A sum over a collection: `collection.field`.")
    unique: UniqueSpec | None = Field(
        None,
        description="The value is unique across the table: a claim item keyed by it is written "
        "in the same transaction as the node (a taken value is CONFLICT, a changed one moves its "
        "claim), and a root lookup per unique field (`userByEmail`) reads through it.",
    )
    hook: str | None = Field(
        None, description="A Python function `package.module:function` that resolves the field."
    )
    arguments: dict[str, str] = Field(
        default_factory=dict, description="Arguments of a hook field: name to GraphQL type."
    )
    default: str | int | float | bool | None = Field(
        None, description="The argument's default in the create and add mutations."
    )
    initial: str | int | float | bool | None = Field(
        None,
        description="Written by the create and add mutations instead of an argument; `now` is "
        "the time of the write.",
    )
    length: tuple[Annotated[int, Field(ge=0)], Annotated[int, Field(ge=0)]] | None = Field(
        None,
        description="A String's [fewest, most] characters, checked on every write by a "
        "mutation; a value of only whitespace counts as empty.",
    )
    format: Literal["email"] | None = Field(
        None,
        description="A String's format, checked on every write by a mutation: `email` is "
        "name@domain.tld, at most 254 characters, no whitespace.",
    )
    path: list[GraphQLName] | None = Field(
        None,
        description="A transitive path: the edge fields followed from this type, hop by hop "
        "(`[groups, subscriptions]`: User.groups, then Group.subscriptions). The field's type "
        "says what it answers: `[T!]!` (T the type the path ends at) each node reached, once, "
        "in the order first reached; `[O!]!` (O a type under `objects:`) one O per node "
        "reached, filled as `shape` says; `Boolean!` with one `ID!` under `arguments` whether "
        "the node that argument names (a bare or global id) is reached.",
    )
    where: dict[str, object] | None = Field(
        None,
        description="A path's filter on its last edge's fields; every entry must hold. "
        "`field: value`: equals (null: absent or null); `field: {eq, ne, lt, lte, gt, gte: "
        "value, in: [values]}`: each operator given holds (an absent value is null: it equals "
        "only null and orders with nothing); `or: [filter, …]`: one of them holds. `now` is the "
        "time of the request, for Date and DateTime fields.",
    )
    shape: dict[GraphQLName, str | int] | None = Field(
        None,
        description="What fills each field of a path's object: the last hop (named by its edge "
        "field) fills the field holding the node reached; an earlier hop fills a list field "
        "with the nodes of that hop the node is reached through, in order "
        "(`{product: subscriptions, via: groups}`). Name a hop by its position (1 for the "
        "first) where the path follows one edge field twice.",
    )
    entries: GraphQLName | None = Field(
        None,
        description="A map of maps (seed 001's `MailingAddresses`): the field's type is a list "
        "of a stored object (`[MailingAddress!]!`), one object per entry of the map attribute, "
        "in byte-wise order of the entries' keys, each key in the object's field this names "
        "(`entries: label`); written back as that map, the key out of the inner map (two "
        "entries with one key are BAD_USER_INPUT).",
    )
    materialize: MaterializeSpec | str | None = Field(
        None,
        union_mode="left_to_right",
        description="Keep a replica of this path in each start's partition and read the field "
        "from it (one Query): a replica as `{key, copy, type}`, or the name of another path "
        "field of this type whose replica answers this one (`hasAccess: … materialize: "
        "products`).",
    )


FieldDecl = str | FieldSpec


class Names(Spec):
    """Names of generated GraphQL things; each defaults to the GraphQL convention."""

    lookup: str | None = Field(None, description="The root lookup field (`order`).")
    create: str | None = Field(None, description="The create mutation (`createOrder`).")
    update: str | None = Field(None, description="The update mutation (`updateOrder`).")
    delete: str | None = Field(None, description="The delete mutation (`deleteOrder`).")
    connection: str | None = Field(
        None, description="The connection type of the type's lists (`OrderConnection`)."
    )
    edge: str | None = Field(None, description="The edge type of those connections (`OrderEdge`).")


class ParentSpec(Spec):
    """The parent of a child type, whose items live in the parent's partition."""

    type: str = Field(
        description="The parent node type, one node per partition: a one-template key, a "
        "constant sort key, or `{id}` in its pk and other fields in its sk (found by a Query "
        "of its partition); an implicit type too (its collections read its partition)."
    )
    field: str = Field(description="The field on the child that leads to its parent.")
    collection: str = Field(description="The connection on the parent that lists the children.")
    order: Order = Field(
        "asc", description="The collection's order by sort key: `asc`, or `desc` (newest first)."
    )
    count: Count = Field(
        "query",
        description="`counter`: keep `n_<TYPE>` on the parent item in the same transaction as "
        "the child, so `totalCount` costs no Query; `query`: count with `Select=COUNT` (right "
        "for tables Edgewise did not write).",
    )
    description: str | None = Field(None, description="The collection's description.")


class TypeSpec(Spec):
    """A node type (or a child type): one kind of item, its key templates and its fields."""

    key: str | KeyPair = Field(
        description="One template (partition key = sort key, the key is the global id) of one "
        "placeholder: `{id}`, or a field (`ACCOUNT#{username}`: `user(username:)`, edges' "
        "`userUsername:`); or {pk, sk}. With `{id}` in pk and "
        'other fields in sk (`{pk: "o#{id}", sk: "c#{customerId}"}`) the type is known by its '
        "partition: `order(id:)` is one Query on the sort key's literal prefix. Placeholders may "
        "follow each other in sk (`account#{name}{id}`) where each is stored in its own "
        "attribute, which reads take the values from."
    )
    description: str | None = Field(None, description="The GraphQL type's description.")
    type_value: str | None = Field(
        None, description="Value of the type attribute on this type's items (default: the name)."
    )
    parent: ParentSpec | None = Field(
        None,
        description="Makes the type a child: its items live in the parent's partition "
        "(`{type, field, collection}`).",
    )
    fields: dict[GraphQLName, FieldDecl] = Field(
        default_factory=dict, description="The type's fields: `name: Type` or a field mapping."
    )
    indexes: dict[str, IndexKeys] = Field(
        default_factory=dict,
        description="Per index, the templates written into its key attributes on every save "
        '(`{GSI2: {pk: "ORDERS#{status}#{shard}", sk: "{date}#{id}", shards: 15}}`).',
    )
    names: Names = Field(
        default_factory=Names,
        description="Names of what is generated for the type, instead of the convention.",
    )
    mutations: bool = Field(True, description="Generate create/update/delete mutations.")
    implicit: bool = Field(
        False,
        description="No item of its own: a node exists while items are keyed under it (the "
        "partition of its children or edges). Looked up without a read; no create, update or "
        "delete mutation; edges to it are added and removed as usual; it may be a parent and "
        "never counts as an overlap. On a replicated path its clock lives in its partition "
        "(sort key `~edgewise`).",
    )
    node: bool = Field(
        True,
        description="Implements Node (a global id, `node(id:)`, a root lookup); `false`: read "
        "only through its parent's collection, `id` is the bare key value.",
    )
    expose: list[GraphQLName] | None = Field(
        None,
        description="The GraphQL fields in order (`id`, `createdAt`, `version` … included); "
        "fields left out are stored but not served. Default: every field.",
    )


class EdgeEnd(Spec):
    """One end of an edge as a field: a connection whose Relay edges carry the edge's fields,
    or a plain field with `one: true`."""

    field: str = Field(description="The field's name on the type at this end.")
    index: str | None = Field(
        None, description="The index a reverse edge is read from (its pk holds the `to` end)."
    )
    one: bool = Field(False, description="At most one: a plain field, not a connection.")
    order: Order = Field(
        "asc", description="The connection's order by sort key: `asc`, or `desc` (newest first)."
    )
    description: str | None = Field(None, description="The field's description.")
    connection: str | None = Field(None, description="Name of the connection type.")
    edge: str | None = Field(None, description="Name of the edge type.")


class EdgeSpec(Spec):
    """An edge type, by its label: an item whose pk is the `from` node's key and whose sk is the
    `to` node's key."""

    from_: str = Field(alias="from", description="Type of the edge's source (its partition).")
    to: str = Field(description="Type of the edge's target (its sort key).")
    fields: dict[GraphQLName, FieldDecl] = Field(
        default_factory=dict,
        description="The edge's own fields, served on the Relay edge (`role`, `since`, "
        "`{copyOf: from.status}`).",
    )
    forward: str | EdgeEnd | None = Field(
        None, description="The field on the `from` type that lists its edges: a name or an end."
    )
    reverse: EdgeEnd | None = Field(
        None,
        description="The field on the `to` type that lists the edges reaching it, read from an "
        "index whose pk holds the `to` end.",
    )
    indexes: dict[str, IndexKeys] = Field(
        default_factory=dict,
        description="Per index, the templates written into the edge item's index attributes "
        "(`{from}` and `{to}` name its ends).",
    )
    count: Count = Field(
        "query",
        description="`counter`: keep `n_<LABEL>` and `n_<LABEL>_in` on the end nodes in the "
        "same transaction as the edge, so `totalCount` costs no Query and a `one: true` end is "
        "race-free; `query`: count with `Select=COUNT`.",
    )
    add: str | None = Field(None, description="Name of the add mutation (`add<Label>`).")
    remove: str | None = Field(None, description="Name of the remove mutation.")
    mutations: bool = Field(True, description="Generate the add and remove mutations.")
    owns: bool = Field(
        False,
        description="The `to` node belongs to the `from` node: deleting the `from` node deletes "
        "it too (so it may have no other edge, child or unique field).",
    )


class SortSpec(Spec):
    """The sort-key condition of an access pattern."""

    template: str = Field(
        description="The index's sort-key template, placeholders filled by arguments or the "
        "parent. A run of placeholders with no text between them (`account#{name}{id}`) is "
        "matched exactly: the longest prefix, then the items whose attributes equal the values."
    )
    between: tuple[GraphQLName, GraphQLName] | None = Field(
        None, description="Two optional arguments bounding the first free placeholder."
    )
    exclusive: bool = Field(
        False, description="`between` leaves out its bounds' own values (after/before)."
    )
    arguments: list[GraphQLName] = Field(
        default_factory=list,
        description="The template's leading placeholders, in order, as optional equality "
        "arguments, coarse to fine: a finer one needs the coarser ones (else BAD_USER_INPUT); "
        "the key prefix they fix ends at a literal boundary. Each is typed like the field of "
        "that name (String when no type has one).",
    )


class QuerySpec(Spec):
    """An access pattern: a Query of the table or of an index, served as a connection."""

    type: str | None = Field(None, description="The type the pattern returns.")
    types: list[GraphQLName] | None = Field(
        None,
        description="Several types one Query returns (a collection of one index partition): "
        "the connection's node is the GraphQL union `union` names; items of other types in the "
        "partition are skipped, never answered nor counted. Instead of `type`.",
    )
    union: GraphQLName | None = Field(
        None, description="The name of the GraphQL union of `types` (e.g. `Workplace`)."
    )
    on: str | None = Field(None, description="A type field instead of a root field.")
    field: str | None = Field(None, description="The field name on `on` (defaults to the key).")
    index: str | None = Field(None, description="The index to query; the table without it.")
    partition: str = Field(description="Partition-key template; `{shard}` fans out.")
    sort: SortSpec | None = Field(
        None, description="The sort-key condition; without it the whole partition is read."
    )
    order: Order = Field(
        "asc", description="The order by sort key: `asc`, or `desc` (newest first)."
    )
    count: Count = Field(
        "query",
        description="Accepted for symmetry with edges; an access pattern's `totalCount` is "
        "always a `Select=COUNT` Query.",
    )
    description: str | None = Field(None, description="The GraphQL field's description.")
    where: dict[str, object] | None = Field(
        None,
        description="A filter on the stored fields of the items read (a FilterExpression), "
        "in the grammar of a path's `where`: `field: value`, `field: {eq, ne, lt, lte, gt, "
        "gte, in}`, `or: [filter, …]`; a value `$name` is the argument `name` (declared under "
        "`arguments`), and an entry whose argument is not given is left out. DynamoDB charges "
        "read units for every item the Query reads, before the filter.",
    )
    arguments: dict[GraphQLName, str] = Field(
        default_factory=dict,
        description="Arguments of the `where` filter: name to GraphQL type (`maxPoints: Int`); "
        "each is optional.",
    )


class ObjectSpec(Spec):
    """An object type without a key of its own: a plain output type that path fields, hook
    fields and mutations return, or with `stored: true` the value of a map attribute."""

    description: str | None = Field(None, description="The GraphQL type's description.")
    stored: bool = Field(
        False,
        description="Read from and written to a map attribute (M): it may type a field of a "
        "type or an edge (`Address`), a list of maps (`[Address!]!`) or, with `entries:`, a "
        "map of maps; a missing attribute answers null, a map an object whose absent fields "
        "are null. Its fields take `attribute:` and may be stored objects in turn. Mutations "
        "take the generated input `<Name>Input` and replace the whole attribute. Without it "
        "the object is output only.",
    )
    fields: dict[GraphQLName, FieldDecl] = Field(
        description="Its fields: `name: Type` or `{type, description}` (read from the returned "
        "value's key of that name); a stored object's also take `attribute` (the key in the "
        "map; default the field's name) and `entries`."
    )


class MutationSpec(Spec):
    """A mutation the file cannot say: a Python function called with the request's context
    and the arguments."""

    type: str = Field(description="GraphQL result type: a type of the schema, `!` for non-null.")
    hook: str = Field(description="The function, `package.module:function`.")
    arguments: dict[GraphQLName, str] = Field(
        default_factory=dict, description="The mutation's arguments: name to GraphQL type."
    )
    description: str | None = Field(None, description="The GraphQL field's description.")
    ids: dict[GraphQLName, GraphQLName] = Field(
        default_factory=dict,
        description="The node type each ID argument names (`userId: User`), for access rules.",
    )


class ModelSpec(Spec):
    """A model file: a table's layout and the GraphQL API over it."""

    table: TableSpec = Field(description="The table the model serves.")
    enums: dict[GraphQLName, list[GraphQLName] | dict[GraphQLName, str]] = Field(
        default_factory=dict,
        description="Enums: a list of values (stored as written), or GraphQL value to the "
        "string stored for it (`{IN_PROGRESS: in-progress}`).",
    )
    types: dict[GraphQLName, TypeSpec] = Field(
        description="The node types, by GraphQL name: each kind of item the table holds."
    )
    edges: dict[GraphQLName, EdgeSpec] = Field(
        default_factory=dict, description="The edge types, by label (`MEMBER_OF`)."
    )
    queries: dict[GraphQLName, QuerySpec] = Field(
        default_factory=dict,
        description="Access patterns, by field name: Queries of the table or an index, as root "
        "fields or, with `on:`, fields of a type.",
    )
    objects: dict[GraphQLName, ObjectSpec] = Field(
        default_factory=dict,
        description="Object types without a key, by name: output types for path fields, hook "
        "fields and mutations, or (`stored: true`) the values of map attributes.",
    )
    mutations: dict[GraphQLName, MutationSpec] = Field(
        default_factory=dict,
        description="Mutations the file cannot say, by name, each answered by a hook.",
    )
    generator: str | None = Field(
        None,
        description="A Python function `package.module:function` that generates sample data "
        "of a given size: `edgewise seed --users N --groups N --products N` calls it with "
        "`users`, `groups`, `products`, `memberships`, `subscriptions` and `seed` as keyword "
        "arguments, and it returns `nodes` and `edges` as in `sample.yaml`, written as the "
        "mutations write them.",
    )
    expose: dict[Literal["Query", "Mutation"], list[GraphQLName]] = Field(
        default_factory=dict,
        description="Root fields in order; those left out are not served. Default: every one.",
    )
    descriptions: dict[str, str] = Field(
        default_factory=dict,
        description="Descriptions by schema coordinate (`Type`, `Type.field`, "
        "`Type.field(argument:)`, `Enum.VALUE`), for what the file generates.",
    )
    access: AccessSpec | None = Field(
        None,
        description="Who may read and change what; without it, with a JWT key configured, reads "
        "need a valid token and mutations the `admin` role.",
    )


AccessPaths = list[str]


class AccessSpec(Spec):
    """Row-level rules over the graph: what a signed-in principal who is not an admin may read
    and change. A path starts at the principal's own node and follows edge fields (`groups`,
    then `members`: `groups.members`); `self` is the principal's node itself."""

    principal: GraphQLName = Field(
        description="The node type whose id is a token's subject (`sub`); a one-template key."
    )
    read: dict[GraphQLName, AccessPaths] = Field(
        default_factory=dict,
        description="Per node type, the paths that reach the nodes a principal may read. A type "
        "left out: admins only; a child type left out: whoever may read its parent.",
    )
    fields: dict[str, AccessPaths] = Field(
        default_factory=dict,
        description="`Type.field`: the paths from which that field of a node may be read; to "
        "anyone else it is null with a FORBIDDEN error.",
    )
    mutations: dict[GraphQLName, dict[str, AccessPaths]] = Field(
        default_factory=dict,
        description="Mutations a principal who is not an admin may run: per id argument "
        "(`input.id`, `userId`), the paths one of which must reach the node it names (`{}`: "
        "any signed-in principal). Every other mutation: admins only.",
    )


ModelSpec.model_rebuild()
