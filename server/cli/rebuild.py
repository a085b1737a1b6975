"""``edgewise rebuild``: every replica of a path (``materialize:``) compared with its path, and
the difference written."""

from __future__ import annotations

import argparse
import asyncio
import sys

from tqdm import tqdm

from graph.bulk import scan
from graph.table import Table
from graph.writes.pending import resume_replicas
from graph.writes.replicas import Difference
from graph.writes.writer import Writer
from model import Model
from model.values import Replica
from server.cli.command import Command, client_of, connection_flags, engine_of

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    connection_flags(parser)
    parser.add_argument(
        "--field",
        metavar="TYPE.FIELD",
        help="only the replica this path field reads (default: every replica of the model)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the differences, write nothing"
    )


def _replica_of(model: Model, name: str) -> Replica:
    """The replica the path field ``Type.field`` reads."""
    type_name, _, field = name.partition(".")
    node = model.types.get(type_name)
    walk = node.fields[field].walk if node is not None and field in node.fields else None
    if walk is None or walk.replica is None:
        fields = [
            f"{t.name}.{n}"
            for t in model.types.values()
            for n, f in t.fields.items()
            if f.walk is not None and f.walk.replica is not None
        ]
        raise SystemExit(
            f"edgewise rebuild: --field {name} reads no replica; the fields that do: "
            + ", ".join(fields)
        )
    return walk.replica


def run(args: argparse.Namespace) -> None:
    engine = engine_of(args)
    replicas = list(engine.model.replicas)
    if not replicas:
        raise SystemExit(
            f"edgewise rebuild: the model {args.model} declares no replica; add `materialize:` "
            "to a path field (see the docs, Replicas of a path)"
        )
    if args.field is not None:
        replicas = [_replica_of(engine.model, args.field)]

    async def compare() -> list[Difference]:
        async with client_of(args) as client:
            table = Table(client, args.table, layout=engine.layout)
            writer = Writer(table, engine.codec)
            assert writer.upkeep is not None
            if not args.dry_run:  # work a crashed process left, first
                await resume_replicas(writer.upkeep, writer.transact)
            estimate = (await table.describe()).get("ItemCount") or None
            with tqdm(total=estimate, unit="items", desc="reading", file=sys.stderr) as bar:
                items = await scan(table, progress=bar.update)
            commit = None if args.dry_run else writer.commit
            with tqdm(unit="starts", desc="comparing", file=sys.stderr) as bar:
                return await writer.upkeep.rebuild(replicas, items, commit, bar.update)

    found = asyncio.run(compare())
    for kind, key, _ in found:
        print(f"{kind} {key.pk} {key.sk}")
    done = "not written (--dry-run)" if args.dry_run else "written"
    print(f"{len(found)} differences, {done}", file=sys.stderr)
    if args.dry_run and found:
        raise SystemExit(1)


COMMAND = Command(
    "rebuild",
    "compare every replica of a path (materialize:) with its path and write the difference",
    arguments,
    run,
    description="Read the table whole (a parallel Scan), find every start whose replicas "
    "differ from its path, compare each again with consistent reads and write the "
    "difference in transactions conditioned on the start's clock (a change made meanwhile "
    "makes it compare again). Prints one line per difference, `missing|extra|stale <pk> "
    "<sk>`. Exit status: 0, or 1 when --dry-run found a difference.",
)
