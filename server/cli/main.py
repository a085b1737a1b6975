"""The ``edgewise`` command line (also ``python -m server``): the global options, one
subcommand per module of this package (each declares its :class:`~server.cli.command.Command`),
and the one place errors become exit statuses: ``SystemExit`` carries a command's message (exit
status 1) or argparse's usage error (2), and an ``EdgewiseError`` becomes ``edgewise <command>:
<what was wrong>`` (1)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from graph.errors import EdgewiseError
from server.cli import (
    build,
    check_model,
    create_table,
    dump,
    export_schema,
    import_model,
    infer,
    load,
    model_schema,
    rebuild,
    relay,
    seed,
    serve,
)
from server.cli.command import Command
from server.cli.flags import settings_from
from server.version import version

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[Command, ...] = tuple(
    module.COMMAND
    for module in (
        serve,
        create_table,
        seed,
        load,
        dump,
        rebuild,
        relay,
        export_schema,
        build,
        check_model,
        infer,
        import_model,
        model_schema,
    )
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edgewise", description="A GraphQL API over a DynamoDB single-table graph."
    )
    parser.add_argument("--version", action="version", version=f"edgewise {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.description)
        command.arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    args.settings = settings_from(args)
    try:
        args.run(args)
    except EdgewiseError as exc:
        raise SystemExit(f"edgewise {args.command}: {exc}") from None
