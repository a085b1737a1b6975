"""``edgewise import-model``: a model file drafted from another tool's data model (an AWS NoSQL
Workbench export)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from server.cli.command import Command
from server.cli.flags import add_setting

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        choices=["nosql-workbench"],
        help="the tool that wrote FILE",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the exported JSON file")
    add_setting(parser, "table", "the table to draft, when the export holds several")
    parser.add_argument(
        "--output", type=Path, metavar="F", help="write the model here instead of printing it"
    )


def run(args: argparse.Namespace) -> None:
    from model.infer import InferError, import_workbench

    try:
        export = json.loads(args.file.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"edgewise import-model: cannot read {args.file}: {exc}") from None
    try:
        draft = import_workbench(export, args.table, args.file.name)
    except InferError as exc:
        raise SystemExit(f"edgewise import-model: {exc}") from None
    for note in draft.notes:
        sys.stderr.write(f"edgewise import-model: {note}\n")
    if args.output:
        args.output.write_text(draft.text)
        sys.stderr.write(f"edgewise import-model: wrote {args.output}\n")
    else:
        sys.stdout.write(draft.text)


COMMAND = Command(
    "import-model",
    "draft a model file from another tool's data model",
    arguments,
    run,
    description="Draft a model from a data model another tool exported: an AWS NoSQL "
    "Workbench export (--from nosql-workbench). A facet becomes a type of the same name, "
    "key templates come from the facet's sample rows (TableData), a facet whose keys are "
    "the keys of two other facets becomes an edge, GSIs become indexes; each guess and "
    "each gap of the export is commented. The draft passes `edgewise check-model`.",
)
