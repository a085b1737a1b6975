"""DynamoDB expressions with their placeholders: the one place that allocates ``#n``/``:v``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from model.values import Comparison, Where

__all__ = ["Expr"]

_ORDERED = {"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_TYPES = {"number": "N", "boolean": "BOOL"}  # a filter's kind of value: its DynamoDB type


def _stored(value: Any) -> Any:
    """A compared value as Edgewise stores it: dates ``YYYY-MM-DD``, date-times in UTC with
    milliseconds and ``Z``; DynamoDB compares those strings."""
    if isinstance(value, datetime):
        moment = value.astimezone(UTC).isoformat(timespec="milliseconds")
        return moment.replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return value


class Expr:
    """Collects attribute names and values for one request's expressions.

    ``e.name("status")`` returns ``#n0``, ``e.value("OPEN")`` returns ``:v0``; :meth:`params`
    gives ``ExpressionAttributeNames``/``ExpressionAttributeValues`` (values as Python, to be
    serialized by the caller's serializer) for every expression built from it."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}
        self._by_name: dict[str, str] = {}

    def name(self, attribute: str) -> str:
        if attribute not in self._by_name:
            placeholder = f"#n{len(self._by_name)}"
            self._by_name[attribute] = placeholder
            self.names[placeholder] = attribute
        return self._by_name[attribute]

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def key_condition(
        self,
        pk: str,
        partition: str,
        sk: str | None = None,
        prefix: str = "",
        low: str | None = None,
        high: str | None = None,
    ) -> str:
        """``pk = partition`` narrowed on ``sk`` by a prefix or inclusive bounds."""
        condition = f"{self.name(pk)} = {self.value(partition)}"
        if sk is None:
            return condition
        if low is not None and high is not None:
            return (
                condition + f" AND {self.name(sk)} BETWEEN {self.value(low)} AND {self.value(high)}"
            )
        if low is not None:
            return condition + f" AND {self.name(sk)} >= {self.value(low)}"
        if high is not None:
            return condition + f" AND {self.name(sk)} <= {self.value(high)}"
        if prefix:
            return condition + f" AND begins_with({self.name(sk)}, {self.value(prefix)})"
        return condition

    def condition(self, where: Where, now: datetime) -> str:
        """A FilterExpression holding exactly where :meth:`model.filters.Where.holds` does (an
        absent attribute is null: it equals only null and orders with nothing). It may be
        joined to others by AND as it is; it never has redundant parentheses, which DynamoDB
        refuses."""
        return " AND ".join(self._parts(where, now))

    def _parts(self, where: Where, now: datetime) -> list[str]:
        """Terms that all must hold, each one comparison or in parentheses."""
        parts = [self._comparison(t, now) for t in where.tests]
        for group in where.alternatives:
            options = []
            for option in group:
                inner = self._parts(option, now)
                options.append(inner[0] if len(inner) == 1 else f"({' AND '.join(inner)})")
            parts.append(options[0] if len(options) == 1 else f"({' OR '.join(options)})")
        return parts

    def _comparison(self, test: Comparison, now: datetime) -> str:
        """One test. An attribute of another DynamoDB type than the field's fails every test
        but ``eq null``, as :meth:`model.filters.Comparison.holds` has it."""
        name = self.name(test.attribute)
        value = test.value
        if test.now:
            value = now.date() if test.kind == "date" else now

        def typed() -> str:
            return f"attribute_type({name}, {self.value(_TYPES.get(test.kind, 'S'))})"

        def absent() -> str:
            return f"attribute_not_exists({name}) OR attribute_type({name}, {self.value('NULL')})"

        # Each placeholder is made only where the expression uses it: DynamoDB refuses a
        # request with an ExpressionAttributeValues entry that no expression uses.
        if test.op in _ORDERED:
            return f"({typed()} AND {name} {_ORDERED[test.op]} {self.value(_stored(value))})"
        if test.op == "in":
            values = [v for v in value if v is not None]
            listed = f"{name} IN ({', '.join(self.value(_stored(v)) for v in values)})"
            if None not in value:
                return listed
            return f"({absent()} OR {listed})" if values else f"({absent()})"
        if value is None:
            return f"({absent()})" if test.op == "eq" else typed()
        if test.op == "eq":
            return f"{name} = {self.value(_stored(value))}"
        return f"({absent()} OR ({typed()} AND {name} <> {self.value(_stored(value))}))"

    def params(self, serialize: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = {k: serialize(v) for k, v in self.values.items()}
        return out
