"""Soak (issue 6, item 8): ``python -m bench.soak [--seconds 300] [--clients 50] [--throttle 0.1]``.

moto holds the demo data plus a generated graph; a seeded FaultProxy (``tests.faults``) in front
of it throttles a fraction of every DynamoDB call; ``edgewise serve`` runs as a uvicorn child
process against the proxy. Concurrent clients loop over a mix of reads whose answers are fixed
(checked against a fault-free baseline taken before throttling starts) and mutations on their own
private users, groups and tickets, whose results each client tracks itself. An ``UNAVAILABLE``
error is allowed: the client then re-reads to learn whether the mutation applied.

It prints the figures and appends them to ``results/RESULTS.md`` (``--output``), and exits 1 if
there was a wrong answer, an unexpected error, or a 5xx other than 503 ``UNAVAILABLE``. It never
passes or fails on a timing or on memory.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector

from bench.demo import DEMO_LAYOUT
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from models.demo.generate import demo_items, generated_items
from tests.faults import TARGET_PREFIX, FaultProxy, Faults, _amz_error, _Request, _Response

from .processes import ROOT, ours_server

__all__ = ["main"]

TABLE = "graph"
WARMUP = 60.0
SAMPLE_EVERY = 5.0
USERS, GROUPS, PRODUCTS = 200, 50, 20
Data = dict[str, Any]


# ---- the fault proxy, on its own event loop in a thread ------------------------------------------


class IdempotentProxy(FaultProxy):
    """A FaultProxy that, like DynamoDB and unlike moto, honours a TransactWriteItems'
    ClientRequestToken: a repeat of a transaction that committed is answered with the first
    answer and changes nothing; a repeat while the first is still being applied gets
    TransactionInProgressException. Without it a retry of a commit whose answer came too late
    fails its own conditions (false, CONFLICT), which DynamoDB never answers."""

    def __init__(self, upstream: str, faults: Faults) -> None:
        super().__init__(upstream, faults)
        self.committed: dict[str, _Response | None] = {}  # token -> answer (None: in progress)

    async def _forward(self, request: _Request, body: bytes | None = None) -> _Response:
        operation = request.header("x-amz-target").removeprefix(TARGET_PREFIX)
        token = json.loads(request.body).get("ClientRequestToken") if body is None else None
        if operation != "TransactWriteItems" or not token:
            return await super()._forward(request, body)
        if token in self.committed:
            answer = self.committed[token]
            self.stats["token:repeated"] += 1
            if answer is None:
                return _amz_error(400, *IN_PROGRESS)
            return answer
        self.committed[token] = None
        try:
            response = await super()._forward(request, body)
        except BaseException:
            del self.committed[token]
            raise
        if response.status == 200:
            self.committed[token] = response
        else:
            del self.committed[token]  # a failed transaction's token may be used again
        return response


IN_PROGRESS = (
    "com.amazonaws.dynamodb.v20120810#TransactionInProgressException",
    "the transaction with this ClientRequestToken is already in progress",
)


class ProxyThread:
    """A ``FaultProxy`` on an event loop of its own, so the clients' loop does not delay it."""

    def __init__(self, upstream: str, faults: Faults) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.proxy = self._run(self._make(upstream, faults))

    async def _make(self, upstream: str, faults: Faults) -> FaultProxy:
        proxy = IdempotentProxy(upstream, faults)
        await proxy.start()
        return proxy

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._run(self.proxy.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@contextmanager
def fault_proxy(upstream: str, faults: Faults) -> Iterator[FaultProxy]:
    """A started FaultProxy in front of ``upstream``; closed when the block ends."""
    running = ProxyThread(upstream, faults)
    try:
        yield running.proxy
    finally:
        running.close()


async def seed(url: str) -> int:
    """Create the table; write the demo data and the generated graph."""
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, TABLE, layout=DEMO_LAYOUT)
        table = Table(client, TABLE, layout=DEMO_LAYOUT)
        items = [*demo_items(), *generated_items(USERS, GROUPS, PRODUCTS, 3, 3, seed=6)]
        return int(await table.batch_write(items))


# ---- statistics shared by the clients ------------------------------------------------------------


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)  # error codes, UNAVAILABLE included
    kinds: Counter[str] = field(default_factory=Counter)  # reads, mutations, cycles
    wrong: int = 0
    bad_5xx: int = 0
    transport: int = 0
    examples: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.examples) < 20:
            self.examples.append(text[:600])


@dataclass
class Reply:
    status: int
    body: Data

    @property
    def data(self) -> Any:
        return self.body.get("data")

    @property
    def codes(self) -> list[str]:
        return [str((e.get("extensions") or {}).get("code")) for e in self.body.get("errors") or []]

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.codes and self.data is not None

    @property
    def unavailable(self) -> bool:
        return "UNAVAILABLE" in self.codes


class Api:
    """POSTs GraphQL to the server, timing and classifying every answer."""

    def __init__(self, session: ClientSession, url: str, stats: Stats) -> None:
        self.session, self.url, self.stats = session, url + "/graphql", stats

    async def post(self, query: str, variables: Data | None = None) -> Reply | None:
        started = time.perf_counter()
        try:
            async with self.session.post(
                self.url, json={"query": query, "variables": variables or {}}
            ) as response:
                status = response.status
                text = await response.text()
        except (TimeoutError, ClientError) as error:
            self.stats.transport += 1
            self.stats.note(f"transport error: {error!r}")
            await asyncio.sleep(0.5)
            return None
        self.stats.latencies.append(time.perf_counter() - started)
        self.stats.statuses[status] += 1
        try:
            body = json.loads(text)
        except ValueError:
            body = {}
        reply = Reply(status, body if isinstance(body, dict) else {})
        for code in reply.codes:
            self.stats.codes[code] += 1
        if status >= 500 and not (status == 503 and reply.unavailable):
            self.stats.bad_5xx += 1
            self.stats.note(f"HTTP {status}: {text}")
        if reply.codes and set(reply.codes) != {"UNAVAILABLE"}:
            self.stats.note(f"errors {reply.codes} for {query.split('(')[0]!r}: {text}")
        return reply

    async def settle(self, query: str, variables: Data | None = None) -> Reply:
        """Ask until the answer is not UNAVAILABLE (nor a transport error)."""
        while True:
            reply = await self.post(query, variables)
            if reply is not None and not reply.unavailable:
                return reply


# ---- the fixed reads --------------------------------------------------------------------------

NODES = """query($ids: [ID!]!) { nodes(ids: $ids) { id
  ... on User { name email version } ... on Group { name version } ... on Product { name } } }"""
USER_GRAPH = """query($id: ID!) { user(id: $id) { id name
  groups(first: 10) { totalCount edges { role node { id name } } }
  products { product { id name } via { id } } } }"""
GROUP_GRAPH = """query($id: ID!) { group(id: $id) { id name
  members(first: 100) { totalCount edges { role node { id } } }
  subscriptions { totalCount edges { plan status node { id } } } } }"""
ALICE = """{ user(id: "alice") { products { product { id name } via { id name } }
  hasAccess(productId: "prod3") groups { totalCount edges { role node { id } } } } }"""
MICROSOFT = """{ organization(id: "microsoft") { name plan
  members { totalCount edges { role node { id name } } } } }"""
PROD2 = (
    """{ product(id: "prod2") { subscribers { totalCount edges { plan status node { id } } } } }"""
)


def fixed_reads() -> list[tuple[str, Data]]:
    """Reads no mutation of the soak touches: the demo data and the generated graph."""
    rng = random.Random(6)
    reads: list[tuple[str, Data]] = [(ALICE, {}), (MICROSOFT, {}), (PROD2, {})]
    for _ in range(10):
        ids = [f"USER#u{i}" for i in rng.sample(range(USERS), 6)]
        ids += [f"GROUP#g{i}" for i in rng.sample(range(GROUPS), 3)] + ["PRODUCT#prod1", "USER#bob"]
        reads.append((NODES, {"ids": ids}))
    reads += [(USER_GRAPH, {"id": f"u{i}"}) for i in rng.sample(range(USERS), 20)]
    reads += [(GROUP_GRAPH, {"id": f"g{i}"}) for i in rng.sample(range(GROUPS), 10)]
    return reads


async def baseline(api: Api, reads: list[tuple[str, Data]]) -> list[Any]:
    """The fault-free answers of the fixed reads (the demo's own answer for alice is checked)."""
    answers = []
    for query, variables in reads:
        reply = await api.post(query, variables)
        if reply is None or not reply.ok:
            raise RuntimeError(f"baseline read failed: {reply}")
        answers.append(reply.data)
    alice = answers[0]["user"]
    products = sorted(p["product"]["id"] for p in alice["products"])
    if products != ["PRODUCT#prod1", "PRODUCT#prod2", "PRODUCT#prod3"] or not alice["hasAccess"]:
        raise RuntimeError(f"alice's products are not the demo's: {alice}")
    return answers


# ---- one client --------------------------------------------------------------------------------


@dataclass
class Mutation:
    """A mutation, what its answer must be, and how to tell afterwards whether it applied."""

    name: str
    query: str
    variables: Data
    expect: Callable[[Any], bool]
    probe: str
    probe_variables: Data
    applied: Callable[[Any], bool | None]  # True applied, False not, None neither state


class TimeUp(Exception):
    """The soak's duration ran out (raised between requests of a cycle)."""


class Client:
    until = float("inf")

    def __init__(
        self, number: int, api: Api, reads: list[tuple[str, Data]], answers: list[Any]
    ) -> None:
        self.number, self.api, self.stats = number, api, api.stats
        self.reads, self.answers = reads, answers
        self.rng = random.Random(number)

    def wrong(self, what: str, got: Any, expected: Any = None) -> None:
        self.stats.wrong += 1
        self.stats.note(f"WRONG client {self.number} {what}: got {got!r} expected {expected!r}")

    async def fixed_read(self) -> None:
        index = self.rng.randrange(len(self.reads))
        query, variables = self.reads[index]
        self.stats.kinds["read"] += 1
        reply = await self.api.post(query, variables)
        if reply is None or reply.unavailable:
            return
        if not reply.ok or reply.data != self.answers[index]:
            self.wrong(f"fixed read {index} {variables}", reply.body, self.answers[index])

    async def check(
        self, name: str, query: str, variables: Data, good: Callable[[Any], bool]
    ) -> Any:
        self.stats.kinds["read"] += 1
        reply = await self.api.settle(query, variables)
        if not reply.ok or not good(reply.data):
            self.wrong(name, reply.body)
        return reply.data

    async def mutate(self, m: Mutation) -> Any:
        """Apply ``m`` once; after UNAVAILABLE (or any error) re-read, and retry if it did not
        apply. Returns the mutation's data when it answered, else None."""
        for _ in range(50):
            if time.monotonic() >= self.until:
                raise TimeUp
            self.stats.kinds["mutation"] += 1
            reply = await self.api.post(m.query, m.variables)
            await self.fixed_read()
            if reply is not None and reply.ok:
                if not m.expect(reply.data):
                    self.wrong(m.name, reply.body)
                return reply.data
            if reply is not None and reply.data is not None and not reply.unavailable:
                self.wrong(f"{m.name} (data with errors)", reply.body)
            probe = await self.api.settle(m.probe, m.probe_variables)
            state = m.applied(probe.data) if probe.ok else None
            if state is None:
                self.wrong(f"{m.name}: resync probe", probe.body)
                return None
            if state:
                return None
        self.wrong(f"{m.name}: never applied", None)
        return None

    async def cycle(self, n: int) -> None:
        """Create a user and a group, join, update, open and close a ticket, leave, delete."""
        uid, gid = f"soak-c{self.number}-n{n}-u", f"soak-c{self.number}-n{n}-g"
        user, group = f"USER#{uid}", f"GROUP#{gid}"
        email = f"{uid}@soak.example"
        user_q = "query($id: ID!) { user(id: $id) { id name email version } }"
        group_q = "query($id: ID!) { group(id: $id) { id name version } }"
        await self.mutate(
            Mutation(
                "createUser",
                "mutation($id: ID!, $email: String) { createUser(input: "
                '{id: $id, name: "Soak user", email: $email}) { id name email version } }',
                {"id": uid, "email": email},
                lambda d: (
                    d["createUser"]
                    == {"id": user, "name": "Soak user", "email": email, "version": 1}
                ),
                user_q,
                {"id": uid},
                lambda d: d["user"] is not None and d["user"]["email"] == email,
            )
        )
        await self.mutate(
            Mutation(
                "createGroup",
                'mutation($id: ID!) { createGroup(input: {id: $id, name: "Soak group"}) '
                "{ id name version } }",
                {"id": gid},
                lambda d: d["createGroup"] == {"id": group, "name": "Soak group", "version": 1},
                group_q,
                {"id": gid},
                lambda d: d["group"] is not None,
            )
        )
        members_q = """query($g: ID!, $u: ID!) { group(id: $g) { version
          members { totalCount edges { role node { id } } } }
          user(id: $u) { groups { totalCount edges { role node { id } } } } }"""
        ids = {"g": gid, "u": uid}

        def members(count: int) -> Callable[[Any], bool | None]:
            def state(d: Any) -> bool | None:
                got = (d["group"]["members"]["totalCount"], d["user"]["groups"]["totalCount"])
                return {(count, count): True, (1 - count, 1 - count): False}.get(got)

            return state

        await self.mutate(
            Mutation(
                "addGroupMember",
                "mutation($u: ID!, $g: ID!) { addGroupMember(userId: $u, groupId: $g, "
                "role: OWNER) { role node { id } } }",
                ids,
                lambda d: d["addGroupMember"] == {"role": "OWNER", "node": {"id": group}},
                members_q,
                ids,
                members(1),
            )
        )
        joined = {
            "totalCount": 1,
            "edges": [{"role": "OWNER", "node": {"id": user}}],
        }
        data = await self.check(
            "members after addGroupMember",
            members_q,
            ids,
            lambda d: (
                d["group"]["members"] == joined
                and d["user"]["groups"]
                == {**joined, "edges": [{"role": "OWNER", "node": {"id": group}}]}
            ),
        )
        version = int(data["group"]["version"]) if data and data.get("group") else 1
        await self.mutate(
            Mutation(
                "updateGroup",
                "mutation($id: ID!, $v: Int) { updateGroup(input: "
                '{id: $id, name: "Renamed", expectedVersion: $v}) { id name version } }',
                {"id": gid, "v": version},
                lambda d: (
                    d["updateGroup"] == {"id": group, "name": "Renamed", "version": version + 1}
                ),
                group_q,
                {"id": gid},
                lambda d: {"Renamed": True, "Soak group": False}.get(d["group"]["name"]),
            )
        )
        tickets_q = """query($id: ID!) { user(id: $id) {
          tickets { totalCount edges { node { id title status author { id } } } } } }"""

        def tickets(count: int) -> Callable[[Any], bool | None]:
            return lambda d: {count: True, 1 - count: False}.get(d["user"]["tickets"]["totalCount"])

        await self.mutate(
            Mutation(
                "openTicket",
                'mutation($u: ID!) { openTicket(userId: $u, title: "Soak") '
                "{ title status author { id } } }",
                {"u": uid},
                lambda d: (
                    d["openTicket"] == {"title": "Soak", "status": "OPEN", "author": {"id": user}}
                ),
                tickets_q,
                {"id": uid},
                tickets(1),
            )
        )
        data = await self.check(
            "tickets after openTicket",
            tickets_q,
            {"id": uid},
            lambda d: (
                d["user"]["tickets"]["totalCount"] == 1
                and d["user"]["tickets"]["edges"][0]["node"]["status"] == "OPEN"
                and d["user"]["tickets"]["edges"][0]["node"]["author"] == {"id": user}
            ),
        )
        with contextlib.suppress(TypeError, KeyError, IndexError):
            ticket = data["user"]["tickets"]["edges"][0]["node"]["id"]
            await self.mutate(
                Mutation(
                    "closeTicket",
                    "mutation($id: ID!) { closeTicket(id: $id) { id status } }",
                    {"id": ticket},
                    lambda d: d["closeTicket"] == {"id": ticket, "status": "CLOSED"},
                    "query($id: ID!) { ticket(id: $id) { status } }",
                    {"id": ticket},
                    lambda d: {"CLOSED": True, "OPEN": False}.get(d["ticket"]["status"]),
                )
            )
            await self.check(
                "ticket after closeTicket",
                "query($id: ID!) { ticket(id: $id) { id status } }",
                {"id": ticket},
                lambda d: d["ticket"] == {"id": ticket, "status": "CLOSED"},
            )
        await self.mutate(
            Mutation(
                "removeGroupMember",
                "mutation($u: ID!, $g: ID!) { removeGroupMember(userId: $u, groupId: $g) }",
                ids,
                lambda d: d["removeGroupMember"] is True,
                members_q,
                ids,
                members(0),
            )
        )
        await self.check(
            "members after removeGroupMember",
            members_q,
            ids,
            lambda d: (
                d["group"]["members"] == {"totalCount": 0, "edges": []}
                and d["user"]["groups"] == {"totalCount": 0, "edges": []}
            ),
        )
        for kind, global_id, bare, probe in (
            ("Group", group, gid, group_q),
            ("User", user, uid, user_q),
        ):
            await self.mutate(
                Mutation(
                    f"delete{kind}",
                    f"mutation($id: ID!) {{ delete{kind}(id: $id) {{ id }} }}",
                    {"id": bare},
                    lambda d, k=kind, g=global_id: d[f"delete{k}"] == {"id": g},
                    probe,
                    {"id": bare},
                    lambda d, k=kind: d[k.lower()] is None,
                )
            )
        await self.check(
            "nodes after deletes",
            NODES,
            {"ids": [user, group]},
            lambda d: d["nodes"] == [None, None],
        )
        self.stats.kinds["cycle"] += 1

    async def run(self, until: float) -> None:
        self.until = until
        n = 0
        with contextlib.suppress(TimeUp):
            while time.monotonic() < until:
                await self.cycle(n)
                n += 1


# ---- memory -----------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def sample_rss(pid: int, started: float, samples: list[tuple[float, int]]) -> None:
    while True:
        with contextlib.suppress(OSError):
            samples.append((time.monotonic() - started, rss_kib(pid)))
        await asyncio.sleep(SAMPLE_EVERY)


# ---- the run ----------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def soak(options: argparse.Namespace, server_url: str, pid: int, proxy: FaultProxy) -> Data:
    timeout = ClientTimeout(total=60)
    connector = TCPConnector(limit=options.clients + 4)
    async with ClientSession(timeout=timeout, connector=connector) as session:
        api = Api(session, server_url, Stats())
        reads = fixed_reads()
        answers = await baseline(api, reads)
        api.stats = stats = Stats()  # the baseline is not part of the soak
        calls_before = proxy.stats["calls"]
        proxy.faults = Faults(seed=6, throttle=options.throttle)
        samples: list[tuple[float, int]] = []
        rss_start = rss_kib(pid)
        started = time.monotonic()
        sampler = asyncio.create_task(sample_rss(pid, started, samples))
        clients = [Client(i, api, reads, answers) for i in range(options.clients)]
        until = started + options.seconds
        try:
            await asyncio.gather(*(c.run(until) for c in clients))
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        elapsed = time.monotonic() - started
        proxy.faults = Faults()
    samples.append((elapsed, rss_kib(pid)))
    warm = [kib for at, kib in samples if at >= min(WARMUP, options.seconds / 5)]
    rss_warm, rss_end = warm[0], samples[-1][1]
    requests = len(stats.latencies)
    return {
        "date": datetime.date.today().isoformat(),
        "nproc": os.cpu_count(),
        "seconds": elapsed,
        "clients": options.clients,
        "throttle": options.throttle,
        "calls": proxy.stats["calls"] - calls_before,
        "throttles": proxy.stats["throttle"],
        "requests": requests,
        "rps": requests / elapsed,
        "reads": stats.kinds["read"],
        "mutations": stats.kinds["mutation"],
        "cycles": stats.kinds["cycle"],
        "p50": percentile(stats.latencies, 0.50) * 1000,
        "p99": percentile(stats.latencies, 0.99) * 1000,
        "max": max(stats.latencies, default=0.0) * 1000,
        "wrong": stats.wrong,
        "unavailable": stats.codes["UNAVAILABLE"],
        "other_errors": sum(stats.codes.values()) - stats.codes["UNAVAILABLE"] + stats.transport,
        "codes": dict(stats.codes),
        "statuses": dict(sorted(stats.statuses.items())),
        "bad_5xx": stats.bad_5xx,
        "5xx": sum(n for s, n in stats.statuses.items() if s >= 500),
        "rss_start": rss_start,
        "rss_warm": rss_warm,
        "rss_end": rss_end,
        "rss_max_after_warm": max(warm),
        "growth": (rss_end - rss_warm) / rss_warm * 100,
        "samples": samples,
        "examples": stats.examples,
    }


def report(r: Data) -> str:
    mib = 1024
    rows = [
        ("date, nproc", f"{r['date']}, {r['nproc']}"),
        ("duration", f"{r['seconds']:.0f} s"),
        ("clients", str(r["clients"])),
        (
            "throttling",
            f"{r['throttle']:.0%} of every DynamoDB call: {r['throttles']} throttles injected "
            f"in {r['calls']} calls",
        ),
        ("requests", f"{r['requests']} ({r['rps']:.1f}/s)"),
        (
            "mix",
            f"{r['reads']} reads, {r['mutations']} mutation requests, "
            f"{r['cycles']} full client cycles",
        ),
        ("latency", f"p50 {r['p50']:.0f} ms, p99 {r['p99']:.0f} ms, max {r['max']:.0f} ms"),
        ("wrong answers", str(r["wrong"])),
        ("UNAVAILABLE", str(r["unavailable"])),
        ("other errors", f"{r['other_errors']} {r['codes']}"),
        ("HTTP statuses", str(r["statuses"])),
        ("5xx", f"{r['5xx']} (other than 503 UNAVAILABLE: {r['bad_5xx']})"),
        (
            "server RSS",
            f"start {r['rss_start'] / mib:.1f} MiB, after warm-up {r['rss_warm'] / mib:.1f} MiB, "
            f"end {r['rss_end'] / mib:.1f} MiB (max after warm-up "
            f"{r['rss_max_after_warm'] / mib:.1f}): growth {r['growth']:+.1f}%",
        ),
    ]
    lines = ["| figure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def append_results(path: Path, r: Data, command: str) -> None:
    """Replace the Soak section of ``path`` (or append one), leaving the others as they are."""
    text = path.read_text() if path.exists() else ""
    head, _, rest = text.partition("\n## Soak\n")
    head = head.rstrip("\n")
    tail = rest[rest.index("\n## ") :] if "\n## " in rest else ""
    section = (
        "\n\n## Soak\n\n"
        f"`{command}` (issue 6, item 8): `edgewise serve` (uvicorn child process) against a "
        f"seeded `tests.faults.FaultProxy` throttling {r['throttle']:.0%} of every DynamoDB "
        "call (ProvisionedThroughputExceeded or Throttling) in front of moto, holding the demo "
        "data plus `models.demo.generate.generated_items("
        f"{USERS} users, {GROUPS} groups, {PRODUCTS} products)`. "
        f"{r['clients']} aiohttp clients in the bench process each loop: create a user and a "
        "group, addGroupMember, read members, updateGroup with expectedVersion, openTicket, read, "
        "closeTicket, removeGroupMember, read, deleteGroup, deleteUser, read; every mutation is "
        f"followed by one of {len(fixed_reads())} fixed reads (alice's products, `nodes`, "
        "generated users' and groups' edges) compared with a fault-free baseline. "
        "A client answered UNAVAILABLE "
        "re-reads to learn whether its mutation applied. Warm-up: the first "
        f"{WARMUP:.0f} s; RSS is the server process's VmRSS, sampled every "
        f"{SAMPLE_EVERY:.0f} s.\n\n" + report(r) + "\n"
    )
    path.write_text(head + section + tail)


SERIAL_MOTO = """
import sys
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server
make_server("127.0.0.1", int(sys.argv[1]), DomainDispatcherApplication(create_backend_app),
            threaded=False).serve_forever()
"""


class SerialMoto(EmbeddedDynamoDB):
    """moto answering one request at a time, in a child process. moto's threaded server checks
    a transaction's conditions and applies its writes with no lock, so two concurrent attempts
    of one transaction can both apply; DynamoDB serializes them (see tests/table_state.py)."""

    def start(self) -> str:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERIAL_MOTO, str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/moto-api/data.json", timeout=1):
                    return self.url
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"serial moto did not answer on {self.url}")


def main(argv: list[str] | None = None) -> int:
    """Run the soak; print the figures and write them to RESULTS.md. Exit 1 on a wrong answer,
    an unexpected error or a 5xx other than 503 UNAVAILABLE."""
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--throttle", type=float, default=0.10)
    parser.add_argument(
        "--serial-moto",
        action="store_true",
        help="serve moto one request at a time, so its transactions are isolated as DynamoDB's",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=ROOT / "bench" / "results" / "RESULTS.md",
        help="the RESULTS.md to append the Soak section to ('-' for none)",
    )
    options = parser.parse_args(argv)
    os.environ.pop("EDGEWISE_JWT_SECRET", None)  # every request acts as admin
    with SerialMoto() if options.serial_moto else EmbeddedDynamoDB() as moto:
        written = asyncio.run(seed(moto.url))
        print(f"seeded {written} items", file=sys.stderr)
        with fault_proxy(moto.url, Faults()) as proxy, ours_server(proxy.url, TABLE) as server:
            print(f"soak: {options.clients} clients for {options.seconds:.0f} s", file=sys.stderr)
            result = asyncio.run(soak(options, server.url, server.process.pid, proxy))
    print(report(result))
    for example in result["examples"]:
        print("  " + example)
    if str(options.output) != "-":
        command = "python -m bench.soak"
        if (options.seconds, options.clients, options.throttle) != (300.0, 50, 0.10):
            command += f" --seconds {options.seconds:g} --clients {options.clients}"
            command += f" --throttle {options.throttle:g}"
        append_results(options.output, result, command)
    failed = result["wrong"] or result["bad_5xx"] or result["other_errors"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
