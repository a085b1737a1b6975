"""GraphQL requests for any served schema, drawn with hypothesis: one operation per root field,
its arguments as variables (valid values; in a quarter of them, values that break a key or a
scalar and now and then a value of the wrong type), its selection every leaf field a few levels
down (connections, refs, paths and unions included). Values come from pools that grow with what
the server answered, so a lookup after a create asks for what was created
(``tests/engine/test_model_fuzz.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
)
from hypothesis import strategies as st

Draw = Callable[[st.SearchStrategy[Any]], Any]

# Values a key or a scalar holds ("1", "YTE=": a number and a binary key's), and values that
# break one (a key's separator, empty, too long, not a date), sent in a bad request.
CONSTANTS: dict[str, list[Any]] = {
    "ID": ["a1", "b2", "1", "42", "YTE=", "Zz"],
    "String": ["a1", "b2", "x", "é", "Zz", "2026-01-15", "YjI=", "a@b.io"],
    "Int": [0, 1, 2, -5, 42, 2**31 - 1, -(2**31)],
    "Float": [0.0, 1.5, -2.25, 1e10, 3],
    "Boolean": [True, False],
    "Date": ["2026-01-15", "1999-12-31"],
    "DateTime": ["2026-01-15T09:00:00.000Z", "2026-01-15T09:00:00+02:00"],
    "JSON": [{}, {"a": [1, "b", None]}, {"org1": "admin", "b2": 1}, "text", 3, [1, 2]],
}
BREAKING: dict[str, list[Any]] = {
    "ID": ["x#y", "", "USER#a1", "q" * 300, "a|b"],
    "String": ["", " ", "x#y", "a|b", "q" * 300],
    "Date": ["2026-13-45", "soon"],
    "DateTime": ["later", "2026-01-15"],
    "JSON": [None],
}
WRONG = [None, "text", 7, 1.5, True, [1], {"k": "v"}]  # any of them, for any type


def chance(draw: Draw, p: float) -> bool:
    """True with probability ``p`` (to the percent), False as hypothesis shrinks it."""
    return bool(draw(st.integers(0, 99)) >= 100 - round(p * 100))


@dataclass
class Pools:
    """Values seen so far: ids answered, and by name every value sent or answered under it."""

    ids: list[str] = field(default_factory=list)
    named: dict[str, list[Any]] = field(default_factory=dict)
    typed: dict[str, list[str]] = field(default_factory=dict)  # a type's ids answered

    def add(self, name: str, value: Any) -> None:
        if isinstance(value, dict):
            typename, id_ = value.get("__typename"), value.get("id")
            if isinstance(typename, str) and isinstance(id_, str):
                seen = self.typed.setdefault(typename, [])
                if id_ not in seen:
                    seen.append(id_)
            for key, inner in value.items():
                self.add(key, inner)
        elif isinstance(value, list):
            for inner in value[:5]:
                self.add(name, inner)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            seen = self.named.setdefault(name, [])
            if value not in seen:
                seen.append(value)
            if name == "id" and isinstance(value, str) and value not in self.ids:
                self.ids.append(value)


@dataclass
class Operation:
    document: str
    variables: dict[str, Any]
    root: str  # query | mutation
    field: str


class _Builder:
    def __init__(self, draw: Draw, schema: GraphQLSchema, pools: Pools, wrong: float) -> None:
        self.draw, self.schema, self.pools, self.wrong = draw, schema, pools, wrong
        self.declared: list[str] = []
        self.variables: dict[str, Any] = {}

    def chance(self, p: float) -> bool:
        return chance(self.draw, p)

    # ---- values --------------------------------------------------------------------------

    def value(
        self,
        type_: GraphQLInputType,
        name: str,
        depth: int = 0,
        owner: str | None = None,
        required: bool = False,
    ) -> Any:
        """A value for ``name`` of ``type_``; ``owner``: the type an `id` names; ``required``:
        not null (but for a wrong value now and then)."""
        if self.chance(self.wrong):
            return self.draw(st.sampled_from(WRONG))
        if isinstance(type_, GraphQLNonNull):
            return self.value(type_.of_type, name, depth, owner, required=True)
        if not required and self.chance(0.1):
            return None
        if isinstance(type_, GraphQLList):
            size = self.draw(st.integers(0, 2 if depth < 2 else 0))
            return [self.value(type_.of_type, name, depth + 1, owner) for _ in range(size)]
        if isinstance(type_, GraphQLEnumType):
            bad = ["NOT_A_VALUE"] if self.wrong else []
            return self.draw(st.sampled_from([*type_.values, *bad]))
        if isinstance(type_, GraphQLInputObjectType):
            out = {}
            inside = re.sub(r"^(Create|Update)|Input$", "", type_.name)
            for key, input_field in type_.fields.items():
                required = isinstance(input_field.type, GraphQLNonNull)
                if required or self.chance(0.7):
                    out[key] = self.value(input_field.type, key, depth + 1, inside)
            return out
        assert isinstance(type_, GraphQLScalarType)
        seen = self.pools.named.get(name, [])
        tail = re.search(r"(?<=[a-z0-9])[A-Z][a-z0-9]*$", name)  # `bookUsername`: a username
        if tail is not None and tail.group() != "Id":
            seen = seen + self.pools.named.get(tail.group().lower(), [])
        if name in ("after", "before"):  # cursors answered, of this connection or another
            seen = self.pools.named.get("cursor", []) + self.pools.named.get("endCursor", [])
        if type_.name == "ID":
            target = owner if name == "id" else _named_by(name)
            typed = self.pools.typed.get(target or "", [])
            if typed and self.chance(0.7):
                return self.draw(st.sampled_from(typed))
            seen = seen + self.pools.ids
        choices = CONSTANTS.get(type_.name, CONSTANTS["String"])
        if self.wrong and self.chance(0.3):
            choices = BREAKING.get(type_.name, BREAKING["String"])
        if seen and self.chance(0.7):
            return self.draw(st.sampled_from(seen))
        return self.draw(st.sampled_from(choices))

    def argument(self, name: str, type_: GraphQLInputType, owner: str | None) -> str:
        variable = f"v{len(self.declared)}"
        self.declared.append(f"${variable}: {type_}")
        self.variables[variable] = self.value(type_, name, owner=owner)
        return f"{name}: ${variable}"

    def arguments(self, args: dict[str, Any], owner: str | None = None) -> str:
        given = []
        for name, arg in args.items():
            if isinstance(arg.type, GraphQLNonNull) or self.chance(0.5):
                given.append(self.argument(name, arg.type, owner))
        return f"({', '.join(given)})" if given else ""

    # ---- selections ----------------------------------------------------------------------

    def selection(self, type_: GraphQLOutputType, depth: int) -> str:
        named = get_named_type(type_)
        if isinstance(named, GraphQLScalarType | GraphQLEnumType):
            return ""
        if depth <= 0:
            return "{ __typename }"
        parts = ["__typename"]
        if isinstance(named, GraphQLInterfaceType | GraphQLUnionType):
            if isinstance(named, GraphQLInterfaceType):
                parts.append("id" if "id" in named.fields else "")
            possible = self.schema.get_possible_types(named)
            for member in possible[:3]:
                parts.append(f"... on {member.name} {self.selection(member, depth - 1)}")
            return "{ " + " ".join(p for p in parts if p) + " }"
        assert isinstance(named, GraphQLObjectType)
        for name, out in named.fields.items():
            leaf = isinstance(get_named_type(out.type), GraphQLScalarType | GraphQLEnumType)
            if not leaf and not self.chance(0.6):
                continue
            args = self.arguments(out.args)
            parts.append(f"{name}{args} {self.selection(out.type, depth - 1)}".strip())
        return "{ " + " ".join(parts) + " }"


def operation(
    draw: Draw, schema: GraphQLSchema, root: str, name: str, pools: Pools, bad: float = 0.25
) -> Operation:
    """One request for the root field ``name`` of ``root`` (query or mutation): a bad one
    (values that break a key or a scalar, or of the wrong type) with probability ``bad``."""
    builder = _Builder(draw, schema, pools, 0.1 if chance(draw, bad) else 0.0)
    parent = schema.query_type if root == "query" else schema.mutation_type
    assert parent is not None
    root_field = parent.fields[name]
    owner = get_named_type(root_field.type).name  # the type an `id` argument names
    if root == "mutation":
        owner = re.sub(r"^(create|update|delete|new|the)", "", name)
    args = builder.arguments(root_field.args, owner)
    depth = 4 if root == "query" else 2  # a mutation's answer: within the cost limit
    body = f"{name}{args} {builder.selection(root_field.type, depth)}".strip()
    declared = f"({', '.join(builder.declared)})" if builder.declared else ""
    return Operation(f"{root} fuzz{declared} {{ {body} }}", builder.variables, root, name)


def _named_by(argument: str) -> str | None:
    """The type an id argument names by its name: `bookId`, `fromBookId`, `toBookId` -> Book."""
    found = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*?)Ids?", argument)
    if found is None:
        return None
    base = re.sub(r"^(from|to)(?=[A-Z])", "", found.group(1))
    return base[:1].upper() + base[1:]


def order_of_mutations(names: list[str]) -> list[str]:
    """Creates first, each twice (an edge joins two nodes), then the rest, removes and deletes
    last, so later ones find items."""

    def rank(name: str) -> int:
        if name.startswith(("create", "new")):
            return 0
        if name.startswith(("delete", "remove", "unlink")):
            return 2
        return 1

    ordered = sorted(names, key=rank)
    creates = [n for n in ordered if rank(n) == 0]
    return creates + ordered
