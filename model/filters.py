"""Filters on an edge's fields (a path's ``where:``), compiled: comparisons of stored
attributes by the fields' GraphQL types, all of which must hold, and ``or`` groups of filters,
one of which must. Checked against the edge's fields here; evaluated on the edge items read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from .types import EdgeType, Field, Model

__all__ = ["NOW", "Comparison", "Where", "compile_where"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]
Suggest = Callable[[str, list[str]], str]

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
    """Every comparison holds, and one filter of each ``or`` group."""

    tests: tuple[Comparison, ...] = ()
    alternatives: tuple[tuple[Where, ...], ...] = ()

    def holds(self, item: Mapping[str, Any], now: datetime) -> bool:
        return all(t.holds(item, now) for t in self.tests) and all(
            any(w.holds(item, now) for w in group) for group in self.alternatives
        )


def compile_where(
    place: Place,
    spec: Mapping[str, Any],
    edge: EdgeType,
    model: Model,
    report: Report,
    suggest: Suggest,
) -> Where | None:
    """The filter ``spec`` on ``edge``'s fields, or None (each mistake reported at its place)."""
    return _Compiler(model, report, suggest).where(place, spec, edge)


class _Compiler:
    def __init__(self, model: Model, report: Report, suggest: Suggest) -> None:
        self.model = model
        self.report = report
        self.suggest = suggest

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
