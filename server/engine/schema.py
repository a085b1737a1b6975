"""The GraphQL schema of a model, built at startup with graphql-core: node types, Relay
connections with edge fields, ``node``/``nodes``, root lookups whose arguments are the key's
placeholders, access-pattern roots and the generated mutations. Nothing here names a type of a
particular model."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLEnumValue,
    GraphQLField,
    GraphQLID,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInt,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    GraphQLUnionType,
)

from graph.items import Codec, Ref
from model import EdgeType, Field, Model, ModelError, NodeType, Query, TypeRef
from model.common import upper_first
from model.types import EdgeEnd, ObjectType
from server.engine.federation import federated
from server.engine.fields import (
    Lister,
    Resolvers,
    exposed,
    load_hook,
    lookup,
    lookup_args,
    lookup_node,
)
from server.engine.kinds import Kind, ModelField, Origin
from server.engine.mutations import key_type, mutation_type
from server.engine.paths import path_resolvers
from server.engine.scalars import BUILT_IN

__all__ = ["build_schema"]

FIRST = "The first edges to return (after `after`): 0 to 100, default 20 unless `last` is given."
AFTER = "Return the edges after this cursor."
LAST = "The last edges to return (before `before`), read backward: 0 to 100; not with `first`."
BEFORE = "Return the edges before this cursor."
ID_HELP = "A bare id or a global id of this type."


class _Builder:
    def __init__(self, model: Model, codec: Codec) -> None:
        self.model = model
        self.codec = codec
        self.r = Resolvers(model, codec)
        self.named: dict[str, GraphQLNamedType] = dict(BUILT_IN)
        for name, values in model.enums.items():
            self.named[name] = GraphQLEnumType(
                name, {v: GraphQLEnumValue(stored) for v, stored in values.items()}
            )
        self.node = GraphQLInterfaceType(
            "Node",
            {"id": GraphQLField(GraphQLNonNull(GraphQLID), description="The global id.")},
            resolve_type=lambda ref, _info, _type: ref.type.name,
            description="An object with a global id, fetchable with `node(id:)`.",
        )
        self.page_info = GraphQLObjectType(
            "PageInfo",
            {
                "hasNextPage": GraphQLField(
                    GraphQLNonNull(GraphQLBoolean),
                    description="Whether more edges follow this page: exact when paging "
                    "forward (`first`), false when paging backward (`last`).",
                ),
                "hasPreviousPage": GraphQLField(
                    GraphQLNonNull(GraphQLBoolean),
                    description="Whether more edges come before this page: exact when paging "
                    "backward (`last`), false when paging forward (`first`).",
                ),
                "startCursor": GraphQLField(
                    GraphQLString,
                    description="Pass as `before` to get the page before; null on an empty page.",
                ),
                "endCursor": GraphQLField(
                    GraphQLString,
                    description="Pass as `after` to get the next page; null on an empty page.",
                ),
            },
            description="Where a page of a connection starts and ends (the Relay Cursor "
            "Connections spec).",
        )
        self.objects: dict[str, GraphQLObjectType] = {}
        self.connections: dict[str, GraphQLObjectType] = {}
        self.generated: dict[str, GraphQLObjectType] = {}  # connections and their edges
        for node in model.types.values():
            self.objects[node.name] = GraphQLObjectType(
                node.name,
                partial(self.fields_of, node),
                interfaces=[self.node] if node.node else [],
                description=node.description or self._describe(node),
                is_type_of=partial(_is_type_of, node.name),
            )
        self.inputs: dict[str, GraphQLInputObjectType] = {}  # a stored object's, by its name
        for plain in model.objects.values():
            self.named[plain.name] = GraphQLObjectType(
                plain.name,
                partial(self.plain_fields, plain),
                description=plain.description,
            )
            if plain.stored:
                self.inputs[plain.name] = GraphQLInputObjectType(
                    f"{plain.name}Input",
                    partial(self.input_fields, plain),
                    description=f"{plain.name}'s fields, written as one map attribute.",
                )

    def plain_fields(self, plain: ObjectType) -> dict[str, GraphQLField]:
        """A hook's result: each field read from the value's key or attribute."""
        return {
            name: GraphQLField(self.output(f.type), description=f.description)
            for name, f in plain.fields.items()
        }

    def input_fields(self, plain: ObjectType) -> dict[str, GraphQLInputField]:
        """A stored object's input: its fields, typed as declared (stored objects by their
        inputs)."""
        return {
            name: GraphQLInputField(self.input(f.type), description=f.description)
            for name, f in plain.fields.items()
        }

    def named_output(self, name: str) -> GraphQLNamedType | None:
        """Any output type by name, generated ones (connections, edges) included."""
        return self.objects.get(name) or self.named.get(name) or self.generated.get(name)

    @staticmethod
    def _describe(node: NodeType) -> str:
        key = node.pk.text if node.single else f"{node.pk.text} / {node.sk.text}"
        return f"A {node.name} (key `{key}`)."

    def output(self, ref: TypeRef) -> Any:
        return _wrapped(self.objects.get(ref.name) or self.named[ref.name], ref)

    def input(self, ref: TypeRef) -> Any:
        """An argument's or input field's type: a stored object's is its input."""
        return _wrapped(self.inputs.get(ref.name) or self.named[ref.name], ref)

    # ---- connections -----------------------------------------------------------------------

    def connection(
        self, name: str, edge_name: str, node: str, extra: dict[str, GraphQLField], description: str
    ) -> GraphQLObjectType:
        if name in self.connections:
            return self.connections[name]
        r = self.r
        edge_type = GraphQLObjectType(
            edge_name,
            lambda: {
                "cursor": GraphQLField(
                    GraphQLNonNull(GraphQLString),
                    resolve=lambda e, _i: e.cursor,
                    description="Opaque position of this edge; pass as `after` or `before` to "
                    "continue either way.",
                ),
                **extra,
                "node": GraphQLField(
                    self.output(TypeRef(node, True)), resolve=lambda e, _i: e.node
                ),
            },
            description=f"A {node} in {description}.",
        )
        connection = GraphQLObjectType(
            name,
            {
                "pageInfo": GraphQLField(
                    GraphQLNonNull(self.page_info),
                    resolve=r.page_info,
                    description="Pagination state of this page.",
                ),
                "totalCount": GraphQLField(
                    GraphQLNonNull(GraphQLInt),
                    resolve=r.total_count,
                    description="How many edges the whole connection has, on every page.",
                ),
                "edges": GraphQLField(
                    GraphQLNonNull(GraphQLList(GraphQLNonNull(edge_type))),
                    resolve=r.edges,
                    description="The edges of this page, in order.",
                ),
            },
            description=description[:1].upper() + description[1:] + ".",
        )
        self.connections[name] = self.generated[name] = connection
        self.generated[edge_name] = edge_type
        return connection

    def node_connection(self, node: NodeType) -> GraphQLObjectType:
        return self.connection(
            node.names["connection"],
            node.names["edge"],
            node.name,
            {},
            f"a list of {node.name}",
        )

    def query_connection(self, query: Query) -> GraphQLObjectType:
        """An access pattern's connection: of its type, or of the union of its types."""
        if query.union is None:
            return self.node_connection(self.model.types[query.type])
        if query.union not in self.named:
            self.named[query.union] = GraphQLUnionType(
                query.union,
                [self.objects[t] for t in query.types],
                resolve_type=lambda ref, _info, _type: ref.type.name,
                description=f"A {' or a '.join(query.types)}.",
            )
        return self.connection(
            query.connection,
            f"{query.union}Edge",
            query.union,
            {},
            f"a list of {query.union} ({', '.join(query.types)})",
        )

    def edge_connection(self, edge: EdgeType, end: EdgeEnd, far: str) -> GraphQLObjectType:
        extra: dict[str, GraphQLField] = {
            name: ModelField(
                Origin(Kind.EDGE_VALUE),
                self.output(f.type),
                resolve=self.r.edge_field(f),
                description=f.description,
            )
            for name, f in edge.fields.items()
        }
        what = "incoming" if far == edge.source else "outgoing"
        return self.connection(
            end.connection, end.edge, far, extra, f"the {what} {edge.label} edges"
        )

    def edge_type_for(self, edge: EdgeType) -> GraphQLObjectType:
        """The Relay edge an add mutation returns."""
        if edge.forward is not None:
            conn = self.edge_connection(edge, edge.forward, edge.target)
        elif edge.reverse is not None:
            conn = self.edge_connection(edge, edge.reverse, edge.source)
        else:
            from model.common import camel

            stem = camel(edge.label)
            end = EdgeEnd("", False, None, None, f"{stem}Connection", f"{stem}Edge")
            conn = self.edge_connection(edge, end, edge.target)
        edges_type = conn.fields["edges"].type
        edge_type: GraphQLObjectType = edges_type.of_type.of_type.of_type
        return edge_type

    def args(
        self, pairs: tuple[tuple[str, TypeRef], ...] | list[tuple[str, TypeRef]], paged: bool = True
    ) -> dict[str, GraphQLArgument]:
        out = {name: GraphQLArgument(self.input(t)) for name, t in pairs}
        if paged:
            out["first"] = GraphQLArgument(GraphQLInt, description=FIRST)
            out["after"] = GraphQLArgument(GraphQLString, description=AFTER)
            out["last"] = GraphQLArgument(GraphQLInt, description=LAST)
            out["before"] = GraphQLArgument(GraphQLString, description=BEFORE)
        return out

    def listed(
        self,
        type_: GraphQLOutputType,
        lister: Lister,
        kind: Kind,
        args: dict[str, GraphQLArgument],
        description: str | None,
        resolve: Any = None,
    ) -> ModelField:
        """A connection-like field: what it lists, and its resolver (by default a
        connection's)."""
        return ModelField(
            Origin(kind, lister),
            type_,
            args,
            resolve or self.r.connection(lister),
            description,
        )

    # ---- node types ------------------------------------------------------------------------

    def fields_of(self, node: NodeType) -> dict[str, GraphQLField]:
        r, model = self.r, self.model
        if node.node:
            out: dict[str, GraphQLField] = {
                "id": ModelField(
                    Origin(Kind.ID),
                    GraphQLNonNull(GraphQLID),
                    resolve=r.global_id,
                    description="The global id.",
                )
            }
        else:  # not a Node: its id is the bare key value
            bare = Field("id", TypeRef("ID", True), "id", "key")
            out = {
                "id": ModelField(
                    Origin(Kind.KEY), GraphQLNonNull(GraphQLID), resolve=r.key_value(bare)
                )
            }
        listers: dict[str, Lister] = {}
        for child in model.types.values():
            if child.parent is not None and child.parent.type == node.name:
                listers[child.parent.collection] = r.children(child)
        for query in model.queries.values():
            if query.on == node.name:
                listers[query.field] = r.query(query)
        for name, f in node.fields.items():
            out[name] = self.field(node, f, listers)
        if model.version_attribute is not None:  # null on an implicit type (no item)
            version = Field("version", TypeRef("Int", not node.implicit), model.version_attribute)
            out["version"] = ModelField(
                Origin(Kind.VALUE),
                GraphQLInt if node.implicit else GraphQLNonNull(GraphQLInt),
                resolve=r.value(version),
                description="Optimistic-locking version.",
            )
        if node.parent is not None:
            parent = node.parent
            out[parent.field] = ModelField(
                Origin(Kind.PARENT),
                GraphQLNonNull(self.objects[parent.type]),
                resolve=r.parent(node),
                description=f"The {parent.type} this belongs to.",
            )
        for child in model.types.values():
            if child.parent is not None and child.parent.type == node.name:
                pairs = [(a, child.fields[a].type.nullable()) for a in child.parent.arguments]
                out[child.parent.collection] = self.listed(
                    GraphQLNonNull(self.node_connection(child)),
                    listers[child.parent.collection],
                    Kind.CHILDREN,
                    self.args(pairs),
                    child.parent.description,
                )
        for edge in model.edges.values():
            if edge.source == node.name and edge.forward is not None:
                out[edge.forward.field] = self.edge(
                    edge, edge.forward, r.forward(edge), edge.target
                )
            if edge.target == node.name and edge.reverse is not None:
                out[edge.reverse.field] = self.edge(
                    edge, edge.reverse, r.reverse(edge), edge.source
                )
        for query in model.queries.values():
            if query.on == node.name:
                out[query.field] = self.listed(
                    GraphQLNonNull(self.query_connection(query)),
                    listers[query.field],
                    Kind.PATTERN,
                    self.args(query.arguments),
                    query.description,
                )
        if node.expose is not None:
            return {name: out[name] for name in node.expose}
        return out

    def edge(self, edge: EdgeType, end: EdgeEnd, lister: Lister, far: str) -> GraphQLField:
        if end.one:
            return self.listed(
                self.objects[far], lister, Kind.ONE, {}, end.description, self.r.one(lister)
            )
        conn = self.edge_connection(edge, end, far)
        return self.listed(GraphQLNonNull(conn), lister, Kind.EDGES, self.args(()), end.description)

    def field(self, node: NodeType, f: Field, listers: dict[str, Lister]) -> GraphQLField:
        """A node type's field of the model, by its kind."""
        r = self.r
        type_ = self.output(f.type)
        args = {name: GraphQLArgument(self.input(t)) for name, t in f.arguments}
        if f.kind == "key":  # read from the item where the key alone does not give it
            kind = Kind.VALUE if f.name in node.unparsed else Kind.KEY
            return ModelField(Origin(kind), type_, None, r.key_value(f), f.description)
        if f.kind == "ref":
            exists = f.keys_of and not self.model.types[f.target or ""].implicit
            origin = Origin(Kind.REFERENCE, target=r.reference_target(f, node), exists=exists)
            return ModelField(origin, type_, None, r.reference(f, node), f.description)
        if f.kind == "first":
            lister = listers[f.collection or ""]
            return self.listed(type_, lister, Kind.FIRST, {}, f.description, r.first(f, lister))
        if f.kind == "hook":
            start = getattr(load_hook(f.hook or ""), "prefetch", None)  # its first loads
            origin = Origin(Kind.HOOK, start=start)
            return ModelField(origin, type_, args, r.hook(f), f.description)
        if f.kind == "path":  # a transitive path: server.engine.paths
            resolve, start = path_resolvers(r, f)
            origin = Origin(Kind.PATH, start=start)
            return ModelField(origin, type_, args, resolve, f.description)
        if f.kind == "sum":
            lister = listers[f.collection or ""]
            child = self._collection_type(node, f.collection or "")
            summed = child.fields[f.summed or ""]
            resolve = r.sum(f, lister, summed)
            return self.listed(type_, lister, Kind.SUM, {}, f.description, resolve)
        return ModelField(Origin(Kind.VALUE), type_, None, r.value(f), f.description)

    def _collection_type(self, node: NodeType, collection: str) -> NodeType:
        for child in self.model.types.values():
            if (
                child.parent
                and child.parent.type == node.name
                and child.parent.collection == collection
            ):
                return child
        query = next(
            q for q in self.model.queries.values() if q.on == node.name and q.field == collection
        )
        return self.model.types[query.type]

    # ---- roots -----------------------------------------------------------------------------

    def query_type(self) -> GraphQLObjectType:
        return GraphQLObjectType(
            "Query",
            self.root_fields(),
            description="Reads. Every read of a request is batched through its loaders.",
        )

    def subscription_type(self, query: GraphQLObjectType) -> GraphQLObjectType:
        """The live queries: ``Query``'s very root fields (names, arguments, types and
        resolvers), each answered at once and again whenever what its answer read changes
        (:mod:`server.live.queries`)."""
        return GraphQLObjectType(
            "Subscription",
            lambda: dict(query.fields),
            description="Live queries: each root field of Query, answered at once and again "
            "each time an item its answer read (or a partition it listed) changes, when the "
            "answer differs from the last one sent.",
        )

    def root_fields(self) -> dict[str, GraphQLField]:
        codec, r = self.codec, self.r
        fields: dict[str, GraphQLField] = {
            "node": ModelField(
                Origin(Kind.LOOKUP),
                self.node,
                {"id": GraphQLArgument(GraphQLNonNull(GraphQLID))},
                resolve=lambda _root, info, id: lookup_node(info, codec.from_global_id(id)),
                description="Any node by its global id.",
            ),
            "nodes": ModelField(
                Origin(Kind.LOOKUP),
                GraphQLNonNull(GraphQLList(self.node)),
                {"ids": GraphQLArgument(GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLID))))},
                resolve=lambda _root, info, ids: [  # every id parsed before any lookup starts
                    lookup_node(info, ref) for ref in [codec.from_global_id(i) for i in ids]
                ],
                description="Nodes by global id, in order; null where there is none.",
            ),
        }
        for node in self.model.types.values():
            if not node.node:
                continue
            if node.id_keyed:
                args = {"id": GraphQLArgument(GraphQLNonNull(GraphQLID), description=ID_HELP)}
            else:
                named = node.pk.placeholders if node.located else node.key_fields
                args = self.args([(k, key_type(node, k)) for k in named], paged=False)
            fields[node.names["lookup"]] = ModelField(
                Origin(Kind.LOOKUP),
                self.objects[node.name],
                args,
                resolve=lambda _root, info, node=node, **a: lookup(
                    info, lookup_args(codec, node, a)
                ),
                description=f"A {node.name} by its key.",
            )
            for field in node.fields.values():
                if field.unique is not None:
                    name = f"{node.names['lookup']}By{upper_first(field.name)}"
                    fields[name] = ModelField(
                        Origin(Kind.LOOKUP),
                        self.objects[node.name],
                        {field.name: GraphQLArgument(self.input(TypeRef(field.type.name, True)))},
                        resolve=partial(self.r.by_unique, node, field),
                        description=f"The {node.name} whose {field.name} this is"
                        + (
                            ", compared case-insensitively."
                            if field.unique.case_insensitive
                            else "."
                        ),
                    )
        for query in self.model.queries.values():
            if query.on is None:
                lister = r.query(query)
                fields[query.field] = self.listed(
                    GraphQLNonNull(self.query_connection(query)),
                    lister,
                    Kind.PATTERN,
                    self.args(query.arguments),
                    query.description,
                    r.root_connection(lister),
                )
        return exposed(fields, self.model.expose.get("Query"))


def describe(schema: GraphQLSchema, model: Model, strict: bool = True) -> None:
    """Set the descriptions the model gives by schema coordinate (``Type``, ``Type.field``,
    ``Type.field(argument:)``, ``Enum.VALUE``); raises :class:`ModelError` for a coordinate
    that names nothing (``strict``; a schema without its mutations skips theirs)."""
    problems = []
    for coordinate, text in model.descriptions.items():
        target = _coordinate(schema, coordinate)
        if target is None and strict:
            problems.append(
                f"descriptions.{coordinate}: names nothing in the schema; write `Type`, "
                "`Type.field`, `Type.field(argument:)` or `Enum.VALUE`"
            )
        elif target is not None:
            target.description = text
    if problems:
        raise ModelError(model.name, problems)


def _coordinate(schema: GraphQLSchema, coordinate: str) -> Any:
    match = re.fullmatch(r"(\w+)(?:\.(\w+)(?:\((\w+):\))?)?", coordinate)
    if match is None:
        return None
    type_name, member, argument = match.groups()
    named: Any = schema.type_map.get(type_name)
    if named is None or member is None:
        return named
    members = getattr(named, "fields", None) or getattr(named, "values", None) or {}
    found = members.get(member)
    if found is None or argument is None:
        return found
    return getattr(found, "args", {}).get(argument)


def _wrapped(named: Any, ref: TypeRef) -> Any:
    """``named`` as ``ref`` has it: in a list, non-null."""
    if ref.list:
        named = GraphQLList(GraphQLNonNull(named) if ref.item_non_null else named)
    return GraphQLNonNull(named) if ref.non_null else named


def _is_type_of(name: str, value: Any, _info: Any) -> bool:
    return isinstance(value, Ref) and value.type.name == name


def build_schema(
    model: Model,
    codec: Codec,
    read_only: bool = False,
    subscriptions: bool = True,
    federation: bool = False,
) -> GraphQLSchema:
    """The model's schema; ``read_only``: no Mutation type; ``subscriptions``: a Subscription
    type mirroring Query (left out where the table has no stream); ``federation``: an Apollo
    Federation v2 subgraph's (:mod:`server.engine.federation`), the same with ``_service`` and
    ``_entities``."""
    builder = _Builder(model, codec)
    query = builder.query_type()
    mutation = None if read_only else mutation_type(builder)
    subscription = builder.subscription_type(query) if subscriptions else None
    types = [*builder.objects.values()]
    schema = GraphQLSchema(query, mutation, subscription, types=types)
    describe(schema, model, strict=not read_only)
    return federated(schema, codec) if federation else schema
