"""Figure 10: writes under contention (issue 34), on the demo model with ``User.products``
replicated (figure 9's variant, with a mutation that removes a subscription).

Conflicting writes: 1, 4 and 8 clients for DURATION seconds each, every client cycling through
changes that are always valid for it (its user joins group ``hot``, its product is subscribed
by ``hot``, then both are undone) while every change of every client reads and advances the
clock of ``hot``: writes per second, the share answered CONFLICT (retried with backoff until
the deadline first), latency, and whether any answer was UNAVAILABLE. A 150-member fan-out:
``subscribeGroup`` of a group of 150 members, then ``unsubscribeGroup``: the time to the answer
(the change committed) and until its replicas are all written (the pending protocol, in the
background once the answer is sent). Every DynamoDB call is held LATENCY by the metering proxy;
moto answers one request at a time, and its 100-action transactions cost it seconds of CPU
(DynamoDB's take milliseconds), which the fan-out's times mostly show. After each part the
replicas are checked equal to the join of the edges.

``python -m bench.fig_contention`` runs this figure alone (its own moto and proxy) and writes
``results/CONTENTION.md``; ``python -m bench`` includes it as figure 10."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from graph.bulk import scan
from graph.dynamo.client import Endpoint, client_config, open_client, table_definition
from graph.sample_items import build_items
from graph.table import Table
from graph.writes import background
from graph.writes.replicas import joined
from graph.writes.writer import Writer
from server.engine import Engine, engine_for
from server.http.app import create_app
from server.settings import Settings

from .control import ProxyControl
from .fig_replicas import variant_model
from .markdown import table
from .measure import in_process, percentile, say
from .report import Section
from .variants import AT, run_alone

__all__ = ["measure", "render"]

LATENCY = 0.010
CLIENTS = (1, 4, 8)
DURATION = 10.0
MEMBERS = 150
FANOUTS = 2  # subscribe then unsubscribe, this many times


def contended() -> str:
    """Figure 9's replicated model, with ``unsubscribeGroup``."""
    text = variant_model()
    text = text.replace(
        "    add: subscribeGroup\n", "    add: subscribeGroup\n    remove: unsubscribeGroup\n", 1
    )
    return text.replace(
        "    - subscribeGroup\n", "    - subscribeGroup\n    - unsubscribeGroup\n", 1
    )


def _sample() -> dict[str, Any]:
    """Group ``hot`` with no member; users h0..h7 and products q0..q7 for the clients; group
    ``fan`` of MEMBERS members, product ``fp``."""
    n = max(CLIENTS)
    nodes: list[dict[str, Any]] = [
        {"type": "Group", "id": "hot", "name": "hot"},
        {"type": "Group", "id": "fan", "name": "fan"},
        {"type": "Product", "id": "fp", "name": "fp"},
        *({"type": "User", "id": f"h{i}", "name": f"h{i}"} for i in range(n)),
        *({"type": "Product", "id": f"q{i}", "name": f"q{i}"} for i in range(n)),
        *({"type": "User", "id": f"f{i}", "name": f"f{i}"} for i in range(MEMBERS)),
    ]
    edges = [
        {"label": "MEMBER_OF", "from": f"f{i}", "to": "fan", "role": "MEMBER"}
        for i in range(MEMBERS)
    ]
    return {"nodes": nodes, "edges": edges}


@dataclass(frozen=True)
class Contended:
    clients: int
    answers: int
    seconds: float
    codes: Counter[str]
    latencies: list[float]
    exact: bool

    @property
    def per_second(self) -> float:
        return self.answers / self.seconds


@dataclass(frozen=True)
class FanOut:
    mutation: str
    answered: float  # seconds to the answer
    complete: float  # seconds until the replicas were all written
    transactions: int
    exact: bool


@asynccontextmanager
async def _served(
    moto: str, control: ProxyControl
) -> AsyncIterator[tuple[httpx.AsyncClient, Table, Engine]]:
    """The replicated model's app over the proxy, on a fresh table (with no stream: moto copies
    a stream's records with the whole table for each action of a transaction)."""
    with tempfile.TemporaryDirectory(prefix="edgewise-contention-") as folder:
        path = Path(folder) / "model.yaml"
        path.write_text(contended())
        engine = engine_for(str(path))
        name = f"contention-{time.monotonic_ns()}"
        async with open_client(Endpoint(moto), client_config(read_timeout=120.0)) as client:
            definition = table_definition(name, engine.layout)
            del definition["StreamSpecification"]
            await client.control.create_table(definition)
            direct = Table(client, name, layout=engine.layout)
            await direct.batch_write(build_items(Writer(direct, engine.codec), _sample(), AT))
            await control.configure(latency=LATENCY, replay=False)
            async with open_client(Endpoint(control.url)) as proxied:
                app = create_app(
                    Settings(model=str(path)), table=Table(proxied, name, layout=engine.layout)
                )
                async with in_process(app) as http:
                    yield http, direct, engine


async def _exact(table: Table, engine: Engine) -> bool:
    items = await scan(table)
    replica = {r.type_value for r in engine.model.replicas}
    stored = {engine.codec.item_key(i) for i in items if i.get("type") in replica}
    wanted = joined(engine.codec, [i for i in items if i.get("type") not in replica])
    return stored == set(wanted)


async def _post(http: httpx.AsyncClient, query: str) -> dict[str, Any]:
    body: dict[str, Any] = (await http.post("/graphql", json={"query": query})).json()
    return body


async def contended_writes(
    http: httpx.AsyncClient, table: Table, engine: Engine, clients: int
) -> Contended:
    codes: Counter[str] = Counter()
    latencies: list[float] = []
    ends = time.monotonic() + DURATION

    async def client(i: int) -> None:
        cycle = [
            f'addGroupMember(userId: "h{i}", groupId: "hot") {{ cursor }}',
            f'subscribeGroup(groupId: "hot", productId: "q{i}", plan: "pro") {{ cursor }}',
            f'removeGroupMember(userId: "h{i}", groupId: "hot")',
            f'unsubscribeGroup(groupId: "hot", productId: "q{i}")',
        ]
        step = 0
        while time.monotonic() < ends or step % len(cycle):  # end on a whole cycle
            started = time.perf_counter()
            body = await _post(http, "mutation { " + cycle[step % len(cycle)] + " }")
            latencies.append(time.perf_counter() - started)
            errors = body.get("errors") or []
            codes.update(e.get("extensions", {}).get("code", "?") for e in errors)
            if not errors:
                codes["ok"] += 1
                step += 1  # a CONFLICT is sent again, so the cycle stays valid

    started = time.monotonic()
    await asyncio.gather(*(client(i) for i in range(clients)))
    seconds = time.monotonic() - started
    await background.settled()
    return Contended(
        clients, len(latencies), seconds, codes, latencies, await _exact(table, engine)
    )


async def fan_out(
    http: httpx.AsyncClient, control: ProxyControl, table: Table, engine: Engine
) -> list[FanOut]:
    rows = []
    for _ in range(FANOUTS):
        for mutation in (
            'subscribeGroup(groupId: "fan", productId: "fp", plan: "pro") { cursor }',
            'unsubscribeGroup(groupId: "fan", productId: "fp")',
        ):
            await control.reset()
            started = time.perf_counter()
            body = await _post(http, "mutation { " + mutation + " }")
            answered = time.perf_counter() - started
            if body.get("errors"):
                raise RuntimeError(f"{mutation}: {body['errors']}")
            await background.settled()
            complete = time.perf_counter() - started
            stats = await control.stats()
            name = mutation.split("(")[0]
            rows.append(
                FanOut(
                    name,
                    answered,
                    complete,
                    stats.operations.get("TransactWriteItems", 0),
                    await _exact(table, engine),
                )
            )
    return rows


async def measure(moto: str, control: ProxyControl) -> tuple[list[Contended], list[FanOut]]:
    contended_rows = []
    for clients in CLIENTS:
        say(f"figure 10: {clients} clients writing at once for {DURATION:.0f} s")
        async with _served(moto, control) as (http, direct, engine):
            contended_rows.append(await contended_writes(http, direct, engine, clients))
    say(f"figure 10: a fan-out to {MEMBERS} members, {FANOUTS} times each way")
    async with _served(moto, control) as (http, direct, engine):
        fan = await fan_out(http, control, direct, engine)
    await control.configure(latency=0.0)
    return contended_rows, fan


def render(contended_rows: list[Contended], fan: list[FanOut]) -> Section:
    writes = table(
        [
            "clients",
            "answers",
            "writes/s",
            "CONFLICT",
            "share CONFLICT",
            "UNAVAILABLE",
            "p50 ms",
            "p99 ms",
            "replicas exact",
        ],
        [
            [
                str(r.clients),
                str(r.answers),
                f"{r.per_second:.1f}",
                str(r.codes["CONFLICT"]),
                f"{r.codes['CONFLICT'] / r.answers:.1%}",
                str(r.codes["UNAVAILABLE"]),
                f"{percentile(r.latencies, 0.5) * 1000:.0f}",
                f"{percentile(r.latencies, 0.99) * 1000:.0f}",
                "✓" if r.exact else "✗",
            ]
            for r in contended_rows
        ],
    )
    by_mutation: dict[str, list[FanOut]] = {}
    for row in fan:
        by_mutation.setdefault(row.mutation, []).append(row)
    fanouts = table(
        [
            "mutation",
            "answered, median s",
            "replicas written, median s",
            "transactions",
            "replicas exact",
        ],
        [
            [
                name,
                f"{statistics.median(r.answered for r in rows):.2f}",
                f"{statistics.median(r.complete for r in rows):.2f}",
                str(rows[0].transactions),
                "✓" if all(r.exact for r in rows) else "✗",
            ]
            for name, rows in by_mutation.items()
        ],
    )
    text = (
        f"Every DynamoDB call held {LATENCY * 1000:.0f} ms by the metering proxy, moto answering "
        "one request at a time. Conflicting writes: each client cycles its own user's membership "
        "of group `hot` and `hot`'s subscription to its own product (always valid for it), every "
        f"change reading and advancing `hot`'s clock, for {DURATION:.0f} s; a change that finds "
        "the clock moved reads again and retries with full-jitter backoff until the request's "
        "deadline (10 s), and only then answers CONFLICT (the client sends it again).\n\n"
        + writes
        + f"\n\nA group of {MEMBERS} members subscribing to a product, then unsubscribing "
        f"({FANOUTS} times each): the request waits for the replicas while its deadline leaves "
        "time to answer (a quarter of it kept), then answers, its change (its job, the marks, "
        "the change) committed, and the replicas are written in the background. moto copies the "
        "whole table for each action of a transaction, so a 100-action transaction costs it "
        "seconds: that cost, not Edgewise's, is most of these times.\n\n" + fanouts
    )
    return Section("Writes under contention: conflicts retried, fan-outs answered on commit", text)


async def _figure(moto: str, control: ProxyControl, _iterations: int) -> Section:
    return render(*await measure(moto, control))


if __name__ == "__main__":
    run_alone("fig_contention", __doc__, "CONTENTION.md", _figure)
