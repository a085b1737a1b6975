"""The settings of one server process: one object, read from ``EDGEWISE_*`` environment
variables (pydantic-settings) and overridden by ``edgewise serve``'s flags. Nothing else in
``server/`` reads the environment, but for OpenTelemetry's own ``OTEL_*`` variables.

Each field is declared once, here: its type, default and ``description``, and a :class:`Flag`
that says how the command line spells it. ``server/cli/flags.py`` builds every flag and its
``--help`` line from them, so a new field is a new flag with nothing else to write."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from graph.dynamo.client import CLIENTS, DEFAULT_CLIENT
from graph.errors import BadUserInput
from graph.writes.idempotency import DEFAULT_TTL
from model import SHIPPED
from server.http.cors import parse_origins
from server.http.jwks import TIMEOUT
from server.http.limits import Limits
from server.http.persisted import DEFAULT_CACHE_BYTES
from server.observe.logs import FORMATS

__all__ = ["ENV_PREFIX", "Flag", "Settings", "flag_of", "load_settings"]

ENV_PREFIX = "EDGEWISE_"

# The groups of `edgewise serve --help`, in the order of their first field.
DATA = "DynamoDB and the model"
PROCESS = "the server process"
REQUESTS = "requests: access, safety and browsers"
PERSISTED = "persisted queries"
LIVE = "subscriptions"


@dataclass(frozen=True)
class Flag:
    """How a setting is spelled on the command line; the rest of its flag (type, default,
    help) comes from the field itself.

    ``name`` defaults to ``--<field-name>`` with dashes; a bool is ``--x`` when its default is
    false and ``--x/--no-x`` otherwise; a tuple is a repeatable flag. ``default`` is the default
    as ``--help`` words it, when the field's value does not say it. ``parse`` replaces the type's
    own conversion (a ``ValueError`` becomes argparse's usage error, exit status 2). A setting
    with ``env_only`` (the reason) has no flag: ``--help``'s epilog lists it."""

    group: str
    name: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    default: str | None = None
    parse: Callable[[str], Any] | None = None
    env_only: str | None = None
    env: str | None = None  # the variable(s), when not EDGEWISE_<FIELD>

    def spelling(self, field: str) -> str:
        return self.name or "--" + field.replace("_", "-")


def _workers(value: str) -> int:
    """``--workers``: a whole number of processes, 1 or more."""
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(
            f"{value!r}: use a whole number of processes, 1 or more (--workers N or "
            "EDGEWISE_WORKERS=N)"
        )
    return int(value)


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


_LIMITS = ", ".join(name.upper() for name in Limits.__dataclass_fields__)


class Settings(BaseSettings):
    """Every field ``x`` is also the environment variable ``EDGEWISE_X``; arguments given to
    the constructor win over the environment."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, env_ignore_empty=True, extra="forbid"
    )

    # DynamoDB and the model
    dynamodb: Annotated[str, Flag(DATA, metavar="D")] = Field(
        "embedded",
        description="embedded (a moto server child process), aws, or an endpoint URL, "
        "e.g. http://127.0.0.1:8001",
    )
    table: Annotated[
        str | None, Flag(DATA, metavar="T", default="the model's (`graph` for the demo)")
    ] = Field(None, description="table name")
    model: Annotated[str, Flag(DATA, metavar="M")] = Field(
        "demo", description=f"a model file (YAML) or a shipped model: {', '.join(SHIPPED)}"
    )
    demo: Annotated[bool, Flag(DATA)] = Field(
        True, description="load the model's sample data into the embedded DynamoDB"
    )
    data_file: Annotated[Path | None, Flag(DATA, metavar="F")] = Field(
        None,
        description="durable embedded DynamoDB: load F (DynamoDB JSON lines) at start instead "
        "of the demo data if F exists, and dump the table to F atomically at clean shutdown",
    )
    client: Annotated[str, Flag(DATA, choices=CLIENTS)] = Field(
        DEFAULT_CLIENT,
        description="the DynamoDB data plane: lean (keep-alive HTTP/1.1, botocore's signer, "
        "orjson) or botocore (aioboto3 for every call, as before); the control plane is always "
        "aioboto3",
    )
    deadline: Annotated[float, Flag(DATA, metavar="SECONDS")] = Field(
        10.0, description="seconds a request's DynamoDB calls may take, retries included"
    )
    connect_timeout: Annotated[float, Flag(DATA, metavar="SECONDS")] = Field(
        2.0, description="seconds to connect to DynamoDB"
    )
    read_timeout: Annotated[float, Flag(DATA, metavar="SECONDS")] = Field(
        5.0, description="seconds to wait for one DynamoDB response"
    )

    # the server process
    host: Annotated[str, Flag(PROCESS)] = Field("127.0.0.1", description="interface")
    port: Annotated[int, Flag(PROCESS)] = Field(8000, description="port")
    workers: Annotated[int, Flag(PROCESS, metavar="N", parse=_workers)] = Field(
        1,
        ge=1,
        description="worker processes sharing the port. More than 1 uses more cores; the "
        "embedded DynamoDB stays one process, filled once by the parent",
    )
    shutdown_timeout: Annotated[float, Flag(PROCESS, metavar="SECONDS")] = Field(
        30.0, description="seconds SIGTERM waits for in-flight requests before stopping"
    )
    log_format: Annotated[str, Flag(PROCESS, choices=FORMATS)] = Field(
        "text", description="text, or json: one JSON object a line, access log included"
    )
    metrics: Annotated[bool | None, Flag(PROCESS, default="on, off under --production")] = Field(
        None, description="serve Prometheus metrics on /metrics"
    )
    playground_dir: Annotated[
        Path | None, Flag(PROCESS, metavar="DIR", default="the package's copy")
    ] = Field(None, description="a node_modules to serve GraphiQL's files from")

    # requests: access, safety and browsers
    production: Annotated[bool, Flag(REQUESTS)] = Field(
        False,
        description="require a JWT key; no playground, introspection or suggestions; trace for "
        "admins",
    )
    read_only: Annotated[bool, Flag(REQUESTS)] = Field(
        False,
        description="serve queries only: the schema has no mutations, and an endpoint without "
        "TransactWriteItems (e.g. dynalite) is accepted",
    )
    federation: Annotated[bool, Flag(REQUESTS)] = Field(
        False,
        description="serve the API as an Apollo Federation v2 subgraph: Query._service "
        "(the subgraph SDL, every node type an entity keyed by id) and Query._entities",
    )
    explain_forbidden: Annotated[bool, Flag(REQUESTS)] = Field(
        False,
        description="development only: a node the caller may not read answers FORBIDDEN with "
        "the rule's reason instead of as a missing node (which tells callers which ids exist); "
        "refused with --production",
    )
    idempotency_ttl: Annotated[int, Flag(REQUESTS, metavar="SECONDS", default="86400, 24 h")] = (
        Field(
            DEFAULT_TTL,
            ge=1,
            description="seconds the answer to a mutation sent with an Idempotency-Key is kept "
            "for its retries",
        )
    )
    cors_origins: Annotated[
        tuple[str, ...],
        NoDecode,
        Flag(
            REQUESTS,
            name="--cors-origin",
            metavar="ORIGIN",
            default="any origin (*), or none under --production",
        ),
    ] = Field(
        (),
        description="an origin whose browser pages may call the API, e.g. "
        "http://localhost:5173; repeat for more",
    )
    jwt_secret: Annotated[
        str | None, Flag(REQUESTS, env_only="a secret stays off the command line")
    ] = Field(None, description="the HS256 shared secret that signs tokens")
    jwt_jwks: Annotated[str | None, Flag(REQUESTS, metavar="FILE|URL")] = Field(
        None,
        description="a JWKS file or https:// URL whose keys verify tokens (RS256/ES256; http:// "
        "only on a loopback host)",
    )
    jwt_issuer: Annotated[str | None, Flag(REQUESTS, metavar="ISS")] = Field(
        None, description="the `iss` a token must carry"
    )
    jwt_audience: Annotated[str | None, Flag(REQUESTS, metavar="AUD")] = Field(
        None, description="the `aud` a token must carry"
    )
    jwt_jwks_timeout: Annotated[float, Flag(REQUESTS, metavar="SECONDS")] = Field(
        TIMEOUT, description="seconds one JWKS fetch may take"
    )
    limits: Annotated[
        Limits, Flag(REQUESTS, env_only="one variable a limit", env=f"{ENV_PREFIX}LIMIT_<NAME>")
    ] = Field(
        default_factory=_limits_from_env,
        description=f"request limits, checked before execution; NAME is one of {_LIMITS}",
    )

    # persisted queries
    persisted_queries: Annotated[bool, Flag(PERSISTED)] = Field(
        True,
        description="automatic persisted queries, Apollo's protocol; --no-persisted-queries "
        "answers PERSISTED_QUERY_NOT_SUPPORTED",
    )
    persisted_queries_only: Annotated[Path | None, Flag(PERSISTED, metavar="FILE")] = Field(
        None,
        description="run only the operations of this manifest (Apollo's "
        "persisted-query-manifest.json or GraphQL Code Generator's persisted-documents.json) "
        "and refuse any other",
    )
    persisted_queries_cache_bytes: Annotated[
        int, Flag(PERSISTED, metavar="BYTES", default="10485760, 10 MiB")
    ] = Field(
        DEFAULT_CACHE_BYTES, description="bytes of query text the persisted-query cache keeps"
    )

    # subscriptions
    subscriptions: Annotated[bool, Flag(LIVE, default="on where the table has a stream")] = Field(
        True,
        description="serve the Subscription type, live queries driven by the table's "
        "stream, over WebSocket and Server-Sent Events",
    )
    subscriptions_per_connection: Annotated[int, Flag(LIVE, metavar="N")] = Field(
        100, ge=1, description="operations at once on one WebSocket connection"
    )
    subscriptions_max: Annotated[int, Flag(LIVE, metavar="N")] = Field(
        10_000, ge=1, description="subscriptions at once on this server"
    )
    pubsub: Annotated[str | None, Flag(LIVE, metavar="URL")] = Field(
        None,
        description="take changes from `edgewise relay` through Redis pub/sub "
        "(redis://host:6379/0) instead of reading the table's stream here",
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


def flag_of(name: str) -> Flag:
    """The :class:`Flag` of the field ``name``."""
    for item in Settings.model_fields[name].metadata:
        if isinstance(item, Flag):
            return item
    raise LookupError(f"Settings.{name} declares no Flag")


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
            if name in given:  # a flag: argparse typed it; say which, unless the message does
                if not message.startswith("--"):
                    message = f"{_flag_text(name, given[name])}: {message}"
                lines.append(message)
            else:
                lines.append(f"{ENV_PREFIX}{name.upper()}={error.get('input')!r}: {message}")
        raise SystemExit(f"{who}: " + "; ".join(lines)) from None


def _flag_text(name: str, value: Any) -> str:
    spelling = flag_of(name).spelling(name) if name in Settings.model_fields else name
    if isinstance(value, bool):
        return spelling
    values = value if isinstance(value, list | tuple) else [value]
    return " ".join(f"{spelling} {item}" for item in values)
