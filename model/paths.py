"""Transitive paths, compiled: a field that follows edge fields hop by hop (``path: [groups,
subscriptions]``), keeps the last edges a filter lets through (``where:``) and answers the nodes
reached, one object per node reached (``shape:``), or whether one given node is reached. Every
hop, filter and shape is checked here against the model; :mod:`server.engine.paths` reads them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, Protocol

from pydantic.alias_generators import to_camel

from . import spec as s
from .access import Hop, hops_of
from .types import EdgeType, Field, Model, NodeType, TypeRef

__all__ = ["Comparison", "Walk", "Where", "compile_walks", "path_field"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]
Suggest = Callable[[str, list[str]], str]

NOW = "now"
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "in")
ORDERED = ("lt", "lte", "gt", "gte")
OPTIONS = {"type", "description", "path", "where", "shape", "arguments"}  # of a path field

Kind = Literal["string", "enum", "number", "boolean", "date", "datetime"]
_KINDS: dict[str, Kind] = {
    "String": "string",
    "ID": "string",
    "Int": "number",
    "Float": "number",
    "Boolean": "boolean",
    "Date": "date",
    "DateTime": "datetime",
}
_BAD = object()  # an attribute of the wrong type: fails every test


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _value(kind: Kind, raw: Any) -> Any:
    """A stored attribute as the filter compares it, or ``_BAD``."""
    try:
        if kind in ("string", "enum"):
            return raw if isinstance(raw, str) else _BAD
        if kind == "number":
            ok = isinstance(raw, int | float | Decimal) and not isinstance(raw, bool)
            return Decimal(str(raw)) if ok else _BAD
        if kind == "boolean":
            return raw if isinstance(raw, bool) else _BAD
        if kind == "date":
            return date.fromisoformat(raw) if isinstance(raw, str) else _BAD
        return _aware(datetime.fromisoformat(raw)) if isinstance(raw, str) else _BAD
    except (ValueError, InvalidOperation):
        return _BAD


@dataclass(frozen=True, slots=True)
class Comparison:
    """``attribute <op> value``; ``now``: the value is the time of the request."""

    attribute: str
    op: str
    kind: Kind
    value: Any = None  # None, a compared value, or a tuple of them (``in``)
    now: bool = False

    def holds(self, item: Mapping[str, Any], now: datetime) -> bool:
        raw = item.get(self.attribute)
        actual = None if raw is None else _value(self.kind, raw)
        if actual is _BAD:
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
    """Every test holds, and one filter of each ``or`` group."""

    tests: tuple[Comparison, ...] = ()
    alternatives: tuple[tuple[Where, ...], ...] = ()

    def holds(self, item: Mapping[str, Any], now: datetime) -> bool:
        return all(t.holds(item, now) for t in self.tests) and all(
            any(w.holds(item, now) for w in group) for group in self.alternatives
        )


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

    @property
    def target(self) -> str:
        """The type the path ends at."""
        return self.hops[-1].type


class _Checks(Protocol):
    """What :func:`path_field` needs of the model compiler."""

    def problem(self, path: Place, message: str) -> None: ...

    def type_ref(self, path: Place, text: str, objects: bool = True) -> TypeRef | None: ...


def path_field(checks: _Checks, place: Place, name: str, decl: s.FieldSpec) -> Field | None:
    """A path field's own options; its hops, filter and shape are checked once the model's
    edges are known (:func:`compile_walks`)."""
    if decl.path is None:
        option = "where" if decl.where is not None else "shape"
        checks.problem(
            (*place, option),
            f"`{option}` belongs to a path; add `path: [<edge field>, …]` or remove `{option}`",
        )
        return None
    others = sorted(to_camel(o) for o in decl.model_fields_set - OPTIONS)
    if others:
        checks.problem(
            (*place, others[0]),
            f"a path field is computed from its path; remove `{others[0]}` (a path field takes "
            "type, path, where, shape, arguments and description)",
        )
        return None
    if decl.type is None:
        checks.problem(
            place,
            'give the path field a type: `type: "[Product!]!"`, a list of an object, or `Boolean!`',
        )
        return None
    type_ = checks.type_ref((*place, "type"), decl.type)
    arguments = []
    for arg, text in decl.arguments.items():
        ref = checks.type_ref((*place, "arguments", arg), text, False)
        if ref is not None:
            arguments.append((arg, ref))
    if type_ is None:
        return None
    return Field(name, type_, name, "path", decl.description, arguments=tuple(arguments))


def compile_walks(file: s.ModelSpec, model: Model, report: Report, suggest: Suggest) -> None:
    """Check every path field of ``model`` and give it its :class:`Walk` (in place)."""
    for type_name, spec in file.types.items():
        node = model.types.get(type_name)
        if node is None:
            continue
        for name, decl in spec.fields.items():
            field = node.fields.get(name)
            if field is None or field.kind != "path" or isinstance(decl, str):
                continue
            place: Place = ("types", type_name, "fields", name)
            walk = _Compiler(model, report, suggest, place).walk(node, field, decl)
            if walk is not None:
                node.fields[name] = replace(field, walk=walk)


class _Compiler:
    def __init__(self, model: Model, report: Report, suggest: Suggest, place: Place) -> None:
        self.model = model
        self.report = report
        self.suggest = suggest
        self.place = place

    def walk(self, node: NodeType, field: Field, decl: s.FieldSpec) -> Walk | None:
        hops = self.hops(node, decl.path or [])
        if hops is None:
            return None
        answer = self.answer(field, hops, decl)
        if answer is None:
            return None
        where = None
        if decl.where is not None:
            where = self.where((*self.place, "where"), decl.where, self.model.edges[hops[-1].edge])
            if where is None:
                return None
        fills: tuple[tuple[str, int], ...] = ()
        if answer == "objects":
            found = self.fills(field.type.name, hops, decl.shape or {})
            if found is None:
                return None
            fills = found
        argument = field.arguments[0][0] if answer == "exists" else None
        return Walk(hops, where, answer, fills, argument)

    # ---- hops ------------------------------------------------------------------------------

    def hops(self, node: NodeType, names: list[str]) -> tuple[Hop, ...] | None:
        if not names:
            self.report(
                (*self.place, "path"),
                "list the edge fields to follow, e.g. [groups, subscriptions]",
            )
            return None
        at = node.name
        hops = []
        for i, name in enumerate(names):
            choices = hops_of(self.model, at)
            hop = choices.get(name)
            if hop is None:
                if name in self._other_fields(at):
                    what = f"{at}.{name} is not an edge field (a path follows edges)"
                else:
                    what = f"{at} has no edge field {name!r}"
                fix = (
                    self.suggest(name, sorted(choices))
                    if choices
                    else f"{at} has none to follow: end the path before it"
                )
                self.report((*self.place, "path", i), f"{what}; {fix}")
                return None
            hops.append(hop)
            at = hop.type
        return tuple(hops)

    def _other_fields(self, type_name: str) -> set[str]:
        model = self.model
        names = set(model.types[type_name].fields) | {"id"}
        names |= {
            t.parent.collection
            for t in model.types.values()
            if t.parent and t.parent.type == type_name
        }
        names |= {q.field for q in model.queries.values() if q.on == type_name}
        return names

    # ---- what it answers -------------------------------------------------------------------

    def answer(
        self, field: Field, hops: tuple[Hop, ...], decl: s.FieldSpec
    ) -> Literal["nodes", "objects", "exists"] | None:
        type_, end = field.type, hops[-1].type
        answer: Literal["nodes", "objects", "exists"]
        if type_.list and type_.name == end:
            answer = "nodes"
        elif type_.list and type_.name in self.model.objects:
            answer = "objects"
        elif not type_.list and type_.name == "Boolean":
            answer = "exists"
        else:
            self.report(
                (*self.place, "type"),
                f"this path ends at a {end}: make its type [{end}!]! (the {end} nodes reached), a "
                f"list of a type under `objects:` (filled by `shape`), or Boolean! with one ID! "
                f"argument (whether the {end} it names is reached); not {type_}",
            )
            return None
        arguments = field.arguments
        if answer == "exists":
            if len(arguments) != 1 or arguments[0][1].name != "ID" or arguments[0][1].list:
                self.report(
                    (*self.place, "arguments"),
                    f"a Boolean! path takes one ID! argument, the {end} to look for; write "
                    f"`arguments: {{{end[:1].lower()}{end[1:]}Id: ID!}}`",
                )
                return None
        elif arguments:
            self.report(
                (*self.place, "arguments"),
                "only a Boolean! path takes an argument (the id of the node to look for); "
                "remove `arguments`",
            )
            return None
        if answer != "objects" and decl.shape is not None:
            self.report(
                (*self.place, "shape"),
                "`shape` fills the fields of a type under `objects:`; make the field's type a "
                "list of one, or remove `shape`",
            )
            return None
        if answer == "objects" and decl.shape is None:
            self.report(
                self.place,
                f"say which hop fills each field of {type_.name}: add `shape: {{<field>: "
                f"<hop>, …}}` (the last hop, {hops[-1].field}, fills the field holding the {end})",
            )
            return None
        return answer

    def fills(
        self, name: str, hops: tuple[Hop, ...], shape: Mapping[str, str | int]
    ) -> tuple[tuple[str, int], ...] | None:
        plain = self.model.objects[name]
        where = (*self.place, "shape")
        last = len(hops) - 1
        fills = []
        for field_name, hop_name in shape.items():
            place = (*where, field_name)
            target = plain.fields.get(field_name)
            if target is None:
                self.report(
                    place,
                    f"{name} has no field {field_name!r}; "
                    + self.suggest(field_name, list(plain.fields)),
                )
                return None
            index = self.hop_index(place, hops, hop_name)
            if index is None:
                return None
            hop = hops[index]
            if index == last and (target.type.list or target.type.name != hop.type):
                self.report(
                    place,
                    f"{name}.{field_name} holds the {hop.type} reached: give it the type "
                    f"{hop.type}!",
                )
                return None
            if index < last and not (target.type.list and target.type.name == hop.type):
                self.report(
                    place,
                    f"{name}.{field_name} lists the {hop.type} nodes of hop {hop_name!r} that "
                    f"reach each node: give it the type [{hop.type}!]!",
                )
                return None
            fills.append((field_name, index))
        unfilled = [f for f in plain.fields if f not in shape]
        if unfilled:
            self.report(
                where,
                f"{name}.{unfilled[0]} is not filled; add `{unfilled[0]}: <hop>` to `shape`, or "
                f"remove the field from {name}",
            )
            return None
        if not any(index == last for _, index in fills):
            self.report(
                where,
                f"no field of {name} holds the {hops[-1].type} reached; map one to the last "
                f"hop, {hops[-1].field}",
            )
            return None
        return tuple(fills)

    def hop_index(self, place: Place, hops: tuple[Hop, ...], hop: str | int) -> int | None:
        if isinstance(hop, int):
            if 1 <= hop <= len(hops):
                return hop - 1
            self.report(
                place,
                f"this path has {len(hops)} hops: name one by its edge field or a position "
                f"from 1 to {len(hops)}, not {hop}",
            )
            return None
        found = [i for i, h in enumerate(hops) if h.field == hop]
        if len(found) == 1:
            return found[0]
        if found:
            positions = " or ".join(str(i + 1) for i in found)
            self.report(
                place,
                f"the path follows {hop!r} {len(found)} times; name the hop by its "
                f"position: {positions}",
            )
        else:
            fields = list(dict.fromkeys(h.field for h in hops))
            self.report(place, f"{hop!r} is not a hop of this path; {self.suggest(hop, fields)}")
        return None

    # ---- the filter ------------------------------------------------------------------------

    def where(self, place: Place, spec: Mapping[str, Any], edge: EdgeType) -> Where | None:
        tests: list[Comparison] = []
        alternatives: list[tuple[Where, ...]] = []
        ok = True
        for key, value in spec.items():
            if key == "or":
                group = self.alternatives((*place, key), value, edge)
                if group is None:
                    ok = False
                else:
                    alternatives.append(group)
                continue
            field = edge.fields.get(key)
            if field is None:
                choices = list(edge.fields)
                fix = (
                    self.suggest(key, choices)
                    if choices
                    else f"{edge.label} has no fields: remove `where`"
                )
                self.report(
                    (*place, key),
                    f"the last edge of the path, {edge.label}, has no field {key!r}; {fix}",
                )
                ok = False
                continue
            found = self.tests((*place, key), field, value)
            if found is None:
                ok = False
            else:
                tests += found
        return Where(tuple(tests), tuple(alternatives)) if ok else None

    def alternatives(self, place: Place, value: Any, edge: EdgeType) -> tuple[Where, ...] | None:
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            self.report(
                place,
                "`or` lists filters, one of which must hold: write `or: [{<field>: "
                "<value>}, {<field>: {gt: <value>}}]`",
            )
            return None
        group = [self.where((*place, i), v, edge) for i, v in enumerate(value)]
        if any(w is None for w in group):
            return None
        return tuple(w for w in group if w is not None)

    def tests(self, place: Place, field: Field, value: Any) -> list[Comparison] | None:
        type_ = field.type
        kind: Kind | None = "enum" if type_.name in self.model.enums else _KINDS.get(type_.name)
        if kind is None or type_.list:
            self.report(
                place,
                f"{field.name} is a {type_}, which a filter cannot compare; filter on a "
                "String, ID, Int, Float, Boolean, Date, DateTime or enum field",
            )
            return None
        operators = value if isinstance(value, dict) else {"eq": value}
        if not operators:
            self.report(place, "give at least one operator, e.g. `{gt: now}`")
            return None
        tests = []
        for op, operand in operators.items():
            where = (*place, op) if isinstance(value, dict) else place
            if op not in OPERATORS:
                self.report(
                    where, f"unknown operator {op!r}; {self.suggest(str(op), list(OPERATORS))}"
                )
                return None
            if op in ORDERED and kind in ("enum", "boolean"):
                self.report(
                    where,
                    f"{field.name} is a {type_.name}, which has no order; use eq, ne or in",
                )
                return None
            if op == "in":
                if not isinstance(operand, list) or not operand:
                    self.report(where, "`in` lists the values to match, e.g. `in: [A, B]`")
                    return None
                values = [self.literal(where, field, kind, v) for v in operand]
                if any(v is _BAD for v in values):
                    return None
                tests.append(Comparison(field.attribute, op, kind, tuple(values)))
                continue
            if operand is None and op in ORDERED:
                self.report(
                    where,
                    f"null has no order; write `{field.name}: null` (absent or null) or "
                    f"`{field.name}: {{ne: null}}` (present)",
                )
                return None
            if operand == NOW and kind in ("date", "datetime"):
                tests.append(Comparison(field.attribute, op, kind, None, True))
                continue
            literal = self.literal(where, field, kind, operand)
            if literal is _BAD:
                return None
            tests.append(Comparison(field.attribute, op, kind, literal))
        return tests

    def literal(self, place: Place, field: Field, kind: Kind, value: Any) -> Any:
        """The value a test compares with, or ``_BAD`` (reported)."""
        if value is None:
            return None
        name = field.type.name
        converted: Any = _BAD
        if kind == "enum":
            values = self.model.enums[name]
            if value in values:
                return value
            self.report(
                place,
                f"{value!r} is not a value of {name}; {self.suggest(str(value), list(values))}",
            )
            return _BAD
        if kind == "string" and isinstance(value, str):
            converted = value
        elif kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            converted = Decimal(str(value))
        elif kind == "boolean" and isinstance(value, bool):
            converted = value
        elif kind == "date":
            if isinstance(value, date) and not isinstance(value, datetime):
                converted = value
            elif isinstance(value, str):
                converted = _value("date", value)
        elif kind == "datetime":
            if isinstance(value, datetime):
                converted = _aware(value)
            elif isinstance(value, str):
                converted = _value("datetime", value)
        if converted is _BAD:
            example = {
                "string": '"text"',
                "number": "42",
                "boolean": "true",
                "date": "2026-03-14 or now",
                "datetime": "2026-03-14T09:00:00Z or now",
            }[kind]
            self.report(
                place,
                f"{value!r} does not compare with {field.name} ({name}); write e.g. {example}",
            )
        return converted
