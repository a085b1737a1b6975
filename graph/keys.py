"""Node keys, item keys, id validation and cursors: the only place that formats ``TYPE#id``."""

from __future__ import annotations

import base64
import binascii
import enum
import json
import os
import re
import threading
import time
from dataclasses import dataclass

from .errors import BadUserInput

__all__ = [
    "ItemKey",
    "NodeKey",
    "NodeType",
    "decode_cursor",
    "encode_cursor",
    "new_id",
    "parse_global_id",
    "parse_id",
    "validate_id",
]

_ID = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")


class NodeType(enum.Enum):
    """The kinds of node; the value is the key prefix."""

    USER = "USER"
    GROUP = "GROUP"
    PRODUCT = "PRODUCT"
    ORG = "ORG"
    TICKET = "TICKET"


@dataclass(frozen=True, slots=True)
class ItemKey:
    """The primary key of any item in the table."""

    pk: str
    sk: str

    def to_dynamo(self) -> dict[str, dict[str, str]]:
        return {"PK": {"S": self.pk}, "SK": {"S": self.sk}}


@dataclass(frozen=True, slots=True)
class NodeKey:
    """A node's identity: its type and bare id. ``str(key)`` is the global id ``TYPE#id``."""

    type: NodeType
    id: str

    def __str__(self) -> str:
        return f"{self.type.value}#{self.id}"

    @property
    def item(self) -> ItemKey:
        return ItemKey(str(self), str(self))

    @classmethod
    def parse(cls, key: str) -> NodeKey:
        """Parse a key read from the table (trusted, so not re-validated)."""
        prefix, _, bare = key.partition("#")
        return cls(NodeType(prefix), bare)


def validate_id(raw: str) -> str:
    """Return ``raw`` if it is a valid bare id, else raise ``BadUserInput``."""
    if not _ID.fullmatch(raw):
        raise BadUserInput(
            f"invalid id {raw[:140]!r}: ids are 1 to 128 characters of A-Z a-z 0-9 _ . : @ -"
        )
    return raw


def parse_global_id(raw: str) -> NodeKey | None:
    """Parse a global id (``USER#alice``). An unknown type finds nothing (``None``)."""
    prefix, sep, bare = raw.partition("#")
    if not sep:
        raise BadUserInput(f"invalid global id {raw[:140]!r}: expected TYPE#id, e.g. USER#alice")
    try:
        node_type = NodeType(prefix)
    except ValueError:
        return None
    return NodeKey(node_type, validate_id(bare))


def parse_id(raw: str, node_type: NodeType) -> NodeKey | None:
    """A bare id, or a global id of ``node_type``; a global id of another type finds nothing."""
    if "#" not in raw:
        return NodeKey(node_type, validate_id(raw))
    key = parse_global_id(raw)
    return key if key is not None and key.type is node_type else None


def encode_cursor(key: ItemKey) -> str:
    """An opaque cursor for the position just after ``key``."""
    raw = json.dumps([key.pk, key.sk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> ItemKey:
    """Decode a cursor made by :func:`encode_cursor`, or raise ``BadUserInput``."""
    try:
        if len(cursor) > 4096:
            raise ValueError
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not (isinstance(value, list) and len(value) == 2):
            raise ValueError
        pk, sk = value
        if not (isinstance(pk, str) and isinstance(sk, str)):
            raise ValueError
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError, RecursionError):
        raise BadUserInput(
            f"invalid cursor {cursor[:60]!r}: pass an endCursor or edge cursor returned by the API"
        ) from None
    return ItemKey(pk, sk)


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ulid_lock = threading.Lock()
_ulid_last = (0, 0)


def new_id() -> str:
    """A ULID: 26 characters, sorting by creation time (monotonic within a millisecond)."""
    global _ulid_last
    with _ulid_lock:
        millis = time.time_ns() // 1_000_000
        last_millis, last_random = _ulid_last
        if millis <= last_millis:
            millis, randomness = last_millis, last_random + 1
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        _ulid_last = (millis, randomness)
    value = (millis << 80) | (randomness & ((1 << 80) - 1))
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
