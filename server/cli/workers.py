"""``edgewise serve --workers N``: N uvicorn worker processes sharing one listening socket.

The parent process does everything that must happen once: it starts the embedded DynamoDB (one
child process for all workers), creates its table, loads the demo data or ``--data-file``,
probes the endpoint's capabilities, and binds the socket. Then uvicorn's process manager spawns
the workers; each builds the app from :func:`worker_app` (an import string, as uvicorn requires
for workers) with the parent's settings, pointed at the embedded DynamoDB's URL. On SIGINT or
SIGTERM the manager stops the workers (each drains its requests for ``--shutdown-timeout``),
then the parent writes ``--data-file`` and stops the embedded DynamoDB. Workers die with the
parent, even when it is killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import logging
import os
import pickle
import signal
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from graph.bulk import dump, load
from graph.dynamo.capabilities import Capabilities
from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import BadUserInput
from graph.table import RetryPolicy, Table
from server.engine import Engine, engine_for
from server.observe.logs import configure
from server.settings import Settings

__all__ = ["WorkerSpec", "serve_workers", "worker_app"]

ENV = "EDGEWISE_WORKER_SPEC"  # set by the parent for its workers; not a user setting
FACTORY = "server.cli.workers:worker_app"

log = logging.getLogger("edgewise")


@dataclass(frozen=True)
class WorkerSpec:
    """What the parent hands each worker (through the environment, which spawned children
    inherit): the settings with the embedded DynamoDB replaced by its URL, the capabilities the
    parent probed, the log format, and the parent's pid."""

    settings: Settings
    capabilities: Capabilities | None
    log_format: str
    parent: int

    def encode(self) -> str:
        return base64.b64encode(pickle.dumps(self)).decode("ascii")

    @staticmethod
    def decode(value: str) -> WorkerSpec:
        spec = pickle.loads(base64.b64decode(value))
        if not isinstance(spec, WorkerSpec):
            raise TypeError(f"{ENV} does not hold a WorkerSpec")
        return spec


def _die_with(parent: int) -> None:
    """Linux: this worker gets SIGTERM when the parent dies (PR_SET_PDEATHSIG), and stops now
    if the parent is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    if os.getppid() != parent:
        raise SystemExit("edgewise serve: the parent process is gone; stopping this worker")


def worker_app() -> Starlette:
    """The app of one worker (uvicorn's ``factory``); only inside ``edgewise serve --workers``."""
    value = os.environ.get(ENV)
    if not value:
        raise SystemExit(f"{FACTORY} runs only in the workers of `edgewise serve --workers N`")
    spec = WorkerSpec.decode(value)
    _die_with(spec.parent)
    configure(spec.log_format)
    from server.http.app import create_app

    return create_app(spec.settings, capabilities=spec.capabilities)


async def _prepare(settings: Settings, engine: Engine, url: str) -> Capabilities:
    """Once for all workers: create the embedded DynamoDB's table, load ``--data-file`` or the
    demo data, probe the endpoint."""
    from server.http.app import check_capabilities

    assert settings.table is not None  # set from the model by the CLI
    config = client_config(settings.connect_timeout, settings.read_timeout)
    async with open_client(Endpoint(url), config, lean=settings.client == "lean") as client:
        policy = RetryPolicy(deadline=settings.deadline)
        table = Table(client, settings.table, policy, layout=engine.layout)
        await create_table(client.control, table.name, layout=engine.layout)
        data_file = settings.data_file
        if data_file is not None and data_file.exists():
            log.info("loaded %d items from %s", await load(table, data_file), data_file)
        elif settings.demo:
            await table.batch_write(engine.sample_items(table))
        log.info("embedded DynamoDB on %s, table %r", url, table.name)
        return await check_capabilities(table, settings)


async def _save(settings: Settings, engine: Engine, url: str) -> None:
    assert settings.table is not None and settings.data_file is not None
    async with open_client(Endpoint(url), lean=settings.client == "lean") as client:
        table = Table(client, settings.table, layout=engine.layout)
        count = await dump(table, settings.data_file)
        log.info("dumped %d items to %s", count, settings.data_file)


def serve_workers(settings: Settings, capabilities: Capabilities | None) -> None:
    """Run ``settings.workers`` uvicorn processes until SIGINT or SIGTERM; every child is stopped
    before this returns. Raises SystemExit when a worker fails to start."""
    engine = engine_for(settings.model, settings.compiled)
    data_file = settings.data_file
    if data_file is not None and not data_file.parent.is_dir():
        raise BadUserInput(f"--data-file {data_file}: no such directory {data_file.parent}")
    with contextlib.ExitStack() as stack:
        url = None
        if settings.dynamodb == "embedded":
            embedded = EmbeddedDynamoDB()
            embedded.start()  # from the main thread: PR_SET_PDEATHSIG ties it to this thread
            stack.callback(embedded.stop)
            url = embedded.url
            capabilities = asyncio.run(_prepare(settings, engine, url))
        shared = (
            settings.model_copy(update={"dynamodb": url, "data_file": None}) if url else settings
        )
        os.environ[ENV] = WorkerSpec(
            shared, capabilities, settings.log_format, os.getpid()
        ).encode()
        config = uvicorn.Config(
            FACTORY,
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            timeout_graceful_shutdown=round(settings.shutdown_timeout),
            log_config=None,  # configure() did it here, worker_app does it in each worker
        )
        supervisor = Multiprocess(config, sockets=[config.bind_socket()])
        supervisor.run()  # returns once every worker has exited
        if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes):
            raise SystemExit("edgewise serve: a worker failed to start; its log says why")
        if url is not None and data_file is not None:
            asyncio.run(_save(settings, engine, url))
