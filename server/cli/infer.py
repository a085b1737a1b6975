"""``edgewise infer``: a model file drafted from a sample of an existing table."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from graph.table import Table
from server.cli.command import Command, client_of, endpoint_of
from server.cli.flags import add_setting
from server.settings import EMBEDDED

if TYPE_CHECKING:
    from graph.sample import Sample

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    add_setting(parser, "dynamodb", "an endpoint URL or aws")
    add_setting(parser, "table", "the table")
    parser.add_argument(
        "--sample", type=int, default=1000, metavar="N", help="items to read at most (default 1000)"
    )
    parser.add_argument(
        "--output", type=Path, metavar="F", help="write the model here instead of printing it"
    )


def run(args: argparse.Namespace) -> None:
    from graph.sample import UNKEYED, describe, sample
    from model.infer import InferError, infer, table_info

    if not args.table or args.dynamodb in EMBEDDED:
        raise SystemExit("edgewise infer: pass --dynamodb URL (or aws) and --table T")
    if args.sample < 1:
        raise SystemExit(f"edgewise infer: --sample must be at least 1, not {args.sample}")
    endpoint_of(args)

    async def read() -> tuple[dict[str, Any], Sample]:
        async with client_of(args) as client:
            table = Table(client, args.table, layout=UNKEYED)
            described = await describe(table)
            total = min(args.sample, described.get("ItemCount") or args.sample)  # approximate
            with tqdm(total=total, unit="items", desc="sampling", file=sys.stderr) as bar:
                got = await sample(
                    table, args.sample, described.get("ItemCount"), progress=bar.update
                )
                bar.total = bar.n  # the true count once read
                return described, got

    described, got = asyncio.run(read())
    try:
        draft = infer(table_info(described), got.items, got.complete)
    except InferError as exc:
        raise SystemExit(f"edgewise infer: {exc}") from None
    for note in draft.notes:
        sys.stderr.write(f"edgewise infer: {note}\n")
    if args.output:
        args.output.write_text(draft.text)
    else:
        sys.stdout.write(draft.text)
    where = f"; wrote {args.output}" if args.output else ""
    sys.stderr.write(
        f"edgewise infer: sampled {len(got.items)} items "
        f"({'the whole table' if got.complete else 'a sample'}), "
        f"{got.units:g} read capacity units consumed over {got.segments} scan segments{where}\n"
    )


COMMAND = Command(
    "infer",
    "draft a model file from an existing table",
    arguments,
    run,
    description="Draft a model from a table you already have: DescribeTable for its keys and "
    "indexes, then a parallel Scan of at most --sample items (never the whole of a large "
    "table). Types, key templates, fields, edges, children and index uses are guessed from "
    "the sample, each guess commented with its evidence. The draft passes `edgewise "
    "check-model`; edit its names, then `edgewise serve --model FILE`. Only reads the table "
    "(needs dynamodb:DescribeTable and dynamodb:Scan); the read units used are reported.",
)
