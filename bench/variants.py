"""The demo model and a variant of it, built from model text, serving the same sample data
side by side: each in its own table of the bench's moto, each app in this process calling
DynamoDB through the metering proxy (figures 6 and 9)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.sample_items import build_items
from graph.table import Table
from graph.writes.writer import Writer
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings

from . import processes
from .control import ProxyControl
from .engines import ENGINES, started, suffix
from .measure import in_process
from .options import RESULTS
from .report import Section, environment, write

__all__ = ["AT", "run_alone", "served"]

AT = "2024-01-15T09:00:00.000Z"


@asynccontextmanager
async def served(
    moto: str,
    control: ProxyControl,
    variant: tuple[str, str],
    samples: list[dict[str, Any]],
    prefix: str,
    units: str = "reported",
) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    """The apps by label (``demo``, then ``variant``'s label for its model text), over tables
    ``<prefix>-0`` and ``<prefix>-1`` holding ``samples``; the proxy holds no call. ``units``:
    the tables' consumed units (:class:`graph.table.Table`), ``computed`` on moto."""
    label, text = variant
    with tempfile.TemporaryDirectory(prefix=f"edgewise-{prefix}-") as temporary:
        path = Path(temporary) / f"{prefix}.yaml"
        path.write_text(text)
        engines = {"demo": engine_for("demo"), label: engine_for(str(path))}
        names = {name: f"{prefix}-{i}" for i, name in enumerate(engines)}
        async with open_client(Endpoint(moto)) as client:
            for name, engine in engines.items():
                await create_table(client.control, names[name], layout=engine.layout)
                table = Table(client, names[name], layout=engine.layout)
                for sample in samples:
                    await table.batch_write(build_items(Writer(table, engine.codec), sample, AT))
        await control.configure(latency=0.0, replay=False)
        async with open_client(Endpoint(control.url)) as client:
            apps = {
                name: in_process(
                    create_app(
                        Settings(model=engine.name),
                        table=Table(client, names[name], layout=engine.layout, units=units),
                    )
                )
                for name, engine in engines.items()
            }
            try:
                yield apps
            finally:
                for app in apps.values():
                    await app.aclose()


def run_alone(
    prog: str,
    description: str | None,
    filename: str,
    figure: Callable[[str, ProxyControl, int, str], Awaitable[Section]],
) -> None:
    """``python -m bench.<prog>``: one figure with an engine (``--engine``: moto, else
    DynamoDB Local) and a metering proxy of its own, printed and written to
    ``results/<filename>`` (``-LOCAL`` before its extension on DynamoDB Local)."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{prog}", description=description)
    parser.add_argument("--iterations", type=int, default=30, help="CPU samples per row")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"where {filename} goes")
    parser.add_argument("--engine", choices=ENGINES, default="moto", help="the DynamoDB engine")
    args = parser.parse_args()
    logging.getLogger("edgewise").setLevel(logging.ERROR)
    with started(args.engine) as url, processes.proxy(url) as proxy:
        control = ProxyControl(proxy.url)

        async def run() -> Section:
            try:
                return await figure(url, control, args.iterations, ENGINES[args.engine])
            finally:
                await control.aclose()

        section = asyncio.run(run())
    print(f"\n## {section.title}\n\n{section.text}\n", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    stem, _, extension = filename.rpartition(".")
    named = f"{stem}{suffix(args.engine)}.{extension}"
    write(args.output / named, environment(args.engine), [section])
