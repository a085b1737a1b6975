"""Figure 3: server CPU per request for Q1 at fan-out 100 against the floor - graphql-core
executing the same query over the same data in memory with trivial resolvers, in a fresh thread
at the stack depth that costs no frame-stack page faults (``bench/floor.py``) - and, when ours
costs more than 1.5x, a profile of where its time goes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import httpx
import jwt
from starlette.applications import Starlette
from starlette.requests import Request

from bench.demo import DEMO_LAYOUT
from graph.table import Table
from server.engine import engine_for
from server.engine.executor import ModelSchema
from server.http.app import create_app
from server.http.auth import ADMIN
from server.settings import Settings

from .fake import FakeDynamoDB
from .floor import Floor, Shallow, faults, fewest_faults, shallow, sweep
from .markdown import table
from .measure import in_process, say, send
from .memory import Memory
from .profiling import Profile, profile
from .queries import BenchQuery

__all__ = ["CpuResult", "measure", "render"]

TARGET = 1.5
IN_LOOP = "graphql-core in the bench's event loop (the floor before)"
FAKE = "ours: HTTP request in process, in-memory fake DynamoDB"
LEAN = "ours: HTTP request in process, lean client + replay proxy (0 ms)"
BOTOCORE_PATH = "ours: HTTP request in process, botocore client + replay proxy (0 ms)"
COMPILED_OFF = "compiled executor off (graphql-core alone)"
AS_USER = "as the user (a bearer token; the demo's access rules checked)"
SECRET = "edgewise-bench-hmac-secret-0123456789abcdef0123456789abcdef"
PADDINGS = range(0, 150, 6)  # about one 16 KiB chunk of the frame stack, in padding frames


@dataclass(frozen=True)
class Variant:
    name: str
    seconds: list[float]  # CPU per request
    faults: list[int]  # minor page faults per request

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def median_faults(self) -> float:
        return statistics.median(self.faults)


@dataclass(frozen=True)
class CpuResult:
    query: BenchQuery
    variants: list[Variant]  # the first is the floor
    over_fake: Profile  # the HTTP request in process over the fake DynamoDB
    over_botocore: Profile  # the HTTP request in process over the lean client and the proxy
    calls: int  # DynamoDB calls per request
    sweep: list[Shallow]  # the floor under each padding, to choose the floor's

    @property
    def floor(self) -> Variant:
        return self.variants[0]

    def variant(self, prefix: str) -> Variant:
        return next(v for v in self.variants if v.name.startswith(prefix))


async def _time(
    runs: list[Callable[[], Awaitable[Any]]], iterations: int
) -> list[list[tuple[float, int]]]:
    """CPU seconds and minor page faults of each run, taken in turn so that noise spreads over
    all of them. A run that measures itself (in another thread) returns its own pair."""
    taken: list[list[tuple[float, int]]] = [[] for _ in runs]
    for iteration in range(iterations + 3):
        for run, into in zip(runs, taken, strict=True):
            started, faulted = time.process_time(), faults()
            own = await run()
            if iteration >= 3:
                into.append(own or (time.process_time() - started, faults() - faulted))
    return taken


def as_user(app: Starlette, query: BenchQuery) -> httpx.AsyncClient:
    """``app`` in process, called with a token whose subject is the user ``query`` starts from."""
    token = jwt.encode({"sub": query.variables["id"], "exp": int(time.time()) + 3600}, SECRET)
    client = in_process(app)
    client.headers["Authorization"] = f"Bearer {token}"
    return client


async def measure(
    query: BenchQuery,
    memory: Memory,
    proxied: httpx.AsyncClient,
    botocore: httpx.AsyncClient,
    lean_table: Table,
    iterations: int,
) -> CpuResult:
    """``proxied`` is Edgewise in process over the lean client (the default) on ``lean_table``,
    ``botocore`` over aioboto3's (``--client botocore``), each to the proxy replaying with
    0 ms."""
    first = await send(proxied, query)
    expected, calls = first.data, first.trace["requests"]
    floor, floor_async = Floor(memory), Floor(memory, is_async=True)
    for candidate in (floor, floor_async):
        answer = await candidate.execute(query.text, query.variables)
        if answer.errors or answer.data != expected:
            raise RuntimeError(f"the floor answers differently: {answer.errors}")
    timings = sweep(floor, query.text, query.variables, PADDINGS, runs=2)
    padding = fewest_faults(timings).padding
    fake_table = Table(FakeDynamoDB(memory), "bench", layout=DEMO_LAYOUT)
    fake = in_process(create_app(table=fake_table))
    fake_user = as_user(create_app(Settings(jwt_secret=SECRET), table=fake_table), query)
    lean_user = as_user(create_app(Settings(jwt_secret=SECRET), table=lean_table), query)
    engine = engine_for("demo")
    schema, new_context = engine.schema(), engine.context_factory()
    # the same schema with the compiled executor off: graphql-core completes every field
    uncompiled = ModelSchema(schema.graphql_schema, compiled=False)
    fake_uncompiled_app = create_app(table=fake_table)
    fake_uncompiled_app.state.schema = uncompiled
    fake_uncompiled = in_process(fake_uncompiled_app)

    def executing(on: ModelSchema) -> Callable[[], Awaitable[None]]:
        async def execute() -> None:
            context = new_context(cast(Request, None), fake_table.for_request(), ADMIN)
            result = await on.execute(query.text, query.variables, context_value=context)
            context.close()  # as the HTTP handler does
            if result.errors or result.data != expected:
                raise RuntimeError(f"ours over the fake answers differently: {result.errors}")

        return execute

    def answering(client: httpx.AsyncClient, what: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            if (await send(client, query)).data != expected:
                raise RuntimeError(f"ours {what} answers differently")

        return run

    over_fake = answering(fake, "over the fake")
    over_proxy = answering(proxied, "over the lean client")

    async def on_floor() -> tuple[float, int]:
        run = shallow(floor, query.text, query.variables, padding)
        return run.seconds[0], run.faults[0]

    async def in_loop() -> None:
        await floor.execute(query.text, query.variables)

    async def on_async_floor() -> None:
        await floor_async.execute(query.text, query.variables)

    runs: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        (
            f"floor: graphql-core, sync trivial resolvers, fresh thread, {padding} frames deep",
            on_floor,
        ),
        (f"{IN_LOOP}, sync trivial resolvers", in_loop),
        ("graphql-core, async trivial resolvers", on_async_floor),
        ("ours: schema.execute, in-memory fake DynamoDB", executing(schema)),
        (f"ours, {COMPILED_OFF}: schema.execute, in-memory fake DynamoDB", executing(uncompiled)),
        (FAKE, over_fake),
        (f"{FAKE}, {COMPILED_OFF}", answering(fake_uncompiled, "uncompiled over the fake")),
        (f"{FAKE}, {AS_USER}", answering(fake_user, "as the user over the fake")),
        (LEAN, over_proxy),
        (f"{LEAN}, {AS_USER}", answering(lean_user, "as the user over the lean client")),
        (BOTOCORE_PATH, answering(botocore, "over the botocore client")),
    ]
    timed = await _time([run for _, run in runs], iterations)
    variants = [
        Variant(name, [cpu for cpu, _ in pairs], [faulted for _, faulted in pairs])
        for (name, _), pairs in zip(runs, timed, strict=True)
    ]
    for variant in variants:
        cpu, faulted = variant.median * 1000, variant.median_faults
        say(f"CPU {cpu:7.1f} ms, {faulted:5.0f} page faults  {variant.name}")
    over_fake_profile = await profile(over_fake, 2 * iterations)
    over_botocore_profile = await profile(over_proxy, iterations // 2)
    for client in (fake, fake_user, lean_user, fake_uncompiled):
        await client.aclose()
    return CpuResult(query, variants, over_fake_profile, over_botocore_profile, calls, timings)


def render(result: CpuResult) -> str:
    floor, fastest = result.floor.median, min(result.floor.seconds)
    rows = [
        [
            v.name,
            f"{v.median * 1e3:.1f}",
            f"{min(v.seconds) * 1e3:.1f}",
            f"{v.median / floor:.1f}",
            f"{min(v.seconds) / fastest:.1f}",
            f"{v.median_faults:.0f}",
        ]
        for v in result.variants
    ]
    headers = [
        "what runs Q1 at fan-out 100",
        "CPU ms median",
        "min",
        "x floor",
        "x floor (min)",
        "minor page faults",
    ]
    return table(headers, rows)


def render_profile(result: CpuResult) -> str:
    """Shares of the busy samples, in ms per request by the variant's measured CPU."""
    fake, real = result.over_fake, result.over_botocore
    fake_cpu, real_cpu = result.variant(FAKE).median, result.variant(LEAN).median
    real_shares = {s.bucket: s.fraction for s in real.shares}
    buckets = [s.bucket for s in fake.shares] + [
        b for b in real_shares if b not in {s.bucket for s in fake.shares}
    ]
    fake_shares = {s.bucket: s.fraction for s in fake.shares}

    def cells(fraction: float | None, cpu: float) -> list[str]:
        if not fraction:
            return ["-", "-"]
        return [f"{fraction * cpu * 1e3:.1f}", f"{fraction:.0%}"]

    rows = [
        [b, *cells(fake_shares.get(b), fake_cpu), *cells(real_shares.get(b), real_cpu)]
        for b in buckets
    ]
    headers = ["where (innermost package frame)", "fake: ms", "share", "lean client: ms", "share"]
    top = table(
        ["function (over the fake)", "ms / request", "share"],
        [[f, f"{x * fake_cpu * 1e3:.2f}", f"{x:.1%}"] for f, x in fake.top_self],
    )
    ours = table(
        ["our function (over the fake)", "ms / request", "share"],
        [[f, f"{x * fake_cpu * 1e3:.2f}", f"{x:.1%}"] for f, x in fake.top_ours],
    )
    return (
        f"{table(headers, rows)}\n\nCostliest functions, innermost frame:\n\n{top}\n\n"
        f"Our functions on the stack (they and what they call):\n\n{ours}"
    )
