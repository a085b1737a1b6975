"""``edgewise export-schema``: the model's GraphQL SDL, printed or written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from server.cli.command import Command, engine_of
from server.cli.flags import add_setting

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, help="write here instead of printing")
    add_setting(parser, "model")


def run(args: argparse.Namespace) -> None:
    sdl = engine_of(args, table=False).schema().as_str() + "\n"
    if args.output:
        args.output.write_text(sdl)
    else:
        sys.stdout.write(sdl)


COMMAND = Command("export-schema", "print or write the GraphQL SDL", arguments, run)
