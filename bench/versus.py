"""``python -m bench.versus REV``: the server CPU per request of this checkout against commit
``REV``'s, for a change that should not cost CPU (a redesign, a move of files).

Both are ``edgewise serve`` (uvicorn, one worker) over the same data, calling DynamoDB through
the metering proxy replaying moto's answers (0 ms), so what is left is the server's own work. The
two serve in turn (which goes first alternates each round), each sent the same requests one at a
time; a server's CPU is the kernel's count for its process (user + system), read before and after
each batch. The figure is the ratio this/REV taken round by round: pairing keeps it meaningful
when the machine's speed drifts. Every answer of both is checked equal first."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from graph.dynamo.embedded import EmbeddedDynamoDB

from . import processes
from .control import ProxyControl
from .data import build
from .fig_throughput import checkout
from .markdown import table
from .measure import say
from .memory import Memory
from .options import RESULTS
from .queries import BenchQuery, bench_queries
from .report import Section, environment, write
from .run import TABLE, load, prepare_environment

__all__ = ["cpu_seconds", "main"]

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """The user + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


async def _post(client: httpx.AsyncClient, url: str, query: BenchQuery) -> Any:
    response = await client.post(
        url + "/graphql", json={"query": query.text, "variables": query.variables}
    )
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(f"{url}: {query.label}: {body['errors'][:2]}")
    return body["data"]


async def _batch(
    client: httpx.AsyncClient, server: processes.Child, query: BenchQuery, requests: int
) -> float:
    """CPU seconds per request of ``server`` over ``requests`` sent one at a time."""
    before = cpu_seconds(server.process.pid)
    for _ in range(requests):
        await _post(client, server.url, query)
    return (cpu_seconds(server.process.pid) - before) / requests


async def _measure(
    servers: dict[str, processes.Child], queries: list[BenchQuery], rounds: int, requests: int
) -> dict[str, dict[str, list[float]]]:
    """Per query label, per server: CPU seconds per request, one figure a round."""
    found: dict[str, dict[str, list[float]]] = {}
    async with httpx.AsyncClient(timeout=120) as client:
        for query in queries:
            answers = [await _post(client, server.url, query) for server in servers.values()]
            if any(answer != answers[0] for answer in answers):
                raise RuntimeError(f"{query.label}: the two servers answer differently")
            for server in servers.values():  # warm: caches, the proxy's recording
                await _batch(client, server, query, requests)
        for number in range(rounds):
            say(f"round {number + 1} of {rounds}")
            order = list(servers.items())
            for query in queries:
                for name, server in order if number % 2 == 0 else order[::-1]:
                    cpu = await _batch(client, server, query, requests)
                    found.setdefault(query.label, {}).setdefault(name, []).append(cpu)
    return found


def _render(found: dict[str, dict[str, list[float]]], rev: str, requests: int) -> Section:
    rows = []
    for label, by_server in found.items():
        ours, theirs = by_server["this"], by_server[rev]
        ratios = sorted(a / b for a, b in zip(ours, theirs, strict=True))
        rows.append(
            [
                label,
                f"{statistics.median(theirs) * 1000:.2f}",
                f"{statistics.median(ours) * 1000:.2f}",
                f"{statistics.median(ratios):.3f}",
                f"{ratios[0]:.3f} to {ratios[-1]:.3f}",
            ]
        )
    text = (
        f"Server CPU per request (ms, median of {len(ratios)} rounds of {requests} requests "
        f"each), this checkout against commit {rev}; the ratio is this/{rev}, taken round by "
        "round (below 1: this checkout costs less).\n\n"
        + table(["query", f"{rev} (ms)", "this (ms)", "ratio (median)", "ratio (min to max)"], rows)
    )
    return Section(f"Server CPU against commit {rev}", text)


@contextmanager
def _servers(proxy: str, rev: str) -> Iterator[dict[str, processes.Child]]:
    with ExitStack() as stack:
        before = stack.enter_context(checkout(rev))
        if before is None:
            raise SystemExit(f"no commit {rev} in this checkout")
        yield {
            "this": stack.enter_context(processes.ours_server(proxy, TABLE, name="this")),
            rev: stack.enter_context(
                processes.ours_server(proxy, TABLE, cwd=before, name="before")
            ),
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.versus", description=__doc__)
    parser.add_argument("rev", help="the commit to compare with, e.g. HEAD~5 or a hash")
    parser.add_argument("--rounds", type=int, default=9, help="rounds per query (default 9)")
    parser.add_argument(
        "--requests", type=int, default=100, help="requests per batch (default 100)"
    )
    parser.add_argument("--fanout", type=int, default=100, help="the dataset's fan-out")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where VERSUS.md goes")
    args = parser.parse_args()
    prepare_environment()
    data = build(args.fanout)
    queries = bench_queries(data, Memory(data.items))

    async def measure(moto: str, proxy: str) -> dict[str, dict[str, list[float]]]:
        await load(moto, [data])
        control = ProxyControl(proxy)
        try:
            await control.configure(latency=0.0, replay=True)
        finally:
            await control.aclose()
        with _servers(proxy, args.rev) as servers:
            return await _measure(servers, queries, args.rounds, args.requests)

    with EmbeddedDynamoDB() as moto, processes.proxy(moto.url) as proxy:
        found = asyncio.run(measure(moto.url, proxy.url))
    section = _render(found, args.rev, args.requests)
    print(f"\n## {section.title}\n\n{section.text}\n", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    write(args.output / "VERSUS.md", environment(), [section])


if __name__ == "__main__":
    main()
