"""Item keys, the id rule and new ids. Keys themselves are formatted from a model's templates
(``graph.items.Codec``), nowhere else."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from graph.errors import BadUserInput

__all__ = ["ItemKey", "Located", "new_id", "validate_id"]

_ID = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")


class ItemKey(NamedTuple):
    """The primary key of any item in the table (a named tuple: hashed in C, as a request makes
    and looks up thousands; :meth:`of` makes one in C too)."""

    pk: str
    sk: str

    @classmethod
    def of(cls, pk: str, sk: str) -> ItemKey:
        """``ItemKey(pk, sk)`` without the named tuple's ``__new__`` (Python code in 3.11)."""
        key: ItemKey = _new_tuple(cls, (pk, sk))
        return key


_new_tuple: Any = tuple.__new__


class Located(str):
    """The sort key of a node known by its partition alone (a type keyed by more than its id:
    ``{pk: "o#{id}", sk: "c#{customerId}"}``): the literal prefix of its sort-key template. Its
    item is the one of the partition whose sort key begins with it and that ``keep`` holds,
    found by one Query (:class:`graph.reads.Reads`); no item is written or deleted by it."""

    keep: Callable[[Any], bool] | None

    def __new__(cls, prefix: str, keep: Callable[[Any], bool] | None = None) -> Located:
        located = super().__new__(cls, prefix)
        located.keep = keep
        return located


def validate_id(raw: str) -> str:
    """Return ``raw`` if it is a valid bare id, else raise ``BadUserInput``."""
    if not _ID.fullmatch(raw):
        raise BadUserInput(
            f"invalid id {raw[:140]!r}: ids are 1 to 128 characters of A-Z a-z 0-9 _ . : @ -"
        )
    return raw


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
