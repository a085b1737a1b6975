"""``edgewise serve``: the API under uvicorn; every flag is a setting (server/settings.py)."""

from __future__ import annotations

import argparse
import asyncio
import logging

from graph.dynamo.capabilities import Capabilities
from graph.dynamo.client import Endpoint, client_config, open_client
from graph.errors import EdgewiseError
from graph.table import Layout, RetryPolicy, Table
from server.cli.command import Command, engine_of
from server.cli.flags import add_settings
from server.observe.logs import configure
from server.settings import Settings

__all__ = ["COMMAND"]


async def _probe(settings: Settings, layout: Layout) -> Capabilities:
    from server.http.app import check_capabilities

    config = client_config(settings.connect_timeout, settings.read_timeout)
    assert settings.table is not None  # set from the model by engine_of
    lean = settings.client == "lean"
    async with open_client(Endpoint.parse(settings.dynamodb), config, lean=lean) as client:
        policy = RetryPolicy(deadline=settings.deadline)
        table = Table(client, settings.table, policy, layout=layout)
        return await check_capabilities(table, settings)


def run(args: argparse.Namespace) -> None:
    import uvicorn

    from server.http.app import create_app

    settings: Settings = args.settings
    if settings.data_file is not None and settings.dynamodb != "embedded":
        raise SystemExit(
            "edgewise serve: --data-file only applies to the embedded DynamoDB, not --dynamodb "
            + settings.dynamodb
        )
    engine = engine_of(args, compiled=settings.compiled)  # an invalid model never starts a server
    settings = settings.model_copy(update={"table": args.table or engine.table_name})
    configure(settings.log_format)
    capabilities = None
    try:
        if settings.dynamodb != "embedded":  # probed here to exit with a message, not a traceback
            capabilities = asyncio.run(_probe(settings, engine.layout))
        app = create_app(settings, capabilities=capabilities)  # checks the settings
        if settings.workers != 1:
            from server.cli.workers import serve_workers

            serve_workers(settings, capabilities)
            return
    except (SystemExit, EdgewiseError) as exc:
        message = exc.code if isinstance(exc, SystemExit) else f"edgewise serve: {exc}"
        if settings.log_format != "json" or not isinstance(message, str):
            raise
        logging.getLogger("edgewise").critical(message)  # a JSON line, not bare text
        raise SystemExit(1) from None
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        timeout_graceful_shutdown=round(settings.shutdown_timeout),
        log_config=None,  # configure() did it: every logger, uvicorn's too, in --log-format
    )


COMMAND = Command("serve", "run the API under uvicorn", add_settings, run)
