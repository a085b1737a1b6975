"""The Starlette app: ``/graphql`` (GET and POST), ``/healthz``, ``/readyz`` and the playground.

What only some configurations use is imported by them, not with this module: the embedded
DynamoDB and the bulk dump and load (``--data-file``), the live queries and Redis
(subscriptions), the playground's files, Prometheus (metrics), OpenTelemetry (``OTEL_*``)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute

from graph.dynamo.capabilities import Capabilities, probe
from graph.dynamo.client import (
    Endpoint,
    client_config,
    create_table,
    open_client,
    open_streams_client,
)
from graph.dynamo.streams import stream_arn
from graph.errors import BadUserInput, EdgewiseError
from graph.table import RetryPolicy, Table
from graph.writes.deletes import resume_deletions as resume_model_deletions
from graph.writes.pending import resume_replicas
from graph.writes.writer import Writer
from server.engine import Engine, engine_for
from server.http.auth import Authenticator
from server.http.cors import cors
from server.http.graphql import checked, graphql
from server.http.limits import Limits
from server.http.persisted import PersistedQueries
from server.http.ws import websocket
from server.observe import metrics
from server.observe.requests import observed
from server.observe.telemetry import flushing, tracer_provider_from_env
from server.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from server.live.queries import Hub

__all__ = ["create_app", "settled_garbage_collector"]

log = logging.getLogger("edgewise")


@asynccontextmanager
async def open_table(settings: Settings, engine: Engine) -> AsyncIterator[Table]:
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
            from graph.dynamo.embedded import EmbeddedDynamoDB

            embedded = EmbeddedDynamoDB()
            # Started from this (the loop's) thread on purpose: PR_SET_PDEATHSIG ties the
            # child to the thread that forked it. Nothing is served yet, so blocking is fine.
            embedded.start()
            stack.callback(embedded.stop)
            endpoint = Endpoint(embedded.url)
        else:
            endpoint = Endpoint.parse(settings.dynamodb)
        config = client_config(settings.connect_timeout, settings.read_timeout)
        lean = settings.client == "lean"
        client = await stack.enter_async_context(open_client(endpoint, config, lean=lean))
        name = settings.table or engine.table_name
        policy = RetryPolicy(deadline=settings.deadline)
        table = Table(client, name, policy, layout=engine.layout)
        if embedded_mode:
            await create_table(client.control, name, layout=engine.layout)
            if data_file is not None and data_file.exists():
                from graph.bulk import load

                count = await load(table, data_file)
                log.info("loaded %d items from %s", count, data_file)
            elif settings.demo:
                await table.batch_write(engine.sample_items(table))
            log.info("embedded DynamoDB on %s, table %r", endpoint.url, name)
        yield table
        # Only reached at a clean shutdown, while the client and the embedded server still run.
        if data_file is not None:
            from graph.bulk import dump

            count = await dump(table, data_file)
            log.info("dumped %d items to %s", count, data_file)


async def _resume(table: Table, engine: Engine) -> None:
    """Finish deletions (graph.writes.deletes, for a model with a ``deletions`` setting) and replica
    writes (graph.writes.pending) a previous process left part-way."""
    writer = Writer(table, engine.codec)
    try:
        finished = await resume_model_deletions(writer)
        if finished:
            log.info("finished %d interrupted deletions", finished)
        if writer.upkeep is not None:
            finished = await resume_replicas(writer.upkeep, writer.transact)
            if finished:
                log.info("finished the replicas of %d interrupted writes", finished)
    except Exception:
        log.exception("could not finish interrupted work; it resumes at the next start")


async def _playground_asset(request: Request) -> Response:
    """GraphiQL's files (:mod:`server.http.playground`, imported by the first)."""
    from server.http import playground

    return await playground.asset(request)


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


async def readyz(request: Request) -> Response:
    table: Table = request.app.state.table
    try:
        await checked(request.app.state)
    except EdgewiseError as exc:
        return PlainTextResponse(f"not ready: {exc}", status_code=503)
    try:
        await table.describe()
    except Exception as exc:
        return PlainTextResponse(f"DynamoDB is not ready: {exc}", status_code=503)
    state = request.app.state
    live: Hub | None = state.live
    if live is not None and (down := live.down) is not None:
        return PlainTextResponse(f"not ready: the stream reader is down: {down}", 503)
    if state.capabilities is None or state.capabilities.transactions is None:
        state.capabilities = await probe(table)  # not known yet (e.g. the table was missing)
    capabilities: Capabilities = state.capabilities
    if state.settings.read_only:
        return PlainTextResponse("ready (read-only: no mutations)")
    if capabilities.missing:
        return PlainTextResponse(f"not ready: {capabilities.explain()}", status_code=503)
    return PlainTextResponse("ready")


async def _check(app: Starlette, table: Table) -> Capabilities:
    """The start-up's probe (:func:`check_capabilities`), its result kept on the app; a
    refusal is logged here and raised to whoever awaits it (a mutation, /readyz)."""
    try:
        capabilities = await check_capabilities(table, app.state.settings)
    except EdgewiseError as exc:
        log.critical("%s", exc)
        raise
    app.state.capabilities = capabilities
    return capabilities


def _seen(task: asyncio.Task[Capabilities]) -> None:
    """The probe's refusal is logged (:func:`_check`) and raised to whoever awaits it: not a
    task exception nobody retrieved."""
    if not task.cancelled():
        task.exception()


async def check_capabilities(table: Table, settings: Settings) -> Capabilities:
    """Probe the endpoint; raise when the table's keys disagree with the model's, or when
    mutations cannot work there and the server is not ``read_only``. An undecided probe (e.g.
    no table yet) is left to ``/readyz``."""
    capabilities = await probe(table)
    if capabilities.disagreements:
        raise EdgewiseError(
            f"the model disagrees with table {table.name!r}: "
            + "; ".join(capabilities.disagreements)
        )
    if capabilities.missing and not settings.read_only:
        raise EdgewiseError(capabilities.explain())
    if capabilities.transactions is None:
        log.warning("could not probe the endpoint for TransactWriteItems: %s", capabilities.detail)
    return capabilities


def _streams_endpoint(table: Table, settings: Settings) -> Endpoint:
    """Where the table's stream is read: AWS's own endpoint, or the table's endpoint (moto and
    LocalStack serve DynamoDB Streams on the same URL)."""
    if settings.dynamodb == "aws":
        return Endpoint.parse("aws")
    control = table.client.control
    return Endpoint(control.endpoint, control.region)


async def start_live(app: Starlette, table: Table, engine: Engine) -> Hub | None:
    """The app's live queries, when subscriptions are on and the table has a stream; else the
    schema without its Subscription type (and a log line saying why)."""
    state = app.state
    settings: Settings = state.settings
    if not settings.subscriptions:
        return None
    capabilities: Capabilities | None = state.capabilities
    if capabilities is None and state.checking is not None:
        try:  # the probe's DescribeTable tells: wait for it rather than describe again
            capabilities = await asyncio.shield(state.checking)
        except EdgewiseError:
            capabilities = None
    stream = capabilities.stream if capabilities is not None else None
    if stream is None:
        try:
            stream = stream_arn(await table.describe()) is not None
        except Exception:  # undecided (e.g. no table yet): the reader says so on /readyz
            stream = None
    if stream is False:
        log.warning(
            "the table %r has no stream: subscriptions are off, the schema has no Subscription "
            "type (`edgewise create-table` turns the table's stream on)",
            table.name,
        )
        state.schema = engine.schema(
            settings.production, settings.read_only, False, settings.federation
        )
        return None
    from server.live.pubsub import RedisChanges
    from server.live.queries import Hub

    config = client_config(settings.connect_timeout, settings.read_timeout)
    endpoint = _streams_endpoint(table, settings)
    metrics_: metrics.Metrics | None = state.metrics
    return Hub(
        state.schema,
        table,
        state.make_context,
        lambda: open_streams_client(endpoint, config),
        settings.production,
        metrics_.stream_records.inc if metrics_ is not None else None,
        RedisChanges(settings.pubsub, table.name) if settings.pubsub else None,
    )


@contextmanager
def settled_garbage_collector() -> Iterator[None]:
    """While serving: what startup built (modules, botocore's service models, the schema and its
    plans, some 140,000 objects) is out of the cyclic garbage collector's sight
    (``gc.freeze()``), and the youngest generation is collected every 10,000 allocations instead
    of 700. A request allocates thousands of objects; with CPython's defaults Q1@100 triggered
    about 15 young collections each and, every eight requests or so, a full one that walked the
    whole heap: about a quarter of its CPU on the real path. The young generations are collected
    before the freeze, not the whole heap: a full collection there found a handful of unreachable
    objects and cost a cold start 25 ms of CPU."""
    gc.collect(1)
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(10_000, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def create_app(
    settings: Settings | None = None,
    table: Table | None = None,
    authenticator: Authenticator | None = None,
    limits: Limits | None = None,
    capabilities: Capabilities | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Starlette:
    """The app. Pass ``table`` to serve an already-open table (tests); otherwise the lifespan
    opens one client for the process from ``settings``, probes the endpoint's capabilities
    (unless ``capabilities`` are given: ``edgewise serve`` probed already) and closes the client
    at shutdown. Keys and limits come from ``settings`` unless given, the tracer provider from
    ``OTEL_*`` (see :mod:`server.observe.telemetry`)."""
    settings = settings or Settings()
    engine = engine_for(settings.model, settings.compiled)
    authenticator = authenticator or Authenticator(
        settings.jwt_secret,
        settings.jwt_jwks,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_jwks_timeout,
    )
    if settings.explain_forbidden and settings.production:
        raise SystemExit(
            "--explain-forbidden is for development: it tells callers which ids exist, so "
            "it cannot be used with --production (unset EDGEWISE_EXPLAIN_FORBIDDEN)"
        )
    if not authenticator.configured:
        if settings.production:
            raise SystemExit(
                "--production needs a key: set EDGEWISE_JWT_SECRET (HS256) or "
                "EDGEWISE_JWT_JWKS (a JWKS file or https URL, RS256/ES256)"
            )
        log.warning(
            "no JWT key configured (EDGEWISE_JWT_SECRET or EDGEWISE_JWT_JWKS): "
            "every request acts as admin"
        )

    @asynccontextmanager
    async def live_queries(app: Starlette, opened: Table) -> AsyncIterator[None]:
        app.state.live = await start_live(app, opened, engine)
        try:
            yield
        finally:
            if app.state.live is not None:
                await app.state.live.close()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if table is not None:
            async with live_queries(app, table):
                with settled_garbage_collector():
                    yield
            return
        async with open_table(app.state.settings, engine) as opened:
            app.state.table = opened
            # The probe and the resumed work run beside the first requests, not before them:
            # a mutation waits for the probe (graphql.py), /readyz too.
            started = []
            if app.state.capabilities is None:
                app.state.checking = asyncio.create_task(_check(app, opened))
                app.state.checking.add_done_callback(_seen)
                started.append(app.state.checking)
            if engine.model.deletions is not None or engine.model.replicas:
                started.append(asyncio.create_task(_resume(opened, engine)))
            app.state.starting = tuple(started)
            async with live_queries(app, opened):
                with settled_garbage_collector():
                    yield
            for task in started:
                task.cancel()

    routes = [
        Route("/graphql", observed(graphql), methods=["GET", "POST"]),
        WebSocketRoute("/graphql", websocket),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/playground/{name}", _playground_asset),
    ]
    if settings.metrics_enabled:
        routes.append(Route("/metrics", metrics.endpoint))
    own_provider = None if tracer_provider is not None else tracer_provider_from_env()
    app = Starlette(
        routes=routes,
        middleware=[cors(settings.cors_origins, settings.production)],
        lifespan=flushing(lifespan, own_provider),
    )
    app.state.metrics = metrics.Metrics() if settings.metrics_enabled else None
    provider = tracer_provider or own_provider
    app.state.tracer = provider.get_tracer("edgewise") if provider is not None else None
    app.state.settings = settings
    app.state.persisted = PersistedQueries.create(
        settings.persisted_queries,
        settings.persisted_queries_only,
        settings.persisted_queries_cache_bytes,
    )
    app.state.authenticator = authenticator
    app.state.limits = limits or settings.limits
    app.state.schema = engine.schema(
        settings.production, settings.read_only, settings.subscriptions, settings.federation
    )
    app.state.live = None  # the live queries' hub, once the lifespan found the table's stream
    app.state.make_context = engine.context_factory(settings.explain_forbidden)
    app.state.capabilities = capabilities
    app.state.checking = None  # the lifespan's probe while it runs beside the first requests
    app.state.starting = ()  # the lifespan's start-up work (the probe, resumed writes)
    if table is not None:
        app.state.table = table
    return app
