"""``edgewise dump FILE.jsonl``: bulk export, a parallel Scan written atomically."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tqdm import tqdm

from graph.bulk import dump
from graph.table import Table
from server.cli.command import (
    BULK_FORMAT,
    Command,
    client_of,
    connection_flags,
    endpoint_of,
    engine_of,
)

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="the file to write")
    connection_flags(parser)


def run(args: argparse.Namespace) -> None:
    layout = engine_of(args).layout
    endpoint_of(args)

    async def dump_table() -> int:
        async with client_of(args) as client:
            table = Table(client, args.table, layout=layout)
            estimate = (await table.describe()).get("ItemCount") or None  # approximate on AWS
            with tqdm(total=estimate, unit="items", desc="dumping", file=sys.stderr) as bar:
                return await dump(table, args.file, progress=bar.update)

    count = asyncio.run(dump_table())
    print(f"dumped {count} items from table {args.table!r} to {args.file}")


COMMAND = Command(
    "dump",
    "bulk export every item to a DynamoDB JSON lines file",
    arguments,
    run,
    description="Scan the table in parallel segments and write every item to the file, "
    "atomically (a temporary file beside it, renamed when complete). Lines follow the scan "
    "order; `edgewise load` reads the file back. " + BULK_FORMAT,
)
