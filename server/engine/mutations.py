"""The generated mutations of a model: create/update/delete per type, add/remove per edge, with
names from the model. Each is one write in ``graph.writes.writer``; the written item primes the
request's loader, so the answer needs no eventually-consistent read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from graphql import (
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLField,
    GraphQLID,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInt,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    Undefined,
)

from graph.errors import BadUserInput, NotFound
from graph.items import Ref
from graph.reads import cursor_of
from graph.writes.deletes import delete
from graph.writes.items import now_iso
from graph.writes.writer import Writer
from model import EdgeType, Field, Model, ModelError, NodeType, TypeRef
from model.access import end_arguments
from model.common import did_you_mean
from model.types import Mutation
from server.engine.context import Info, ModelContext
from server.engine.fields import EdgeValue, exposed, load_hook
from server.engine.scalars import from_graphql

__all__ = ["Types", "key_type", "mutation_type"]


class Types(Protocol):
    """What the mutations need of the schema being built (:class:`server.engine.schema`'s
    builder): the model, its output and input types, and the names already taken."""

    model: Model
    objects: dict[str, GraphQLObjectType]
    named: dict[str, GraphQLNamedType]
    generated: dict[str, GraphQLObjectType]

    def input(self, ref: TypeRef) -> Any: ...

    def edge_type_for(self, edge: EdgeType) -> GraphQLObjectType: ...

    def named_output(self, name: str) -> GraphQLNamedType | None: ...


ID_HELP = "A bare id or a global id of this type."
NEW_ID = "The id to use; generated (a time-sortable ULID) when left out."


def key_type(node: NodeType, placeholder: str) -> TypeRef:
    if placeholder == "id":
        return TypeRef("ID", True)
    return TypeRef(node.fields[placeholder].type.name, True)


def _writer(ctx: ModelContext) -> Writer:
    return Writer(ctx.table, ctx.codec)


def _find(ctx: ModelContext, node: NodeType, args: dict[str, Any]) -> Ref:
    """The node a mutation names by its key placeholders (a bare or global id for the `id` of
    a one-template key)."""
    if node.id_keyed:
        ref = ctx.codec.by_id(node, str(args["id"]))
        if ref is None:
            raise NotFound(f"{args['id']!r} is not a {node.name} id")
        return ref
    return ctx.codec.ref(node, {k: args[k] for k in node.key_fields})


def _value_fields(node: NodeType) -> list[tuple[str, TypeRef]]:
    """The fields a mutation's input writes: a field reading the attribute an earlier field
    writes is read-only."""
    return [
        (n, f.type)
        for n, f in node.fields.items()
        if f.kind == "value" and f.initial is None and n not in node.read_only
    ]


def _initial(fields: Iterable[Field], enums: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """The values written at creation instead of arguments (``now``: the time of the write; an
    enum's value as it is stored)."""
    return {
        f.name: now_iso() if f.initial == "now" else _stored_enum(f, f.initial, enums)
        for f in fields
        if f.kind == "value" and f.initial is not None
    }


def _stored_enum(field: Field, value: Any, enums: Mapping[str, Mapping[str, str]]) -> Any:
    """A value the file gives for ``field`` (``initial``, ``default``) as it is stored: an enum's
    GraphQL value becomes the string stored for it (``IN_PROGRESS`` -> ``in-progress``)."""
    stored = enums.get(field.type.name)
    return stored.get(value, value) if stored is not None and isinstance(value, str) else value


class _Mutations:
    def __init__(self, builder: Types) -> None:
        self.b = builder
        self.model = builder.model
        self.fields: dict[str, GraphQLField] = {}
        self.deleted = GraphQLObjectType(
            "DeletedNode",
            {
                "id": GraphQLField(
                    GraphQLNonNull(GraphQLID), description="The global id of the deleted node."
                )
            },
            description="What a delete removed.",
        )

    def node(self, node: NodeType) -> None:
        b, names = self.b, node.names
        keys = [k for k in node.key_fields if k != "id"]
        create_fields: dict[str, GraphQLInputField] = {}
        if "id" in node.key_fields:
            create_fields["id"] = GraphQLInputField(GraphQLID, description=NEW_ID)
        create_fields |= {k: GraphQLInputField(b.input(key_type(node, k))) for k in keys}
        create_fields |= {
            n: GraphQLInputField(
                b.input(t.nullable() if node.fields[n].default is not None else t),
                default_value=self._default(node.fields[n]),
            )
            for n, t in _value_fields(node)
        }
        create_input = GraphQLInputObjectType(
            f"Create{node.name}Input", create_fields, description=f"A new {node.name}."
        )
        update_fields = {k: GraphQLInputField(b.input(key_type(node, k))) for k in node.key_fields}
        if "id" in update_fields:
            update_fields["id"] = GraphQLInputField(GraphQLNonNull(GraphQLID), description=ID_HELP)
        update_fields |= {
            n: GraphQLInputField(b.input(t.nullable())) for n, t in _value_fields(node)
        }
        if self.model.version_attribute:
            update_fields["expectedVersion"] = GraphQLInputField(
                GraphQLInt, description="Fail with CONFLICT unless the node is at this version."
            )
        update_input = GraphQLInputObjectType(
            f"Update{node.name}Input",
            update_fields,
            description=f"Changes to a {node.name}; fields left out stay as they are.",
        )
        output = GraphQLNonNull(b.objects[node.name])
        self.fields[names["create"]] = GraphQLField(
            output,
            {"input": GraphQLArgument(GraphQLNonNull(create_input))},
            resolve=lambda _r, info, input, node=node: self.create(info, node, input),
            description=f"Create a {node.name}; CONFLICT if its key is taken.",
        )
        self.fields[names["update"]] = GraphQLField(
            output,
            {"input": GraphQLArgument(GraphQLNonNull(update_input))},
            resolve=lambda _r, info, input, node=node: self.update(info, node, input),
            description=f"Change a {node.name}; NOT_FOUND if there is none.",
        )
        delete_args = {
            k: GraphQLArgument(
                b.input(key_type(node, k)), description=ID_HELP if k == "id" else None
            )
            for k in node.key_fields
        }
        self.fields[names["delete"]] = GraphQLField(
            GraphQLNonNull(self.deleted),
            delete_args,
            resolve=lambda _r, info, node=node, **args: self.delete(info, node, args),
            description=f"Delete a {node.name} with its children and its edges.",
        )

    def edge(self, edge: EdgeType) -> None:
        b = self.b
        source, target = self.model.types[edge.source], self.model.types[edge.target]
        ends = end_arguments(self.model, edge)
        args = {name: self._end(end) for name, end in zip(ends, (source, target), strict=True)}
        values = {
            n: GraphQLArgument(
                b.input(f.type.nullable() if f.default is not None else f.type),
                default_value=self._default(f),
            )
            for n, f in edge.fields.items()
            if f.kind == "value" and f.initial is None
        }
        self.fields[edge.add] = GraphQLField(
            GraphQLNonNull(b.edge_type_for(edge)),
            args | values,
            resolve=lambda _r, info, **a: self.add(info, edge, source, target, a),
            description=f"Add a {edge.label} edge; NOT_FOUND if an end is missing, CONFLICT if "
            "it exists.",
        )
        self.fields[edge.remove] = GraphQLField(
            GraphQLNonNull(GraphQLBoolean),
            args,
            resolve=lambda _r, info, **a: self.remove(info, edge, source, target, a),
            description=f"Remove a {edge.label} edge; false if there was none.",
        )

    def _default(self, field: Field) -> Any:
        """A field's `default` as its input's default value (as stored), or none."""
        if field.default is None:
            return Undefined
        return _stored_enum(field, field.default, self.model.enums)

    def _end(self, node: NodeType) -> GraphQLArgument:
        """The argument naming an edge's end: its id, or its key placeholder's value."""
        if node.id_keyed:
            return GraphQLArgument(GraphQLNonNull(GraphQLID), description=ID_HELP)
        help = f"The {node.ident} of the {node.name}."
        return GraphQLArgument(self.b.input(key_type(node, node.ident)), description=help)

    # ---- resolvers -------------------------------------------------------------------------

    @staticmethod
    def _prime(ctx: ModelContext, ref: Ref, item: dict[str, Any]) -> Ref:
        ctx.reads.items.clear(ref.key).prime(ref.key, item)
        ref.item = item
        return ref

    def _stored(self, fields: dict[str, Field], values: dict[str, Any]) -> dict[str, Any]:
        """Input values as stored (a stored object as its map)."""
        out = {}
        objects = self.model.objects
        for name, value in values.items():
            field = fields.get(name)
            if field is None:  # a key placeholder of no field: an id
                out[name] = from_graphql(TypeRef("ID"), value)
            else:
                out[name] = from_graphql(field.type, value, objects, field.entries, name)
        return out

    async def create(self, info: Info, node: NodeType, values: dict[str, Any]) -> Ref:
        ctx: ModelContext = info.context
        ctx.require_admin(f"create a {node.name}")
        defaults = {  # an explicit null where the file gives a default
            n: self._default(f)
            for n, f in node.fields.items()
            if f.default is not None and n in values and values[n] is None
        }
        values = values | defaults
        values = self._stored(node.fields, values) | _initial(
            node.fields.values(), self.model.enums
        )
        if node.id_keyed and values.get("id") is not None:
            found = ctx.codec.by_id(node, str(values["id"]))
            if found is None:
                raise BadUserInput(f"{values['id']!r} is not a {node.name} id")
            values["id"] = ctx.codec.id_of(found)
        item = await _writer(ctx).create(node, values)
        return self._prime(ctx, Ref(node, ctx.codec.item_key(item)), item)

    async def update(self, info: Info, node: NodeType, values: dict[str, Any]) -> Ref:
        ctx: ModelContext = info.context
        ctx.require_admin(f"update a {node.name}")
        values = dict(values)
        expected = values.pop("expectedVersion", None)
        ref = _find(ctx, node, values)
        changes = self._stored(
            node.fields, {k: v for k, v in values.items() if k not in node.key_fields}
        )
        item = await _writer(ctx).update(node, ref.key, changes, expected)
        return self._prime(ctx, ref, item)

    async def delete(self, info: Info, node: NodeType, args: dict[str, Any]) -> dict[str, str]:
        ctx: ModelContext = info.context
        ctx.require_admin(f"delete a {node.name}")
        ref = _find(ctx, node, args)
        await delete(_writer(ctx), node, ref.key)
        ctx.reads.items.clear(ref.key)
        return {"id": ctx.codec.global_id(ref)}

    def _ends(
        self,
        ctx: ModelContext,
        edge: EdgeType,
        source: NodeType,
        target: NodeType,
        args: dict[str, Any],
    ) -> tuple[Ref, Ref]:
        first, second = end_arguments(self.model, edge)
        return (
            _find(ctx, source, {source.ident: args[first]}),
            _find(ctx, target, {target.ident: args[second]}),
        )

    async def add(
        self, info: Info, edge: EdgeType, source: NodeType, target: NodeType, args: dict[str, Any]
    ) -> EdgeValue:
        ctx: ModelContext = info.context
        ctx.require_admin(f"add a {edge.label} edge")
        start, end = self._ends(ctx, edge, source, target, args)
        given = {
            n: _stored_enum(f, f.default, self.model.enums) if args[n] is None else args[n]
            for n, f in edge.fields.items()
            if f.kind == "value" and n in args
        }
        fields = self._stored(edge.fields, given) | _initial(edge.fields.values(), self.model.enums)
        item = await _writer(ctx).add_edge(edge, start, end, fields)
        return EdgeValue(item, cursor_of(ctx.codec.layout, None, item), end)

    async def remove(
        self, info: Info, edge: EdgeType, source: NodeType, target: NodeType, args: dict[str, Any]
    ) -> bool:
        ctx: ModelContext = info.context
        ctx.require_admin(f"remove a {edge.label} edge")
        start, end = self._ends(ctx, edge, source, target, args)
        return await _writer(ctx).remove_edge(edge, start, end)


def _hook_mutation(builder: Types, mutation: Mutation) -> GraphQLField:
    """A mutation the model's Python function answers: ``await hook(context, **args)``."""
    named = builder.named_output(mutation.type.name)
    if named is None:
        known = [*builder.objects, *builder.named, *builder.generated]
        raise ModelError(
            builder.model.name,
            [
                f"mutations.{mutation.name}.type: unknown type {mutation.type.name!r}; "
                + did_you_mean(mutation.type.name, known)
            ],
        )
    type_: Any = named
    if mutation.type.list:
        type_ = GraphQLList(GraphQLNonNull(type_) if mutation.type.item_non_null else type_)
    if mutation.type.non_null:
        type_ = GraphQLNonNull(type_)
    function = load_hook(mutation.hook)
    return GraphQLField(
        type_,
        {name: GraphQLArgument(builder.input(t)) for name, t in mutation.arguments},
        resolve=lambda _root, info, **args: function(info.context, **args),
        description=mutation.description,
    )


def mutation_type(builder: Types) -> GraphQLObjectType | None:
    model = builder.model
    mutations = _Mutations(builder)
    for node in model.types.values():
        if node.mutations:
            mutations.node(node)
    for edge in model.edges.values():
        if edge.mutations:
            mutations.edge(edge)
    if model.mutations:
        for type_ in builder.objects.values():
            assert type_.fields  # build every connection and edge type a hook may return
        for mutation in model.mutations.values():
            mutations.fields[mutation.name] = _hook_mutation(builder, mutation)
    if not mutations.fields:
        return None
    return GraphQLObjectType(
        "Mutation",
        exposed(mutations.fields, model.expose.get("Mutation")),
        description="Writes. Each applies fully or leaves no trace.",
    )
