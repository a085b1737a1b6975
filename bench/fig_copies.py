"""Figure 6: copies on edges (``copyOf``). The demo model, and a variant of it built here that
copies ``Group.name`` onto MEMBER_OF, serve ``user { groups { edges { node { name } } } }``
over the same graph: the variant answers the groups' names from the edge items, in one round
instead of two. Requests and rounds are counted by the proxy and checked against each server's
trace; CPU per request is measured in this process (moto and the proxy are other processes).

``python -m bench.fig_copies`` runs this figure alone (its own moto and proxy) and writes
``results/COPIES.md``; ``python -m bench`` includes it as figure 6."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx
import yaml

from model import model_path

from .control import ProxyControl
from .fig_requests import short
from .markdown import table
from .measure import say
from .report import Section
from .variants import AT, run_alone, served

__all__ = ["CopiesRow", "measure", "render", "variant_model"]

FANOUTS = (10, 100)
QUERY = "query($id: ID!) { user(id: $id) { groups(first: 100) { edges { node { name } } } } }"
LATENCY = 0.005  # seconds per call while counting rounds


def variant_model() -> str:
    """The demo model with ``groupName: {copyOf: to.name}`` on MEMBER_OF."""
    data = yaml.safe_load(model_path("demo").read_text())
    fields = data["edges"]["MEMBER_OF"]["fields"]
    fields["groupName"] = {"copyOf": "to.name", "description": "A copy of the group's name."}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _sample(fanout: int) -> dict[str, Any]:
    """A user member of ``fanout`` groups."""
    groups = [
        {"type": "Group", "id": f"f{fanout}-g{i}", "name": f"Group {i}"} for i in range(fanout)
    ]
    user = {"type": "User", "id": f"f{fanout}-u", "name": "The user"}
    edges = [
        {"label": "MEMBER_OF", "from": user["id"], "to": g["id"], "role": "MEMBER", "since": AT}
        for g in groups
    ]
    return {"nodes": [user, *groups], "edges": edges}


@dataclass(frozen=True)
class Cost:
    requests: int
    rounds: int
    operations: dict[str, int]


@dataclass(frozen=True)
class CopiesRow:
    fanout: int
    model: str
    trace: Cost
    proxy: Cost
    cpu: list[float]  # seconds per request

    @property
    def median(self) -> float:
        return statistics.median(self.cpu)


async def _post(client: httpx.AsyncClient, fanout: int) -> dict[str, Any]:
    response = await client.post(
        "/graphql",
        json={"query": QUERY, "variables": {"id": f"f{fanout}-u"}},
        headers={"Edgewise-Trace": "1"},
    )
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    if body.get("errors"):
        raise RuntimeError(f"copies@{fanout}: {body['errors'][:2]}")
    return body


async def measure(moto: str, control: ProxyControl, iterations: int) -> list[CopiesRow]:
    """Load both models' tables into ``moto``, then count and time the query on each through
    the proxy (live moto; each call held 5 ms while counting, none while timing)."""
    rows = []
    samples = [_sample(fanout) for fanout in FANOUTS]
    async with served(moto, control, ("demo + copyOf", variant_model()), samples, "copies") as apps:
        for fanout in FANOUTS:
            answers = []
            for label, app in apps.items():
                # each call held 5 ms, so that the calls of one wave overlap at the proxy
                await control.configure(latency=LATENCY)
                await control.reset()
                body = await _post(app, fanout)
                seen = await control.stats()
                await control.configure(latency=0.0)
                answers.append(body["data"])
                trace = body["extensions"]["dynamodb"]
                cpu = await _cpu(app, fanout, iterations)
                rows.append(
                    CopiesRow(
                        fanout,
                        label,
                        Cost(trace["requests"], trace["rounds"], trace["operations"]),
                        Cost(seen.requests, seen.rounds, seen.operations),
                        cpu,
                    )
                )
            if answers[0] != answers[1]:
                raise RuntimeError(f"copies@{fanout}: the two models answer differently")
            say(f"copies@{fanout}: measured")
    return rows


async def _cpu(client: httpx.AsyncClient, fanout: int, iterations: int) -> list[float]:
    seconds = []
    for iteration in range(iterations + 3):
        started = time.process_time()
        await _post(client, fanout)
        if iteration >= 3:
            seconds.append(time.process_time() - started)
    return seconds


def render(rows: list[CopiesRow], iterations: int, engine: str = "moto") -> Section:
    body = []
    for row in rows:
        base = next(r for r in rows if r.fanout == row.fanout)
        agrees = row.trace == row.proxy
        body.append(
            [
                str(row.fanout),
                row.model,
                str(row.proxy.rounds),
                f"{row.proxy.requests} ({short(row.proxy.operations)})",
                "✓" if agrees else f"✗ trace {row.trace.requests}/{row.trace.rounds}",
                f"{row.median * 1000:.1f}",
                f"{row.median / base.median:.2f}x",
            ]
        )
    header = ["fan-out", "model", "rounds", "requests", "trace = proxy", "CPU ms", "CPU ratio"]
    text = (
        "`user(id:) { groups(first: 100) { edges { node { name } } } }` on the demo model and on a "
        "variant that copies `Group.name` onto MEMBER_OF (`groupName: {copyOf: to.name}`, built "
        "by `bench/fig_copies.py` from `models/demo/model.yaml`), over the same graph (a user in "
        "10 or 100 groups). The variant answers each group's `name` from its edge item: no "
        "BatchGetItem for the groups, one round instead of two. Requests and rounds as the "
        f"metering proxy counted them against live {engine} (each call held 5 ms while counting, "
        "so that the calls of one round overlap); CPU is this process's (the server in "
        f"process, over aiobotocore) per request, median of {iterations}; the ratio is to the "
        "demo model at the same fan-out.\n\n" + table(header, body)
    )
    return Section("Copies on edges: one round less (copyOf)", text)


async def _figure(url: str, control: ProxyControl, iterations: int, engine: str) -> Section:
    return render(await measure(url, control, iterations), iterations, engine)


def main() -> None:
    run_alone("fig_copies", __doc__, "COPIES.md", _figure)


if __name__ == "__main__":
    main()
