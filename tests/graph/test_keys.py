"""Unit tests of graph.keys: the id rule and new ids."""

from __future__ import annotations

import pytest

from graph.errors import BadUserInput
from graph.keys import new_id, validate_id
from server.errors import code_of

ALLOWED = "A-Z a-z 0-9 _ . : @ -"


# --- validate_id ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "A",
        "z",
        "0",
        "_",
        ".",
        ":",
        "@",
        "-",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "abcdefghijklmnopqrstuvwxyz",
        "0123456789",
        "alice",
        "alice@example.com",
        "urn:org:42",
        "a_b.c-d:e@f",
        "x" * 128,
    ],
)
def test_validate_id_accepts_allowed_characters(raw: str) -> None:
    assert validate_id(raw) == raw


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "x" * 129,
        "a#b",
        "USER#alice",
        "a b",
        " alice",
        "alice ",
        "a/b",
        "a\\b",
        "a+b",
        "a=b",
        "a,b",
        "a'b",
        'a"b',
        "alice\n",
        "al\tice",
        "al\x00ice",
        "é",
        "caf\u00e9",
        "\uff41",  # fullwidth 'a'
        "\u0661",  # Arabic-Indic digit one
        "\u00b2",  # superscript two
        "K\u212a",  # Kelvin sign, folds to 'k' in case-insensitive matching
        "\U0001f600",
    ],
)
def test_validate_id_rejects_forbidden_ids(raw: str) -> None:
    with pytest.raises(BadUserInput) as caught:
        validate_id(raw)
    message = str(caught.value)
    assert ALLOWED in message
    assert "1 to 128" in message
    assert code_of(caught.value) == "BAD_USER_INPUT"


def test_validate_id_message_quotes_a_bounded_prefix_of_the_input() -> None:
    with pytest.raises(BadUserInput) as caught:
        validate_id("#" * 10_000)
    assert "#" * 140 in str(caught.value)
    assert len(str(caught.value)) < 300


def test_new_ids_are_ulids_that_sort_by_creation() -> None:
    ids = [new_id() for _ in range(1000)]
    assert all(len(i) == 26 and validate_id(i) == i for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
