"""``edgewise check-model [M]``: a model file validated (one line a mistake) and summarised; with
``--dynamodb``, checked against the table's keys and indexes too."""

from __future__ import annotations

import argparse
import asyncio
import sys

from graph.table import Table
from model import ModelError
from server.cli.breaking import AgainstError, changes, federated, served_schema
from server.cli.command import Command, client_of, connection_flags
from server.cli.summary import summary
from server.engine import Engine, engine_for

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model_arg", nargs="?", metavar="M", help="the model (default --model)")
    parser.add_argument(
        "--against",
        metavar="SCHEMA",
        help="the schema the API serves now: its SDL file (schema.graphql) or its /graphql URL "
        "(introspected); each change of the model's schema that breaks its clients is a line on "
        "stderr, and the exit status is 1",
    )
    connection_flags(parser)


def run(args: argparse.Namespace) -> None:
    args.model = args.model_arg or args.model
    try:
        engine = engine_for(args.model)
        text = summary(engine.model)
    except ModelError as exc:
        sys.stderr.write("\n".join(exc.lines) + "\n")
        raise SystemExit(1) from None
    except Exception as exc:  # never a traceback: one line, and it is ours to fix
        sys.stderr.write(
            f"{args.model}: check-model failed on this model ({type(exc).__name__}: {exc}); "
            "this is a bug of Edgewise: please report it with the model file\n"
        )
        raise SystemExit(1) from None
    if args.dynamodb not in (None, "embedded"):  # the table can be seen: its keys must agree
        from graph.dynamo.capabilities import disagreements

        name = args.table or engine.table_name

        async def describe() -> list[str]:
            async with client_of(args) as client:
                table = Table(client, name, layout=engine.layout)
                return disagreements(engine.layout, await table.describe())

        found = asyncio.run(describe())
        if found:
            sys.stderr.write("".join(f"table {name!r}: {line}\n" for line in found))
            raise SystemExit(1)
    sys.stdout.write(text)
    if args.against:
        compare(engine, args.against)


def compare(engine: Engine, against: str) -> None:
    """The breaking changes from the schema ``against`` names to the model's (exit 1 on any),
    and the dangerous ones (reported, not failing)."""
    try:
        old = served_schema(against)
    except AgainstError as exc:
        sys.stderr.write(f"{exc}\n")
        raise SystemExit(1) from None
    new = engine.schema(federation=federated(old)).graphql_schema
    breaking, dangerous = changes(old, new)
    sys.stderr.writelines(f"dangerous change against {against}: {line}\n" for line in dangerous)
    if breaking:
        sys.stderr.writelines(f"breaking change against {against}: {line}\n" for line in breaking)
        raise SystemExit(1)
    sys.stdout.write(f"no breaking change against {against}\n")


COMMAND = Command(
    "check-model",
    "validate a model file and summarise it",
    arguments,
    run,
    description="Validate a model file: each mistake is one line on stderr, "
    "`<dotted.path> (line N): <problem>; <what to write instead>`, and the exit status is 1. "
    "A valid model is summarised: types, edges, indexes, and each access pattern with the "
    "DynamoDB operation it costs. With --dynamodb, the table's keys and indexes (names and "
    "types, from DescribeTable) must agree with the model's too. With --against, the schema "
    "the API serves now (an SDL file or a URL) is compared with the model's: each breaking "
    "change is a line on stderr and the exit status is 1.",
)
