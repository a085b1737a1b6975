"""``edgewise rebuild`` at any size: through throttling and slow answers it ends with every
replica written, and ``--resume`` goes on after an interruption from its checkpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from graph.writes import rebuild
from server.cli.main import main
from server.engine import Engine, engine_for
from tests.engine.test_replicas import DEMO, drift, replicated
from tests.faults import FaultProxy, Faults
from tests.helpers import LEAN
from tests.table_state import create_streamless, scan

USERS = 5  # u0..u4, members of group1 (prod1, prod2): two replicas each


@pytest.fixture
def model_file(tmp_path: Path) -> str:
    data = yaml.safe_load((DEMO / "sample.yaml").read_text())
    data["nodes"] += [{"type": "User", "id": f"u{i}", "name": f"U{i}"} for i in range(USERS)]
    data["edges"] += [
        {"label": "MEMBER_OF", "from": f"u{i}", "to": "group1", "role": "MEMBER"}
        for i in range(USERS)
    ]
    (tmp_path / "model.yaml").write_text(replicated())
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(data))
    return str(tmp_path / "model.yaml")


async def drifted(dynamodb: EmbeddedDynamoDB, engine: Engine) -> Table:
    """The sample graph with the users' replicas deleted: USERS starts to rebuild."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await create_streamless(client.control, "graph", engine.layout)
        table = Table(client, "graph", layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        gone = [
            table.layout.item_key(item)
            for (pk, _), item in (await scan(table)).items()
            if pk.startswith("USER#u") and item.get("type") == "User.products"
        ]
        assert len(gone) == 2 * USERS
        await table.batch_write(deletes=gone)
    return table


async def test_rebuild_through_throttling_and_slow_answers_writes_every_replica(
    dynamodb: EmbeddedDynamoDB, model_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """30 % of the calls throttled, each 0 to 50 ms late, and one transaction never answered
    (``--dynamodb-timeout 1`` sends it again): every replica is written."""
    engine = engine_for(model_file)
    await drifted(dynamodb, engine)
    faults = Faults(seed=5, latency=0.05, throttle=0.3)
    async with FaultProxy(dynamodb.url, faults) as proxy:
        proxy.inject("TransactWriteItems", "hang")  # never answered: sent again after 1 s
        args = ["rebuild", "--model", model_file, "--dynamodb", proxy.url]
        await asyncio.to_thread(main, [*args, "--dynamodb-timeout", "1"])
        assert proxy.stats["throttle"] > 0 and proxy.stats["hang"] == 1
    printed = capsys.readouterr()
    assert printed.out.count("missing USER#u") == 2 * USERS
    assert f"{2 * USERS} differences, written" in printed.err
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        assert await drift(Table(client, "graph", layout=engine.layout), engine) == {}


class Interrupted(Exception):
    pass


async def test_rebuild_resumes_after_its_checkpoint(
    dynamodb: EmbeddedDynamoDB,
    model_file: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = engine_for(model_file)
    await drifted(dynamodb, engine)
    monkeypatch.setattr(rebuild, "CHUNK", 2)
    save = rebuild.Checkpoint.save

    async def interrupted(self: rebuild.Checkpoint, after: str) -> Any:
        await save(self, after)
        raise Interrupted  # the process stops after its first checkpoint

    monkeypatch.setattr(rebuild.Checkpoint, "save", interrupted)
    args = ["rebuild", "--model", model_file, "--dynamodb", dynamodb.url]
    with pytest.raises(Interrupted):
        await asyncio.to_thread(main, args)
    first = capsys.readouterr().out
    monkeypatch.setattr(rebuild.Checkpoint, "save", save)
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        table = Table(client, "graph", layout=engine.layout)
        assert set(await drift(table, engine)) == {"missing"}  # two of five written
        await asyncio.to_thread(main, [*args, "--resume"])
        printed = capsys.readouterr()
        assert "went on after USER#u1 (--resume)" in printed.err
        assert printed.out.count("missing USER#u") == 2 * (USERS - 2)
        assert first == ""  # interrupted before printing
        assert await drift(table, engine) == {}
        assert not [k for k in await scan(table) if k[0].startswith("~replicas#")]
