"""``edgewise seed``: the model's sample data, or a graph its generator makes."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

from graph.table import Layout, Table
from server.cli.command import Command, client_of, connection_flags, engine_of
from server.engine.fields import load_hook

__all__ = ["COMMAND"]

CHUNK = 2000  # items handed to one batch_write


def arguments(parser: argparse.ArgumentParser) -> None:
    connection_flags(parser)
    parser.add_argument(
        "--demo",
        action="store_true",
        dest="sample",  # not serve's --demo setting
        help="the demo data of the README",
    )
    for name in ("users", "groups", "products"):
        parser.add_argument(
            f"--{name}", type=int, default=0, metavar="N", help=f"{name} to generate"
        )
    parser.add_argument(
        "--memberships", type=int, default=3, metavar="K", help="groups per user (default 3)"
    )
    parser.add_argument(
        "--subscriptions",
        type=int,
        default=3,
        metavar="K",
        dest="group_subscriptions",  # not serve's --subscriptions setting
        help="products per group (default 3)",
    )
    parser.add_argument(
        "--random-seed", type=int, default=0, metavar="S", help="same seed, same graph"
    )


async def _write_all(
    args: argparse.Namespace, items: Iterable[dict[str, Any]], total: int, layout: Layout
) -> int:
    async with client_of(args) as client:
        table = Table(client, args.table, layout=layout)
        with tqdm(total=total, unit="items", desc="writing", file=sys.stderr) as bar:
            iterator = iter(items)
            while chunk := list(itertools.islice(iterator, CHUNK)):
                bar.update(await table.batch_write(chunk))
        return int(bar.n)


def run(args: argparse.Namespace) -> None:
    engine = engine_of(args)
    counts = (args.users, args.groups, args.products, args.memberships, args.group_subscriptions)
    generating = any(counts[:3])
    generator = engine.model.generator
    if generating and generator is None:
        raise SystemExit(
            f"edgewise seed: --users/--groups/--products call the model's generator, and "
            f"{args.model} names none (`generator: package.module:function` in the model file); "
            f"run `edgewise seed --model {args.model}` for its sample data"
        )
    table = Table(None, args.table, layout=engine.layout)
    if not generating or args.sample or generator is None:
        items = engine.sample_items(table)
    else:
        if min(counts) < 0:
            raise SystemExit("edgewise seed: pass --demo, or --users/--groups/--products >= 0")
        if args.users and args.memberships and not args.groups:
            raise SystemExit("edgewise seed: users can only join groups: pass --groups N")
        users, groups, products, memberships, subscriptions = counts
        sample = load_hook(generator)(
            users=users,
            groups=groups,
            products=products,
            memberships=memberships,
            subscriptions=subscriptions,
            seed=args.random_seed,
        )
        items = engine.items(table, sample)
    written = asyncio.run(_write_all(args, items, len(items), engine.layout))
    print(f"wrote {written} items to table {args.table!r}")


COMMAND = Command("seed", "load the demo data, or generate a graph", arguments, run)
