"""``edgewise check-model [M]``: a model file validated (one line a mistake) and summarised; with
``--dynamodb``, checked against the table's keys and indexes too."""

from __future__ import annotations

import argparse
import asyncio
import sys

from graph.table import Table
from model import ModelError
from server.cli.command import Command, client_of, connection_flags
from server.cli.summary import summary
from server.engine import engine_for

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model_arg", nargs="?", metavar="M", help="the model (default --model)")
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


COMMAND = Command(
    "check-model",
    "validate a model file and summarise it",
    arguments,
    run,
    description="Validate a model file: each mistake is one line on stderr, "
    "`<dotted.path> (line N): <problem>; <what to write instead>`, and the exit status is 1. "
    "A valid model is summarised: types, edges, indexes, and each access pattern with the "
    "DynamoDB operation it costs. With --dynamodb, the table's keys and indexes (names and "
    "types, from DescribeTable) must agree with the model's too.",
)
