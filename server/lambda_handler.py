"""AWS Lambda: ``server.lambda_handler.handler`` serves the app of ``edgewise serve`` behind API
Gateway HTTP APIs (payload format 2.0) and Lambda function URLs, through Mangum.

A container builds the app once, at its first invocation, on its own event loop, and keeps it.
The start-up makes no DynamoDB call before the first request: the endpoint's capability probe
and the resumption of interrupted writes run beside it, and the first invocation returns once
they are done too, so a warm invocation makes no start-up call. When the probe refuses the table
(its keys are not the model's; mutations cannot work there and ``EDGEWISE_READ_ONLY`` is off)
every invocation fails with that message, as a failed start would. Lambda freezes the container
between invocations and has no shutdown hook for plain functions: the client ends with the
container.

Configuration comes from the same ``EDGEWISE_*`` environment as ``edgewise serve``, except for
three defaults: ``EDGEWISE_DYNAMODB`` is ``aws`` (the embedded DynamoDB makes no sense in a
function), and subscriptions and ``/metrics`` are off unless ``EDGEWISE_SUBSCRIPTIONS`` or
``EDGEWISE_METRICS`` turns them on (a function's response is not a stream, and each container
would count alone what one scrape of many containers reads). ``EDGEWISE_COMPILED`` names the
model ``edgewise build`` compiled into the package (deploy/template.yaml sets it).

Nothing is imported that this path does not use: not botocore or aioboto3 (the lean client
signs and sends itself when the environment holds the credentials and the region, as a
function's does), nor PyJWT without a key, Prometheus, OpenTelemetry, Redis, the playground or
the command line (tests/http/test_lambda_imports.py).
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
# What a function serves unless its environment says otherwise (see the module).
LAMBDA_DEFAULTS = {"dynamodb": "aws", "subscriptions": False, "metrics": False}


def settings_from_env() -> Settings:
    """Settings from ``EDGEWISE_*`` variables, as ``edgewise serve`` reads them, with a
    function's defaults (:data:`LAMBDA_DEFAULTS`) where the environment sets nothing."""
    settings = load_settings(who="edgewise lambda")
    update = {k: v for k, v in LAMBDA_DEFAULTS.items() if k not in settings.model_fields_set}
    return settings.model_copy(update=update) if update else settings


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
        self.starting: tuple[asyncio.Task[Any], ...] = self.app.state.starting
        self.refused: BaseException | None = None

    async def _start(self) -> None:
        await self._lifespan.enter_async_context(self.app.router.lifespan_context(self.app))

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        asyncio.set_event_loop(self.loop)
        if self.refused is not None:
            raise self.refused
        response = self.adapter(event, context)  # the start-up's tasks run beside it
        if self.starting:
            self.loop.run_until_complete(self._started())
        return response

    async def _started(self) -> None:
        """Work the start-up left running finishes in the first invocation, not in a later one;
        a refusal of the probe fails this invocation and every later one."""
        starting, self.starting = self.starting, ()
        await asyncio.wait(starting, timeout=START_TIMEOUT)
        checking: asyncio.Task[Any] | None = self.app.state.checking
        if checking is not None and checking.done() and checking.exception() is not None:
            self.refused = checking.exception()
            raise self.refused  # type: ignore[misc]

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
