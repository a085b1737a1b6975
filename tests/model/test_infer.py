"""`edgewise infer`: each shipped model's data loaded into moto, inferred back, and compared with
the shipped model by structure (key templates, parents, edges, index writes, reverse edges and
access patterns; names may differ where the data cannot tell). Plus the hard cases."""

from __future__ import annotations

import asyncio
import random
import re
import zlib
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.sample import describe, sample
from graph.table import Layout, RetryPolicy, Table, to_dynamo
from model import Model, load_model, parse_model
from model.infer import InferError, TableInfo, infer, table_info
from server.cli.main import main
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.faults import FaultProxy
from tests.helpers import DEMO_LAYOUT, gql


def _norm(text: str | None) -> str | None:
    """A template with its placeholder names dropped (format specs kept)."""
    if text is None:
        return None
    return re.sub(r"\{\w+(:[^}]*)?\}", lambda m: "{" + (m.group(1) or "") + "}", text)


def structure(model: Model, skip: frozenset[str] = frozenset()) -> dict[str, set[Any]]:
    """What the data decides, by key template rather than by name."""
    types = {n: t for n, t in model.types.items() if n not in skip}

    def key(name: str) -> tuple[str | None, str | None]:
        t = model.types[name]
        return _norm(t.pk.text), _norm(t.sk.text)

    out: dict[str, set[Any]] = {"types": set(), "edges": set(), "indexes": set()}
    out |= {"reverse": set(), "queries": set(), "unique": set()}
    for name, t in types.items():
        out["types"].add((key(name), key(t.parent.type) if t.parent else None))
        for w in t.indexes:
            out["indexes"].add(
                (key(name), w.index.name, _norm(w.pk.text), _norm(w.sk and w.sk.text), w.shards)
            )
        for f in t.fields.values():
            if f.unique is not None:
                u = f.unique
                out["unique"].add(
                    (key(name), _norm(u.key.text), u.case_insensitive, u.owner, u.type_value)
                )
    for e in model.edges.values():
        if e.source in skip or e.target in skip:
            continue
        ends = (key(e.source), key(e.target))
        out["edges"].add(ends)
        for w in e.indexes:
            out["indexes"].add(
                (ends, w.index.name, _norm(w.pk.text), _norm(w.sk and w.sk.text), w.shards)
            )
        if e.reverse is not None and e.reverse.index is not None:
            out["reverse"].add((ends, e.reverse.index.name))
    for q in model.queries.values():
        if q.type in skip:
            continue
        on = key(q.on) if q.on else None
        sort = _norm(q.sort.text) if q.sort else None
        out["queries"].add((on, key(q.type), q.index.name, _norm(q.partition.text), sort))
    return out


def _load(url: str, items: list[dict[str, Any]], name: str, layout: Layout) -> None:
    async def run() -> None:
        async with open_client(Endpoint(url)) as client:
            await create_table(client.control, name, layout=layout)
            if items:
                await Table(client, name, layout=layout).batch_write(items)

    asyncio.run(run())


def _shipped(dynamodb: EmbeddedDynamoDB, name: str) -> str:
    """Load a shipped model's sample data into a fresh moto; returns its table name."""
    dynamodb.reset()
    engine = engine_for(name)
    items = engine.sample_items(Table(None, engine.table_name, layout=engine.layout))
    _load(dynamodb.url, items, engine.table_name, engine.layout)
    return engine.table_name


def _infer(
    dynamodb: EmbeddedDynamoDB,
    table: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
) -> tuple[Model, str, str]:
    output = tmp_path / "inferred.yaml"
    main(["infer", "--dynamodb", dynamodb.url, "--table", table, "--output", str(output), *extra])
    err = capsys.readouterr().err
    main(["check-model", str(output)])  # passes as is
    assert "access patterns" in capsys.readouterr().out
    return load_model(str(output)), output.read_text(), err


@pytest.mark.parametrize("name", ["orders", "order-entry"])
def test_infer_round_trips_a_shipped_model(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    table = _shipped(dynamodb, name)
    inferred, text, err = _infer(dynamodb, table, tmp_path, capsys)
    assert structure(inferred) == structure(load_model(name))
    assert re.search(
        r"sampled \d+ items \(the whole table\), [\d.]+ read capacity units consumed over "
        r"16 scan segments",
        err,
    )
    assert "# guess:" in text and "wrote" in err


def test_infer_round_trips_the_demo(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _shipped(dynamodb, "demo")
    inferred, _, _ = _infer(dynamodb, table, tmp_path, capsys)
    # the demo data has no tickets and no offices, so neither they nor OPENED can be seen
    unseen = frozenset({"Ticket", "Office"})
    assert structure(inferred) == structure(load_model("demo"), unseen)
    assert (inferred.type_attribute, inferred.label_attribute) == ("type", "edge")
    assert inferred.timestamps and inferred.version_attribute == "version"
    counted = {e.label for e in inferred.edges.values() if e.count == "counter"}
    assert counted == {"MEMBER_OF", "SUBSCRIBES_TO", "HAS_MEMBER"}


async def test_an_inferred_model_serves_the_same_queries(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    dynamodb.reset()
    engine = engine_for("order-entry")
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client.control, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        got = await sample(table, 1000)
        draft = infer(table_info(await describe(table)), got.items, got.complete)
        path = tmp_path / "draft.yaml"
        path.write_text(draft.text)
        app = create_app(Settings(model=str(path)), table=table)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://edgewise"
        ) as http:
            body = await gql(
                http,
                '{ order(id: "ORDER#o1") { total customer { name } orderItems { edges { node '
                "{ productId product { name } } } } } ordersByStatus(status: OPEN, "
                'from: "2026-03-01") { edges { node { id } } } }',
            )
    assert "errors" not in body, body
    order = body["data"]["order"]
    assert (order["total"], order["customer"]["name"]) == (35.0, "Acme Corp")
    products = [e["node"]["product"]["name"] for e in order["orderItems"]["edges"]]
    assert sorted(products) == ["Gadget", "Widget"]
    opened = [e["node"]["id"] for e in body["data"]["ordersByStatus"]["edges"]]
    assert opened == ["ORDER#o7", "ORDER#o9", "ORDER#o5"]  # newest first, across 15 shards


async def test_sampling_retries_throttling_and_only_reads(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    engine = engine_for("orders")
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client.control, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
    async with FaultProxy(dynamodb.url) as proxy:
        proxy.inject("Scan", "throttle", times=3)
        async with open_client(Endpoint(proxy.url), client_config()) as client:
            table = Table(
                client, engine.table_name, RetryPolicy(base_delay=0.01), layout=DEMO_LAYOUT
            )
            got = await sample(table, 1000)
    assert (len(got.items), got.complete) == (10, True)
    assert proxy.stats["throttle:Scan"] == 3
    operations = {k.split(":")[1] for k in proxy.stats if k.startswith("calls:")}
    assert operations == {"Scan"}  # nothing but reads


def load_model_text(text: str) -> Model:
    return parse_model(text, "<draft>", "draft")


INFO = TableInfo("t", "PK", "SK", {"PK": "S", "SK": "S"}, {})


def _items(*rows: dict[str, Any]) -> list[dict[str, Any]]:
    return [to_dynamo(r) for r in rows]


def test_an_empty_table_is_a_clear_error(
    dynamodb: EmbeddedDynamoDB, capsys: pytest.CaptureFixture[str]
) -> None:
    dynamodb.reset()
    _load(dynamodb.url, [], "empty", Layout("PK", "SK"))
    with pytest.raises(SystemExit) as exit_:
        main(["infer", "--dynamodb", dynamodb.url, "--table", "empty"])
    assert "table 'empty' is empty" in str(exit_.value.code)
    assert capsys.readouterr().out == ""


def test_a_missing_table_is_a_clear_error(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    with pytest.raises(SystemExit) as exit_:
        main(["infer", "--dynamodb", dynamodb.url, "--table", "nope"])
    assert "no such table at this endpoint" in str(exit_.value.code)


def test_the_sample_is_bounded_and_says_so(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _shipped(dynamodb, "order-entry")
    _, text, err = _infer(dynamodb, table, tmp_path, capsys, "--sample", "20")
    assert "sampled 20 items (a sample)" in err
    assert "sample more with --sample N" in text


def test_items_no_rule_explains_are_reported_not_fatal() -> None:
    rows = _items(
        {"PK": "USER#a", "SK": "USER#a", "name": "A"},
        {"PK": "USER#b", "SK": "USER#b", "name": "B"},
        {"PK": "1234", "SK": "5678", "blob": "x"},
        {"PK": "USER#a", "SK": "USER#b"},  # a same-type edge: no attribute tells it apart
    )
    draft = infer(INFO, rows, complete=True)
    assert any("an edge between two USER#… items" in n for n in draft.notes)
    assert any("no key prefix" in n and "'1234'" in n for n in draft.notes)
    assert "# note: 1 item left out (e.g. PK='1234', SK='5678'): no key prefix" in draft.text
    assert list(load_model_text(draft.text).types) == ["User"]


def test_plain_data_in_a_sort_key() -> None:
    team = {"PK": "TEAM#t1", "SK": "TEAM#t1", "kind": "Team", "name": "Red"}
    members = [
        {"PK": "TEAM#t1", "SK": name, "kind": "Member", "member": name, "age": age}
        for name, age in (("Ana Lima", 3), ("Bo Li", Decimal("4.5")))
    ]
    typed = load_model_text(infer(INFO, _items(team, *members)).text)
    assert typed.type_attribute == "kind"
    assert (typed.types["Member"].pk.text, typed.types["Member"].sk.text) == (
        "TEAM#{teamId}",
        "{member}",
    )
    assert str(typed.types["Member"].fields["age"].type) == "Float!"
    # without a type attribute nothing tells a member from the team: reported, not guessed
    untyped = infer(
        INFO, _items(*({k: v for k, v in r.items() if k != "kind"} for r in [team, *members]))
    )
    assert any("a sort key with no literal prefix" in n for n in untyped.notes)
    assert list(load_model_text(untyped.text).types) == ["Team"]


def test_a_sample_too_small_to_see_a_relation_says_so() -> None:
    rows = _items(
        {"PK": "ORDER#o1", "SK": "ORDER#o1", "customerId": "c1"},
        {"PK": "ORDER#o2", "SK": "ORDER#o2", "customerId": "c2"},
        {"PK": "CUST#c1", "SK": "CUST#c1", "name": "Acme"},
        {"PK": "ORDER#o1", "SK": "LINE#1", "n": 1},
        {"PK": "REP#r1", "SK": "SALES#2026", "total": 3},
    )
    text = infer(INFO, rows).text
    line = next(x for x in text.splitlines() if x.strip().startswith("customerId:"))
    assert "only 1 of 2 values are ids of sampled Cust items" in line
    assert "the sample may be too small to see this reference" in line
    assert 'no sampled item has pk = sk = "REP#…": if some do, the sample' in text
    assert "one item only: a thin guess" in text


def test_numeric_parts_of_sort_keys_and_composite_keys() -> None:
    rows = _items(
        *(
            {"PK": "A#w", "SK": f"B#{year}#{i}", "year": year, "id": i, "title": "t"}
            for i, year in (("x", 1925), ("y", 1927), ("z", 1931))
        ),
        {"PK": "A#w", "SK": "A#w", "name": "Woolf"},
        *(
            {
                "PK": "ORG#o",
                "SK": f"OFFICE#US#{state}#{city}#{i}",
                "state": state,
                "city": city,
                "open": True,
                "tags": {"a", "b"},
                "meta": {"k": 1},
            }
            for i, state, city in (("1", "WA", "Seattle"), ("2", "NY", "Albany"))
        ),
        {"PK": "ORG#o", "SK": "ORG#o", "plan": "pro"},
    )
    model = load_model_text(infer(INFO, rows, complete=True).text)
    books = model.types["B"]
    assert books.sk.text == "B#{year}#{id}" and str(books.fields["year"].type) == "Int!"
    offices = model.types["Office"]
    assert offices.sk.text == "OFFICE#US#{state}#{city}#{id}"
    assert offices.parent is not None and offices.parent.type == "Org"
    types = {n: str(f.type) for n, f in offices.fields.items()}
    assert (types["open"], types["tags"], types["meta"]) == ("Boolean!", "[String!]!", "Meta!")
    assert model.objects["Meta"].stored  # maps of one shape: a stored object


@pytest.mark.parametrize("kind", ["N", "B"])
def test_number_and_binary_keys_are_bare_placeholders(kind: str) -> None:
    info = TableInfo("things", "PK", "SK", {"PK": "S", "SK": kind}, {})
    value = "12" if kind == "N" else "AQc="
    text = infer(info, [{"PK": {"S": "A#1"}, "SK": {kind: value}, "n": {"N": "5"}}]).text
    assert f"  sortKey: {{name: SK, type: {kind}}}\n" in text
    assert 'key: {pk: "A#{aId}", sk: "{sk}"}' in text
    graphql = "Int!" if kind == "N" else "String!"
    assert f"sk: {{type: {graphql}, attribute: SK}}" in text
    model = load_model_text(text)
    assert model.key_types == {"SK": kind}


def _random_table(seed: int) -> list[dict[str, Any]]:
    """Items of a random adjacency list: nodes, children, edges, index keys, mixed attributes."""
    r = random.Random(seed)
    prefixes = ["USER", "ORDER", "item", "ORG", "P"]
    ids = [r.choice("abcdefgh") + str(r.randrange(20)) for _ in range(8)]
    typed = r.random() < 0.5
    rows = []
    for _ in range(r.randrange(1, 30)):
        p1, p2 = r.choice(prefixes), r.choice([*prefixes, "JH", "LINE"])
        i1, i2 = r.choice(ids), r.choice(ids)
        shape = r.randrange(4)
        sk = [f"{p1}#{i1}", f"{p2}#2026-01-0{r.randrange(1, 9)}#{i2}", f"{p2}#{i2}", i2][shape]
        item: dict[str, Any] = {"PK": f"{p1}#{i1}", "SK": sk}
        if typed:
            item["kind"] = f"{p1}{shape}{p2 if shape else ''}".title()
        status = r.choice(["OPEN", "CLOSED"])
        for name, value in (
            ("status", status),
            ("refId", r.choice(ids)),
            ("n", r.choice([1, Decimal("1.5"), True, "x", {"a"}, [1], b"b"])),
            ("GSI1PK", r.choice([f"S#{status}#{zlib.crc32(i1.encode()) % 5}", f"R#{i2}", "C"])),
            ("GSI1SK", r.choice([f"{i1}", f"{r.randrange(999):06d}#{i1}", f"{p1}#{i1}"])),
        ):
            if r.random() < 0.6:
                item[name] = value
        rows.append(to_dynamo(item))
    return rows


def _mixed_table(seed: int) -> list[dict[str, Any]]:
    """A random table whose keys mix separators (`ORG-a1`, `ORG_2026-01-08#a1`) and hold ids
    with spaces."""
    r = random.Random(seed)

    def mixed(value: dict[str, Any]) -> dict[str, Any]:
        if "S" not in value:
            return value
        text = str(value["S"])
        if r.random() < 0.5:
            text = text.replace("#", r.choice("-_|#"), 1)
        return {"S": text.replace("a", "a b") if r.random() < 0.2 else text}

    return [{k: mixed(v) for k, v in item.items()} for item in _random_table(seed)]


@pytest.mark.parametrize("table", [_random_table, _mixed_table])
@pytest.mark.parametrize("seed", range(40))
def test_any_sample_gives_a_valid_draft_or_a_clear_error(
    seed: int, table: Callable[[int], list[dict[str, Any]]]
) -> None:
    indexes = {"GSI1": ("GSI1PK", "GSI1SK"), "inv": ("SK", "PK"), "bySk": ("SK", "GSI1SK")}
    info = TableInfo("t", "PK", "SK", {}, indexes)
    try:
        draft = infer(info, table(seed))
    except InferError as exc:
        assert "fits a rule" in str(exc)  # never "does not pass check-model"
    else:
        load_model_text(draft.text)


@pytest.mark.parametrize("attribute", ["_type", "__typename", "entityType", "type"])
def test_a_libraries_type_attribute_is_preferred_and_case_of_prefixes_kept(attribute: str) -> None:
    rows = _items(
        *(
            {"PK": f"Customer#{c}", "SK": f"Customer#{c}", attribute: "customer", "tier": "a"}
            for c in ("c1", "c2")
        ),
        *(
            {"PK": f"Customer#{c}", "SK": f"order#{o}", attribute: "order", "tier": "b"}
            for c, o in (("c1", "o1"), ("c2", "o2"))
        ),
    )
    model = load_model_text(infer(INFO, rows, complete=True).text)
    assert model.type_attribute == attribute  # not `tier`, which fits as well
    assert set(model.types) == {"Customer", "Order"}
    order = model.types["Order"]
    assert (order.pk.text, order.sk.text) == ("Customer#{customerId}", "order#{id}")
    assert order.parent is not None and order.parent.type == "Customer"


def test_keys_of_one_table_with_different_separators() -> None:
    rows = _items(
        *({"PK": f"ORDER#o{i}", "SK": f"ORDER#o{i}", "total": i} for i in range(3)),
        *({"PK": f"Invoice-9255{i}", "SK": f"Invoice-9255{i}", "paid": True} for i in range(3)),
        *({"PK": f"ORDER#o{i}", "SK": f"Invoice-9255{i}"} for i in range(3)),
    )
    model = load_model_text(infer(INFO, rows, complete=True).text)
    assert {n: t.pk.text for n, t in model.types.items()} == {
        "Order": "ORDER#{id}",
        "Invoice": "Invoice-{id}",
    }
    (edge,) = model.edges.values()
    assert (edge.label, edge.source, edge.target) == ("ORDER_TO_INVOICE", "Order", "Invoice")


def test_guesses_check_model_refuses_are_left_out_not_fatal() -> None:
    # two own-item guesses of one partition prefix whose sort keys overlap
    rows = _items(
        {"PK": "ORG-e8", "SK": "ORG_2026-01-08#e8", "n": 1},
        {"PK": "ORG-a7", "SK": "ORG_a7", "n": 2},
        {"PK": "USER#u1", "SK": "USER#u1", "name": "U"},
    )
    draft = infer(INFO, rows, complete=True)
    assert any("check-model refused its guess (items of" in n for n in draft.notes)
    assert "User" in load_model_text(draft.text).types


def test_sort_keys_with_no_word_say_precisely_why_they_are_left_out() -> None:
    """AWS's GSI-overloading example with several quarters (`2017-Q1`, `2017-Q2`): no literal
    sort key, and a template beginning with a placeholder overlaps the partition's other
    items."""
    rows = []
    for n in (1, 2, 3):
        rows += [
            {"PK": f"HR-EMPLOYEE{n}", "SK": f"EMPLOYEE{n}", "Data": f"Name {n}"},
            {"PK": f"HR-EMPLOYEE{n}", "SK": f"2017-Q{n}", "Data": f"{5000 * n}"},
        ]
    draft = infer(INFO, _items(*rows), complete=True)
    assert list(load_model_text(draft.text).types) == ["Employee"]
    (note,) = [n for n in draft.notes if "2017-Q" in n]
    assert "3 items left out (e.g. PK='HR-EMPLOYEE1', SK='2017-Q1')" in note
    assert "their template would be '{year}-Q{quarter}', which begins with a placeholder" in note
    assert "('EMPLOYEE1-Q1' fits both it and the EMPLOYEE… keys)" in note


def test_what_an_index_did_not_show_is_said_on_its_type() -> None:
    """Notes found while templating a type's index keys (a sparse index) were added after the
    type's comments were printed, and lost; they are printed with its index writes."""
    rows = [
        {"PK": f"USER#u{n}", "SK": f"USER#u{n}"}
        | ({"GSI1PK": "USERS", "GSI1SK": f"NAME#{n}x"} if n else {})
        for n in range(3)
    ]
    info = TableInfo("t", "PK", "SK", {"PK": "S", "SK": "S"}, {"GSI1": ("GSI1PK", "GSI1SK")})
    text = infer(info, _items(*rows), complete=True).text
    assert "    # GSI1: GSI1PK on 2 of 3 items (a sparse index?); not declared" in text
