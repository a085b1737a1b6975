"""Filters on stored fields, compiled: comparisons of stored attributes by the fields' GraphQL
types, all of which must hold, and ``or`` groups of filters, one of which must. A path's
``where:`` filters its last edge's fields and is evaluated on the edge items read; an access
pattern's ``where:`` filters its types' fields, may compare with its arguments (``$name``), and
is sent as a FilterExpression once bound to the arguments given (:meth:`Where.bound`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from .types import EdgeType, Field, Model, TypeRef

__all__ = ["NOW", "Comparison", "Where", "compile_filter", "compile_where"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]
Suggest = Callable[[str, list[str]], str]
Fields = Mapping[str, Field]

NOW = "now"
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "in")
ORDERED = ("lt", "lte", "gt", "gte")

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
_BAD = object()  # an attribute of the wrong type: fails every comparison


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
            value: Any = tuple(_value(self.kind, v) for v in given)
        else:
            value = _value(self.kind, given)
        return Comparison(self.attribute, self.op, self.kind, value)

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


def compile_where(
    place: Place,
    spec: Mapping[str, Any],
    edge: EdgeType,
    model: Model,
    report: Report,
    suggest: Suggest,
) -> Where | None:
    """The filter ``spec`` on ``edge``'s fields, or None (each mistake reported at its place)."""
    subject = f"the last edge of the path, {edge.label},"
    compiler = _Compiler(model.enums, report, suggest, edge.fields, subject, edge.label)
    return compiler.where(place, spec)


def compile_filter(
    place: Place,
    spec: Mapping[str, Any],
    fields: Fields,
    name: str,
    arguments: Mapping[str, TypeRef],
    enums: Mapping[str, Mapping[str, str]],
    report: Report,
    suggest: Suggest,
) -> Where | None:
    """The filter ``spec`` on stored ``fields`` (of the type or types ``name``), whose values
    may name ``arguments`` (``$name``), or None (each mistake reported at its place)."""
    compiler = _Compiler(enums, report, suggest, fields, name, name, arguments)
    return compiler.where(place, spec)


class _Compiler:
    def __init__(
        self,
        enums: Mapping[str, Mapping[str, str]],
        report: Report,
        suggest: Suggest,
        fields: Fields,
        subject: str,
        name: str,
        arguments: Mapping[str, TypeRef] | None = None,
    ) -> None:
        self.enums = enums
        self.report = report
        self.suggest = suggest
        self.fields = fields
        self.subject = subject  # who has the fields, in a sentence
        self.name = name
        self.arguments = arguments  # None: a value starting with `$` is text

    def where(self, place: Place, spec: Mapping[str, Any]) -> Where | None:
        tests: list[Comparison] = []
        alternatives: list[tuple[Where, ...]] = []
        ok = True
        for key, value in spec.items():
            if key == "or":
                group = self.alternatives((*place, key), value)
                if group is None:
                    ok = False
                else:
                    alternatives.append(group)
                continue
            field = self.fields.get(key)
            if field is None:
                choices = list(self.fields)
                fix = (
                    self.suggest(key, choices)
                    if choices
                    else f"{self.name} has no fields: remove `where`"
                )
                self.report((*place, key), f"{self.subject} has no field {key!r}; {fix}")
                ok = False
                continue
            if field.kind not in ("value", "key", "stamp", "copy"):
                self.report(
                    (*place, key),
                    f"{field.name} is a {field.kind} field, not a stored value; filter on a "
                    "field stored on the items",
                )
                ok = False
                continue
            found = self.tests((*place, key), field, value)
            if found is None:
                ok = False
            else:
                tests += found
        return Where(tuple(tests), tuple(alternatives)) if ok else None

    def alternatives(self, place: Place, value: Any) -> tuple[Where, ...] | None:
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            self.report(
                place,
                "`or` lists filters, one of which must hold: write `or: [{<field>: "
                "<value>}, {<field>: {gt: <value>}}]`",
            )
            return None
        group = [self.where((*place, i), v) for i, v in enumerate(value)]
        if any(w is None for w in group):
            return None
        return tuple(w for w in group if w is not None)

    def tests(self, place: Place, field: Field, value: Any) -> list[Comparison] | None:
        type_ = field.type
        kind: Kind | None = "enum" if type_.name in self.enums else _KINDS.get(type_.name)
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
            argument = self.argument(where, field, kind, op, operand)
            if argument is False:
                return None
            if argument is not None:
                tests.append(Comparison(field.attribute, op, kind, argument=argument))
                continue
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

    def argument(self, place: Place, field: Field, kind: Kind, op: str, operand: Any) -> Any:
        """The argument ``$name`` names, None for a literal, or False (reported)."""
        if self.arguments is None or not (isinstance(operand, str) and operand.startswith("$")):
            return None
        name = operand[1:]
        declared = self.arguments.get(name)
        if declared is None:
            known = list(self.arguments)
            fix = (
                self.suggest(name, known)
                if known
                else f"declare it under `arguments`, e.g. `arguments: {{{name}: "
                f"{field.type.name}}}`"
            )
            self.report(place, f"unknown argument {operand!r}; {fix}")
            return False
        given: Kind | None = "enum" if declared.name in self.enums else _KINDS.get(declared.name)
        enum_ok = kind != "enum" or declared.name == field.type.name
        if given != kind or not enum_ok or declared.list != (op == "in"):
            want = f"[{field.type.name}!]" if op == "in" else field.type.name
            self.report(
                place,
                f"${name} is a {declared}, which does not compare with {field.name} "
                f"({field.type.name}) by {op}; declare `{name}: {want}`",
            )
            return False
        return name

    def literal(self, place: Place, field: Field, kind: Kind, value: Any) -> Any:
        """The value a test compares with, or ``_BAD`` (reported)."""
        if value is None:
            return None
        name = field.type.name
        converted: Any = _BAD
        if kind == "enum":
            values = self.enums[name]
            if value in values:
                return values[value]  # as stored
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
