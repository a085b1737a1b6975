"""``edgewise rebuild``: every replica of a path (``materialize:``) compared with its path, and
the difference written."""

from __future__ import annotations

import argparse
import asyncio
import sys

from tqdm import tqdm

from graph.bulk import scan
from graph.dynamo.client import client_config, open_client
from graph.table import RetryPolicy, Table
from graph.writes.pending import resume_replicas
from graph.writes.rebuild import Checkpoint, Rebuilt, rebuild
from graph.writes.writer import Writer
from model import Model
from model.values import Replica
from server.cli.command import Command, connection_flags, endpoint_of, engine_of
from server.cli.flags import add_setting

__all__ = ["COMMAND"]

PATIENCE = 120.0  # seconds one call may take, retries included: no request waits on a rebuild


def arguments(parser: argparse.ArgumentParser) -> None:
    connection_flags(parser)
    add_setting(
        parser,
        "dynamodb_timeout",
        "seconds one DynamoDB call waits for its answer before it is sent again (each later "
        f"attempt of that call twice as long; default: the {PATIENCE:.0f} s a call may take)",
    )
    parser.add_argument(
        "--field",
        metavar="TYPE.FIELD",
        help="only the replica this path field reads (default: every replica of the model)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the differences, write nothing"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on from where an interrupted rebuild of the same --field got to (the table "
        "is read again; the starts it compared are not)",
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

    async def compare() -> Rebuilt:
        config = client_config(read_timeout=PATIENCE)
        async with open_client(
            endpoint_of(args), config, lean=args.settings.client == "lean"
        ) as client:
            policy = RetryPolicy(deadline=PATIENCE, timeout=args.settings.dynamodb_timeout)
            table = Table(client, args.table, policy, layout=engine.layout)
            writer = Writer(table, engine.codec)
            assert writer.upkeep is not None
            if not args.dry_run:  # work a crashed process left, first
                await resume_replicas(writer.upkeep)
            estimate = (await table.describe()).get("ItemCount") or None
            with tqdm(total=estimate, unit="items", desc="reading", file=sys.stderr) as bar:
                items = await scan(table, progress=bar.update)
            commit = None if args.dry_run else writer.commit
            checkpoint = Checkpoint(table, args.field or "*")
            with tqdm(unit="starts", desc="comparing", file=sys.stderr) as bar:
                return await rebuild(
                    writer.upkeep, replicas, items, commit, bar.update, checkpoint, args.resume
                )

    done = asyncio.run(compare())
    for kind, key, _ in done.found:
        print(f"{kind} {key.pk} {key.sk}")
    written = "not written (--dry-run)" if args.dry_run else "written"
    skipped = f"; went on after {done.after} (--resume)" if done.after else ""
    print(f"{len(done.found)} differences, {written}{skipped}", file=sys.stderr)
    if done.failed:
        for key, why in done.failed:
            print(f"could not compare {key.pk}: {why}", file=sys.stderr)
        raise SystemExit(
            f"edgewise rebuild: {len(done.failed)} starts kept changing or DynamoDB kept "
            "failing; run `edgewise rebuild --resume` again"
        )
    if args.dry_run and done.found:
        raise SystemExit(1)


COMMAND = Command(
    "rebuild",
    "compare every replica of a path (materialize:) with its path and write the difference",
    arguments,
    run,
    description="Read the table whole (a parallel Scan), find every start whose replicas "
    "differ from its path, compare each again with consistent reads and write the "
    "difference in transactions conditioned on the start's clock (a change made meanwhile "
    "makes it compare again), 100 starts at a time, recording each hundred done so that "
    "--resume goes on after an interruption. Throttling and slow answers are retried. "
    "Prints one line per difference, `missing|extra|stale <pk> <sk>`. Exit status: 0, or 1 "
    "when --dry-run found a difference or a start could not be compared.",
)
