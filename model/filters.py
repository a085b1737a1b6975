"""Filters on stored fields, compiled: comparisons of stored attributes by the fields' GraphQL
types, all of which must hold, and ``or`` groups of filters, one of which must. A path's
``where:`` filters its last edge's fields and is evaluated on the edge items read; an access
pattern's ``where:`` filters its types' fields, may compare with its arguments (``$name``), and
is sent as a FilterExpression once bound to the arguments given (:meth:`Where.bound`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from .types import EdgeType, Field, Model, TypeRef
from .values import BAD, KINDS, Comparison, Kind, Where, aware, compared

__all__ = ["NOW", "Comparison", "Where", "compile_filter", "compile_where"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]
Suggest = Callable[[str, list[str]], str]
Fields = Mapping[str, Field]

NOW = "now"
OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "in")
ORDERED = ("lt", "lte", "gt", "gte")


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
            if field.from_key:
                self.report(
                    (*place, key),
                    f"{field.name} is read from the key (`from: key`), and a filter compares "
                    f"the attribute {field.attribute!r}; filter on a field stored on the items",
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
        kind: Kind | None = "enum" if type_.name in self.enums else KINDS.get(type_.name)
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
                if any(v is BAD for v in values):
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
            if literal is BAD:
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
        given: Kind | None = "enum" if declared.name in self.enums else KINDS.get(declared.name)
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
        """The value a test compares with, or ``BAD`` (reported)."""
        if value is None:
            return None
        name = field.type.name
        converted: Any = BAD
        if kind == "enum":
            values = self.enums[name]
            if value in values:
                return values[value]  # as stored
            self.report(
                place,
                f"{value!r} is not a value of {name}; {self.suggest(str(value), list(values))}",
            )
            return BAD
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
                converted = compared("date", value)
        elif kind == "datetime":
            if isinstance(value, datetime):
                converted = aware(value)
            elif isinstance(value, str):
                converted = compared("datetime", value)
        if converted is BAD:
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
