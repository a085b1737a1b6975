"""The settings of one server process: one object, read from ``EDGEWISE_*`` environment
variables (pydantic-settings) and overridden by ``edgewise serve``'s flags. Nothing else in
``server/`` reads the environment, but for OpenTelemetry's own ``OTEL_*`` variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from graph.dynamo.client import CLIENTS, DEFAULT_CLIENT
from graph.errors import BadUserInput
from graph.writes.idempotency import DEFAULT_TTL
from server.http.cors import parse_origins
from server.http.jwks import TIMEOUT
from server.http.limits import Limits
from server.http.persisted import DEFAULT_CACHE_BYTES
from server.observe.logs import FORMATS

__all__ = ["ENV_PREFIX", "Settings", "load_settings"]

ENV_PREFIX = "EDGEWISE_"


def _limits_from_env() -> Limits:
    """Each limit from ``EDGEWISE_LIMIT_<NAME>`` (e.g. ``EDGEWISE_LIMIT_COST``) when set."""
    values = {}
    for name in Limits.__dataclass_fields__:
        raw = os.environ.get(f"{ENV_PREFIX}LIMIT_{name.upper()}")
        if raw is not None:
            try:
                values[name] = int(raw)
            except ValueError:
                raise SystemExit(
                    f"{ENV_PREFIX}LIMIT_{name.upper()}={raw!r}: use a whole number"
                ) from None
    return Limits(**values)


class Settings(BaseSettings):
    """Every field ``x`` is also the environment variable ``EDGEWISE_X``; arguments given to
    the constructor win over the environment."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, env_ignore_empty=True, extra="forbid"
    )

    dynamodb: str = "embedded"  # embedded, aws, or an endpoint URL
    table: str | None = None  # default: the model's table name (`graph` for the demo)
    model: str = "demo"  # a shipped model's name or a model file's path
    demo: bool = True  # load the model's sample data into the embedded DynamoDB
    data_file: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = Field(1, ge=1)  # processes serving the port
    log_format: str = "text"
    production: bool = False
    read_only: bool = False  # no mutations in the schema; no TransactWriteItems needed
    explain_forbidden: bool = False  # development: FORBIDDEN with its reason, not null
    idempotency_ttl: int = Field(DEFAULT_TTL, ge=1)  # seconds an Idempotency-Key's answer is kept
    connect_timeout: float = 2.0  # seconds to open a connection to DynamoDB
    read_timeout: float = 5.0  # seconds to wait for one DynamoDB response
    deadline: float = 10.0  # seconds a request's DynamoDB calls and retries may take in all
    shutdown_timeout: float = 30.0  # seconds SIGTERM waits for in-flight requests
    cors_origins: Annotated[tuple[str, ...], NoDecode] = ()  # none: any origin, unless production
    persisted_queries: bool = True  # automatic persisted queries (APQ)
    persisted_queries_only: Path | None = None  # the manifest of the only operations allowed
    persisted_queries_cache_bytes: int = DEFAULT_CACHE_BYTES
    metrics: bool | None = None  # serve /metrics; None: yes, unless production
    jwt_secret: str | None = None  # HS256
    jwt_jwks: str | None = None  # a JWKS file or https URL (RS256/ES256)
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_jwks_timeout: float = TIMEOUT
    playground_dir: Path | None = None  # GraphiQL's assets; default: the package's copy
    limits: Limits = Field(default_factory=_limits_from_env)
    subscriptions: bool = True  # live queries (where the table has a stream)
    subscriptions_per_connection: int = Field(100, ge=1)  # operations at once on one socket
    subscriptions_max: int = Field(10_000, ge=1)  # subscriptions at once on this server
    pubsub: str | None = None  # Redis URL: changes from `edgewise relay`, not the stream
    client: str = (
        DEFAULT_CLIENT  # the data plane: "lean" (graph.dynamo.wire) or "botocore" (aioboto3)
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: Any) -> tuple[str, ...]:
        """Comma-separated in the environment; a list from the flags."""
        try:
            return parse_origins([value] if isinstance(value, str) else value)
        except BadUserInput as exc:
            raise ValueError(str(exc)) from None

    @field_validator("log_format", mode="before")
    @classmethod
    def _log_format(cls, value: Any) -> str:
        chosen = str(value).strip().lower()
        if chosen not in FORMATS:
            raise ValueError(f"use {' or '.join(FORMATS)}")
        return chosen

    @field_validator("client", mode="before")
    @classmethod
    def _client(cls, value: Any) -> str:
        chosen = str(value).strip().lower()
        if chosen not in CLIENTS:
            raise ValueError(f"use {' or '.join(CLIENTS)}")
        return chosen

    @property
    def metrics_enabled(self) -> bool:
        return self.metrics if self.metrics is not None else not self.production


def load_settings(given: Mapping[str, Any] | None = None, who: str = "edgewise") -> Settings:
    """The settings from the environment, with ``given`` values (flags) winning; a bad value
    stops the process (``who`` says which) naming the variable or flag and what to write."""
    given = given or {}
    try:
        return Settings(**given)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "?"
            message = str(error["msg"]).removeprefix("Value error, ")
            if name in given:  # a flag: argparse typed it, the message names it
                lines.append(message)
            else:
                lines.append(f"{ENV_PREFIX}{name.upper()}={error.get('input')!r}: {message}")
        raise SystemExit(f"{who}: " + "; ".join(lines)) from None
