"""Unit tests of graph.keys: id validation, global ids, node keys and cursors."""

from __future__ import annotations

import base64
import json

import pytest

from graph.errors import BadUserInput
from graph.keys import (
    ItemKey,
    NodeKey,
    NodeType,
    decode_cursor,
    encode_cursor,
    parse_global_id,
    parse_id,
    validate_id,
)

ALLOWED = "A-Z a-z 0-9 _ . : @ -"


def b64(raw: bytes | str) -> str:
    """Base64url without padding, the way encode_cursor writes cursors."""
    data = raw.encode() if isinstance(raw, str) else raw
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


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
    assert caught.value.code == "BAD_USER_INPUT"


def test_validate_id_message_quotes_a_bounded_prefix_of_the_input() -> None:
    with pytest.raises(BadUserInput) as caught:
        validate_id("#" * 10_000)
    assert "#" * 140 in str(caught.value)
    assert len(str(caught.value)) < 300


# --- parse_global_id -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("USER#alice", NodeKey(NodeType.USER, "alice")),
        ("GROUP#group1", NodeKey(NodeType.GROUP, "group1")),
        ("PRODUCT#p-1.x", NodeKey(NodeType.PRODUCT, "p-1.x")),
        ("ORG#microsoft", NodeKey(NodeType.ORG, "microsoft")),
        ("TICKET#t:1@2", NodeKey(NodeType.TICKET, "t:1@2")),
    ],
)
def test_parse_global_id_parses_known_types(raw: str, expected: NodeKey) -> None:
    assert parse_global_id(raw) == expected


@pytest.mark.parametrize("raw", ["BANANA#alice", "user#alice", "User#alice", "#alice", "USERS#x"])
def test_parse_global_id_unknown_type_finds_nothing(raw: str) -> None:
    assert parse_global_id(raw) is None


@pytest.mark.parametrize("raw", ["alice", "USER", "", "USER:alice", "USER/alice"])
def test_parse_global_id_without_separator_is_bad_input(raw: str) -> None:
    with pytest.raises(BadUserInput, match="expected TYPE#id"):
        parse_global_id(raw)


@pytest.mark.parametrize("raw", ["USER#", "USER#a b", "USER#a#b", "USER#é", "GROUP#" + "g" * 129])
def test_parse_global_id_with_bad_bare_part_is_bad_input(raw: str) -> None:
    with pytest.raises(BadUserInput, match=ALLOWED):
        parse_global_id(raw)


# --- parse_id ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "node_type", "expected"),
    [
        ("alice", NodeType.USER, NodeKey(NodeType.USER, "alice")),
        ("group1", NodeType.GROUP, NodeKey(NodeType.GROUP, "group1")),
        ("USER#alice", NodeType.USER, NodeKey(NodeType.USER, "alice")),
        ("PRODUCT#prod1", NodeType.PRODUCT, NodeKey(NodeType.PRODUCT, "prod1")),
        ("GROUP#group1", NodeType.USER, None),
        ("USER#alice", NodeType.ORG, None),
        ("BANANA#alice", NodeType.USER, None),
    ],
)
def test_parse_id(raw: str, node_type: NodeType, expected: NodeKey | None) -> None:
    assert parse_id(raw, node_type) == expected


@pytest.mark.parametrize("raw", ["", "a b", "a/b", "USER#a b", "USER#", "é"])
def test_parse_id_rejects_invalid_ids(raw: str) -> None:
    with pytest.raises(BadUserInput):
        parse_id(raw, NodeType.USER)


# --- NodeKey -------------------------------------------------------------------------------


@pytest.mark.parametrize("node_type", list(NodeType))
@pytest.mark.parametrize("bare", ["alice", "a", "x" * 128, "a_b.c-d:e@f"])
def test_node_key_str_and_parse_round_trip(node_type: NodeType, bare: str) -> None:
    key = NodeKey(node_type, bare)
    text = str(key)
    assert text == f"{node_type.value}#{bare}"
    assert NodeKey.parse(text) == key
    assert parse_global_id(text) == key


def test_node_key_item_uses_the_global_id_for_both_keys() -> None:
    key = NodeKey(NodeType.GROUP, "group1")
    assert key.item == ItemKey("GROUP#group1", "GROUP#group1")
    assert key.item.to_dynamo() == {"PK": {"S": "GROUP#group1"}, "SK": {"S": "GROUP#group1"}}


def test_node_key_parse_rejects_unknown_type() -> None:
    with pytest.raises(ValueError):
        NodeKey.parse("BANANA#x")


# --- cursors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        ItemKey("USER#alice", "GROUP#group1"),
        ItemKey("GROUP#g", "USER#u"),
        ItemKey("", ""),
        ItemKey('quote"s', "back\\slash"),
        ItemKey("comma,colon:bracket]", "[{brace}]"),
        ItemKey("caf\u00e9 \u00fcber", "\U0001f600 emoji"),
        ItemKey("new\nline\ttab\x00nul", "=+/-_ base64 chars"),
        ItemKey("a" * 1000, "b" * 3),
        ItemKey("a", "bb"),
        ItemKey("aa", "b"),
        ItemKey("???>>>", "~~~"),
    ],
)
def test_cursor_round_trip(key: ItemKey) -> None:
    cursor = encode_cursor(key)
    assert decode_cursor(cursor) == key


@pytest.mark.parametrize(
    "key",
    [ItemKey("USER#alice", "GROUP#group1"), ItemKey("\U0001f600", "é/+="), ItemKey("???", "~~~")],
)
def test_cursor_is_url_safe_and_unpadded(key: ItemKey) -> None:
    cursor = encode_cursor(key)
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_cursor_uses_the_url_safe_alphabet() -> None:
    # '?' and '~' are the bytes that plain base64 writes as '/' and '+'
    assert encode_cursor(ItemKey("???", "~~~")) == "WyI_Pz8iLCJ-fn4iXQ"


def test_decode_cursor_accepts_padded_form() -> None:
    key = ItemKey("USER#alice", "GROUP#g")
    padded = base64.urlsafe_b64encode(json.dumps([key.pk, key.sk]).encode()).decode()
    assert decode_cursor(padded) == key


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("", id="empty"),
        pytest.param("!!!", id="not-base64"),
        pytest.param("a", id="bad-length"),
        pytest.param("====", id="only-padding"),
        pytest.param("caf\u00e9", id="non-ascii"),
        pytest.param(b64(b"\xff\xfe\xfd"), id="not-utf8"),
        pytest.param(b64("not json"), id="not-json"),
        pytest.param(b64('["a", "b"'), id="truncated-json"),
        pytest.param(b64("null"), id="null"),
        pytest.param(b64("42"), id="number"),
        pytest.param(b64("true"), id="bool"),
        pytest.param(b64('"abc"'), id="string"),
        pytest.param(b64("{}"), id="empty-dict"),
        pytest.param(b64('{"pk": "a"}'), id="one-key-dict"),
        pytest.param(b64('{"a": 1, "b": 2, "c": 3}'), id="three-key-dict"),
        pytest.param(b64("[]"), id="empty-list"),
        pytest.param(b64('["a"]'), id="one-string"),
        pytest.param(b64('["a", "b", "c"]'), id="three-strings"),
        pytest.param(b64("[1, 2]"), id="numbers"),
        pytest.param(b64('["a", 2]'), id="string-and-number"),
        pytest.param(b64('[null, "b"]'), id="null-and-string"),
        pytest.param(b64('[["a"], "b"]'), id="nested-list"),
    ],
)
def test_decode_cursor_rejects_garbage(cursor: str) -> None:
    with pytest.raises(BadUserInput, match="invalid cursor") as caught:
        decode_cursor(cursor)
    assert "endCursor" in str(caught.value)
    assert caught.value.__cause__ is None


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param(b64('{"pk": "USER#alice", "sk": "GROUP#g"}'), id="two-key-dict"),
        pytest.param(b64('{"USER#alice": 1, "GROUP#g": 2}'), id="dict-keys-look-like-keys"),
        pytest.param(b64('"ab"'), id="two-char-string"),
    ],
)
def test_decode_cursor_rejects_two_element_non_lists(cursor: str) -> None:
    with pytest.raises(BadUserInput, match="invalid cursor"):
        decode_cursor(cursor)


def test_decode_cursor_rejects_deeply_nested_json() -> None:
    with pytest.raises(BadUserInput, match="invalid cursor"):
        decode_cursor(b64("[" * 100_000))
