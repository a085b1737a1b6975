"""Bulk load and dump (graph.bulk, `edgewise load/dump`, `serve --data-file`) against moto."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from boto3.dynamodb.types import Binary

from graph.bulk import dump, load, validate
from graph.dynamo.client import create_table
from graph.dynamo.embedded import EmbeddedDynamoDB, free_port
from graph.errors import BadUserInput
from graph.table import Item, Table, from_dynamo
from models.demo.generate import demo_items
from tests.helpers import DEMO_LAYOUT

EDGEWISE = [sys.executable, "-m", "server"]

EVERY_TYPE: Item = {
    "PK": "USER#types",
    "SK": "USER#types",
    "s": "héllo ✓",
    "empty": "",
    "tenth": Decimal("0.1"),
    "digits38": Decimal("12345678901234567890123456789012345678"),
    "negative": Decimal("-42"),
    "exponent": Decimal("1.5E+100"),
    "tiny": Decimal("-2.5E-20"),
    "yes": True,
    "no": False,
    "nothing": None,
    "list": [Decimal("1"), "two", [None], {"k": Binary(b"\x00")}],
    "map": {"a": {"b": Decimal("3.14")}, "c": []},
    "ss": {"b", "a", "c"},
    "ns": {Decimal("3"), Decimal("-1.5"), Decimal("10")},
    "bin": Binary(b"\x00\xff bytes"),
    "bs": {Binary(b"\x01"), Binary(b"\x00\x02")},
}
ITEMS = [EVERY_TYPE, *demo_items()]


def line(pk: str, sk: str | None = None, /, **extra: Any) -> str:
    item = {"PK": {"S": pk}, "SK": {"S": sk or pk}, **extra}
    return json.dumps(item, separators=(",", ":"))


def by_key(items: list[Item]) -> list[Item]:
    return sorted(items, key=lambda item: (item["PK"], item["SK"]))


async def scan(table: Table) -> list[Item]:
    items: list[Item] = []
    params: dict[str, Any] = {"TableName": table.name}
    while True:
        response = await table.client.control.scan(params)
        items += [from_dynamo(raw) for raw in response["Items"]]
        if "LastEvaluatedKey" not in response:
            return by_key(items)
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


async def test_dump_load_dump_round_trips_every_type_exactly(table: Table, tmp_path: Path) -> None:
    await table.batch_write(ITEMS)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert await dump(table, first) == len(ITEMS)
    await create_table(table.client.control, "copy", layout=DEMO_LAYOUT)
    copy = Table(table.client, "copy", layout=DEMO_LAYOUT)
    assert await load(copy, first) == len(ITEMS)
    assert await dump(copy, second, segments=3) == len(ITEMS)

    assert sorted(first.read_text().splitlines()) == sorted(second.read_text().splitlines())
    assert await scan(copy) == by_key(ITEMS)
    [types] = [json.loads(x) for x in first.read_text().splitlines() if "USER#types" in x]
    assert types["digits38"] == {"N": "12345678901234567890123456789012345678"}
    assert types["tenth"] == {"N": "0.1"}
    # as the engine answers it: moto as written, DynamoDB in plain digits (101 of them)
    assert Decimal(types["exponent"]["N"]) == Decimal("1.5E+100")
    assert types["ss"] == {"SS": ["a", "b", "c"]}  # set members sorted
    assert types["bin"] == {"B": "AP8gYnl0ZXM="}
    assert types["nothing"] == {"NULL": True}
    assert sorted(os.listdir(tmp_path)) == ["first.jsonl", "second.jsonl"]  # no temp files


async def test_load_reads_a_number_as_dynamodb_dumps_it_in_plain_digits(
    table: Table, tmp_path: Path
) -> None:
    """DynamoDB answers 1.5E+100 as 101 plain digits, so a dump holds them; the trailing zeros
    are not significant (38 digits is DynamoDB's precision), so the file loads, exactly."""
    path = tmp_path / "items.jsonl"
    plain = "15" + "0" * 99
    path.write_text(line("USER#n", n={"N": plain}, ns={"NS": [plain, "2"]}) + "\n")
    assert await load(table, path) == 1
    [item] = await scan(table)
    assert item["n"] == Decimal("1.5E+100") and item["ns"] == {Decimal("1.5E+100"), Decimal(2)}


GOOD = line("USER#a")
OTHER = line("USER#z")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["PK"]', "not a JSON object"),
        ('{"PK":{"S":"USER#b"}}', "SK is missing"),
        ('{"PK":{"N":"1"},"SK":{"S":"USER#b"}}', 'PK must be a string attribute {"S": ...}'),
        (line("USER#b", x={"Q": "1"}), 'x: unknown type descriptor "Q"'),
        (line("USER#b", n={"N": "1.2.3"}), 'n: "1.2.3" is not a number string'),
        (line("USER#b", n={"N": "1" * 39}), "does not fit DynamoDB's numbers"),
        (line("USER#b", l={"L": [{"S": 1}]}), "l[0]: 1 is not a valid S value"),
        (line("USER#b", b={"B": "not base64!"}), "is not base64"),
        (line("USER#b", b={"B": "\u00e9"}), "is not base64"),  # not ASCII
        (line("USER#b", ss={"SS": []}), "[] is not a valid SS value"),
        (line("USER#b", x={"S": "a", "N": "1"}), "x must be an object with one type descriptor"),
        (GOOD, "duplicate key PK='USER#a' SK='USER#a' (also line 1)"),
    ],
)
async def test_a_bad_line_is_named_and_nothing_is_written(
    table: Table, tmp_path: Path, bad: str, message: str
) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n{OTHER}\n")  # the bad line is line 3
    with pytest.raises(BadUserInput) as raised:
        await load(table, path)
    assert str(raised.value).startswith("line 3: ")
    assert message in str(raised.value)
    assert await scan(table) == []


def test_validate_counts_items_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(f"{GOOD}\n\n   \n{OTHER}\n{line('USER#a', 'GROUP#g')}")
    assert validate(path, DEMO_LAYOUT) == 3


async def test_load_sends_at_most_25_items_per_batch_write(table: Table, tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(line(f"USER#u{i}") + "\n" for i in range(260)))
    sizes: list[int] = []

    class Recording:  # the table's client (lean or botocore), counting each batch's items
        def __getattr__(self, name: str) -> Any:
            return getattr(table.client, name)

        async def batch_write_item(self, params: dict[str, Any]) -> dict[str, Any]:
            sizes.append(len(params["RequestItems"][table.name]))
            response: dict[str, Any] = await table.client.batch_write_item(params)
            return response

    fresh = Table(Recording(), table.name, layout=DEMO_LAYOUT)
    assert await load(fresh, path, progress=sizes.append) == 260
    calls = fresh.trace.operations["BatchWriteItem"]
    assert calls >= 11
    batches = sizes[:-1]  # the progress callback appended the one chunk's size last
    assert sizes[-1] == 260 and len(batches) == calls
    assert max(batches) <= 25 and sum(batches) == 260
    assert len(await scan(table)) == 260


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EDGEWISE, *args], capture_output=True, text=True, timeout=60, check=False
    )


async def test_cli_dump_and_load_with_progress(
    demo: Table, dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    path = tmp_path / "demo.jsonl"
    dumped = run("dump", str(path), "--dynamodb", dynamodb.url)
    assert dumped.returncode == 0, dumped.stderr
    count = len(demo_items())
    assert f"dumped {count} items" in dumped.stdout
    assert "items" in dumped.stderr  # the progress bar
    await create_table(demo.client.control, "copy", layout=DEMO_LAYOUT)
    loaded = run("load", str(path), "--dynamodb", dynamodb.url, "--table", "copy")
    assert loaded.returncode == 0, loaded.stderr
    assert f"loaded {count} items" in loaded.stdout
    assert f"{count}/{count}" in loaded.stderr  # the bar knows the total
    assert await scan(Table(demo.client, "copy", layout=DEMO_LAYOUT)) == await scan(demo)


async def test_cli_load_of_a_bad_file_names_the_line(
    table: Table, dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\n{OTHER}\n{{oops\n")
    result = run("load", str(path), "--dynamodb", dynamodb.url)
    assert result.returncode != 0
    assert "edgewise load: line 3: not valid JSON" in result.stderr
    assert await scan(table) == []


def test_data_file_needs_the_embedded_dynamodb(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> None:
    result = run("serve", "--dynamodb", dynamodb.url, "--data-file", str(tmp_path / "x.jsonl"))
    assert result.returncode != 0
    assert "--data-file only applies to the embedded DynamoDB" in result.stderr


@contextmanager
def serving(port: int, data_file: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`edgewise serve --data-file` on ``port`` until it answers; killed if still running."""
    process = subprocess.Popen(
        [*EDGEWISE, "serve", "--port", str(port), "--data-file", str(data_file)],
        env={**os.environ, "EDGEWISE_DYNAMODB": "embedded"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "edgewise serve did not start in 60s"
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def user_name(port: int, user_id: str) -> object:
    query = f'{{ user(id: "{user_id}") {{ name }} }}'
    response = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query})
    user = response.json()["data"]["user"]
    return user and user["name"]


def test_serve_data_file_survives_a_restart(tmp_path: Path) -> None:
    data_file = tmp_path / "graph.jsonl"
    port = free_port()
    with serving(port, data_file) as process:  # no file yet: the demo data
        assert user_name(port, "alice") == "Alice"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)  # uvicorn re-raises SIGTERM after its graceful shutdown
    lines = data_file.read_text().splitlines()
    assert len(lines) == len(demo_items())
    assert any('"USER#alice"' in x for x in lines)
    assert os.listdir(tmp_path) == ["graph.jsonl"]  # written atomically: no temp file left

    zed = {"type": {"S": "USER"}, "name": {"S": "Zed"}, "version": {"N": "1"}}
    zed |= {"createdAt": {"S": "2024-02-01T00:00:00.000Z"}}
    zed |= {"updatedAt": {"S": "2024-02-01T00:00:00.000Z"}}
    with data_file.open("a") as out:
        out.write(line("USER#zed", **zed) + "\n")
    with serving(port, data_file) as process:  # the file, not the demo data
        assert user_name(port, "zed") == "Zed"
        assert user_name(port, "alice") == "Alice"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)  # uvicorn re-raises SIGTERM after its graceful shutdown
    assert len(data_file.read_text().splitlines()) == len(demo_items()) + 1
    assert os.listdir(tmp_path) == ["graph.jsonl"]
