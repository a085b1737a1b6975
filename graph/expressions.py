"""DynamoDB expressions with their placeholders: the one place that allocates ``#n``/``:v``."""

from __future__ import annotations

from typing import Any

__all__ = ["Expr"]


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

    def params(self, serialize: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = {k: serialize(v) for k, v in self.values.items()}
        return out
