"""``edgewise build``: the model compiled ahead of time into a directory, for a process that
starts often and should not compile it (AWS Lambda, the container image): ``EDGEWISE_COMPILED``
(or ``serve --compiled``) names the directory, and a stale build is refused at start."""

from __future__ import annotations

import argparse
from pathlib import Path

from model.compiled import write
from server.cli.command import Command, engine_of
from server.cli.flags import add_setting

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, "model")
    parser.add_argument(
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="the directory to write (created if missing; other models' builds kept); serve it "
        "with EDGEWISE_COMPILED=DIR",
    )


def run(args: argparse.Namespace) -> None:
    engine = engine_of(args, table=False)  # checked whole: the file, then the built schema
    written = write(args.model, engine.model, args.output)
    serve = f"EDGEWISE_COMPILED={args.output}"
    print(f"{written}: the model {args.model}, compiled; serve it with {serve}")


COMMAND = Command(
    "build",
    "compile the model into DIR, for processes that start often (AWS Lambda)",
    arguments,
    run,
    description="Compile the model (checked whole, as check-model checks it) into DIR, which "
    "a process that starts often reads instead of the model file: EDGEWISE_COMPILED=DIR, or "
    "serve --compiled DIR. A build whose model file changed since is refused at start.",
)
