"""The pending protocol (:mod:`graph.writes.pending`): a change whose replicas do not fit in its
own transaction. On a table whose transactions hold 5 actions (``Table.max_actions``), a group
of 8 members is past one transaction, so every step of the protocol takes several
transactions, and runs in well under a second on moto (whose 100-action transactions take
seconds). After each case the replicas equal the join of the edges, and no job or mark is
left."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import yaml

from graph.dynamo.client import Endpoint, client_config, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import Unavailable, unreachable
from graph.items import Ref
from graph.table import RetryPolicy, Table
from graph.writes import background, pending
from graph.writes.replicas import Upkeep
from graph.writes.writer import Writer
from server.cli.main import main
from server.engine import Engine, engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.engine.test_replicas import DEMO, QUERY, ROOT, as_sets, drift, leftovers, ref, replicated
from tests.helpers import gql
from tests.table_state import create_streamless, scan

SMALL = 5  # actions a transaction holds on these tests' table
MEMBERS = 8  # of group big: two marking transactions, four of replicas
STEPS = 11  # of big's subscription: job, 2 marks, change, 4 of replicas, 2 of clears, job gone
COMMITTED = 4  # the change is the fourth


def sample() -> dict[str, Any]:
    """The demo's sample data and group ``big`` with MEMBERS members, subscribed to nothing."""
    data = yaml.safe_load((DEMO / "sample.yaml").read_text())
    data["nodes"].append({"type": "Group", "id": "big", "name": "Big"})
    data["nodes"] += [{"type": "User", "id": f"m{i}", "name": f"M{i}"} for i in range(MEMBERS)]
    data["edges"] += [
        {"label": "MEMBER_OF", "from": f"m{i}", "to": "big", "role": "MEMBER"}
        for i in range(MEMBERS)
    ]
    return data


@pytest.fixture
def model_file(tmp_path: Path) -> str:
    (tmp_path / "model.yaml").write_text(replicated())
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(sample()))
    shutil.copy(DEMO / "sample.yaml", tmp_path / "demo.yaml")
    return str(tmp_path / "model.yaml")


@pytest.fixture
def engine(model_file: str) -> Engine:
    return engine_for(model_file)


@pytest.fixture
async def small(dynamodb: EmbeddedDynamoDB, engine: Engine) -> AsyncIterator[Table]:
    """The sample graph on a table whose transactions hold SMALL actions."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), client_config(read_timeout=30.0)) as client:
        await create_streamless(client.control, "graph", engine.layout)
        table = Table(
            client, "graph", RetryPolicy(deadline=30.0), layout=engine.layout, max_actions=SMALL
        )
        await table.batch_write(engine.sample_items(table))
        yield table


async def refill(table: Table, engine: Engine) -> None:
    """The table back to the sample graph (a fresh table costs seconds on moto)."""
    keys = [table.layout.item_key(item) for item in (await scan(table)).values()]
    await table.batch_write(deletes=keys)
    await table.batch_write(engine.sample_items(table))


Compare = Callable[[str, str], Awaitable[tuple[Any, Any]]]


@contextlib.asynccontextmanager
async def readers(table: Table, model_file: str) -> AsyncIterator[Compare]:
    """``compare(user, product)``: the replicated fields' answer and the walked one."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=create_app(Settings(model=m), table=table)),
                    base_url="http://edgewise",
                )
            )
            for m in (model_file, "demo")
        ]

        async def compare(user: str, product: str) -> tuple[Any, Any]:
            variables = {"user": user, "product": product}
            got, walked = [await gql(c, QUERY, variables) for c in clients]
            return as_sets(got["data"]), as_sets(walked["data"])

        yield compare


class Killed(BaseException):
    """The process died: nothing more is sent."""


class Steps(Table):
    """The table of a process that awaits ``between(n)`` after its n-th TransactWriteItems
    (counting from 1), and dies right after its ``dies``-th (which applied): every call after
    it raises :class:`Killed`; the answer to its ``loses``-th is lost (it applied, and the
    call fails as DynamoDB failing to answer does). ``gate(test)`` holds every call that
    ``test(operation, params)`` is true of until ``open()``. Its views (a request's, the
    background's) share all that."""

    def __init__(
        self,
        table: Table,
        between: Callable[[int], Awaitable[None]] | None = None,
        dies: int | None = None,
        loses: int | None = None,
    ) -> None:
        super().__init__(
            table.client,
            table.name,
            table.policy,
            layout=table.layout,
            max_actions=table.max_actions,
        )
        self.state = SimpleNamespace(sent=0, dead=False, gates=[])
        self.between, self.dies, self.loses = between, dies, loses

    def gate(self, test: Callable[[str, dict[str, Any]], bool]) -> SimpleNamespace:
        """Hold the calls ``test`` is true of: ``.reached`` is set once one waits, ``.open()``
        lets them all go."""
        gate = SimpleNamespace(test=test, reached=asyncio.Event(), opened=asyncio.Event())
        gate.open = gate.opened.set
        self.state.gates.append(gate)
        return gate

    async def call(self, operation: str, send: Any, params: Any) -> Any:
        state = self.state
        for gate in state.gates:
            if not gate.opened.is_set() and gate.test(operation, params):
                gate.reached.set()
                await gate.opened.wait()
        if state.dead:
            raise Killed()
        response = await super().call(operation, send, params)
        if operation == "TransactWriteItems":
            state.sent += 1
            if state.sent == self.dies:
                state.dead = True
                raise Killed()
            if state.sent == self.loses:  # applied, but the answer never came
                raise unreachable("ReadTimeoutError")
            if self.between is not None:
                await self.between(state.sent)
        return response


def subscribes(writer: Writer, group: str, product: str) -> tuple[Any, Ref, Ref]:
    edge = writer.model.edges["SUBSCRIBES_TO"]
    return edge, ref(writer, "Group", group), ref(writer, "Product", product)


PLAN = {"plan": "pro", "status": "ACTIVE"}


async def test_every_step_of_a_fan_out_reads_as_the_walked_path(
    small: Table, engine: Engine, model_file: str
) -> None:
    """Between any two transactions of the protocol, a member reads what walking answers."""
    async with readers(small, model_file) as compare:
        seen = []

        async def between(n: int) -> None:
            for user in ("m0", "m5"):
                got, walked = await compare(user, "prod1")
                assert got == walked, (n, user)
            seen.append(n)

        writer = Writer(Steps(small, between), engine.codec)
        await writer.add_edge(*subscribes(writer, "big", "prod1"), PLAN)
        assert seen == list(range(1, STEPS + 1))
        assert not await drift(small, engine) and await leftovers(small) == []
        assert (await compare("m7", "prod1"))[0][1] is True
        await writer.remove_edge(*subscribes(writer, "big", "prod1"))
        assert len(seen) == 2 * STEPS
    assert not await drift(small, engine) and await leftovers(small) == []


async def test_a_process_killed_at_each_step_is_finished_exactly_at_the_next_start(
    small: Table, engine: Engine, model_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed right after each transaction of the protocol: meanwhile every read is the walked
    answer; the next start finishes the job; the change is there exactly when it committed."""
    monkeypatch.setattr(pending, "LEASE", 0.0)  # a dead process's job is free at once
    upkeep = Upkeep(engine.codec, small)
    async with readers(small, model_file) as compare:
        for dies in range(1, STEPS + 1):
            if dies > 1:
                await refill(small, engine)
            writer = Writer(Steps(small, dies=dies), engine.codec)
            with contextlib.suppress(Killed):
                await writer.add_edge(*subscribes(writer, "big", "prod3"), PLAN)
            got, walked = await compare("m1", "prod3")
            assert got == walked, dies
            assert await pending.resume_replicas(upkeep) == (1 if dies < STEPS else 0)
            assert not await drift(small, engine), dies
            assert await leftovers(small) == [], dies
            edge = ("GROUP#big", "PRODUCT#prod3") in await scan(small)
            assert edge is (dies >= COMMITTED), dies
            assert (await compare("m1", "prod3"))[0][1] is edge


async def test_a_process_killed_while_finishing_a_dead_ones_job_is_finished_by_the_next(
    small: Table, engine: Engine, model_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two crashes: the writer dies once its change committed, then the process that takes its
    job over dies after settling one member; reads stay the walked answer, and the next start
    finishes the job exactly."""
    monkeypatch.setattr(pending, "LEASE", 0.0)
    writer = Writer(Steps(small, dies=COMMITTED), engine.codec)
    with contextlib.suppress(Killed):
        await writer.add_edge(*subscribes(writer, "big", "prod3"), PLAN)
    missing = len((await drift(small, engine))["missing"])
    assert missing == MEMBERS
    monkeypatch.setattr(pending, "AT_ONCE", 1)  # the members settled one after another
    with contextlib.suppress(Killed):  # the job taken over, one member settled
        await pending.resume_replicas(Upkeep(engine.codec, Steps(small, dies=2)))
    assert len((await drift(small, engine))["missing"]) == missing - 1
    assert len(await leftovers(small)) > 1  # the job, and members still marked
    async with readers(small, model_file) as compare:
        for user in ("m0", "m7"):
            got, walked = await compare(user, "prod3")
            assert got == walked and got[1] is True, user
    assert await pending.resume_replicas(Upkeep(engine.codec, small)) == 1
    assert not await drift(small, engine)
    assert await leftovers(small) == []


async def test_a_job_a_dead_process_left_is_finished_by_rebuild(
    small: Table,
    engine: Engine,
    model_file: str,
    dynamodb: EmbeddedDynamoDB,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``edgewise rebuild`` first finishes the replicas' work a crashed process left: the
    job's members written and their marks cleared, the job gone."""
    monkeypatch.setattr(pending, "LEASE", 0.0)
    writer = Writer(Steps(small, dies=COMMITTED + 1), engine.codec)
    with contextlib.suppress(Killed):
        await writer.add_edge(*subscribes(writer, "big", "prod3"), PLAN)
    assert await drift(small, engine) and len(await leftovers(small)) > 1
    args = ["rebuild", "--model", model_file, "--dynamodb", dynamodb.url, "--table", "graph"]
    await asyncio.to_thread(main, args)
    assert not await drift(small, engine)
    assert await leftovers(small) == []


def commits(product: str) -> Callable[[str, dict[str, Any]], bool]:
    """The transaction that puts the SUBSCRIBES_TO edge to ``product``."""

    def test(operation: str, params: dict[str, Any]) -> bool:
        return operation == "TransactWriteItems" and any(
            "Put" in a and a["Put"]["Item"]["SK"] == {"S": f"PRODUCT#{product}"}
            for a in params["TransactItems"]
        )

    return test


def lists_replicas(operation: str, params: dict[str, Any]) -> bool:
    """A Query of a start's replica items (a start compared with its path)."""
    values = params.get("ExpressionAttributeValues", {}).values()
    return operation == "Query" and any(str(v.get("S", "")) == "GROUPSUB#" for v in values)


async def test_a_start_compared_while_a_fan_out_writes_it_is_compared_again(
    small: Table, engine: Engine
) -> None:
    """A member compared with its path (as a job settling it, or ``rebuild``, compares it)
    walks its path, then a fan-out over it commits and writes its replica, then the comparison
    reads the member's replicas: it must not delete what it did not walk (its write is
    conditioned on the clock the fan-out's write advances), nor may the fan-out then clear the
    member's mark as if nothing happened."""
    fan_out, comparing = Steps(small), Steps(small)
    before_commit = fan_out.gate(commits("prod2"))
    writer = Writer(fan_out, engine.codec)
    other = asyncio.create_task(writer.add_edge(*subscribes(writer, "big", "prod2"), PLAN))
    await before_commit.reached.wait()  # every member marked, the edge not there yet
    walked = comparing.gate(lists_replicas)
    upkeep = Upkeep(engine.codec, comparing)
    member = ref(Writer(small, engine.codec), "User", "m0")
    compare = asyncio.create_task(
        upkeep.recompute(
            member, list(engine.model.replicas), Writer(comparing, engine.codec).commit
        )
    )
    await walked.reached.wait()  # its path walked: no prod2 yet
    before_commit.open()
    await other  # the fan-out commits, writes and clears
    walked.open()
    await compare
    assert not await drift(small, engine)
    assert await leftovers(small) == []


async def test_a_change_refused_after_marking_clears_its_marks(
    small: Table, engine: Engine
) -> None:
    writer = Writer(small, engine.codec)
    await writer.add_edge(*subscribes(writer, "big", "prod2"), PLAN)
    with pytest.raises(Exception, match="already has"):
        await writer.add_edge(*subscribes(writer, "big", "prod2"), PLAN)
    assert await leftovers(small) == []
    assert not await drift(small, engine)


async def test_a_write_answers_once_its_change_committed_and_the_rest_goes_on_in_the_background(
    small: Table, engine: Engine, model_file: str
) -> None:
    """The replicas take longer than the request's deadline allows: the write answers when its
    change committed, the replicas are written afterwards, in the background, and reads are
    right all along."""
    slow = asyncio.Event()

    async def between(n: int) -> None:
        if n > COMMITTED:
            await slow.wait()

    steps = Steps(small, between)
    view = steps.for_request()
    view.deadline = time.monotonic() + 2.0  # a request with 2 s left
    writer = Writer(view, engine.codec)
    async with asyncio.timeout(10):
        await writer.add_edge(*subscribes(writer, "big", "prod1"), PLAN)
    assert background.running()  # the replicas are still being written
    async with readers(small, model_file) as compare:
        got, walked = await compare("m2", "prod1")
        assert got == walked and got[1] is True
        slow.set()
        assert await background.settled(30)
        assert await compare("m2", "prod1") == (walked, walked)
    assert not await drift(small, engine) and await leftovers(small) == []


async def test_a_change_whose_commit_was_not_answered_has_its_starts_compared(
    small: Table, engine: Engine
) -> None:
    """The change applied but its answer was lost (UNAVAILABLE): its marks are not cleared as
    if nothing had been written; each start is compared with its path and written."""
    writer = Writer(Steps(small, loses=COMMITTED), engine.codec)
    with pytest.raises(Unavailable):
        await writer.add_edge(*subscribes(writer, "big", "prod3"), PLAN)
    assert ("GROUP#big", "PRODUCT#prod3") in await scan(small)
    assert not await drift(small, engine)
    assert await leftovers(small) == []


CRASH = """
import asyncio, os, sys
from graph.dynamo.client import Endpoint, client_config, open_client
from graph.table import RetryPolicy, Table
from graph.writes import pending, transaction
from graph.writes.writer import Writer
from server.engine import engine_for

pending.LEASE = 1.0
transact, sent = transaction.transact, []

async def dying(*args, **kwargs):
    await transact(*args, **kwargs)
    sent.append(1)
    if len(sent) == int(sys.argv[3]):
        os._exit(9)

pending.transact = dying

async def main(url, model):
    engine = engine_for(model)
    async with open_client(Endpoint(url), client_config(read_timeout=30.0)) as client:
        policy = RetryPolicy(deadline=30.0)
        table = Table(client, "graph", policy, layout=engine.layout, max_actions=SMALL)
        writer = Writer(table, engine.codec)
        types, edge = engine.model.types, engine.model.edges["SUBSCRIBES_TO"]
        big = writer.codec.by_id(types["Group"], "big")
        prod = writer.codec.by_id(types["Product"], "prod3")
        await writer.add_edge(edge, big, prod, {"plan": "pro", "status": "ACTIVE"})

SMALL = int(sys.argv[4])
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_a_process_killed_mid_fan_out_is_finished_by_the_next_server_start(
    small: Table, engine: Engine, model_file: str, dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    """A real process, killed after its change and one transaction of replicas; the next
    `edgewise serve` finishes the job at its start."""
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, str(script), dynamodb.url, model_file, str(COMMITTED + 1), str(SMALL)),
        cwd=ROOT,
    )
    assert await process.wait() == 9
    assert await drift(small, engine)  # committed, its replicas not all written
    assert len(await leftovers(small)) > 1  # the job, members still marked
    await asyncio.sleep(1.1)  # the dead process's lease runs out

    settings = Settings(model=model_file, dynamodb=dynamodb.url, table="graph", deadline=30.0)
    app = create_app(settings)
    async with app.router.lifespan_context(app), asyncio.timeout(30):
        while await leftovers(small):  # noqa: ASYNC110 (the start's resume, in the background)
            await asyncio.sleep(0.1)
    assert not await drift(small, engine)
