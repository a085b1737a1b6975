"""Persisted queries: Apollo's automatic persisted queries (APQ, version 1) and the allow-list mode.

APQ: a client sends ``extensions.persistedQuery = {"version": 1, "sha256Hash": H}`` without the
query. A hash the server knows runs the query it stands for; an unknown one answers
``PERSISTED_QUERY_NOT_FOUND`` (message ``PersistedQueryNotFound``) and the client sends the hash
again with the query, which the server checks (``sha256(query) == H``), runs, and remembers in a
bounded LRU cache. ``--no-persisted-queries`` answers ``PERSISTED_QUERY_NOT_SUPPORTED`` instead,
and clients fall back to sending the query.

Allow-list (``--persisted-queries-only FILE``): only the operations of a manifest written by the
client's build run (Apollo's ``generate-persisted-query-manifest`` or GraphQL Code Generator's
``persisted-documents.json``), asked for by id (``extensions.persistedQuery.sha256Hash`` or
``documentId``) or by their exact text; anything else is refused, and nothing is registered.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.errors import BadUserInput
from server.errors import Forbidden, PersistedQueryNotFound, PersistedQueryNotSupported

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "Manifest",
    "PersistedQueries",
    "QueryCache",
    "sha256",
]

DEFAULT_CACHE_BYTES = 10 * 2**20  # of query text, UTF-8
SHA256 = re.compile(r"[0-9a-fA-F]{64}")
APOLLO_FORMAT = "apollo-persisted-query-manifest"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class QueryCache:
    """Query texts by hash, least recently used evicted first once their total size (UTF-8
    bytes) is over ``max_bytes``. One per process: a miss costs the client one more request."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._queries: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._queries)

    def get(self, digest: str) -> str | None:
        query = self._queries.get(digest)
        if query is not None:
            self._queries.move_to_end(digest)
        return query

    def put(self, digest: str, query: str) -> None:
        size = len(query.encode())
        if digest in self._queries or size > self.max_bytes:
            return
        self._queries[digest] = query
        self.size += size
        while self.size > self.max_bytes:
            _, evicted = self._queries.popitem(last=False)
            self.size -= len(evicted.encode())


@dataclass(frozen=True)
class Manifest:
    """Operation texts by id, from a persisted-query manifest file."""

    bodies: dict[str, str]
    texts: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "texts", frozenset(self.bodies.values()))

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Either Apollo's ``{"format": "apollo-persisted-query-manifest", "version": 1,
        "operations": [{"id", "body", "name", "type"}]}`` or GraphQL Code Generator's (and
        Relay's) ``{"<id>": "<document>"}``."""
        where = f"--persisted-queries-only {path}"
        try:
            data = json.loads(path.read_text())
        except OSError as exc:
            raise BadUserInput(f"{where}: cannot read it ({exc.strerror})") from None
        except ValueError as exc:
            raise BadUserInput(f"{where}: not JSON ({exc})") from None
        expected = (
            f'a manifest is {{"format": "{APOLLO_FORMAT}", "version": 1, "operations": '
            '[{"id": ..., "body": ...}]} or {"<id>": "<document>", ...}'
        )
        if not isinstance(data, dict):
            raise BadUserInput(f"{where}: {expected}")
        if "format" in data:
            if data.get("format") != APOLLO_FORMAT or data.get("version") != 1:
                raise BadUserInput(
                    f"{where}: unknown format {data.get('format')!r} version "
                    f"{data.get('version')!r}; {expected}"
                )
            operations = data.get("operations")
            if not isinstance(operations, list) or not all(
                isinstance(o, dict)
                and isinstance(o.get("id"), str)
                and isinstance(o.get("body"), str)
                for o in operations
            ):
                raise BadUserInput(f"{where}: every operation needs a string id and body")
            bodies = {o["id"]: o["body"] for o in operations}
        else:
            if not all(isinstance(v, str) for v in data.values()):
                raise BadUserInput(f"{where}: {expected}")
            bodies = dict(data)
        if not bodies:
            raise BadUserInput(f"{where}: the manifest lists no operation")
        return cls(bodies)


@dataclass
class PersistedQueries:
    """Resolves a request's query text from its persisted-query parameters."""

    enabled: bool = True
    cache: QueryCache = field(default_factory=QueryCache)
    manifest: Manifest | None = None

    @classmethod
    def create(
        cls, enabled: bool, manifest: Path | None, cache_bytes: int = DEFAULT_CACHE_BYTES
    ) -> PersistedQueries:
        """From the serve flags; a manifest is read now, so a bad one stops the start."""
        if manifest is not None and not enabled:
            raise BadUserInput(
                "--persisted-queries-only runs the persisted queries of a manifest: "
                "drop --no-persisted-queries"
            )
        loaded = Manifest.load(manifest) if manifest is not None else None
        return cls(enabled, QueryCache(cache_bytes), loaded)

    def resolve(self, params: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """``params`` with ``query`` filled in, and the hash to remember once the query ran
        (None when there is nothing to register). Raises PersistedQueryError, BadUserInput
        (a bad or mismatched hash) or Forbidden (allow-list mode)."""
        extensions = params.get("extensions")
        persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
        if self.manifest is not None:
            return self._from_manifest(params, persisted), None
        if persisted is None:
            return params, None
        if not self.enabled:
            raise PersistedQueryNotSupported("PersistedQueryNotSupported")
        digest = _hash(persisted)
        query = params.get("query")
        if query is None:
            cached = self.cache.get(digest)
            if cached is None:
                raise PersistedQueryNotFound("PersistedQueryNotFound")
            return {**params, "query": cached}, None
        if not isinstance(query, str):
            return params, None  # reported as a bad parameter
        if sha256(query) != digest:
            raise BadUserInput(
                "provided sha does not match query: extensions.persistedQuery.sha256Hash must "
                "be the SHA-256 of the query text (UTF-8), in hexadecimal"
            )
        return params, digest

    def remember(self, digest: str, query: str) -> None:
        self.cache.put(digest, query)

    def _from_manifest(self, params: dict[str, Any], persisted: Any) -> dict[str, Any]:
        assert self.manifest is not None
        query = params.get("query")
        document_id = params.get("documentId")
        if persisted is not None:
            key: str | None = _hash(persisted, any_id=True)
        elif isinstance(document_id, str):
            key = document_id
        else:
            key = None
        body = None
        if key is not None:  # a documentId may carry its algorithm: sha256:<hash>
            bodies = self.manifest.bodies
            body = bodies.get(key) or bodies.get(key.removeprefix("sha256:"))
        if body is not None:
            if query is not None and query != body:
                raise BadUserInput(
                    f"the query sent is not the text of operation {key} in the manifest: send "
                    "the id alone"
                )
            return {**params, "query": body}
        if key is not None and query is None:
            raise PersistedQueryNotFound("PersistedQueryNotFound")
        if isinstance(query, str) and query in self.manifest.texts:
            return params
        raise Forbidden(
            "this server runs only the operations of its persisted-query manifest "
            "(--persisted-queries-only): send the id of a listed operation in "
            "extensions.persistedQuery.sha256Hash or documentId, and add new operations to the "
            "manifest at build time"
        )


def _hash(persisted: Any, any_id: bool = False) -> str:
    """The hash of ``extensions.persistedQuery``; a manifest's ids may be any string."""
    if not isinstance(persisted, dict) or persisted.get("version") != 1:
        raise BadUserInput(
            "unsupported persisted query: send extensions.persistedQuery as "
            '{"version": 1, "sha256Hash": "<64 hex digits>"}'
        )
    digest = persisted.get("sha256Hash")
    if any_id and isinstance(digest, str) and digest:
        return digest
    if not isinstance(digest, str) or not SHA256.fullmatch(digest):
        raise BadUserInput(
            "extensions.persistedQuery.sha256Hash must be 64 hexadecimal digits: the SHA-256 "
            "of the query text (UTF-8)"
        )
    return digest.lower()
