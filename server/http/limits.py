"""Limits checked on the parsed document before validation and execution, so an abusive request
costs no DynamoDB call and little CPU.

Fragments count as spread (each spread adds its fragment's fields, aliases, directives and cost
again), but each fragment is analysed once and its summary reused, so a document whose fragments
each spread the previous one twice is measured in linear time instead of being expanded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    Source,
    TokenKind,
    is_composite_type,
    value_from_ast_untyped,
)
from graphql.language.lexer import Lexer
from graphql.type.definition import GraphQLInterfaceType, GraphQLObjectType
from graphql.type.introspection import SchemaMetaFieldDef, TypeMetaFieldDef, TypeNameMetaFieldDef

from graph.errors import BadUserInput
from server.engine.records import Record
from server.errors import QueryTooComplex

__all__ = ["Limits", "check"]

DEFAULT_FIRST = 20
LIST_GUESS = 20  # how many items a list field without `first` is assumed to return


@dataclass(frozen=True)
class Limits:
    """Each limit is configurable with ``EDGEWISE_LIMIT_<NAME>`` (e.g. EDGEWISE_LIMIT_COST; see
    :mod:`server.settings`)."""

    depth: int = 15
    aliases: int = 15
    tokens: int = 2000
    directives: int = 50
    root_fields: int = 20
    width: int = 100  # fields in one selection set: validation compares them pairwise
    cost: int = 5000
    body_bytes: int = 1_000_000


@dataclass(frozen=True)
class _Summary:
    depth: int = 0
    aliases: int = 0
    directives: int = 0
    cost: int = 0
    fields: int = 0  # fields directly in the selection set (through fragments)
    width: int = 0  # the most fields directly in any one selection set below

    def __add__(self, other: _Summary) -> _Summary:
        return _Summary(
            max(self.depth, other.depth),
            self.aliases + other.aliases,
            self.directives + other.directives,
            self.cost + other.cost,
            self.fields + other.fields,
            max(self.width, other.width),
        )


def _count_tokens(source: str, limit: int) -> int:
    """Tokens in ``source``, counting stops a little past ``limit``."""
    lexer = Lexer(Source(source))
    count = 0
    try:
        while lexer.advance().kind is not TokenKind.EOF and count <= limit:
            count += 1
    except GraphQLError:
        return count  # a syntax error: parsing reports it
    return count


class _Analysis:
    def __init__(
        self, schema: GraphQLSchema, document: DocumentNode, variables: dict[str, Any]
    ) -> None:
        self.schema = schema
        self.variables = variables
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.memo: dict[str, _Summary] = {}
        self.visiting: set[str] = set()

    def _multiplier(self, field: FieldNode, return_type: Any) -> int:
        args = {a.name.value: a.value for a in field.arguments or ()}
        if "first" in args or "last" in args:  # a page, read either way
            sizes = []
            for name in ("first", "last"):
                value: Any = args.get(name)
                if value is not None and value.kind == "variable":
                    sizes.append(self.variables.get(value.name.value))
                elif value is not None:
                    sizes.append(getattr(value, "value", None))
            size = next((s for s in sizes if s is not None), None)
            try:
                return max(0, int(size)) if size is not None else DEFAULT_FIRST
            except (TypeError, ValueError):
                return DEFAULT_FIRST
        if "ids" in args:
            value = args["ids"]
            if value.kind == "variable":
                ids = self.variables.get(value.name.value)
                return len(ids) if isinstance(ids, list) else 1
            return len(value.values) if value.kind == "list" else 1  # one id coerces to a list
        while isinstance(return_type, GraphQLNonNull):
            return_type = return_type.of_type
        if isinstance(return_type, GraphQLList) and field.name.value != "edges":
            return LIST_GUESS
        return 1

    def _field_def(self, parent: GraphQLNamedType | None, name: str) -> Any:
        if name == "__typename":
            return TypeNameMetaFieldDef
        if parent is self.schema.query_type and name == "__schema":
            return SchemaMetaFieldDef
        if parent is self.schema.query_type and name == "__type":
            return TypeMetaFieldDef
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            return parent.fields.get(name)
        return None

    def selections(self, selection_set: SelectionSetNode | None, parent: Any) -> _Summary:
        total = _Summary()
        for selection in selection_set.selections if selection_set else ():
            directives = len(selection.directives or ())
            if isinstance(selection, FieldNode):
                total += self.field(selection, parent)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                inner = self.schema.get_type(condition.name.value) if condition else parent
                total += self.selections(selection.selection_set, inner)
            elif isinstance(selection, FragmentSpreadNode):
                total += self.fragment(selection.name.value)
            total += _Summary(directives=directives)
        return replace(total, width=max(total.width, total.fields))

    def fragment(self, name: str) -> _Summary:
        if name in self.memo:
            return self.memo[name]
        definition = self.fragments.get(name)
        if definition is None or name in self.visiting:
            return _Summary()  # unknown or cyclic: validation reports it
        self.visiting.add(name)
        parent = self.schema.get_type(definition.type_condition.name.value)
        summary = self.selections(definition.selection_set, parent)
        summary += _Summary(directives=len(definition.directives or ()))
        self.visiting.discard(name)
        self.memo[name] = summary
        return summary

    def field(self, field: FieldNode, parent: Any) -> _Summary:
        definition = self._field_def(parent, field.name.value)
        aliases = 1 if field.alias else 0
        if definition is None:
            return _Summary(depth=1, aliases=aliases, fields=1)
        named: Any = definition.type
        while isinstance(named, GraphQLNonNull | GraphQLList):
            named = named.of_type
        inner = self.selections(field.selection_set, named)
        cost = 0
        if is_composite_type(named) and not named.name.startswith("__"):  # introspection is free
            # an object with an id is one item read; wrappers (connections, edges) are free
            reads = 1 if "id" in getattr(named, "fields", {}) else 0
            cost = self._multiplier(field, definition.type) * (reads + inner.cost)
        return _Summary(
            1 + inner.depth, aliases + inner.aliases, inner.directives, cost, 1, inner.width
        )


def check(
    schema: GraphQLSchema, record: Record, variables: dict[str, Any] | None, limits: Limits
) -> DocumentNode:
    """Enforce ``limits`` on ``record``'s document (its tokens counted before it is parsed, both
    once per record); raises ``QueryTooComplex`` naming the limit, ``BadUserInput`` for a syntax
    error."""
    tokens = record.tokens(limits.tokens, _count_tokens)
    if tokens > limits.tokens:
        raise QueryTooComplex(f"tokens is at least {tokens}, over the limit of {limits.tokens}")
    document = record.parsed
    if isinstance(document, GraphQLError):
        if "nested too deeply" in document.message:  # the parser's own depth guard
            raise QueryTooComplex(
                f"depth is over the parser's nesting limit, over the limit of {limits.depth}"
            )
        raise BadUserInput(document.message)
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        defaults = {
            d.variable.name.value: value_from_ast_untyped(d.default_value)
            for d in definition.variable_definitions or ()
            if d.default_value is not None
        }
        analysis = _Analysis(schema, document, defaults | (variables or {}))
        root = {
            "query": schema.query_type,
            "mutation": schema.mutation_type,
            "subscription": schema.subscription_type,
        }[definition.operation.value]
        summary = analysis.selections(definition.selection_set, root)
        summary += _Summary(directives=len(definition.directives or ()))
        found = {
            "depth": summary.depth,
            "aliases": summary.aliases,
            "directives": summary.directives,
            "root_fields": summary.fields,
            "cost": summary.cost,
            "width": summary.width,
        }
        for name, value in found.items():
            limit = getattr(limits, name)
            if value > limit:
                raise QueryTooComplex(
                    f"{name.replace('_', ' ')} is {value}, over the limit of {limit}"
                )
    return document
