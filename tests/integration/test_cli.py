"""The command line against a real moto server over HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB, free_port
from graph.table import Table
from models.demo.generate import demo_items
from server.engine import engine_for
from server.engine.federation import subgraph_sdl
from tests.helpers import DEMO_LAYOUT
from tests.served import alive, children

EDGEWISE = [sys.executable, "-m", "server"]


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*EDGEWISE, *args], capture_output=True, text=True, timeout=120, check=False
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


async def scan(table: Table) -> list[dict[str, object]]:
    response = await table.client.control.scan(dict(TableName=table.name))
    return sorted(
        ({k: next(iter(v.values())) for k, v in raw.items()} for raw in response["Items"]),
        key=lambda item: (str(item["PK"]), str(item["SK"])),
    )


def test_create_table_is_idempotent(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    first = run("create-table", "--dynamodb", dynamodb.url, "--table", "fresh")
    assert "created" in first.stdout
    second = run("create-table", "--dynamodb", dynamodb.url, "--table", "fresh")
    assert "already exists" in second.stdout


async def test_create_table_has_the_contract_layout(table: Table) -> None:
    described = (await table.client.control.describe_table(dict(TableName=table.name)))["Table"]
    assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [(k["AttributeName"], k["KeyType"]) for k in described["KeySchema"]] == [
        ("PK", "HASH"),
        ("SK", "RANGE"),
    ]
    indexes = {
        i["IndexName"]: ([k["AttributeName"] for k in i["KeySchema"]], i["Projection"])
        for i in described["GlobalSecondaryIndexes"]
    }
    assert indexes == {
        "inverted": (["SK", "PK"], {"ProjectionType": "ALL"}),
        "gsi2": (["GSI2PK", "GSI2SK"], {"ProjectionType": "ALL"}),
    }


async def test_seed_demo_loads_exactly_the_demo_data(
    table: Table, dynamodb: EmbeddedDynamoDB
) -> None:
    result = run("seed", "--demo", "--dynamodb", dynamodb.url)
    assert f"wrote {len(demo_items())} items" in result.stdout
    items = await scan(table)
    assert len(items) == len(demo_items())
    nodes = {str(i["PK"]) for i in items if i["PK"] == i["SK"]}
    assert {"USER#alice", "USER#bob", "GROUP#group1", "PRODUCT#prod3", "ORG#amazon"} <= nodes


async def test_seed_generator_is_deterministic_and_sized(
    table: Table, dynamodb: EmbeddedDynamoDB
) -> None:
    args = ["--users", "30", "--groups", "7", "--products", "5", "--memberships", "2"]
    run("create-table", "--dynamodb", dynamodb.url, "--table", "other")
    result = run("seed", *args, "--random-seed", "7", "--dynamodb", dynamodb.url)
    run("seed", *args, "--random-seed", "7", "--dynamodb", dynamodb.url, "--table", "other")
    expected = 30 * (2 + 2) + 7 * (1 + 3) + 5  # user + email claim + memberships, …
    assert f"wrote {expected} items" in result.stdout
    assert "items/s" in result.stderr  # the progress bar
    first = await scan(table)
    other = await scan(Table(table.client, "other", layout=DEMO_LAYOUT))
    assert len(first) == expected
    assert first == other
    memberships = [i for i in first if i.get("edge") == "MEMBER_OF"]
    assert len(memberships) == 60
    assert len({(i["PK"], i["SK"]) for i in memberships}) == 60


def test_commands_refuse_the_embedded_endpoint_with_a_hint() -> None:
    result = run("seed", "--demo", "--dynamodb", "embedded", check=False)
    assert result.returncode != 0
    assert "--dynamodb URL" in result.stderr


def test_a_missing_table_says_how_to_create_it(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    result = run("seed", "--demo", "--dynamodb", dynamodb.url, check=False)
    assert result.returncode != 0
    assert "edgewise create-table" in result.stderr


def test_export_schema_writes_the_committed_sdl(tmp_path: Path) -> None:
    out = tmp_path / "schema.graphql"
    run("export-schema", "--output", str(out))
    assert out.read_text() == (Path(__file__).parents[2] / "schema.graphql").read_text()


def test_export_schema_federation_prints_the_subgraph_sdl() -> None:
    printed = run("export-schema", "--federation").stdout
    assert printed == subgraph_sdl(engine_for("demo").schema().graphql_schema)
    assert printed.startswith('extend schema @link(url: "https://specs.apollo.dev/federation/v2')
    assert 'type User implements Node @key(fields: "id") {' in printed


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_serve_embedded_answers_and_leaves_no_orphan(stop: signal.Signals) -> None:
    port = free_port()
    env = {**os.environ, "EDGEWISE_DYNAMODB": "embedded"}
    process = subprocess.Popen(
        [*EDGEWISE, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/graphql",
                    json={"query": '{ user(id: "alice") { products { product { id } } } }'},
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "edgewise serve did not start in 60s"
                time.sleep(0.2)
        products = response.json()["data"]["user"]["products"]
        assert [p["product"]["id"] for p in products] == [
            "PRODUCT#prod1",
            "PRODUCT#prod2",
            "PRODUCT#prod3",
        ]
        [moto] = children(process.pid)
        process.send_signal(stop)
        process.wait(timeout=20)
        deadline = time.monotonic() + 10
        while alive(moto) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(moto), "the embedded moto server outlived edgewise serve"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def test_embedded_without_moto_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import graph.dynamo.embedded

    monkeypatch.setattr(graph.dynamo.embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(graph.dynamo.embedded.MissingEmbedded, match=r"edgewise\[embedded\]"):
        EmbeddedDynamoDB().start()


async def test_create_table_seed_dump_and_load_a_model(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    dynamodb.reset()
    url = ["--dynamodb", dynamodb.url, "--model", "order-entry"]
    assert "table 'order-entry' created" in run("create-table", *url).stdout
    written = run("seed", *url).stdout
    assert written == "wrote 64 items to table 'order-entry'\n"
    dumped = tmp_path / "dump.jsonl"
    run("dump", str(dumped), *url)
    assert len(dumped.read_text().splitlines()) == 64
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"pk": {"S": "order#1"}, "sk": {"S": "order#1"}}\n')
    refused = run("load", str(wrong), *url, check=False)
    assert refused.returncode == 1 and "PK is missing" in refused.stderr
    async with open_client(Endpoint(dynamodb.url)) as client:
        described = (await client.control.describe_table(dict(TableName="order-entry")))["Table"]
    indexes = {
        i["IndexName"]: [k["AttributeName"] for k in i["KeySchema"]]
        for i in described["GlobalSecondaryIndexes"]
    }
    assert indexes == {"GSI1": ["GSI1PK", "GSI1SK"], "GSI2": ["GSI2PK", "GSI2SK"]}


def test_serve_a_shipped_model_with_its_sample_data() -> None:
    port = free_port()
    process = subprocess.Popen(
        [*EDGEWISE, "serve", "--port", str(port), "--model", "order-entry"],
        env={**os.environ, "EDGEWISE_DYNAMODB": "embedded"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    query = '{ orders(status: OPEN) { totalCount } order(id: "o1") { items { totalCount } } }'
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                response = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "edgewise serve did not start in 60s"
                time.sleep(0.2)
        assert response.json()["data"] == {
            "orders": {"totalCount": 5},
            "order": {"items": {"totalCount": 2}},
        }
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def test_seed_generates_only_with_the_generator_the_model_names(
    dynamodb: EmbeddedDynamoDB,
) -> None:
    result = run(
        "seed", "--model", "orders", "--users", "3", "--dynamodb", dynamodb.url, check=False
    )
    assert result.returncode != 0
    assert "orders names none (`generator: package.module:function` in the model file)" in (
        result.stderr
    )
