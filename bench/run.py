"""The whole bench: one moto and one metering proxy, the data, figures 1-10, RESULTS.md, plots."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from bench.demo import DEMO_LAYOUT
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import RetryPolicy, Table
from server.http.app import create_app, settled_garbage_collector

from . import (
    fig_bulk,
    fig_cpu,
    fig_fanout,
    fig_latency,
    fig_requests,
    fig_throughput,
    plots,
    processes,
)
from .control import ProxyControl
from .data import FANOUTS, Dataset, build
from .measure import in_process, say
from .memory import Memory
from .naive import create_naive_app
from .options import Options
from .queries import BenchQuery, bench_queries
from .report import Section, environment, write
from .sections import (
    FANOUT_TITLE,
    bulk_text,
    cpu_text,
    fanout_text,
    latency_text,
    requests_text,
    throughput_text,
)

__all__ = ["TABLE", "load", "prepare_environment", "run"]

TABLE = "bench"


def prepare_environment() -> None:
    """The bench measures the queries of the issue as they are: the default query-cost limit
    rejects Q1 at first: 100, so it is lifted; no JWT key means every request acts as admin
    (and so gets the trace). Children inherit this."""
    os.environ["EDGEWISE_LIMIT_COST"] = str(10**9)
    for name in ("EDGEWISE_JWT_SECRET", "EDGEWISE_JWT_JWKS"):
        os.environ.pop(name, None)
    logging.getLogger("edgewise").setLevel(logging.ERROR)


async def load(url: str, datasets: list[Dataset]) -> None:
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, TABLE, layout=DEMO_LAYOUT)
        table = Table(client, TABLE, layout=DEMO_LAYOUT)
        for data in datasets:
            await table.batch_write(data.items)
    say(f"loaded {sum(len(d.items) for d in datasets)} items: fan-outs {FANOUTS} and Q1@100x10")


def run(options: Options) -> None:
    """Start moto and the proxy, run every figure not skipped in an event loop, print each
    table, write RESULTS.md and the plots. moto and the proxy stop whatever happens."""
    started, load = time.monotonic(), os.getloadavg()[0]
    prepare_environment()
    options.output.mkdir(parents=True, exist_ok=True)
    say("starting moto and the metering proxy")
    with EmbeddedDynamoDB() as moto, processes.proxy(moto.url) as proxy:
        sections = asyncio.run(_figures(options, moto.url, proxy.url))
    elapsed = time.monotonic() - started
    intro = (
        f"{environment()} The whole run took {elapsed:.0f} s; the 1-minute load average was "
        f"{load:.1f} at its start and {os.getloadavg()[0]:.1f} at its end (other work shares "
        "the machine, so timings are noisy). Written by `python -m bench` (`make bench`); "
        "plots beside this file: `requests.png`, `latency.png`."
    )
    write(options.output / "RESULTS.md", intro, sections)
    say(f"wrote {options.output / 'RESULTS.md'} in {elapsed:.0f} s total")


async def _figures(options: Options, moto: str, proxy: str) -> list[Section]:
    datasets = [build(f) for f in FANOUTS]
    memories = {d.fanout: Memory(d.items) for d in datasets}
    queries = [q for d in datasets for q in bench_queries(d, memories[d.fanout])]
    q1_100 = next(q for q in queries if q.label == "Q1@100")
    q1_10 = next(q for q in queries if q.label == "Q1@10")
    # figure 7's largest answer: fan-out 100, 10 subscriptions a group (first is at most 100)
    wide_data = build(100, subscriptions=10)
    wide_memory = Memory(wide_data.items)
    wide = (bench_queries(wide_data, wide_memory)[0], wide_memory)
    sections: list[Section] = []

    def show(section: Section) -> None:
        print(f"\n## {section.title}\n\n{section.text}\n", flush=True)
        sections.append(section)

    control = ProxyControl(proxy)
    try:
        await load(moto, [*datasets, wide_data])
        answers = await _in_process(options, queries, memories, q1_100, wide, control, show)
        if "4" not in options.skip:
            say("figure 4: throughput against uvicorn servers")
            await control.configure(latency=options.latency, replay=True)
            ours = await fig_throughput.grid(
                lambda workers: processes.ours_server(
                    proxy, TABLE, workers, *fig_throughput.PATIENT
                ),
                [(q, answers[q.label]) for q in (q1_10, q1_100)],
                options.workers,
                options.clients,
                options.duration,
                control,
            )
            with processes.naive_server(proxy, TABLE) as child:
                await control.reset()
                naive = await fig_throughput.load(
                    "naive",
                    child.url,
                    q1_10,
                    answers[q1_10.label],
                    options.naive_clients,
                    options.duration,
                )
                naive = dataclasses.replace(naive, misses=(await control.stats()).misses)
            side = await _side_by_side(options, proxy, q1_10, answers[q1_10.label], control)
            show(throughput_text(ours, naive, options, side))
        if "5" not in options.skip:
            say(f"figure 5: bulk load of {options.bulk_items} items")
            bulk = await fig_bulk.measure(
                moto, options.bulk_items, control, options.latency, options.bulk_latency_items
            )
            show(bulk_text(bulk))
        if "6" not in options.skip:
            from . import fig_copies  # here: this figure stays one block of run.py

            say("figure 6: copies on edges (copyOf), one round less")
            rows = await fig_copies.measure(moto, control, options.cpu_iterations)
            show(fig_copies.render(rows, options.cpu_iterations))
        if "8" not in options.skip:
            from . import live

            say("figure 8: live queries, from a write to every subscriber")
            show(live.render(await live.measure(moto)))
        if "9" not in options.skip:
            from . import fig_replicas  # here: this figure stays one block of run.py

            say("figure 9: replicas of a path (materialize), one round")
            reads, writes = await fig_replicas.measure(moto, control, options.cpu_iterations)
            show(fig_replicas.render(reads, writes, options.cpu_iterations))
        if "10" not in options.skip:
            from . import fig_contention  # here: this figure stays one block of run.py

            say("figure 10: writes under contention, a 150-member fan-out")
            show(fig_contention.render(*await fig_contention.measure(moto, control)))
    finally:
        await control.aclose()
    return sections


async def _side_by_side(
    options: Options, proxy: str, query: BenchQuery, expected: Any, control: ProxyControl
) -> list[fig_throughput.Throughput]:
    """Figure 4's issue-14 target: Q1@10 at 32 clients on 1 worker, served by the commit before
    issue 14 and by today's code over each DynamoDB client, one after the other."""
    flags = fig_throughput.PATIENT
    with fig_throughput.checkout(fig_throughput.BEFORE) as before:
        servers = [
            (
                f"ours, --client {client}",
                lambda client=client: processes.ours_server(
                    proxy, TABLE, 1, *flags, "--client", client, name=f"ours-{client}"
                ),
            )
            for client in ("botocore", "lean")
        ]
        if before is not None:
            servers.insert(
                0,
                (
                    f"before issue 14 (commit {fig_throughput.BEFORE})",
                    lambda: processes.ours_server(
                        proxy, TABLE, 1, *flags, cwd=before, name="before"
                    ),
                ),
            )
        return await fig_throughput.side_by_side(
            servers, query, expected, 32, options.duration, control
        )


async def _in_process(
    options: Options,
    queries: list[BenchQuery],
    memories: dict[int, Memory],
    q1_100: BenchQuery,
    wide: tuple[BenchQuery, Memory],
    control: ProxyControl,
    show: Callable[[Section], None],
) -> dict[str, Any]:
    """Figures 1-3: both servers in this process over one aioboto3 client to the proxy.
    Returns Edgewise's answers by query label (figure 4 checks answers against them)."""
    async with open_client(Endpoint(control.url)) as client:
        # a long deadline: on a loaded machine moto answers the naive server's hundreds of
        # calls slowly, and the bench measures rather than fails
        patient = RetryPolicy(deadline=120)
        lean = Table(client, TABLE, patient, layout=DEMO_LAYOUT)
        ours = in_process(create_app(table=lean))
        naive = in_process(
            create_naive_app(table=Table(client, TABLE, patient, layout=DEMO_LAYOUT))
        )
        try:
            # the in-process client runs no lifespan: settle the collector as serving does
            with settled_garbage_collector():
                say("figure 1: requests and rounds, live moto through the proxy")
                await control.configure(latency=0.0, replay=False)
                counted = await fig_requests.measure(queries, ours, naive, control)
                show(requests_text(counted))
                plots.requests_plot(counted, options.output / "requests.png")
                if "2" not in options.skip:
                    say(f"figure 2: latency, {options.latency * 1000:.0f} ms per call, replayed")
                    timed = await fig_latency.measure(
                        queries, ours, naive, control, options.latency, options.iterations
                    )
                    show(latency_text(timed, options.iterations))
                    plots.latency_plot(timed, options.output / "latency.png")
                async with (
                    open_client(Endpoint(control.url), lean=False) as botocore,
                    in_process(
                        create_app(table=Table(botocore, TABLE, patient, layout=DEMO_LAYOUT))
                    ) as today,
                ):
                    if "3" not in options.skip:
                        say("figure 3: server CPU for Q1 at fan-out 100")
                        await control.configure(latency=0.0, replay=True)
                        cpu = await fig_cpu.measure(
                            q1_100, memories[100], ours, today, lean, options.cpu_iterations
                        )
                        show(cpu_text(cpu))
                    if "7" not in options.skip:
                        say("figure 7: server CPU against the answer's size, both clients")
                        await control.configure(latency=0.0, replay=True)
                        q1s = [(q, memories[q.fanout]) for q in queries if q.name == "Q1"]
                        q1s.append(wide)
                        rows = await fig_fanout.measure(q1s, ours, today, options.cpu_iterations)
                        fig_fanout.plot(rows, options.output / "fanout.png")
                        show(Section(FANOUT_TITLE, fanout_text(rows, options.cpu_iterations)))
        finally:
            await ours.aclose()
            await naive.aclose()
    return {r.query.label: r.ours.data for r in counted}
