"""``edgewise load FILE.jsonl``: bulk import, the whole file validated before any write."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tqdm import tqdm

from graph.bulk import load, validate
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
    parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="the file to load")
    connection_flags(parser)


def run(args: argparse.Namespace) -> None:
    layout = engine_of(args).layout
    endpoint_of(args)  # refused before the file is read
    if not args.file.is_file():
        raise SystemExit(f"edgewise load: no such file: {args.file}")

    async def load_file() -> int:
        total = validate(args.file, layout)
        async with client_of(args) as client:
            table = Table(client, args.table, layout=layout)
            with tqdm(total=total, unit="items", desc="loading", file=sys.stderr) as bar:
                return await load(table, args.file, bar.update)

    count = asyncio.run(load_file())
    print(f"loaded {count} items from {args.file} into table {args.table!r}")


COMMAND = Command(
    "load",
    "bulk import items from a DynamoDB JSON lines file",
    arguments,
    run,
    description="Validate the whole file first (a bad line stops everything, nothing is "
    "written, and its line number is reported), then write its items with concurrent "
    "BatchWriteItem calls, replacing items with the same keys. " + BULK_FORMAT,
)
