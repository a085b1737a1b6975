"""A fan-out to 150 members under latency and throttling (issue 34): the pending protocol at a
real transaction's size (100 actions). `make test` runs it on DynamoDB Local only (moto copies
the whole table for each action of a transaction, so there it takes seconds a transaction;
``python -m bench.fig_contention`` times it on moto)."""

from __future__ import annotations

from pathlib import Path

import httpx
import yaml

from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import MAX_ACTIONS
from graph.writes import background
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.engine.test_contention import contended, loaded
from tests.engine.test_replicas import DEMO, drift, leftovers
from tests.faults import Faults

FAN = 150  # members of group fan: two transactions of marks, four of replicas


async def test_a_fan_out_to_150_members_completes_under_latency(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    """subscribeGroup of a group of 150 members, every DynamoDB call 0 to 50 ms late and one in
    ten throttled: it answers its edge once the change committed, with no error; the replicas
    are then all written (the rest of the pending protocol, in the background), and read right
    meanwhile."""
    data = yaml.safe_load((DEMO / "sample.yaml").read_text())
    data["nodes"] += [{"type": "Group", "id": "fan", "name": "Fan"}]
    data["nodes"] += [{"type": "User", "id": f"f{i}", "name": f"F{i}"} for i in range(FAN)]
    data["edges"] += [
        {"label": "MEMBER_OF", "from": f"f{i}", "to": "fan", "role": "MEMBER"} for i in range(FAN)
    ]
    (tmp_path / "model.yaml").write_text(contended())
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(data))
    model = str(tmp_path / "model.yaml")
    engine = engine_for(model)
    dynamodb.reset()
    faults = Faults(seed=34, latency=0.05, throttle=0.1)
    async with loaded(dynamodb.url, engine, faults, max_actions=MAX_ACTIONS) as (table, faulty):
        app = create_app(Settings(model=model), table=faulty)
        subscribe = (
            'mutation { subscribeGroup(groupId: "fan", productId: "prod3", plan: "p") { cursor } }'
        )
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
        ) as http:
            body = (await http.post("/graphql", json={"query": subscribe})).json()
            assert "errors" not in body, body
            read = '{ user(id: "f149") { hasAccess(productId: "prod3") } }'
            assert (await http.post("/graphql", json={"query": read})).json()["data"] == {
                "user": {"hasAccess": True}
            }
        assert await background.settled(120)
        assert await drift(table, engine) == {}
        assert await leftovers(table) == []
