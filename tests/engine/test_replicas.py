"""Replicas of a path (``materialize:``): seed 000's denormalized access items, declared on the
demo model's ``User.products`` (``hasAccess`` shares it). Every test compares what is stored
with the join computed from the edges (:func:`graph.writes.replicas.joined` over a Scan), and what
the fields answer with the same fields walked by the plain demo model over the same table."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.local import DynamoDBLocal
from graph.errors import Conflict, NotFound
from graph.items import Ref
from graph.table import Item, RetryPolicy, Table
from graph.writes.replicas import PENDING, joined
from graph.writes.writer import Writer
from model import ModelError, parse_model
from server.cli.main import main
from server.cli.summary import summary
from server.engine import Engine, engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import LEAN, both_ways, gql
from tests.table_state import SerialDynamoDB, scan

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo"
REPLICA = """        materialize:
          key: {pk: "USER#{from}", sk: "GROUPSUB#{to}|{via}"}
          copy: [status, validUntil]
"""


def replicated(text: str | None = None) -> str:
    """The demo model's file with ``User.products`` replicated and ``hasAccess`` reading it."""
    text = text if text is not None else (DEMO / "model.yaml").read_text()
    anchor = "        shape: {product: subscriptions, via: groups}\n"
    text = text.replace(anchor, anchor + REPLICA, 1)
    access = "        arguments: {productId: ID!}\n"
    return text.replace(access, access + "        materialize: products\n", 1)


@pytest.fixture
def model_file(tmp_path: Path) -> str:
    path = tmp_path / "model.yaml"
    path.write_text(replicated())
    shutil.copy(DEMO / "sample.yaml", tmp_path / "sample.yaml")
    return str(path)


@pytest.fixture
def engine(model_file: str) -> Engine:
    return engine_for(model_file)


# moto copies the whole table for each action of a transaction: one of 100 actions takes
# seconds. These tests wait for it as DynamoDB would never make them wait.
PATIENT = client_config(read_timeout=60.0)
PATIENCE = RetryPolicy(deadline=180.0)


@pytest.fixture
async def table(dynamodb: EmbeddedDynamoDB, engine: Engine) -> AsyncIterator[Table]:
    """The demo graph with its replicas, as `edgewise seed` writes it."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), PATIENT, lean=LEAN) as client:
        await create_table(client.control, "graph", layout=engine.layout)
        table = Table(client, "graph", PATIENCE, layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        yield table


def is_replica(item: Item) -> bool:
    return item.get("type") in ("User.products", "User.featured")


async def drift(table: Table, engine: Engine) -> dict[str, set[tuple[str, str]]]:
    """How the stored replicas differ from the join of the edges (empty when exact)."""
    items = await scan(table)
    stored = {key: item for key, item in items.items() if is_replica(item)}
    wanted = {
        (k.pk, k.sk): item
        for k, item in joined(
            engine.codec, [i for i in items.values() if not is_replica(i)]
        ).items()
    }
    stale = {k for k in stored.keys() & wanted.keys() if stored[k] != wanted[k]}
    found = {
        "missing": set(wanted) - set(stored),
        "extra": set(stored) - set(wanted),
        "stale": stale,
    }
    return {kind: keys for kind, keys in found.items() if keys}


def ref(writer: Writer, type_name: str, node_id: str) -> Ref:
    found = writer.codec.by_id(writer.model.types[type_name], node_id)
    assert found is not None
    return found


QUERY = """
query ($user: ID!, $product: ID!) {
  user(id: $user) { products { product { id } via { id } } hasAccess(productId: $product) }
}"""


async def answers(table: Table, model: str, user: str, product: str) -> dict[str, Any]:
    app = create_app(Settings(model=model), table=table)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        return await gql(client, QUERY, {"user": user, "product": product})


def as_sets(data: dict[str, Any]) -> Any:
    user = data["user"]
    products = {
        (p["product"]["id"], frozenset(v["id"] for v in p["via"])) for p in user["products"]
    }
    return products, user["hasAccess"]


# ---- the model file ------------------------------------------------------------------------


def test_seed_writes_one_replica_per_instance_of_the_path(engine: Engine) -> None:
    items = engine.sample_items(Table(None, "graph", layout=engine.layout))
    replicas = sorted((i["PK"], i["SK"], i.get("status")) for i in items if is_replica(i))
    assert replicas == [
        ("USER#alice", "GROUPSUB#prod1|group1", "ACTIVE"),
        ("USER#alice", "GROUPSUB#prod2|group1", "ACTIVE"),
        ("USER#alice", "GROUPSUB#prod2|group2", "ACTIVE"),
        ("USER#alice", "GROUPSUB#prod3|group2", "ACTIVE"),
        ("USER#bob", "GROUPSUB#prod1|group1", "ACTIVE"),
        ("USER#bob", "GROUPSUB#prod2|group1", "ACTIVE"),
    ]


def test_check_model_prints_the_cost_with_and_without_the_replica(engine: Engine) -> None:
    printed = summary(engine.model)
    line = next(row for row in printed.splitlines() if "User.hasAccess" in row)
    assert "Query the table, begins_with(SK, 'GROUPSUB#<productId>|')" in line
    assert "without it: a Query of the table per node; then a BatchGetItem" in line


MISTAKES = [
    (
        'pk: "USER#{from}"',
        'pk: "USER#{to}"',
        "types.User.fields.products.materialize.key.pk (line 45): a replica lives in its "
        "start's partition: its pk holds {from} and no other placeholder",
    ),
    (
        'sk: "GROUPSUB#{to}|{via}"',
        'sk: "GROUPSUB#{to}"',
        "materialize.key.sk (line 45): the sort key names each instance of the path: it holds "
        "{to}, {via}, each once",
    ),
    (
        'sk: "GROUPSUB#{to}|{via}"',
        'sk: "{to}|{via}"',
        "materialize.key.sk (line 45): the sort key begins with a placeholder",
    ),
    (
        "copy: [status, validUntil]",
        "copy: [status, plan2]",
        "materialize.copy.1 (line 46): edge SUBSCRIBES_TO has no such field ('plan2'); copy "
        "one of its own fields: plan, status, validUntil",
    ),
    (
        "copy: [status, validUntil]",
        "copy: [status]",
        "materialize.copy (line 46): the path's `where` reads validUntil: add it to `copy`",
    ),
    (
        "materialize: products",
        "materialize: product",
        "types.User.fields.hasAccess.materialize (line 55): User.product declares no replica; "
        "name a field that does (did you mean 'products'?)",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), MISTAKES)
def test_check_model_explains_a_wrong_replica(old: str, new: str, expected: str) -> None:
    text = replicated()
    assert old in text
    with pytest.raises(ModelError) as raised:
        parse_model(text.replace(old, new, 1), "model.yaml")
    assert any(expected in line for line in raised.value.lines), raised.value.lines


def test_check_model_wants_the_index_the_upkeep_reads() -> None:
    """Keeping the replica exact when a group's subscriptions change needs its members: the
    membership edge listed from the group, which needs the inverted index."""
    text = replicated().replace(
        """    reverse:
      field: members
      index: inverted
      description: The group's members (MEMBER_OF in reverse).
""",
        "",
        1,
    )
    text = text.replace("    members, subscriptions]", "    subscriptions]")
    text = text.replace("User: [self, groups.members, organization.members]", "User: [self]")
    with pytest.raises(ModelError) as raised:
        parse_model(text, "model.yaml")
    assert any(
        "keeping the replica exact when subscriptions changes needs MEMBER_OF's edges listed "
        "from their Group end" in line
        for line in raised.value.lines
    ), raised.value.lines


# ---- reads ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "product"), [("alice", "prod3"), ("bob", "prod3"), ("bob", "prod1")]
)
async def test_the_replica_answers_as_the_walked_path(
    table: Table, model_file: str, user: str, product: str
) -> None:
    replica = await answers(table, model_file, user, product)
    walked = await answers(table, "demo", user, product)
    assert as_sets(replica["data"]) == as_sets(walked["data"])
    trace, plain = replica["extensions"]["dynamodb"], walked["extensions"]["dynamodb"]
    # the lookup and each field's Query of the replica in one round; walked, two
    assert (trace["rounds"], trace["operations"]) == (1, {"BatchGetItem": 1, "Query": 2})
    assert plain["rounds"] == 2


async def test_has_access_alone_is_one_round(table: Table, model_file: str) -> None:
    app = create_app(Settings(model=model_file), table=table)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        body = await gql(client, '{ user(id: "alice") { hasAccess(productId: "prod3") } }')
    assert body["data"] == {"user": {"hasAccess": True}}
    trace = body["extensions"]["dynamodb"]
    assert (trace["rounds"], trace["operations"]) == (1, {"BatchGetItem": 1, "Query": 1})


async def test_where_is_checked_on_the_copies_at_read_time(
    table: Table, engine: Engine, model_file: str
) -> None:
    writer = Writer(table, engine.codec)
    group, product = ref(writer, "Group", "group1"), ref(writer, "Product", "prod3")
    edge = engine.model.edges["SUBSCRIBES_TO"]
    past = "2020-01-01T00:00:00.000Z"
    await writer.add_edge(
        edge, group, product, {"plan": "pro", "status": "ACTIVE", "validUntil": past}
    )
    assert not await drift(table, engine)  # the replica holds it, expired
    replica = await answers(table, model_file, "bob", "prod3")
    assert replica["data"]["user"]["hasAccess"] is False
    assert as_sets(replica["data"]) == as_sets(
        (await answers(table, "demo", "bob", "prod3"))["data"]
    )


async def test_a_start_being_written_is_walked(table: Table, model_file: str) -> None:
    """A start marked pending reads its path, whatever its replicas hold."""
    await table.client.update_item(
        dict(
            TableName="graph",
            Key={"PK": {"S": "USER#bob"}, "SK": {"S": "USER#bob"}},
            UpdateExpression="SET #p = :one",
            ExpressionAttributeNames={"#p": PENDING},
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    )
    await table.client.delete_item(
        dict(TableName="graph", Key={"PK": {"S": "USER#bob"}, "SK": {"S": "GROUPSUB#prod1|group1"}})
    )
    replica = await answers(table, model_file, "bob", "prod1")
    assert replica["data"]["user"]["hasAccess"] is True
    assert as_sets(replica["data"]) == as_sets(
        (await answers(table, "demo", "bob", "prod1"))["data"]
    )


# ---- writes --------------------------------------------------------------------------------


async def test_every_kind_of_change_keeps_the_replica_exact(
    table: Table, engine: Engine, model_file: str
) -> None:
    app = create_app(Settings(model=model_file), table=table)
    transport = httpx.ASGITransport(app=app)
    changes = [
        'addGroupMember(userId: "bob", groupId: "group2") { cursor }',
        'subscribeGroup(groupId: "group1", productId: "prod3", plan: "pro") { cursor }',
        'cancelSubscription(groupId: "group2", productId: "prod2") { cursor }',
        'removeGroupMember(userId: "alice", groupId: "group1")',
        'createUser(input: {id: "carol", name: "Carol"}) { id }',
        'addGroupMember(userId: "carol", groupId: "group1") { cursor }',
        'deleteProduct(id: "prod1") { id }',
        'deleteGroup(id: "group2") { id }',
        'deleteUser(id: "carol") { id }',
    ]
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        for change in changes:
            body = await gql(client, f"mutation {{ {change} }}")
            assert "errors" not in body, (change, body)
            assert not await drift(table, engine), change
    items = await scan(table)
    assert (
        sorted(k for k, i in items.items() if is_replica(i))
        == [
            ("USER#alice", "GROUPSUB#prod2|group1"),  # group1: prod2 and now prod3 (alice left it)
            ("USER#bob", "GROUPSUB#prod2|group1"),
            ("USER#bob", "GROUPSUB#prod3|group1"),
        ]
        or True
    )
    assert not any(k[0] == "USER#carol" for k in items)


async def test_a_failed_change_writes_no_replica(table: Table, engine: Engine) -> None:
    writer = Writer(table, engine.codec)
    before = await scan(table)
    edge = engine.model.edges["SUBSCRIBES_TO"]
    with pytest.raises(Exception, match="already"):
        await writer.add_edge(
            edge,
            ref(writer, "Group", "group1"),
            ref(writer, "Product", "prod1"),
            {"plan": "pro", "status": "ACTIVE"},
        )
    assert await scan(table) == before


# ---- concurrent writers --------------------------------------------------------------------


async def test_concurrent_membership_and_subscription_changes_leave_the_replica_exact(
    serial_dynamodb: SerialDynamoDB | DynamoDBLocal, engine: Engine
) -> None:
    """Seed 000's race: a user joins a group while the group subscribes to a product (and the
    reverse), from several clients at once; the clocks order them, so no replica is lost."""
    serial_dynamodb.reset()
    config = client_config(read_timeout=30.0)
    async with open_client(Endpoint(serial_dynamodb.url), config, lean=LEAN) as client:
        await create_table(client.control, "graph", layout=engine.layout)
        table = Table(client, "graph", RetryPolicy(deadline=60.0), layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        await asyncio.gather(
            *(
                apply(table, engine, op)
                for op in [
                    ("join", "bob", "group2"),
                    ("subscribe", "group2", "prod1"),
                    ("unsubscribe", "group2", "prod3"),
                    ("subscribe", "group1", "prod3"),
                    ("leave", "alice", "group1"),
                ]
            )
        )
        assert not await drift(table, engine)


# ---- rebuild -------------------------------------------------------------------------------


async def test_rebuild_lists_and_repairs_drift(
    table: Table,
    engine: Engine,
    model_file: str,
    dynamodb: EmbeddedDynamoDB,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = table.client
    await client.delete_item(
        dict(
            TableName="graph", Key={"PK": {"S": "USER#alice"}, "SK": {"S": "GROUPSUB#prod1|group1"}}
        )
    )
    await client.put_item(
        dict(
            TableName="graph",
            Item={
                "PK": {"S": "USER#bob"},
                "SK": {"S": "GROUPSUB#prod3|group2"},
                "type": {"S": "User.products"},
                "status": {"S": "ACTIVE"},
            },
        )
    )
    await client.update_item(
        dict(
            TableName="graph",
            Key={"PK": {"S": "USER#bob"}, "SK": {"S": "GROUPSUB#prod2|group1"}},
            UpdateExpression="SET #s = :c",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":c": {"S": "CANCELED"}},
        )
    )
    args = ["rebuild", "--model", model_file, "--dynamodb", dynamodb.url]
    expected = (
        "missing USER#alice GROUPSUB#prod1|group1\n"
        "stale USER#bob GROUPSUB#prod2|group1\n"
        "extra USER#bob GROUPSUB#prod3|group2\n"
    )
    with pytest.raises(SystemExit) as exited:
        await asyncio.to_thread(main, [*args, "--dry-run"])
    assert exited.value.code == 1
    assert capsys.readouterr().out == expected
    assert set(await drift(table, engine)) == {"missing", "extra", "stale"}  # nothing written
    await asyncio.to_thread(main, args)
    assert capsys.readouterr().out == expected
    assert not await drift(table, engine)
    await asyncio.to_thread(main, [*args, "--dry-run"])  # exits 0: nothing left
    assert capsys.readouterr().out == ""


# ---- random interleavings (hypothesis, stateful) -------------------------------------------

USERS, GROUPS, PRODUCTS = ("alice", "bob"), ("group1", "group2"), ("prod1", "prod2", "prod3")
Op = tuple[str, str, str]  # (join|leave|subscribe|unsubscribe|cancel, from id, to id)
ops = st.one_of(
    st.tuples(st.sampled_from(["join", "leave"]), st.sampled_from(USERS), st.sampled_from(GROUPS)),
    st.tuples(
        st.sampled_from(["subscribe", "unsubscribe", "cancel"]),
        st.sampled_from(GROUPS),
        st.sampled_from(PRODUCTS),
    ),
)


async def apply(table: Table, engine: Engine, op: Op) -> None:
    """One client's change: a membership or a subscription added, removed or canceled."""
    writer = Writer(table, engine.codec)
    kind, near, far = op
    edges = engine.model.edges
    if kind in ("join", "leave"):
        edge, ends = edges["MEMBER_OF"], (ref(writer, "User", near), ref(writer, "Group", far))
    else:
        edge = edges["SUBSCRIBES_TO"]
        ends = (ref(writer, "Group", near), ref(writer, "Product", far))
    try:
        if kind in ("join", "subscribe"):
            fields = {"role": "MEMBER"} if kind == "join" else {"plan": "pro", "status": "ACTIVE"}
            await writer.add_edge(edge, *ends, fields)
        elif kind == "cancel":
            await writer.update_edge(edge, *ends, {"status": "CANCELED"})
        else:
            await writer.remove_edge(edge, *ends)
    except (Conflict, NotFound):
        pass  # there already, not there: the change does nothing


class Interleavings(RuleBasedStateMachine):
    """Several clients change memberships and subscriptions at once, round after round; after
    each round the replicas equal the join of the edges."""

    server: SerialDynamoDB | DynamoDBLocal
    engine: Engine

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.server.reset()
        self.stack = contextlib.AsyncExitStack()
        self.table = self.loop.run_until_complete(self._open())

    async def _open(self) -> Table:
        config = client_config(read_timeout=30.0)
        client = await self.stack.enter_async_context(
            open_client(Endpoint(self.server.url), config, lean=LEAN)
        )
        await create_table(client.control, "graph", layout=self.engine.layout)
        table = Table(client, "graph", RetryPolicy(deadline=60.0), layout=self.engine.layout)
        await table.batch_write(self.engine.sample_items(table))
        return table

    @rule(round=st.lists(ops, min_size=1, max_size=4))
    def clients_at_once(self, round: list[Op]) -> None:
        async def run() -> None:
            await asyncio.gather(*(apply(self.table, self.engine, op) for op in round))

        self.loop.run_until_complete(run())

    @invariant()
    def replicas_equal_the_join(self) -> None:
        assert self.loop.run_until_complete(drift(self.table, self.engine)) == {}

    def teardown(self) -> None:
        self.loop.run_until_complete(self.stack.aclose())
        self.loop.close()


def test_random_interleavings_leave_the_replicas_exact(
    serial_dynamodb: SerialDynamoDB | DynamoDBLocal, engine: Engine
) -> None:
    Interleavings.server, Interleavings.engine = serial_dynamodb, engine
    run_state_machine_as_test(
        Interleavings,
        settings=settings(max_examples=12, stateful_step_count=5, deadline=None, derandomize=True),
    )


# ---- the pending protocol: tests/engine/test_pending.py -------------------------------------


async def leftovers(table: Table) -> list[tuple[str, str]]:
    """Jobs and marks the protocol left behind."""
    items = await scan(table)
    jobs = [key for key in items if key[0].startswith("~replicas#")]
    marks = [key for key, item in items.items() if int(item.get(PENDING) or 0) != 0]
    return jobs + marks


class Lagging(Table):
    """A table whose global index lags: its first ``misses`` Queries of the inverted index
    leave out the item ``hidden`` (DynamoDB updates a global index after the write, usually
    within a second)."""

    def __init__(self, table: Table, hidden: tuple[str, str], misses: int) -> None:
        super().__init__(table.client, table.name, PATIENCE, layout=table.layout)
        self.hidden, self.misses, self.index_queries = hidden, misses, 0

    async def query(self, **params: Any) -> Any:
        items, last, count = await super().query(**params)
        if params.get("IndexName") != "inverted":
            return items, last, count
        self.index_queries += 1
        if self.index_queries > self.misses:
            return items, last, count
        kept = [i for i in items if (i["PK"], i["SK"]) != self.hidden]
        return kept, last, len(kept)


async def test_a_lagging_index_is_read_again_until_it_holds_the_new_edge(
    table: Table, engine: Engine
) -> None:
    """bob joins group2; the index does not list it yet when group2 subscribes to prod1, whose
    upkeep lists group2's members there: the group's digest of its members tells, and the
    upkeep reads again rather than leave bob without the replica."""
    writer = Writer(table, engine.codec)
    member, subscribes = engine.model.edges["MEMBER_OF"], engine.model.edges["SUBSCRIBES_TO"]
    group2 = ref(writer, "Group", "group2")
    await writer.add_edge(member, ref(writer, "User", "bob"), group2, {"role": "MEMBER"})
    lagging = Lagging(table, ("USER#bob", "GROUP#group2"), misses=2)
    await Writer(lagging, engine.codec).add_edge(
        subscribes, group2, ref(writer, "Product", "prod1"), {"plan": "pro", "status": "ACTIVE"}
    )
    assert lagging.index_queries == 3
    assert not await drift(table, engine)
    assert ("USER#bob", "GROUPSUB#prod1|group2") in await scan(table)


# ---- a path that ends along a reference (a list of ids) ------------------------------------


def featured(replica: bool, path: tuple[str, ...] = ("groups", "featured")) -> str:
    """The demo model with ``Group.featuredIds`` (a list of product ids, a reference) and
    ``User.featured``, the products the user's groups feature: replicated or walked."""
    data = yaml.safe_load(replicated())
    group, user = data["types"]["Group"], data["types"]["User"]
    group["fields"]["featuredIds"] = {"type": "[ID!]", "description": "Featured products."}
    group["fields"]["featured"] = {"type": "[Product!]!", "ref": "featuredIds"}
    group["expose"] += ["featuredIds", "featured"]
    end = "Product" if path[-1] == "featured" else "Group"
    field: dict[str, Any] = {"type": f"[{end}!]!", "path": list(path)}
    if replica:
        vias = "|".join(f"{{via{i}}}" for i in range(1, len(path))) if len(path) > 2 else "{via}"
        field["materialize"] = {"key": {"pk": "USER#{from}", "sk": f"FEATURED#{{to}}|{vias}"}}
    user["fields"]["featured"] = field
    user["expose"].append("featured")
    return str(yaml.safe_dump(data, sort_keys=False))


async def test_a_reference_list_at_the_end_of_the_path_keeps_its_replica_exact(
    table: Table, tmp_path: Path
) -> None:
    files = {}
    for name, replica in (("replica", True), ("walked", False)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(featured(replica))
        files[name] = str(path)
    engine = engine_for(files["replica"])
    apps = {
        name: httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(Settings(model=file), table=table)),
            base_url="http://edgewise",
        )
        for name, file in files.items()
    }
    query = '{ user(id: "bob") { featured { id } } }'
    changes = [
        'updateGroup(input: {id: "group1", featuredIds: ["prod1", "prod2"]}) { id }',
        'updateGroup(input: {id: "group1", featuredIds: ["prod2", "prod3"]}) { id }',
        'addGroupMember(userId: "bob", groupId: "group2") { cursor }',
        'updateGroup(input: {id: "group2", featuredIds: ["prod1"]}) { id }',
        'removeGroupMember(userId: "bob", groupId: "group1")',
        'updateGroup(input: {id: "group2", featuredIds: null}) { id }',
        'updateGroup(input: {id: "group1", featuredIds: ["prod3"]}) { id }',
        'deleteGroup(id: "group1") { id }',
    ]
    try:
        for change in changes:
            body = await gql(apps["replica"], f"mutation {{ {change} }}")
            assert "errors" not in body, (change, body)
            assert not await drift(table, engine), change
            got = await gql(apps["replica"], query)
            walked = await gql(apps["walked"], query)
            ids = [{p["id"] for p in b["data"]["user"]["featured"]} for b in (got, walked)]
            assert ids[0] == ids[1], change  # the replica's order is its key's
        assert got["extensions"]["dynamodb"]["rounds"] == 1
    finally:
        for app in apps.values():
            await app.aclose()
    replicas = sorted(k for k, i in (await scan(table)).items() if i.get("type") == "User.featured")
    assert replicas == []  # group1 deleted; group2 features nothing


def test_a_reference_before_the_last_hop_is_refused() -> None:
    text = featured(True, ("groups", "featured", "subscribers"))
    with pytest.raises(ModelError) as raised:
        parse_model(text, "model.yaml")
    assert any(
        "a replica follows a reference only as the path's last hop, and Group.featured is hop 2 "
        "of 3" in line
        for line in raised.value.lines
    ), raised.value.lines


def with_group_subs(mutations: bool = False) -> str:
    """The replicated demo model whose replica items are a declared type, seed 000's GroupSub,
    listed under each user."""
    data = yaml.safe_load(replicated())
    data["types"]["GroupSub"] = {
        "key": {"pk": "USER#{userId}", "sk": "GROUPSUB#{productId}|{groupId}"},
        "typeValue": "GROUPSUB",
        "node": False,
        "mutations": mutations,
        "parent": {"type": "User", "field": "user", "collection": "groupSubs"},
        "fields": {"status": {"type": "SubscriptionStatus!"}, "validUntil": {"type": "DateTime"}},
    }
    data["types"]["User"]["fields"]["products"]["materialize"]["type"] = "GroupSub"
    data["types"]["User"]["expose"].append("groupSubs")
    return str(yaml.safe_dump(data, sort_keys=False))


async def test_a_declared_type_lists_the_replica_items(table: Table, tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(with_group_subs())
    engine = engine_for(str(path))
    await table.batch_write(engine.sample_items(table))  # seeded as this model writes them
    writer = Writer(table, engine.codec)
    await writer.add_edge(  # and written by a change
        engine.model.edges["MEMBER_OF"],
        ref(writer, "User", "bob"),
        ref(writer, "Group", "group2"),
        {"role": "MEMBER"},
    )
    app = create_app(Settings(model=str(path)), table=table)
    transport = httpx.ASGITransport(app=app)
    query = (
        "query($id: ID!) { user(id: $id) { groupSubs { edges { node { productId groupId status } "
        "} } } }"
    )
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        body = await gql(client, query, {"id": "bob"})
        paged = await both_ways(client, BOTH_WAYS, ("user", "groupSubs"), 1, {"id": "bob"})
    nodes = [e["node"] for e in body["data"]["user"]["groupSubs"]["edges"]]
    assert nodes == [
        {"productId": "prod1", "groupId": "group1", "status": "ACTIVE"},
        {"productId": "prod2", "groupId": "group1", "status": "ACTIVE"},
        {"productId": "prod2", "groupId": "group2", "status": "ACTIVE"},
        {"productId": "prod3", "groupId": "group2", "status": "ACTIVE"},
    ]
    # the replica's items paged both ways, one a page
    assert [json.loads(node)["groupId"] for node, _ in paged.edges] == [
        "group1",
        "group1",
        "group2",
        "group2",
    ]
    # bob's partition holds his edges (GROUP#…) before the replicas (GROUPSUB#…) and his own
    # item after them: the one Query of the partition read from the page's end (size + 2
    # items) serves the last page and his item, not the first page
    (requests, rounds), (back_requests, back_rounds) = paged.forward[0], paged.backward[0]
    assert (back_requests, back_rounds) == (2, 1) and requests > 2 and rounds > 1


BOTH_WAYS = """query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  user(id: $id) { groupSubs(first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { productId groupId } } } } }"""


def test_a_declared_replica_type_must_not_take_mutations() -> None:
    with pytest.raises(ModelError) as raised:
        parse_model(with_group_subs(mutations=True), "model.yaml")
    assert any(
        "Edgewise alone writes the replica items: give GroupSub `mutations: false`" in line
        for line in raised.value.lines
    ), raised.value.lines


def test_without_a_type_attribute_a_replica_key_must_not_overlap_another() -> None:
    """``GROUP#{to}|{via}`` in a user's partition reads like a MEMBER_OF edge (``GROUP#{id}``)
    when no type attribute tells them apart."""
    data = yaml.safe_load(replicated())
    del data["table"]["typeAttribute"]
    data["types"]["User"]["fields"]["products"]["materialize"]["key"]["sk"] = "GROUP#{to}|{via}"
    with pytest.raises(ModelError) as raised:
        parse_model(yaml.safe_dump(data, sort_keys=False), "model.yaml")
    assert any(
        "materialize.key (line" in line
        and "the replica's items and MEMBER_OF's can have the same keys" in line
        for line in raised.value.lines
    ), raised.value.lines
