"""``edgewise export-schema``: the model's GraphQL SDL, printed or written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from server.cli.command import Command, engine_of
from server.cli.flags import add_setting
from server.engine.federation import subgraph_sdl

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, help="write here instead of printing")
    parser.add_argument(
        "--federation",
        action="store_true",
        help="the Apollo Federation v2 subgraph SDL (@link, @key on every node type), as "
        "serve --federation answers Query._service",
    )
    add_setting(parser, "model")


def run(args: argparse.Namespace) -> None:
    schema = engine_of(args, table=False).schema()
    sdl = subgraph_sdl(schema.graphql_schema) if args.federation else schema.as_str() + "\n"
    if args.output:
        args.output.write_text(sdl)
    else:
        sys.stdout.write(sdl)


COMMAND = Command("export-schema", "print or write the GraphQL SDL", arguments, run)
