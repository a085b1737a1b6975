"""The model's constraints on the values a mutation writes: a non-null field is never cleared, a
String keeps to its ``length`` (a value of only whitespace counts as empty) and its ``format``.
Every violation is BAD_USER_INPUT naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graph.errors import BadUserInput
from model import Field

__all__ = ["check_value", "check_values"]

EMAIL_MAX = 254


def check_values(fields: Mapping[str, Field], values: Mapping[str, Any]) -> None:
    """Check each of ``values`` (GraphQL names) that is a field of ``fields``."""
    for name, value in values.items():
        field = fields.get(name)
        if field is not None:
            check_value(field, value)


def check_value(field: Field, value: Any) -> None:
    if value is None:
        if field.type.non_null:
            raise BadUserInput(f"{field.name} cannot be null")
        return
    if not isinstance(value, str):
        return
    if field.length is not None:
        fewest, most = field.length
        size = len(value) if value.strip() else 0
        if not fewest <= size <= most:
            raise BadUserInput(f"{field.name} must be {fewest} to {most} characters")
    if field.format == "email" and not _is_email(value):
        raise BadUserInput(f"invalid {field.name} {value[:260]!r}: expected name@domain.tld")


def _is_email(text: str) -> bool:
    local, at, domain = text.partition("@")
    return bool(
        at
        and local
        and "." in domain
        and len(text) <= EMAIL_MAX
        and not any(c.isspace() for c in text)
    )
