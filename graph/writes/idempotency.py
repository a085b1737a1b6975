"""Idempotency records: a client's retry of a mutation, sent with the same ``Idempotency-Key``,
recognised across requests.

A keyed request's first commit (:meth:`graph.writes.commit.Committer.commit`) carries one more item,
the record, in the same TransactWriteItems: so the record exists if and only if the mutation
applied. It holds the request's fingerprint (document, operation, variables), the id of the request
that wrote it (``owner``), until when that request may still be running (``until``) and when it
expires (``RECORD_EXPIRES``, the table's TTL attribute). Once the request has its answer, one
UpdateItem adds it (``answer``, ``status``). A record read past its expiry is absent, whatever
DynamoDB's lazy TTL deletion has done yet, and may be written over.

The request's state travels in a context variable set around its execution (:func:`keyed`), so
every writer of the request, the model's hooks' included, finds it without a parameter.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from graph.errors import Conflict, EdgewiseError
from graph.keys import ItemKey
from graph.table import Item, Table
from model.types import CLOCK_SK, INTERNAL, RECORD_EXPIRES, RECORD_PREFIX

__all__ = [
    "DEFAULT_TTL",
    "Applied",
    "Keyed",
    "Record",
    "Taken",
    "current",
    "is_record",
    "keyed",
    "read",
    "record_answer",
]

DEFAULT_TTL = 24 * 3600  # seconds a record is kept


class Taken(Conflict):
    """Another request with the same key wrote the record first (or still runs)."""

    def __init__(self) -> None:
        super().__init__("another request with this Idempotency-Key wrote first")


class Applied(EdgewiseError):
    """The record is this request's own: an earlier attempt of the commit applied."""


def is_record(pk: object, sk: object = None) -> bool:
    """Whether a key is of one of Edgewise's own items (an idempotency record, a replicas job,
    by its partition key; the replicas' clock of a node with no item, by its sort key)."""
    return (isinstance(pk, str) and pk.startswith(INTERNAL)) or sk == CLOCK_SK


@dataclass(frozen=True)
class Record:
    """A record as read."""

    fingerprint: str
    owner: str
    until: float  # epoch seconds until which the request that wrote it may still run
    answer: str | None  # the recorded response body (JSON), once known
    status: int


class Keyed:
    """One keyed request's state: the record's key and content, and what its commits did."""

    def __init__(self, principal: str, key: str, fingerprint: str, ttl: int, lease: float) -> None:
        digest = hashlib.sha256(f"{principal}\0{key}".encode()).hexdigest()
        self.key = ItemKey(RECORD_PREFIX + digest, RECORD_PREFIX + digest)
        self.fingerprint = fingerprint
        self.owner = uuid.uuid4().hex
        self.ttl = ttl
        self.lease = lease
        self.commits = 0  # transactions sent so far (each its own client token)
        self.written = False  # the record is in the table: the mutation applied
        self.lost = False  # another request holds the key

    def item(self, pk: str, sk: str, now: float) -> Item:
        """The record as the first commit writes it (``pk``/``sk``: the table's key names)."""
        return {
            pk: self.key.pk,
            sk: self.key.sk,
            "fingerprint": self.fingerprint,
            "owner": self.owner,
            "until": int(now + self.lease) + 1,
            RECORD_EXPIRES: int(now) + self.ttl,
        }

    def token(self) -> str:
        """The next transaction's ClientRequestToken (at most 36 characters): derived from the
        record's key, the request's fingerprint, this request's owner id and the commit's place
        in the request; every retry of the call reuses it. Not the same across requests:
        DynamoDB refuses a token sent again with other parameters for 10 minutes, which would
        lock a key whose record expired sooner; a repeat across requests is the record's job."""
        self.commits += 1
        seed = f"{self.key.pk}\0{self.fingerprint}\0{self.owner}\0{self.commits}"
        return hashlib.sha256(seed.encode()).hexdigest()[:36]

    def failure(self, old: Item | None) -> EdgewiseError:
        """What a failed record condition means: an earlier attempt of this very commit applied
        (its answer was lost and the call retried), or another request holds the key."""
        if old is not None and old.get("owner") == self.owner:
            return Applied()
        self.lost = True
        return Taken()


_current: ContextVar[Keyed | None] = ContextVar("edgewise_idempotency", default=None)


@contextmanager
def keyed(state: Keyed | None) -> Iterator[None]:
    """Inside: the writes of the running request are keyed by ``state``."""
    token = _current.set(state)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Keyed | None:
    return _current.get()


async def read(table: Table, state: Keyed) -> Record | None:
    """The record of ``state``'s key (a strongly consistent read), or None when there is none
    or it expired."""
    item = await table.get_item(state.key)
    if item is None or int(item.get(RECORD_EXPIRES, 0)) < time.time():
        return None
    answer = item.get("answer")
    return Record(
        str(item.get("fingerprint", "")),
        str(item.get("owner", "")),
        float(item.get("until", 0)),
        str(answer) if answer is not None else None,
        int(item.get("status", 200)),
    )


async def record_answer(table: Table, state: Keyed, body: str, status: int) -> None:
    """Add the answer to the record this request wrote (and still owns)."""
    layout = table.layout
    await table.write(
        "UpdateItem",
        {
            "Key": layout.key(state.key),
            "UpdateExpression": "SET #a = :a, #s = :s",
            "ConditionExpression": "#o = :o",
            "ExpressionAttributeNames": {"#a": "answer", "#s": "status", "#o": "owner"},
            "ExpressionAttributeValues": {
                ":a": {"S": body},
                ":s": {"N": str(status)},
                ":o": {"S": state.owner},
            },
        },
    )
