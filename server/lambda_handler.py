"""AWS Lambda: ``server.lambda_handler.handler`` serves the app of ``edgewise serve`` behind API
Gateway HTTP APIs (payload format 2.0) and Lambda function URLs, through Mangum.

A container builds the app once, at its first invocation: it runs the app's start-up (the
DynamoDB client, the endpoint's capability probe, interrupted deletions resumed) on the
container's own event loop and keeps all of it, so a warm invocation makes no start-up call.
Lambda freezes the container between invocations and has no shutdown hook for plain functions:
the client ends with the container.

Configuration comes from the same ``EDGEWISE_*`` environment as ``edgewise serve``, except that
``EDGEWISE_DYNAMODB`` defaults to ``aws`` (the embedded DynamoDB makes no sense in a function).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mangum import Mangum
from starlette.applications import Starlette

from .app import create_app
from .cors import parse_origins
from .logs import configure
from .settings import DEFAULT_CLIENT, Settings, client_choice, env_flag

__all__ = ["Container", "handler", "settings_from_env"]

START_TIMEOUT = 60.0  # seconds the start-up's own background work may take


def settings_from_env() -> Settings:
    """Settings from ``EDGEWISE_*`` variables, as ``edgewise serve`` reads them."""
    env = os.environ
    metrics = env.get("EDGEWISE_METRICS", "").strip()
    only = env.get("EDGEWISE_PERSISTED_QUERIES_ONLY")
    return Settings(
        dynamodb=env.get("EDGEWISE_DYNAMODB", "aws"),
        table=env.get("EDGEWISE_TABLE") or None,  # default: the model's table
        model=env.get("EDGEWISE_MODEL", "demo"),
        production=env_flag("EDGEWISE_PRODUCTION"),
        connect_timeout=float(env.get("EDGEWISE_CONNECT_TIMEOUT", 2)),
        read_timeout=float(env.get("EDGEWISE_READ_TIMEOUT", 5)),
        deadline=float(env.get("EDGEWISE_DEADLINE", 10)),
        read_only=env_flag("EDGEWISE_READ_ONLY"),
        cors_origins=parse_origins([env.get("EDGEWISE_CORS_ORIGINS", "")]),
        persisted_queries=env.get("EDGEWISE_PERSISTED_QUERIES", "1").strip().lower()
        not in ("0", "false", "no", "off"),
        persisted_queries_only=Path(only) if only else None,
        metrics=env_flag("EDGEWISE_METRICS") if metrics else None,
        client=client_choice(env.get("EDGEWISE_CLIENT", DEFAULT_CLIENT)),
    )


class Container:
    """One Lambda container's app, started once: ``Container()(event, context)``."""

    def __init__(self, settings: Settings | None = None) -> None:
        configure(os.environ.get("EDGEWISE_LOG_FORMAT", "text").strip().lower() or "text")
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)  # Mangum runs each invocation on the current loop
        self.app: Starlette = create_app(settings or settings_from_env())
        self._lifespan = AsyncExitStack()
        try:
            self.loop.run_until_complete(self._start())
        except BaseException:
            self.close()
            raise
        self.adapter = Mangum(self.app, lifespan="off")  # the lifespan above is the container's

    async def _start(self) -> None:
        await self._lifespan.enter_async_context(self.app.router.lifespan_context(self.app))
        # Work the start-up left running (resuming deletions) finishes now, in the cold start,
        # not in a later invocation.
        started = asyncio.all_tasks() - {asyncio.current_task()}
        if started:
            await asyncio.wait(started, timeout=START_TIMEOUT)

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        asyncio.set_event_loop(self.loop)
        return self.adapter(event, context)

    def close(self) -> None:
        """Run the app's shutdown and close the loop (tests; Lambda itself never calls it)."""
        if self.loop.is_closed():
            return
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._lifespan.aclose())
        finally:
            self.loop.close()
            asyncio.set_event_loop(None)


_container: Container | None = None


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda entry point (``server.lambda_handler.handler``)."""
    global _container
    if _container is None:
        _container = Container()
    return _container(event, context)
