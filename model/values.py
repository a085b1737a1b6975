"""The compiled model's values that the compilers of :mod:`model.access`, :mod:`model.filters`,
:mod:`model.paths` and :mod:`model.replicas` build and the engine reads: hops and access rules,
filters, path fields and their replicas. They depend on nothing but key templates, so
:mod:`model.types` holds them without importing a compiler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from .templates import Template

__all__ = [
    "BAD",
    "KINDS",
    "Access",
    "AccessPath",
    "Comparison",
    "Grant",
    "Hop",
    "Kind",
    "Replica",
    "Walk",
    "Where",
    "aware",
    "compared",
]


@dataclass(frozen=True, slots=True)
class Hop:
    """One step along the edge field ``field`` of a ``start`` node: to the ``far`` end of an
    ``edge`` item, a node of ``type``; or (``ref``) along a reference field to the node or
    nodes its value names (``edge`` is then empty)."""

    field: str
    start: str
    edge: str
    far: Literal["from", "to"]
    type: str
    ref: bool = False


@dataclass(frozen=True, slots=True)
class AccessPath:
    """``self`` (no hops) or edge fields joined by dots, from the principal's node."""

    text: str
    hops: tuple[Hop, ...]


@dataclass(frozen=True, slots=True)
class Grant:
    """A mutation's condition on one argument: the node it names (a bare or global id of
    ``type``) is reached by one of ``paths``."""

    argument: tuple[str, ...]  # ("input", "id") or ("userId",)
    type: str
    paths: tuple[AccessPath, ...]


@dataclass(frozen=True)
class Access:
    principal: str
    read: dict[str, tuple[AccessPath, ...]]  # node type -> paths
    fields: dict[str, dict[str, tuple[AccessPath, ...]]]  # node type -> field -> paths
    mutations: dict[str, tuple[Grant, ...]]  # mutation -> conditions, all of which must hold


Kind = Literal["string", "enum", "number", "boolean", "date", "datetime"]
KINDS: dict[str, Kind] = {
    "String": "string",
    "ID": "string",
    "Int": "number",
    "Float": "number",
    "Boolean": "boolean",
    "Date": "date",
    "DateTime": "datetime",
}
BAD = object()  # an attribute of the wrong type: fails every comparison


def aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def compared(kind: Kind, raw: Any) -> Any:
    """A stored attribute as the filter compares it, or ``BAD``."""
    try:
        if kind in ("string", "enum"):
            return raw if isinstance(raw, str) else BAD
        if kind == "number":
            ok = isinstance(raw, int | float | Decimal) and not isinstance(raw, bool)
            return Decimal(str(raw)) if ok else BAD
        if kind == "boolean":
            return raw if isinstance(raw, bool) else BAD
        if kind == "date":
            return date.fromisoformat(raw) if isinstance(raw, str) else BAD
        return aware(datetime.fromisoformat(raw)) if isinstance(raw, str) else BAD
    except (ValueError, InvalidOperation):
        return BAD


@dataclass(frozen=True, slots=True)
class Comparison:
    """``attribute <op> value``; ``now``: the value is the time of the request; ``argument``:
    the value is that argument's, once bound."""

    attribute: str
    op: str
    kind: Kind
    value: Any = None  # None, a compared value, or a tuple of them (``in``)
    now: bool = False
    argument: str | None = None

    def bound(self, arguments: Mapping[str, Any]) -> Comparison | None:
        """This comparison with its argument's value, or None when the argument is not given
        (the comparison is left out)."""
        if self.argument is None:
            return self
        given = arguments.get(self.argument)
        if given is None:
            return None
        if self.op == "in":
            value: Any = tuple(compared(self.kind, v) for v in given)
        else:
            value = compared(self.kind, given)
        return Comparison(self.attribute, self.op, self.kind, value)

    def holds(self, item: Mapping[str, Any], now: datetime) -> bool:
        raw = item.get(self.attribute)
        actual = None if raw is None else compared(self.kind, raw)
        if actual is BAD:
            return False
        expected = self.value
        if self.now:
            expected = now.date() if self.kind == "date" else now
        if self.op == "eq":
            return bool(actual == expected)
        if self.op == "ne":
            return bool(actual != expected)
        if self.op == "in":
            return actual in expected
        if actual is None:  # null orders with nothing
            return False
        if self.op == "lt":
            return bool(actual < expected)
        if self.op == "lte":
            return bool(actual <= expected)
        if self.op == "gt":
            return bool(actual > expected)
        return bool(actual >= expected)


@dataclass(frozen=True, slots=True)
class Where:
    """Every comparison holds, and one filter of each ``or`` group."""

    tests: tuple[Comparison, ...] = ()
    alternatives: tuple[tuple[Where, ...], ...] = ()

    def holds(self, item: Mapping[str, Any], now: datetime) -> bool:
        return all(t.holds(item, now) for t in self.tests) and all(
            any(w.holds(item, now) for w in group) for group in self.alternatives
        )

    def names(self) -> frozenset[str]:
        """The arguments this filter compares with."""
        own = {t.argument for t in self.tests if t.argument is not None}
        return frozenset(own).union(*(w.names() for g in self.alternatives for w in g))

    def bound(self, arguments: Mapping[str, Any]) -> Where | None:
        """The filter with its arguments' values, every comparison whose argument is not given
        left out; None when nothing is left to test (every item passes)."""
        tests = tuple(t for t in (c.bound(arguments) for c in self.tests) if t is not None)
        alternatives = []
        for group in self.alternatives:
            bound = [w.bound(arguments) for w in group]
            if any(w is None for w in bound):
                continue  # an alternative that always holds: so does the group
            alternatives.append(tuple(w for w in bound if w is not None))
        if not tests and not alternatives:
            return None
        return Where(tests, tuple(alternatives))


@dataclass(frozen=True, slots=True)
class Walk:
    """A path field: ``hops`` from the field's type, ``where`` on the last hop's edge items, and
    the answer: ``nodes`` (each node reached once, in the order first reached), ``objects``
    (one per node reached: ``fills`` maps each field of the object to the hop whose nodes fill
    it, the last hop's being the node itself) or ``exists`` (whether the node the ID argument
    ``argument`` names is reached)."""

    hops: tuple[Hop, ...]
    where: Where | None
    answer: Literal["nodes", "objects", "exists"]
    fills: tuple[tuple[str, int], ...] = ()
    argument: str | None = None
    replica: Replica | None = None  # read from this replica of the path (``materialize:``)

    @property
    def target(self) -> str:
        """The type the path ends at."""
        return self.hops[-1].type


@dataclass(frozen=True, slots=True)
class Replica:
    """The replica ``name`` (``User.products``, the field that declares it) of the path
    ``hops`` from ``start``: items keyed ``pk``/``sk`` over ``from``, ``vias`` (the nodes between,
    in path order) and ``to``, holding ``copies`` (field name, attribute) of the last hop's edge
    and, with a type attribute, ``type_value``. ``declared``: the type under ``types:`` that
    names its items, if any (``names`` maps its placeholders to ours)."""

    name: str
    start: str
    hops: tuple[Hop, ...]
    pk: Template
    sk: Template
    vias: tuple[str, ...]
    copies: tuple[tuple[str, str], ...]
    type_value: str
    declared: str | None = None
    names: tuple[tuple[str, str], ...] = ()  # (declared type's placeholder, ours)

    @property
    def nodes(self) -> tuple[str, ...]:
        """The placeholder of each node of the path, start first."""
        return ("from", *self.vias, "to")

    def key_values(self, ids: tuple[str, ...]) -> dict[str, str]:
        """The placeholders' values for the ids of the path's nodes, start first."""
        return dict(zip(self.nodes, ids, strict=True))
