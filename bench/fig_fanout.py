"""Figure 7: server CPU per request against the answer's size: Q1 at fan-outs 1, 10 and 100
(1 user in that many groups, 3 subscriptions each: about 4, 40 and 400 nodes in the answer) and
at fan-out 100 with 10 subscriptions a group (Q1@100x10, about 1,100 nodes),
over the in-memory fake, the lean client and the botocore client (the replaying proxy at 0 ms),
each beside the graphql-core floor for the same document over the same data, in one run."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.demo import DEMO_LAYOUT
from graph.table import Table
from server.http.app import create_app

from .fake import FakeDynamoDB
from .floor import Floor, fewest_faults, shallow, sweep
from .markdown import table
from .measure import in_process, send
from .memory import Memory
from .queries import BenchQuery

__all__ = ["FanoutRow", "measure", "plot", "render"]

PATHS = ("floor", "over the fake", "lean client", "botocore client")


@dataclass(frozen=True)
class FanoutRow:
    query: BenchQuery
    nodes: int  # objects in the answer
    calls: int  # DynamoDB calls per request
    cpu: dict[str, float]  # median CPU seconds per request, by path


def _nodes(value: object) -> int:
    if isinstance(value, dict):
        return int("id" in value or "name" in value) + sum(_nodes(v) for v in value.values())
    if isinstance(value, list):
        return sum(_nodes(v) for v in value)
    return 0


async def measure(
    queries: list[tuple[BenchQuery, Memory]],
    lean: httpx.AsyncClient,
    botocore: httpx.AsyncClient,
    iterations: int,
) -> list[FanoutRow]:
    """Each query's paths taken in turn, ``iterations`` times after 2 warm-ups."""
    rows = []
    for query, memory in queries:
        fake = in_process(
            create_app(table=Table(FakeDynamoDB(memory), "bench", layout=DEMO_LAYOUT))
        )
        first = await send(lean, query)
        floor = Floor(memory)
        padding = fewest_faults(sweep(floor, query.text, query.variables, range(0, 150, 12), 1))
        clients = {"over the fake": fake, "lean client": lean, "botocore client": botocore}
        taken: dict[str, list[float]] = {path: [] for path in PATHS}
        for iteration in range(iterations + 2):
            run = shallow(floor, query.text, query.variables, padding.padding)
            if iteration >= 2:
                taken["floor"].append(run.seconds[0])
            for path, client in clients.items():
                started = time.process_time()
                answer = await send(client, query)
                if iteration >= 2:
                    taken[path].append(time.process_time() - started)
                if answer.data != first.data:
                    raise RuntimeError(f"{path} answers {query.label} differently")
        await fake.aclose()
        cpu = {path: statistics.median(seconds) for path, seconds in taken.items()}
        rows.append(FanoutRow(query, _nodes(first.data), first.trace["requests"], cpu))
    return rows


def render(rows: list[FanoutRow]) -> str:
    headers = [
        "query",
        "nodes in the answer",
        "DynamoDB calls",
        *(f"{p}: ms" for p in PATHS),
        *(f"{p}: x floor" for p in PATHS[1:]),
    ]
    body = [
        [
            r.query.label,
            str(r.nodes),
            str(r.calls),
            *(f"{r.cpu[p] * 1e3:.1f}" for p in PATHS),
            *(f"{r.cpu[p] / r.cpu['floor']:.1f}" for p in PATHS[1:]),
        ]
        for r in rows
    ]
    return table(headers, body)


def plot(rows: list[FanoutRow], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.5))
    nodes = [r.nodes for r in rows]
    for name in PATHS:
        axis.plot(nodes, [r.cpu[name] * 1e3 for r in rows], marker="o", label=name)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xticks(nodes, [f"{n}\n({r.query.label})" for n, r in zip(nodes, rows, strict=True)])
    axis.set_xlabel("nodes in the answer")
    axis.set_ylabel("server CPU per request, ms (median)")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    axis.set_title("CPU per request against the answer's size")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
