"""The operation name logs and metrics use, read from the document's first tokens."""

from __future__ import annotations

import pytest

from server.observe.requests import operation_name

CASES: list[tuple[str, str | None, str]] = [
    ("{ a }", None, "anonymous"),
    ("query { a }", None, "anonymous"),
    ("query Q { a }", None, "Q"),
    ("mutation M($x: Int = 1) { a }", None, "M"),
    ("subscription S { a }", None, "S"),
    ("# a comment\n  query Q2 { a }", None, "Q2"),
    ("fragment F on User { id friends { id } } query Q { user { ...F } }", None, "Q"),
    ("fragment F on User { id } { user { ...F } }", None, "anonymous"),
    ("query A { a } query B { b }", None, "A"),
    ("query A { a } query B { b }", "B", "B"),
    ("{ a }", "Named", "Named"),
    ("{ a }", "not a name", "other"),
    ("{ a }", "x" * 101, "other"),
    ("", None, "anonymous"),
    ('"unterminated', None, "anonymous"),
    (" " * 10_000 + "query Far { a }", None, "Far"),
]


@pytest.mark.parametrize(("query", "name", "expected"), CASES)
def test_operation_name(query: str, name: str | None, expected: str) -> None:
    assert operation_name(query, name) == expected


def test_a_long_fragment_prefix_stops_at_the_token_limit() -> None:
    fragments = " ".join(f"fragment F{n} on User {{ id }}" for n in range(500))
    assert operation_name(fragments + " query Late { a }", None, max_tokens=100) == "anonymous"
    assert operation_name(fragments + " query Late { a }", None, max_tokens=5000) == "Late"
