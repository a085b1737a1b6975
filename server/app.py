"""The Starlette app: ``/graphql`` (GET and POST), ``/healthz``, ``/readyz`` and the playground."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types.graphql import OperationType

from graph.bulk import dump, load
from graph.client import Endpoint, create_table, open_client
from graph.embedded import EmbeddedDynamoDB
from graph.errors import BadUserInput
from graph.seed import demo_items
from graph.table import Table
from graph.writes import resume_deletions

from . import playground
from .context import Context
from .schema import format_error, schema
from .settings import Settings

__all__ = ["create_app"]

log = logging.getLogger("edgewise")


@asynccontextmanager
async def open_table(settings: Settings) -> AsyncIterator[Table]:
    """The process's table: starts the embedded DynamoDB (with table and demo data) if asked.

    With ``settings.data_file`` (embedded only) the embedded table is loaded from that file when
    it exists (instead of the demo data) and dumped back to it, atomically, at clean shutdown.
    """
    embedded_mode = settings.dynamodb == "embedded"
    data_file = settings.data_file
    if data_file is not None and not embedded_mode:
        raise BadUserInput("--data-file only applies to the embedded DynamoDB")
    if data_file is not None and not data_file.parent.is_dir():
        raise BadUserInput(f"--data-file {data_file}: no such directory {data_file.parent}")
    async with AsyncExitStack() as stack:
        if embedded_mode:
            embedded = EmbeddedDynamoDB()
            # Started from this (the loop's) thread on purpose: PR_SET_PDEATHSIG ties the
            # child to the thread that forked it. Nothing is served yet, so blocking is fine.
            embedded.start()
            stack.callback(embedded.stop)
            endpoint = Endpoint(embedded.url)
        else:
            endpoint = Endpoint.parse(settings.dynamodb)
        client = await stack.enter_async_context(open_client(endpoint))
        table = Table(client, settings.table)
        if embedded_mode:
            await create_table(client, settings.table)
            if data_file is not None and data_file.exists():
                count = await load(table, data_file)
                log.info("loaded %d items from %s", count, data_file)
            elif settings.demo:
                await table.batch_write(demo_items())
            log.info("embedded DynamoDB on %s, table %r", endpoint.url, settings.table)
        yield table
        # Only reached at a clean shutdown, while the client and the embedded server still run.
        if data_file is not None:
            count = await dump(table, data_file)
            log.info("dumped %d items to %s", count, data_file)


async def _resume_deletions(table: Table) -> None:
    """Finish deletions a previous process left part-way (see graph.writes.delete_node)."""
    try:
        if finished := await resume_deletions(table):
            log.info("finished %d interrupted deletions", finished)
    except Exception:
        log.exception("could not finish interrupted deletions; they resume at the next start")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"errors": [{"message": message, "extensions": {"code": "BAD_USER_INPUT"}}]}
    return JSONResponse(body, status_code=status, headers=headers)


async def _read_params(request: Request) -> dict[str, Any] | Response:
    if request.method == "GET":
        params: dict[str, Any] = dict(request.query_params)
        for name in ("variables", "extensions"):
            if isinstance(params.get(name), str):
                try:
                    params[name] = json.loads(params[name])
                except ValueError:
                    return _error(400, f"the {name} parameter is not valid JSON")
        return params
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "send the GraphQL request as Content-Type: application/json")
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(400, "the request body is not valid JSON")
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object")
    return body


async def graphql(request: Request) -> Response:
    """GraphQL over HTTP: queries by GET or POST, mutations by POST only."""
    settings: Settings = request.app.state.settings
    if (
        request.method == "GET"
        and "query" not in request.query_params
        and "text/html" in request.headers.get("accept", "")
    ):
        return PlainTextResponse("Not Found", 404) if settings.production else playground.page()
    params = await _read_params(request)
    if isinstance(params, Response):
        return params
    query, variables = params.get("query"), params.get("variables")
    if not isinstance(query, str) or not query.strip():
        return _error(400, "no GraphQL query: pass `query` in the JSON body or the query string")
    if variables is not None and not isinstance(variables, dict):
        return _error(400, "`variables` must be a JSON object")
    allowed = {OperationType.QUERY}
    if request.method == "POST":
        allowed.add(OperationType.MUTATION)
    context = Context.for_request(request, request.app.state.table)
    try:
        result = await schema.execute(
            query,
            variable_values=variables,
            context_value=context,
            operation_name=params.get("operationName"),
            allowed_operation_types=allowed,
        )
    except InvalidOperationTypeError:
        return _error(405, "mutations are sent with POST", headers={"Allow": "POST"})
    except CannotGetOperationTypeError as exc:
        return _error(400, str(exc) or "unknown operation")
    body: dict[str, Any] = {}
    if result.errors:
        body["errors"] = [format_error(e) for e in result.errors]
    if result.data is not None or not result.errors or any(e.path for e in result.errors):
        body["data"] = result.data
    if request.headers.get("edgewise-trace") == "1":
        body["extensions"] = {"dynamodb": context.table.trace.as_dict()}
    return JSONResponse(body)


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


async def readyz(request: Request) -> Response:
    table: Table = request.app.state.table
    try:
        await table.call("DescribeTable", TableName=table.name)
    except Exception as exc:
        return PlainTextResponse(f"DynamoDB is not ready: {exc}", status_code=503)
    return PlainTextResponse("ready")


def create_app(settings: Settings | None = None, table: Table | None = None) -> Starlette:
    """The app. Pass ``table`` to serve an already-open table (tests); otherwise the lifespan
    opens one client for the process from ``settings`` and closes it at shutdown."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if table is not None:
            yield
            return
        async with open_table(app.state.settings) as opened:
            app.state.table = opened
            resuming = asyncio.create_task(_resume_deletions(opened))
            yield
            resuming.cancel()

    routes = [
        Route("/graphql", graphql, methods=["GET", "POST"]),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/playground/{name}", playground.asset),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.settings = settings or Settings()
    if table is not None:
        app.state.table = table
    return app
