"""Settings of one server process, from CLI flags and environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from graph.client import CLIENTS, DEFAULT_CLIENT, env_client

from .persisted import DEFAULT_CACHE_BYTES

__all__ = ["CLIENTS", "DEFAULT_CLIENT", "Settings", "client_choice", "env_flag"]

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """A boolean environment variable: 1/true/yes/on or 0/false/no/off (unset is false)."""
    value = os.environ.get(name, "").strip().lower()
    if value not in TRUE | FALSE:
        raise SystemExit(f"{name}={os.environ[name]!r}: use 1 or 0 (true/false, yes/no, on/off)")
    return value in TRUE


def client_choice(value: str, source: str = "EDGEWISE_CLIENT") -> str:
    """``value`` (from ``source``) if it names a data-plane client, else a SystemExit saying so."""
    choice = value.strip().lower() or DEFAULT_CLIENT
    if choice not in CLIENTS:
        raise SystemExit(f"{source}={value!r}: use {' or '.join(CLIENTS)}")
    return choice


@dataclass(frozen=True)
class Settings:
    dynamodb: str = "embedded"
    table: str | None = None  # default: the model's table name (`graph` for the demo)
    demo: bool = True
    data_file: Path | None = None
    production: bool = False
    connect_timeout: float = 2.0  # seconds to open a connection to DynamoDB
    read_timeout: float = 5.0  # seconds to wait for one DynamoDB response
    deadline: float = 10.0  # seconds a request's DynamoDB calls and retries may take in all
    shutdown_timeout: float = 30.0  # seconds SIGTERM waits for in-flight requests
    model: str = "demo"  # a shipped model's name or a model file's path
    cors_origins: tuple[str, ...] = ()  # none: any origin, or none under `production`
    persisted_queries: bool = True  # automatic persisted queries (APQ)
    persisted_queries_only: Path | None = None  # the manifest of the only operations allowed
    persisted_queries_cache_bytes: int = DEFAULT_CACHE_BYTES
    read_only: bool = False  # no mutations in the schema; no TransactWriteItems needed
    metrics: bool | None = None  # serve /metrics; None: yes, unless production
    # the data plane: "lean" (graph.wire) or "botocore" (aioboto3); default: env EDGEWISE_CLIENT
    client: str = field(default_factory=env_client)

    @property
    def metrics_enabled(self) -> bool:
        return self.metrics if self.metrics is not None else not self.production
