"""What the commands share: the :class:`Command` each module declares, and the reading of the
flags most of them take (``--dynamodb``, ``--table``, ``--model``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.plane import DataPlane
from model import ModelError
from server.cli.flags import add_setting
from server.engine import Engine, engine_for

__all__ = [
    "BULK_FORMAT",
    "NOT_EMBEDDED",
    "Command",
    "client_of",
    "connection_flags",
    "endpoint_of",
    "engine_of",
]

NOT_EMBEDDED = (
    "an endpoint URL or aws (the embedded DynamoDB lives only inside `serve`), "
    "e.g. http://127.0.0.1:8001"
)

BULK_FORMAT = (  # of the files `load` reads and `dump` writes
    "FILE.jsonl holds one item a line, its attribute map in DynamoDB JSON, e.g. "
    '{"PK":{"S":"USER#alice"},"SK":{"S":"USER#alice"},"version":{"N":"1"}}.'
)


@dataclass(frozen=True)
class Command:
    """One ``edgewise`` command: its name, the line ``edgewise --help`` shows, the paragraph its
    own ``--help`` shows, the flags it adds to its parser, and its body (which prints its answer
    and raises ``SystemExit`` with a message to stop; ``EdgewiseError`` is turned into one)."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], None]
    description: str | None = None


def connection_flags(parser: argparse.ArgumentParser) -> None:
    """``--dynamodb`` (a URL or aws: the embedded DynamoDB lives only inside ``serve``),
    ``--table`` and ``--model``, from the settings."""
    add_setting(parser, "dynamodb", NOT_EMBEDDED)
    add_setting(parser, "table")
    add_setting(parser, "model")


def engine_of(args: argparse.Namespace, table: bool = True, compiled: Path | None = None) -> Engine:
    """The engine of ``--model`` (read from ``compiled``, a directory ``edgewise build`` wrote,
    when given), and ``args.table`` filled from the model when not given (which a command that
    touches the table, ``table``, needs); an invalid model, or a stale build of it, stops the
    command with its problems."""
    try:
        engine = engine_for(args.model, compiled)
    except ModelError as exc:
        sys.stderr.write("\n".join(exc.lines) + "\n")
        if compiled is not None:
            raise SystemExit(
                f"edgewise {args.command}: no usable build of the model {args.model} in {compiled}"
            ) from None
        raise SystemExit(f"edgewise {args.command}: the model {exc.source} is invalid") from None
    args.table = getattr(args, "table", None) or engine.model.table
    if args.table is None and table:
        raise SystemExit(
            f"edgewise {args.command}: the model names no table (table.name): pass --table T "
            "or set EDGEWISE_TABLE"
        )
    return engine


def endpoint_of(args: argparse.Namespace) -> Endpoint:
    """``--dynamodb``, which outside ``serve`` cannot be the embedded DynamoDB."""
    if args.dynamodb == "embedded":
        raise SystemExit(
            f"edgewise {args.command}: the embedded DynamoDB lives only inside `edgewise serve`; "
            "pass --dynamodb URL (or aws), or set EDGEWISE_DYNAMODB"
        )
    return Endpoint.parse(args.dynamodb)


@asynccontextmanager
async def client_of(args: argparse.Namespace) -> AsyncIterator[DataPlane]:
    """A DynamoDB client for ``--dynamodb``, on the data plane that ``EDGEWISE_CLIENT`` chooses
    (``lean`` or ``botocore``)."""
    lean = args.settings.client == "lean"
    async with open_client(endpoint_of(args), lean=lean) as client:
        yield client
