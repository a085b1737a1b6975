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
from contextlib import AsyncExitStack
from typing import Any

from mangum import Mangum
from starlette.applications import Starlette

from server.http.app import create_app
from server.observe.logs import configure
from server.settings import Settings, load_settings

__all__ = ["Container", "handler", "settings_from_env"]

START_TIMEOUT = 60.0  # seconds the start-up's own background work may take


def settings_from_env() -> Settings:
    """Settings from ``EDGEWISE_*`` variables, as ``edgewise serve`` reads them; DynamoDB is
    AWS's unless ``EDGEWISE_DYNAMODB`` says otherwise (a function has no embedded one)."""
    settings = load_settings(who="edgewise lambda")
    if "dynamodb" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"dynamodb": "aws"})


class Container:
    """One Lambda container's app, started once: ``Container()(event, context)``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or settings_from_env()
        configure(settings.log_format)
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)  # Mangum runs each invocation on the current loop
        self.app: Starlette = create_app(settings)
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
