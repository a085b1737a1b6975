"""Figure 9: replicas of a path (``materialize:``, seed 000's denormalized access items). The
demo model, and a variant of it built here that replicates ``User.products`` into each user's
partition (``hasAccess`` reading the same replica), serve the same graph: a user in 10 or 100
groups, each group subscribed to 3 of 30 products. Reads: requests and rounds as the metering
proxy counted them (checked against each server's trace), CPU per request in this process, and
the wall time of one request with every DynamoDB call held 10 ms. Writes: what adding a
membership and a subscription costs with and without the replica (the trace's requests, rounds
and write units).

``python -m bench.fig_replicas [--engine local]`` runs this figure alone (its own moto, or
DynamoDB Local, and proxy) and writes ``results/REPLICAS.md`` (``REPLICAS-LOCAL.md``);
``python -m bench`` includes it as figure 9."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx

from model import model_path

from .control import ProxyControl
from .fig_requests import short
from .markdown import table
from .measure import say
from .report import Section
from .variants import run_alone, served

__all__ = ["measure", "render", "variant_model"]

FANOUTS = (10, 100)
PRODUCTS, SUBSCRIPTIONS, MEMBERS = 30, 3, 20
LATENCY = 0.010  # seconds each call is held for the latency column
READS = {
    "hasAccess": 'query($id: ID!) { user(id: $id) { hasAccess(productId: "p7") } }',
    "products": "query($id: ID!) { user(id: $id) { products { product { id } via { id } } } }",
}
REPLICA = """        materialize:
          key: {pk: "USER#{from}", sk: "GROUPSUB#{to}|{via}"}
          copy: [status, validUntil]
"""


def variant_model() -> str:
    """The demo model with ``User.products`` replicated (``hasAccess`` reading it too)."""
    text = model_path("demo").read_text()
    anchor = "        shape: {product: subscriptions, via: groups}\n"
    text = text.replace(anchor, anchor + REPLICA, 1)
    arguments = "        arguments: {productId: ID!}\n"
    return text.replace(arguments, arguments + "        materialize: products\n", 1)


def _sample() -> dict[str, Any]:
    """For each fan-out F a user f{F}-u in F groups, each group subscribed to 3 of 30 products;
    and group ``w`` with 20 members and no subscription, for the writes."""
    nodes: list[dict[str, Any]] = [
        {"type": "Product", "id": f"p{i}", "name": f"P{i}"} for i in range(PRODUCTS)
    ]
    edges: list[dict[str, Any]] = []
    for fanout in FANOUTS:
        user = f"f{fanout}-u"
        nodes.append({"type": "User", "id": user, "name": user})
        for g in range(fanout):
            group = f"f{fanout}-g{g}"
            nodes.append({"type": "Group", "id": group, "name": group})
            edges.append({"label": "MEMBER_OF", "from": user, "to": group, "role": "MEMBER"})
            for s in range(SUBSCRIPTIONS):
                product = f"p{(g * 7 + s * 11) % PRODUCTS}"
                edges.append(
                    {
                        "label": "SUBSCRIBES_TO",
                        "from": group,
                        "to": product,
                        "plan": "pro",
                        "status": "ACTIVE",
                    }
                )
    nodes.append({"type": "Group", "id": "w", "name": "w"})
    for m in range(MEMBERS):
        nodes.append({"type": "User", "id": f"w{m}", "name": f"w{m}"})
        edges.append({"label": "MEMBER_OF", "from": f"w{m}", "to": "w", "role": "MEMBER"})
    return {"nodes": nodes, "edges": edges}


WRITES = {
    "addGroupMember (a group of 3 subscriptions)": (
        'mutation { addGroupMember(userId: "f10-u", groupId: "f100-g5") { cursor } }'
    ),
    f"subscribeGroup (a group of {MEMBERS} members)": (
        'mutation { subscribeGroup(groupId: "w", productId: "p1", plan: "pro") { cursor } }'
    ),
}


@dataclass(frozen=True)
class ReadRow:
    query: str
    fanout: int
    model: str
    rounds: int
    requests: str
    agrees: bool
    cpu: list[float]  # seconds per request
    latency: float  # seconds, calls held 10 ms
    units: str  # the trace's read units and their source

    @property
    def median(self) -> float:
        return statistics.median(self.cpu)


@dataclass(frozen=True)
class WriteRow:
    mutation: str
    model: str
    rounds: int
    requests: str
    units: str  # the trace's write units and their source (reported or computed)


def _units(trace: dict[str, Any], kind: str) -> str:
    return f"{trace[f'consumed{kind}Units']:g} ({trace['consumedUnitsSource']})"


async def _post(client: httpx.AsyncClient, query: str, variables: dict[str, Any]) -> Any:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Edgewise-Trace": "1"},
    )
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(f"replicas: {body['errors'][:2]}")
    return body


async def measure(
    moto: str, control: ProxyControl, iterations: int, units: str = "computed"
) -> tuple[list[ReadRow], list[WriteRow]]:
    """Load both models' tables into ``moto``, then count, time and write through the proxy.
    ``units``: computed (moto's own figures are not DynamoDB's), or reported (DynamoDB Local)."""
    reads: list[ReadRow] = []
    writes: list[WriteRow] = []
    variant = ("+ replica", variant_model())
    async with served(moto, control, variant, [_sample()], "replicas", units) as apps:
        for name, query in READS.items():
            for fanout in FANOUTS:
                answers = []
                for label, app in apps.items():
                    row, data = await _read(app, control, name, query, fanout, label, iterations)
                    reads.append(row)
                    answers.append(data)
                if _normal(answers[0]) != _normal(answers[1]):
                    raise RuntimeError(f"{name}@{fanout}: the two models differ")
                say(f"replicas: {name}@{fanout} measured")
        for name, mutation in WRITES.items():
            for label, app in apps.items():
                body = await _post(app, mutation, {})
                trace = body["extensions"]["dynamodb"]
                requests = f"{trace['requests']} ({short(trace['operations'])})"
                units = _units(trace, "Write")
                writes.append(WriteRow(name, label, trace["rounds"], requests, units))
    return reads, writes


def _normal(data: Any) -> Any:
    """An answer with each list as a set (the replica's order is its key's)."""
    if isinstance(data, dict):
        return frozenset((k, _normal(v)) for k, v in data.items())
    if isinstance(data, list):
        return frozenset(_normal(v) for v in data)
    return data


async def _read(
    app: httpx.AsyncClient,
    control: ProxyControl,
    name: str,
    query: str,
    fanout: int,
    label: str,
    iterations: int,
) -> tuple[ReadRow, Any]:
    variables = {"id": f"f{fanout}-u"}
    await _post(app, query, variables)  # warm: the engine's first answer to a new query is slow
    await control.configure(latency=LATENCY)
    await control.reset()
    started = time.perf_counter()
    body = await _post(app, query, variables)
    latency = time.perf_counter() - started
    seen = await control.stats()
    await control.configure(latency=0.0)
    trace = body["extensions"]["dynamodb"]
    cpu = []
    for iteration in range(iterations + 3):
        began = time.process_time()
        await _post(app, query, variables)
        if iteration >= 3:
            cpu.append(time.process_time() - began)
    agrees = (trace["requests"], trace["rounds"]) == (seen.requests, seen.rounds)
    requests = f"{seen.requests} ({short(seen.operations)})"
    units = _units(trace, "Read")
    row = ReadRow(name, fanout, label, seen.rounds, requests, agrees, cpu, latency, units)
    return row, body["data"]


def render(
    reads: list[ReadRow], writes: list[WriteRow], iterations: int, engine: str = "moto"
) -> Section:
    body = []
    for row in reads:
        base = next(r for r in reads if (r.query, r.fanout) == (row.query, row.fanout))
        body.append(
            [
                row.query,
                str(row.fanout),
                row.model,
                str(row.rounds),
                row.requests,
                "✓" if row.agrees else "✗",
                f"{row.median * 1000:.1f}",
                f"{row.median / base.median:.2f}x",
                f"{row.latency * 1000:.0f}",
                row.units,
            ]
        )
    header = [
        "field",
        "groups",
        "model",
        "rounds",
        "requests",
        "trace = proxy",
        "CPU ms",
        "CPU ratio",
        "ms at 10 ms a call",
        "read units",
    ]
    written = table(
        ["mutation", "model", "rounds", "requests", "write units"],
        [[w.mutation, w.model, str(w.rounds), w.requests, w.units] for w in writes],
    )
    text = (
        "`user(id:) { hasAccess(productId:) }` and `user(id:) { products { product { id } via "
        "{ id } } }` on the demo model, which walks the path (groups, then their "
        "subscriptions), and on a variant that replicates it into the user's partition "
        "(`materialize:`, built by `bench/fig_replicas.py` from `models/demo/model.yaml`), over "
        "the same graph: a user in 10 or 100 groups, each subscribed to 3 of 30 products. "
        "Requests and rounds as the metering proxy counted them against live "
        f"{engine}; CPU is this process's per request, median of {iterations}, the ratio to "
        "the demo model; the last "
        "column but one is one request's wall time with each DynamoDB call held 10 ms (after one "
        "request to warm the engine), the last the trace's consumed units, as the engine "
        "reported them, or as Edgewise computed them on moto (its own figures are not "
        "DynamoDB's), as it does when it embeds moto.\n\n"
        + table(header, body)
        + "\n\nWhat the replica adds to a write (one mutation's trace): the clocks of the "
        "nodes whose edges it lists are read first (a BatchGetItem), then those edges (a Query), "
        "then one transaction holds the edge, its ends' counters and clocks, one replica item per "
        "path instance it adds and each start's clock: 3 + 3 actions for the membership, 3 + 2 x "
        f"{MEMBERS} for the subscription. Past 100 actions the pending protocol takes "
        "2 + 2 x ceil(starts / 98) + ceil(replicas / 99) transactions more (the job put and "
        "deleted, the marks set and cleared, the replicas).\n\n" + written
    )
    return Section("Replicas of a path: one round for a transitive question (materialize)", text)


async def _figure(url: str, control: ProxyControl, iterations: int, engine: str) -> Section:
    units = "computed" if engine == "moto" else "reported"  # as Edgewise's defaults
    reads, writes = await measure(url, control, iterations, units)
    return render(reads, writes, iterations, engine)


def main() -> None:
    run_alone("fig_replicas", __doc__, "REPLICAS.md", _figure)


if __name__ == "__main__":
    main()
