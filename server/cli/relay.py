"""``edgewise relay``: the one reader of a table's stream, publishing changed keys to Redis for
``serve --pubsub``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from server.cli.command import Command, connection_flags, endpoint_of, engine_of
from server.cli.flags import add_setting
from server.observe.logs import configure

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    connection_flags(parser)
    add_setting(parser, "pubsub", "Redis, e.g. redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--lease-ttl",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a relay that stopped renewing keeps the lease (default 10)",
    )
    add_setting(parser, "log_format")


def run(args: argparse.Namespace) -> None:
    from server.live.relay import run_relay

    layout = engine_of(args).layout
    endpoint = endpoint_of(args)
    pubsub = args.settings.pubsub
    if not pubsub:
        raise SystemExit("edgewise relay: pass --pubsub redis://host:6379/0 (or EDGEWISE_PUBSUB)")
    configure(args.settings.log_format)

    async def relay() -> None:
        """Until SIGINT or SIGTERM, which release the lease (another relay takes over)."""
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for stop in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(stop, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await run_relay(endpoint, args.table, layout, pubsub, args.lease_ttl)

    asyncio.run(relay())


COMMAND = Command(
    "relay",
    "read the table's stream (holding its lease: one relay at a time) and publish each changed "
    "key to Redis pub/sub for `serve --pubsub`",
    arguments,
    run,
)
