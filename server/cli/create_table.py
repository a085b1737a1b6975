"""``edgewise create-table``: the table and its indexes, idempotent; or its CloudFormation."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from graph.dynamo.client import cloudformation_table, create_table, table_definition
from server.cli.command import Command, client_of, connection_flags, engine_of

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    connection_flags(parser)
    parser.add_argument(
        "--print-cloudformation",
        action="store_true",
        help='print the table as a CloudFormation resource, {"Type": "AWS::DynamoDB::Table", '
        '"Properties": {...}}, on stdout, and call no DynamoDB API',
    )


def run(args: argparse.Namespace) -> None:
    layout = engine_of(args).layout
    if args.print_cloudformation:
        resource = cloudformation_table(table_definition(args.table, layout))
        sys.stdout.write(json.dumps(resource, indent=2) + "\n")
        return

    async def create() -> bool:
        async with client_of(args) as client:
            return await create_table(client.control, args.table, layout=layout)

    created = asyncio.run(create())
    print(f"table {args.table!r} {'created' if created else 'already exists'} and ACTIVE")


COMMAND = Command("create-table", "create the table and indexes; idempotent", arguments, run)
