"""The planned executor: a query operation compiled once per document into a tree of fields,
each with its resolver, its arguments' places and a completer for its type, then run over the
nodes that the planned prefetch (:mod:`server.engine.plan`) put in memory.

graphql-core completes every field generically: a resolve info, an awaitable check, a type
dispatch and a path per field and per list item. Here the root fields are awaited (their
lookups read the whole selection below them in waves), and everything below is completed by
plain calls. When anything is not plain (a field whose value is still to be read, a null in a
non-null field, an error, an access check not yet decided or denied), this executor gives up
and graphql-core runs the operation as it always does: the reads already made are in the
request's loaders, so that costs no DynamoDB call, and errors, paths and null propagation stay
graphql-core's. An operation that gives up twice in a row (on its data: an error, a field
the principal may not read) is left to graphql-core from then on, but for one request in 16;
directives, introspection, and path and hook fields (which read their own way: their kind says
so at schema build, :mod:`server.engine.kinds`) are never compiled."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    FieldNode,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    OperationDefinitionNode,
    Undefined,
    default_field_resolver,
)
from graphql.execution import Executor
from graphql.execution.collect_fields import collect_fields, collect_subfields
from graphql.execution.values import get_argument_values
from graphql.pyutils import Path

from server.engine.kinds import origin_of

__all__ = ["Compiled", "compile_operation"]

Completer = Callable[[Any, "_Run"], Any]


class GiveUp(Exception):
    """This request's answer needs graphql-core."""


class NotCompiled(Exception):
    """This operation is never run here."""


@dataclass(slots=True)
class _Field:
    key: str
    definition: GraphQLField | None  # None: __typename
    nodes: list[FieldNode]
    parent: GraphQLObjectType
    complete: Completer | None = None
    resolve: Callable[..., Any] = default_field_resolver
    arguments: bool = False
    typename: str = ""


@dataclass(slots=True)
class _Run:
    """One request's state: its executor (variables, context) and an info per field."""

    executor: Executor[Any]
    infos: dict[int, tuple[GraphQLResolveInfo[Any], dict[str, Any]]] = field(default_factory=dict)

    def info(self, f: _Field) -> tuple[GraphQLResolveInfo[Any], dict[str, Any]]:
        found = self.infos.get(id(f))
        if found is None:
            assert f.definition is not None
            info = self.executor.build_resolve_info(
                f.definition, f.nodes, f.parent, Path(None, f.key, f.parent.name)
            )
            arguments = (
                get_argument_values(f.definition, f.nodes[0], self.executor.variable_values)
                if f.arguments
                else {}
            )
            found = self.infos[id(f)] = (info, arguments)
        return found


@dataclass(slots=True)
class Compiled:
    """A query operation's fields, compiled; ``misses`` counts answers given up in a row (from
    two on, one request in 16 tries again)."""

    root: list[_Field]
    misses: int = 0
    skipped: int = 0

    async def run(self, executor: Executor[Any]) -> dict[str, Any] | None:
        """The operation's data, or None when graphql-core must answer."""
        if self.misses >= 2:
            self.skipped += 1
            if self.skipped % 16:
                return None
        run = _Run(executor)
        pending: list[tuple[_Field, Any]] = []
        try:
            values: dict[str, Any] = {}
            for f in self.root:
                if f.definition is None:
                    values[f.key] = f.typename
                    continue
                info, arguments = run.info(f)
                value = f.resolve(executor.root_value, info, **arguments)
                if hasattr(value, "__await__"):
                    pending.append((f, value))
                elif isinstance(value, list) and any(hasattr(v, "__await__") for v in value):
                    pending.append((f, asyncio.gather(*value)))  # nodes(ids:): a lookup each
                values[f.key] = value
            awaited, pending = pending, []
            results = await asyncio.gather(*(v for _, v in awaited), return_exceptions=True)
            for (f, _), result in zip(awaited, results, strict=True):
                if isinstance(result, BaseException):
                    raise GiveUp from result
                values[f.key] = result
            data = {}
            for f in self.root:
                value = values[f.key]
                data[f.key] = value if f.complete is None else f.complete(value, run)
        except Exception:
            for _, value in pending:  # never awaited: a resolver before them raised
                if asyncio.iscoroutine(value):
                    value.close()
            self.misses += 1
            return None
        self.misses = 0
        return data


def _fields(
    schema: GraphQLSchema,
    executor: Executor[Any],
    parent: GraphQLObjectType,
    grouped: dict[str, Any],
) -> list[_Field]:
    out = []
    for key, details in grouped.items():
        nodes = [d.node for d in details]
        name = nodes[0].name.value
        if name == "__typename":
            out.append(_Field(key, None, nodes, parent, typename=parent.name))
            continue
        definition = parent.fields.get(name)
        if definition is None:  # __schema, __type
            raise NotCompiled(name)
        origin = origin_of(definition)
        if origin is not None and origin.walks:  # it reads its own way: graphql-core completes it
            raise NotCompiled(name)
        f = _Field(key, definition, nodes, parent)
        f.resolve = definition.resolve or default_field_resolver
        f.arguments = bool(definition.args)
        f.complete = _completer(schema, executor, definition.type, details)
        out.append(f)
    return out


def _completer(
    schema: GraphQLSchema, executor: Executor[Any], type_: Any, details: Any
) -> Completer:
    if isinstance(type_, GraphQLNonNull):
        inner = _completer(schema, executor, type_.of_type, details)

        def non_null(value: Any, run: _Run) -> Any:
            result = inner(value, run)
            if result is None:
                raise GiveUp
            return result

        return non_null
    if isinstance(type_, GraphQLList):
        item = _completer(schema, executor, type_.of_type, details)

        def listed(value: Any, run: _Run) -> Any:
            if value is None:
                return None
            if hasattr(value, "__await__"):
                raise GiveUp
            return [item(v, run) for v in value]

        return listed
    if isinstance(type_, (GraphQLScalarType, GraphQLEnumType)):
        serialize = type_.serialize

        def leaf(value: Any, run: _Run) -> Any:
            if value is None:
                return None
            if hasattr(value, "__await__"):
                raise GiveUp
            serialized = serialize(value)
            if serialized is None or serialized is Undefined:
                raise GiveUp  # graphql-core reports it
            return serialized

        return leaf
    if isinstance(type_, GraphQLInterfaceType | GraphQLUnionType):
        return _abstract(schema, executor, type_, details)
    if not isinstance(type_, GraphQLObjectType):
        raise NotCompiled(str(type_))
    grouped = collect_subfields(
        schema, executor.fragments, executor.variable_values, executor.operation, type_, details
    ).grouped_field_set
    fields = _fields(schema, executor, type_, grouped)

    def complete_object(source: Any, run: _Run) -> Any:
        if source is None:
            return None
        if hasattr(source, "__await__"):
            raise GiveUp
        out = {}
        for f in fields:
            if f.complete is None:
                out[f.key] = f.typename
                continue
            info, arguments = run.info(f)
            value = f.resolve(source, info, **arguments)
            if hasattr(value, "__await__"):
                if asyncio.iscoroutine(value):
                    value.close()
                raise GiveUp
            out[f.key] = f.complete(value, run)
        return out

    return complete_object


def _abstract(
    schema: GraphQLSchema,
    executor: Executor[Any],
    type_: GraphQLInterfaceType | GraphQLUnionType,
    details: Any,
) -> Completer:
    """An interface or a union (``node``): each possible object type completed as itself, the
    type named by the abstract type's ``resolve_type`` (the engine's reads it off the node)."""
    resolve_type = type_.resolve_type
    if resolve_type is None:  # is_type_of on each object type: left to graphql-core
        raise NotCompiled(type_.name)
    completers = {
        t.name: _completer(schema, executor, t, details) for t in schema.get_possible_types(type_)
    }

    def abstract(value: Any, run: _Run) -> Any:
        if value is None:
            return None
        if hasattr(value, "__await__"):
            raise GiveUp
        complete = completers.get(resolve_type(value, None, type_))  # type: ignore[arg-type]
        if complete is None:
            raise GiveUp
        return complete(value, run)

    return abstract


def compile_operation(schema: GraphQLSchema, executor: Executor[Any]) -> Compiled | None:
    """The query operation ``executor`` runs, compiled (its execution record keeps it: one
    compilation per document and operation); None when it uses what is never compiled. The
    caller compiles only a query without ``@skip``/``@include``."""
    operation: OperationDefinitionNode = executor.operation
    root = schema.query_type
    if operation.operation.value != "query" or root is None:
        return None
    grouped = collect_fields(
        schema, executor.fragments, executor.variable_values, root, operation
    ).grouped_field_set
    try:
        return Compiled(_fields(schema, executor, root, grouped))
    except NotCompiled:
        return None
