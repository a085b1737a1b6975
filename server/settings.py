"""The settings of one server process: one object, read from ``EDGEWISE_*`` environment
variables and overridden by ``edgewise serve``'s flags. Nothing else in ``server/`` reads the
environment, but for OpenTelemetry's own ``OTEL_*`` variables (and the DynamoDB client, AWS's
``AWS_*``).

Each field is declared once, here: its type, default and ``description``, and a :class:`Flag`
that says how the command line spells it. ``server/cli/flags.py`` builds every flag and its
``--help`` line from them, so a new field is a new flag with nothing else to write.

The declarations read as pydantic's (``x: Annotated[T, Flag(...)] = Field(default,
description=..., ge=...)``, ``Settings.model_fields``, ``model_fields_set``, ``model_copy``), and
values are converted and refused as pydantic's lax mode does, in its words, but by the few lines
of :func:`_convert`: the settings' types are str, int, float, bool, paths, a tuple of strings
and the limits. Importing pydantic and building a model of these fields cost a cold Lambda
start 90 ms of CPU, a third of what the whole bare stack costs (bench/coldstart.py);
pydantic-settings' per-variable checks cost another third of a second."""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from graph.dynamo.client import CLIENTS, DEFAULT_CLIENT
from graph.errors import BadUserInput
from graph.writes.idempotency import DEFAULT_TTL
from model import SHIPPED
from server.http.cors import parse_origins
from server.http.jwks import TIMEOUT
from server.http.limits import Limits
from server.http.persisted import DEFAULT_CACHE_BYTES
from server.observe.logs import FORMATS

__all__ = [
    "ENV_PREFIX",
    "Field",
    "FieldInfo",
    "Flag",
    "Settings",
    "SettingsError",
    "flag_of",
    "load_settings",
]

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


@dataclass(frozen=True)
class FieldInfo:
    """One setting's declaration: its type (``annotation``), default (or ``default_factory``),
    ``description``, the bound ``ge`` and the ``metadata`` of its ``Annotated`` type (its
    :class:`Flag`), under the names of pydantic's ``FieldInfo``."""

    annotation: Any
    default: Any = None
    default_factory: Callable[[], Any] | None = None
    description: str | None = None
    metadata: tuple[Any, ...] = ()
    ge: float | None = None

    def get_default(self, call_default_factory: bool = False) -> Any:
        if self.default_factory is None:
            return self.default
        return self.default_factory() if call_default_factory else None


@dataclass(frozen=True)
class _Declared:
    """What :func:`Field` leaves in the class body, until :func:`_fields` reads it."""

    default: Any
    default_factory: Callable[[], Any] | None
    description: str | None
    ge: float | None


def Field(
    default: Any = None,
    *,
    default_factory: Callable[[], Any] | None = None,
    description: str | None = None,
    ge: float | None = None,
) -> Any:
    """A setting's default (or ``default_factory``), ``description`` and lower bound ``ge``."""
    return _Declared(default, default_factory, description, ge)


class SettingsError(ValueError):
    """Values the settings refuse: ``errors`` holds (field, message, the value given) each."""

    def __init__(self, errors: list[tuple[str, str, Any]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message, _ in errors))
        self.errors = errors


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and (text := value.lower()) in _TRUE | _FALSE:
        return text in _TRUE
    raise ValueError("Input should be a valid boolean, unable to interpret input")


def _int(value: Any) -> int:
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                number = 0.5
            if not number.is_integer():
                raise ValueError(
                    "Input should be a valid integer, unable to parse string as an integer"
                ) from None
            return int(number)
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise ValueError("Input should be a valid integer, got a number with a fractional part")
    raise ValueError("Input should be a valid integer")


def _float(value: Any) -> float:
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ValueError(
                "Input should be a valid number, unable to parse string as a number"
            ) from None
    raise ValueError("Input should be a valid number")


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("Input should be a valid string")


def _path(value: Any) -> Path:
    if isinstance(value, str | Path):
        return Path(value)
    raise ValueError("Input is not a valid path for <class 'pathlib.Path'>")


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("Input should be a valid tuple of strings")


def _convert(field: FieldInfo, value: Any, before: Callable[[Any], Any] | None) -> Any:
    """``value`` as the field's type, as pydantic's lax mode converts it; ValueError in
    pydantic's words when it cannot be."""
    if before is not None:
        value = before(value)
    kind = field.annotation
    if isinstance(kind, types.UnionType):  # X | None
        if value is None:
            return None
        [kind] = [k for k in typing.get_args(kind) if k is not type(None)]
    converted: Any
    if typing.get_origin(kind) is tuple:
        converted = _strings(value)
    elif isinstance(kind, type) and kind in _CONVERTERS:
        converted = _CONVERTERS[kind](value)
    elif isinstance(kind, type) and isinstance(value, kind):
        converted = value
    elif isinstance(kind, type) and dataclasses.is_dataclass(kind) and isinstance(value, dict):
        try:
            converted = kind(**value)
        except TypeError as exc:
            raise ValueError(str(exc)) from None
    else:
        name = getattr(kind, "__name__", kind)
        raise ValueError(f"Input should be a dictionary or an instance of {name}")
    if field.ge is not None and converted < field.ge:
        raise ValueError(f"Input should be greater than or equal to {field.ge:g}")
    return converted


_CONVERTERS: dict[type, Callable[[Any], Any]] = {
    bool: _bool,
    int: _int,
    float: _float,
    str: _str,
    Path: _path,
}


def environment(
    fields: Mapping[str, Any], environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The value of each field ``x`` of ``fields`` that ``EDGEWISE_X`` sets (the name in any
    case; an empty value sets nothing), as text for pydantic to convert."""
    found = {k.upper(): v for k, v in environ.items() if k[:9].upper() == ENV_PREFIX and v}
    return {name: found[key] for name in fields if (key := ENV_PREFIX + name.upper()) in found}


class Settings:
    """Every field ``x`` is also the environment variable ``EDGEWISE_X``; arguments given to
    the constructor win over the environment. Frozen; ``model_fields_set`` names the fields the
    environment or the arguments set, ``model_copy(update=...)`` makes a changed copy."""

    model_fields: ClassVar[dict[str, FieldInfo]]  # filled from the class body, below
    model_fields_set: frozenset[str]

    def __init__(self, **given: Any) -> None:
        fields = type(self).model_fields
        values = environment(fields) | given
        errors = [
            (n, "Extra inputs are not permitted", v) for n, v in given.items() if n not in fields
        ]
        for name, field in fields.items():
            if name not in values:
                value = field.get_default(call_default_factory=True)
            else:
                try:
                    value = _convert(field, values[name], _BEFORE.get(name))
                except ValueError as exc:
                    errors.append((name, str(exc), values[name]))
                    continue
            object.__setattr__(self, name, value)
        if errors:
            raise SettingsError(errors)
        object.__setattr__(self, "model_fields_set", frozenset(values.keys() & fields.keys()))

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Settings:
        """A copy with ``update``'s values (taken as they are, as pydantic's model_copy)."""
        copy = object.__new__(type(self))
        for name in type(self).model_fields:
            object.__setattr__(copy, name, getattr(self, name))
        for name, value in (update or {}).items():
            object.__setattr__(copy, name, value)
        object.__setattr__(copy, "model_fields_set", self.model_fields_set | set(update or {}))
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the settings are frozen: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the settings are frozen: {name} cannot be deleted")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in type(self).model_fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).model_fields)
        return f"Settings({shown})"

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
    compiled: Annotated[Path | None, Flag(DATA, metavar="DIR")] = Field(
        None,
        description="a directory `edgewise build` wrote: the model is read compiled from it, "
        "not from its file (refused when the file changed since)",
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

    @property
    def metrics_enabled(self) -> bool:
        return self.metrics if self.metrics is not None else not self.production


def _fields(cls: type) -> dict[str, FieldInfo]:
    """The fields a class body declares with :func:`Field`, in their order."""
    fields = {}
    for name, hint in typing.get_type_hints(cls, include_extras=True).items():
        declared = vars(cls).get(name)
        if not isinstance(declared, _Declared):
            continue
        annotation, *metadata = typing.get_args(hint) if hasattr(hint, "__metadata__") else [hint]
        fields[name] = FieldInfo(
            annotation,
            declared.default,
            declared.default_factory,
            declared.description,
            tuple(metadata),
            declared.ge,
        )
        delattr(cls, name)  # an instance always has its own value
    return fields


Settings.model_fields = _fields(Settings)


def _origins(value: Any) -> tuple[str, ...]:
    """Comma-separated in the environment; a list from the flags."""
    try:
        return parse_origins([value] if isinstance(value, str) else value)
    except BadUserInput as exc:
        raise ValueError(str(exc)) from None


def _log_format(value: Any) -> str:
    chosen = str(value).strip().lower()
    if chosen not in FORMATS:
        raise ValueError(f"use {' or '.join(FORMATS)}")
    return chosen


def _client(value: Any) -> str:
    chosen = str(value).strip().lower()
    if chosen not in CLIENTS:
        raise ValueError(f"use {' or '.join(CLIENTS)}")
    return chosen


# What a field's value goes through before its type's conversion.
_BEFORE: dict[str, Callable[[Any], Any]] = {
    "cors_origins": _origins,
    "log_format": _log_format,
    "client": _client,
}


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
    except SettingsError as exc:
        lines = []
        for name, message, value in exc.errors:
            if name in given:  # a flag: argparse typed it; say which, unless the message does
                if not message.startswith("--"):
                    message = f"{_flag_text(name, given[name])}: {message}"
                lines.append(message)
            else:
                lines.append(f"{ENV_PREFIX}{name.upper()}={value!r}: {message}")
        raise SystemExit(f"{who}: " + "; ".join(lines)) from None


def _flag_text(name: str, value: Any) -> str:
    spelling = flag_of(name).spelling(name) if name in Settings.model_fields else name
    if isinstance(value, bool):
        return spelling
    values = value if isinstance(value, list | tuple) else [value]
    return " ".join(f"{spelling} {item}" for item in values)
