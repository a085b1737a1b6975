"""Figure 4: requests per second and latency under concurrent clients against uvicorn servers
in child processes: Edgewise via ``edgewise serve --workers N`` for Q1@10 and Q1@100 at several
client counts, each figure as a ratio to the 1-worker 1-client figure of the same run and query,
and the naive baseline for comparison. The proxy replays with a fixed latency per DynamoDB
call."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from .control import ProxyControl
from .markdown import table
from .measure import percentile, say
from .processes import ROOT, Child
from .queries import BenchQuery

__all__ = [
    "BEFORE",
    "Throughput",
    "checkout",
    "grid",
    "load",
    "render",
    "render_naive",
    "render_side_by_side",
    "side_by_side",
    "speedups",
    "uvicorn_speedups",
]

# The last commit before issue 14 (the lean data plane, the planned and compiled executor): the
# server whose throughput the target multiplies, served beside today's in the same run.
BEFORE = "ba613d5"

WARM_SECONDS, WARM_CLIENTS = 1.0, 4  # load per query on a fresh server, not measured
# `edgewise serve` flags: this figure measures capacity, and at 64 clients a request queues for
# longer than the default deadline (10 s) and read timeout (5 s), which would turn it into errors
PATIENT = ("--deadline", "120", "--read-timeout", "60")

Server = Callable[[int], AbstractContextManager[Child]]  # workers -> a running server


@dataclass(frozen=True)
class Throughput:
    server: str
    clients: int
    duration: float
    latencies: list[float]
    errors: int
    misses: int
    query: str = ""  # its label, e.g. Q1@10
    workers: int = 1

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.duration

    def p(self, fraction: float) -> float:
        return percentile(self.latencies, fraction) if self.latencies else float("nan")


async def load(
    server: str, url: str, query: BenchQuery, expected: Any, clients: int, duration: float
) -> Throughput:
    """``clients`` loops POSTing ``query`` back to back for ``duration`` seconds."""
    payload = {"query": query.text, "variables": query.variables}
    latencies: list[float] = []
    errors = 0
    first_error = ""
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(url, connector=connector) as session:
        for _ in range(3):  # warm: connections, the server's first requests
            async with session.post("/graphql", json=payload) as response:
                body = await response.json()
                if body.get("data") != expected:
                    raise RuntimeError(f"{server} answers {query.label} differently: {body}")
        deadline = time.perf_counter() + duration

        async def client() -> None:
            nonlocal errors, first_error
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                async with session.post("/graphql", json=payload) as response:
                    body = await response.json()
                if response.status == 200 and "errors" not in body:
                    latencies.append(time.perf_counter() - started)
                else:
                    errors += 1
                    first_error = first_error or f"{response.status} {body.get('errors')}"[:200]

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    result = Throughput(server, clients, elapsed, latencies, errors, 0, query.label)
    say(
        f"{server}: {query.label}, {clients} clients: {result.rate:.0f} requests/s, p50 "
        f"{result.p(0.5) * 1000:.0f} ms, p99 {result.p(0.99) * 1000:.0f} ms, {errors} errors"
        + (f", the first: {first_error}" if first_error else "")
    )
    return result


async def grid(
    server: Server,
    queries: list[tuple[BenchQuery, Any]],
    workers: tuple[int, ...],
    clients: tuple[int, ...],
    duration: float,
    control: ProxyControl,
) -> list[Throughput]:
    """Every (workers, query, clients) cell against ``server(workers)``, one server per worker
    count; ``queries`` pairs each query with the answer it must get."""
    results = []
    for count in workers:
        with server(count) as child:
            for query, expected in queries:
                await load("warm-up", child.url, query, expected, WARM_CLIENTS, WARM_SECONDS)
                for n in clients:
                    await control.reset()
                    result = await load(f"ours x{count}", child.url, query, expected, n, duration)
                    misses = (await control.stats()).misses
                    results.append(dataclasses.replace(result, workers=count, misses=misses))
    return results


@contextmanager
def checkout(commit: str) -> Iterator[Path | None]:
    """The files of ``commit`` in a temporary folder (``git archive``), or None when this is not
    a git checkout holding that commit (a shallow clone, a source package)."""
    with tempfile.TemporaryDirectory(prefix=f"edgewise-{commit}-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            say(f"no commit {commit} here ({archive.stderr.decode().strip()[:120]}): skipped")
            yield None
            return
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield Path(folder)


async def side_by_side(
    servers: list[tuple[str, Callable[[], AbstractContextManager[Child]]]],
    query: BenchQuery,
    expected: Any,
    clients: int,
    duration: float,
    control: ProxyControl,
) -> list[Throughput]:
    """The same load against each server in turn (one at a time, each warmed first)."""
    results = []
    for name, server in servers:
        with server() as child:
            await load("warm-up", child.url, query, expected, WARM_CLIENTS, WARM_SECONDS)
            await control.reset()
            result = await load(name, child.url, query, expected, clients, duration)
            results.append(dataclasses.replace(result, misses=(await control.stats()).misses))
    return results


def render_side_by_side(results: list[Throughput]) -> str:
    """Requests per second and latency of each server, as ratios to the first."""
    base = results[0]
    rows = [
        [
            r.server,
            r.query,
            r.clients,
            len(r.latencies),
            f"{r.rate:.1f}",
            f"{r.rate / base.rate:.2f}" if base.rate else "-",
            f"{r.p(0.5) * 1000:.0f}",
            f"{r.p(0.99) * 1000:.0f}",
            r.errors,
            r.misses,
        ]
        for r in results
    ]
    headers = [
        "server (1 worker)",
        "query",
        "clients",
        "requests",
        "requests/s",
        "x the first",
        "p50 ms",
        "p99 ms",
        "errors",
        "replay misses",
    ]
    return table(headers, rows)


def _base(results: list[Throughput]) -> Iterator[tuple[Throughput, Throughput]]:
    """Each result with the 1-worker (fewest workers), 1-client (fewest clients) result of its
    query."""
    for r in results:
        same = [b for b in results if b.query == r.query]
        yield r, min(same, key=lambda b: (b.workers, b.clients))


def speedups(results: list[Throughput]) -> dict[tuple[str, int, int], float]:
    """Requests per second as a ratio to the base, by (query, workers, clients)."""
    return {
        (r.query, r.workers, r.clients): r.rate / base.rate if base.rate else 0.0
        for r, base in _base(results)
    }


def uvicorn_speedups() -> str:
    """Which of uvloop and httptools the servers found installed (uvicorn's "auto")."""
    found = [m for m in ("uvloop", "httptools") if importlib.util.find_spec(m) is not None]
    return " and ".join(found) if found else "neither uvloop nor httptools"


def render(results: list[Throughput]) -> str:
    rows = []
    for r, base in _base(results):
        rows.append(
            [
                r.workers,
                r.query,
                r.clients,
                len(r.latencies),
                f"{r.rate:.1f}",
                f"{r.p(0.5) * 1000:.0f}",
                f"{r.p(0.99) * 1000:.0f}",
                f"{r.rate / base.rate:.2f}" if base.rate else "-",
                f"{r.p(0.5) / base.p(0.5):.2f}",
                f"{r.p(0.99) / base.p(0.99):.2f}",
                r.errors,
                r.misses,
            ]
        )
    headers = [
        "workers",
        "query",
        "clients",
        "requests",
        "requests/s",
        "p50 ms",
        "p99 ms",
        "requests/s ratio",
        "p50 ratio",
        "p99 ratio",
        "errors",
        "replay misses",
    ]
    return table(headers, rows)


def render_naive(results: list[Throughput], latency: float) -> str:
    rows = [
        [
            r.server,
            r.query,
            r.clients,
            f"{r.duration:.1f}",
            len(r.latencies),
            f"{r.rate:.0f}",
            f"{r.p(0.5) * 1000:.0f}",
            f"{r.p(0.95) * 1000:.0f}",
            r.errors,
            f"{latency * 1000:.0f} ms",
        ]
        for r in results
    ]
    headers = [
        "server",
        "query",
        "clients",
        "seconds",
        "requests",
        "requests/s",
        "p50 ms",
        "p95 ms",
        "errors",
        "per DynamoDB call",
    ]
    return table(headers, rows)
