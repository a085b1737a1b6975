"""Access patterns over tables Edgewise did not write: items put straight into moto with boto3
in the layouts teams have, then served in-process from a model file written here.

- An ElectroDB-style collection: one partition (`$app#office_o1`) holding an office, its
  employees and its desks; `types: [Office, Employee]` + `union: Workplace` answers the first two
  in one Query, as a root field and with `on:`, and never answers nor counts the desks.
- A tasks table with a status index (`$app#status_open` / `$task_1#project_p1#employee_e1`):
  `sort.arguments` narrow by project, then employee (coarse to fine), and `where` filters on
  stored points with `$maxPoints`; pages and totals count only what passes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import groupby
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.expressions import Expr
from graph.reads import Branch, Listing, PageKey, Reads
from graph.table import Layout, Table
from model import ModelError, parse_model
from model.values import Comparison, Where
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import LEAN, both_ways, gql

Serve = Callable[[str, list[dict[str, Any]]], Awaitable[httpx.AsyncClient]]

OFFICES = """\
table:
  name: electro
  partitionKey: pk
  sortKey: sk
  typeAttribute: __edb_e__
types:
  Office:
    key: {pk: "$app#office_{id}", sk: "$workplace#office_{id}"}
    typeValue: office
    fields: {name: String!, city: String}
  Employee:
    key: {pk: "$app#office_{office}", sk: "$workplace#employee_{id}"}
    typeValue: employee
    fields: {name: String!, team: String}
  Desk:
    key: {pk: "$app#office_{office}", sk: "$desk_1#desk_{id}"}
    typeValue: desk
    fields: {floor: Int}
queries:
  workplaces:
    types: [Office, Employee]
    union: Workplace
    partition: "$app#office_{office}"
  staff:
    on: Office
    types: [Office, Employee]
    union: Workplace
    partition: "$app#office_{id}"
    order: desc
"""


def _electro(entity: str, pk: str, sk: str, **attributes: Any) -> dict[str, Any]:
    """An item as ElectroDB writes it: its entity and version beside the attributes."""
    return {"pk": pk, "sk": sk, "__edb_e__": entity, "__edb_v__": "1", **attributes}


OFFICE_ITEMS = [
    _electro("office", "$app#office_o1", "$workplace#office_o1", name="Gotham HQ", city="Gotham"),
    *(
        _electro(
            "employee",
            "$app#office_o1",
            f"$workplace#employee_e{n}",
            name=f"Employee {n}",
            team="red" if n % 2 else "blue",
            office="o1",
        )
        for n in range(1, 6)
    ),
    *(  # desks sort between the office and its employees: read past, never answered
        _electro("desk", "$app#office_o1", f"$desk_1#desk_d{n}", floor=n, office="o1")
        for n in range(1, 4)
    ),
    _electro("employee", "$app#office_o2", "$workplace#employee_e9", name="Elsewhere", office="o2"),
    _electro("printer", "$app#office_o1", "$printer_1#printer_p1"),  # an entity not modelled
]
# the same table read without its type attribute: items are told apart by their key templates
BY_KEYS = OFFICES.replace("  typeAttribute: __edb_e__\n", "")

# the collection on a global index, each entity keyed by its own id in the table
ON_GSI = """\
table:
  name: electro
  partitionKey: pk
  sortKey: sk
  typeAttribute: __edb_e__
  indexes:
    gsi1: {partitionKey: gsi1pk, sortKey: gsi1sk}
types:
  Office:
    key: "$app#office_{id}"
    typeValue: office
    fields: {name: String!, city: String}
  Employee:
    key: "$app#employee_{id}"
    typeValue: employee
    fields: {name: String!, team: String, office: String}
  Desk:
    key: "$app#desk_{id}"
    typeValue: desk
    fields: {floor: Int}
queries:
  workplaces:
    types: [Office, Employee]
    union: Workplace
    index: gsi1
    partition: "$app#office_{office}"
"""


def _on_gsi1(item: dict[str, Any]) -> dict[str, Any]:
    """The item as ElectroDB writes an entity whose collection is on gsi1: the collection's
    keys in gsi1pk/gsi1sk, the entity's own in pk/sk."""
    own = f"$app#{item['__edb_e__']}_{item['sk'].rsplit('_', 1)[1]}"
    return {**item, "pk": own, "sk": own, "gsi1pk": item["pk"], "gsi1sk": item["sk"]}


COLLECTIONS = pytest.mark.parametrize(
    ("model", "items"),
    [
        (OFFICES, OFFICE_ITEMS),
        (BY_KEYS, OFFICE_ITEMS),
        (ON_GSI, [_on_gsi1(item) for item in OFFICE_ITEMS]),
    ],
    ids=["type attribute", "key templates", "on a global index"],
)

TASKS = """\
table:
  name: tasks
  partitionKey: pk
  sortKey: sk
  typeAttribute: __edb_e__
  indexes:
    gsi4: {partitionKey: gsi4pk, sortKey: gsi4sk}
types:
  Task:
    key: "$app#task_{id}"
    typeValue: task
    fields: {title: String!, project: String!, employee: String!, status: String!, points: Int!}
    indexes:
      gsi4: {pk: "$app#status_{status}", sk: "$task_1#project_{project}#employee_{employee}"}
queries:
  tasksOfProject:
    type: Task
    index: gsi4
    partition: "$app#status_{status}"
    sort:
      template: "$task_1#project_{project}#employee_{employee}"
      arguments: [project, employee]
    where: {points: {lte: $maxPoints}}
    arguments: {maxPoints: Int}
"""

# (id, project, employee, points): p1 and p10 share a prefix, as e1 and e10 do
ROWS = [
    ("t1", "p1", "e1", 1),
    ("t2", "p1", "e1", 8),
    ("t3", "p1", "e10", 2),
    ("t4", "p1", "e2", 9),
    ("t5", "p1", "e2", 3),
    ("t6", "p1", "e3", 13),
    ("t7", "p1", "e3", 5),
    ("t8", "p10", "e1", 1),
    ("t9", "p2", "e1", 2),
]


def _task(id_: str, project: str, employee: str, points: int, status: str = "open") -> dict:
    return {
        "pk": f"$app#task_{id_}",
        "sk": f"$app#task_{id_}",
        "gsi4pk": f"$app#status_{status}",
        "gsi4sk": f"$task_1#project_{project}#employee_{employee}",
        "__edb_e__": "task",
        "__edb_v__": "1",
        "title": f"Task {id_}",
        "project": project,
        "employee": employee,
        "status": status,
        "points": points,
    }


TASK_ITEMS = [_task(*row) for row in ROWS] + [_task("t10", "p1", "e1", 1, "closed")]


def _write(url: str, name: str, indexes: list[str], items: list[dict[str, Any]]) -> None:
    """The table as a team creates and fills it with boto3: string keys, global indexes
    projecting everything, items put as they are."""
    dynamodb = boto3.resource(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    try:
        with _create(dynamodb, name, indexes).batch_writer() as batch:
            for item in items:
                batch.put_item(Item=item)
    finally:
        dynamodb.meta.client.close()  # its pooled connections, before the test's end


def _create(dynamodb: Any, name: str, indexes: list[str]) -> Any:
    attributes = ["pk", "sk"] + [f"{i}{part}" for i in indexes for part in ("pk", "sk")]
    gsis = [
        {
            "IndexName": i,
            "KeySchema": [
                {"AttributeName": f"{i}pk", "KeyType": "HASH"},
                {"AttributeName": f"{i}sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
        for i in indexes
    ]
    return dynamodb.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in attributes],
        BillingMode="PAY_PER_REQUEST",
        **({"GlobalSecondaryIndexes": gsis} if gsis else {}),
    )


@pytest.fixture
async def served(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> AsyncIterator[Serve]:
    """``await served(model_text, items)``: the app over ASGI serving that model over a table
    created and filled with boto3 (not through Edgewise)."""
    dynamodb.reset()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(open_client(Endpoint(dynamodb.url), lean=LEAN))

        async def serve(text: str, items: list[dict[str, Any]]) -> httpx.AsyncClient:
            path = tmp_path / "model.yaml"
            path.write_text(text)
            engine = engine_for(str(path))
            indexes = list(engine.model.indexes)
            _write(dynamodb.url, engine.table_name, indexes, items)
            table = Table(client, engine.table_name, layout=engine.layout)
            app = create_app(Settings(model=str(path)), table=table)
            return await stack.enter_async_context(
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
            )

        yield serve


def _cost(body: dict[str, Any]) -> tuple[int, int, dict[str, int]]:
    trace = body["extensions"]["dynamodb"]
    return trace["requests"], trace["rounds"], trace["operations"]


WORKPLACES = """query($office: String!, $first: Int, $after: String) {
  workplaces(office: $office, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { __typename ... on Office { id name city } ... on Employee { id name team } } }
  } }"""


@COLLECTIONS
async def test_a_collection_answers_several_types_as_a_union_in_one_query(
    served: Serve, model: str, items: list[dict[str, Any]]
) -> None:
    http = await served(model, items)
    body = await gql(http, WORKPLACES.replace("totalCount ", ""), {"office": "o1"})
    connection = body["data"]["workplaces"]
    nodes = [e["node"] for e in connection["edges"]]
    assert [n["__typename"] for n in nodes] == ["Employee"] * 5 + ["Office"]
    assert nodes[-1]["name"] == "Gotham HQ" and nodes[-1]["city"] == "Gotham"
    assert [(n["name"], n["team"]) for n in nodes[:2]] == [
        ("Employee 1", "red"),
        ("Employee 2", "blue"),
    ]
    assert "city" not in nodes[0] and "team" not in nodes[-1]
    assert connection["pageInfo"]["hasNextPage"] is False
    assert _cost(body) == (1, 1, {"Query": 1})


@COLLECTIONS
async def test_a_collection_pages_and_counts_only_its_own_types(
    served: Serve, model: str, items: list[dict[str, Any]]
) -> None:
    http = await served(model, items)
    first = await gql(http, WORKPLACES, {"office": "o1", "first": 4})
    page = first["data"]["workplaces"]
    assert page["totalCount"] == 6  # five employees and the office; no desk, no printer
    assert len(page["edges"]) == 4 and page["pageInfo"]["hasNextPage"] is True
    # the count (one Query of the partition) beside the page, which reads on past the three
    # desks (Limit 5: desks, e1, e2; then e3 … the office): two rounds at most
    requests, rounds, operations = _cost(first)
    assert (requests, operations) == (3, {"Query": 3}) and rounds <= 2
    after = page["pageInfo"]["endCursor"]
    rest = await gql(http, WORKPLACES, {"office": "o1", "first": 4, "after": after})
    names = [e["node"]["name"] for e in rest["data"]["workplaces"]["edges"]]
    assert names == ["Employee 5", "Gotham HQ"]
    assert rest["data"]["workplaces"]["pageInfo"]["hasNextPage"] is False


async def test_a_collection_on_a_node_fills_its_partition_from_the_node(served: Serve) -> None:
    http = await served(OFFICES, OFFICE_ITEMS)
    body = await gql(
        http,
        '{ office(id: "o1") { name staff(first: 2) { totalCount '
        "edges { node { ... on Employee { name } ... on Office { city } } } } } }",
    )
    office = body["data"]["office"]
    assert office["name"] == "Gotham HQ"
    assert office["staff"]["totalCount"] == 6
    assert [e["node"] for e in office["staff"]["edges"]] == [
        {"city": "Gotham"},
        {"name": "Employee 5"},
    ]
    # the office, its page and its count (a Query: the pattern has no counter), in one round
    assert _cost(body) == (3, 1, {"BatchGetItem": 1, "Query": 2})


BOTH_WAYS = """query($office: String!, $first: Int, $after: String, $last: Int, $before: String) {
  workplaces(office: $office, first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { ... on Office { id } ... on Employee { id } } } } }"""


@COLLECTIONS
@pytest.mark.parametrize("size", [1, 4])
async def test_a_collection_pages_both_ways_alike(
    served: Serve, model: str, items: list[dict[str, Any]], size: int
) -> None:
    """A union, read past the items of other types (the desks) either way: the first page
    reads past them, the last does not."""
    http = await served(model, items)
    paged = await both_ways(http, BOTH_WAYS, ("workplaces",), size, {"office": "o1"}, costs=False)
    assert len(paged.edges) == 6


TASKS_BOTH_WAYS = """query($first: Int, $after: String, $last: Int, $before: String) {
  tasksOfProject(status: "open", project: "p1", maxPoints: 5,
      first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id } } } }"""


@pytest.mark.parametrize("size", [1, 2, 3])
async def test_a_filtered_pattern_pages_both_ways_alike(served: Serve, size: int) -> None:
    http = await served(TASKS, TASK_ITEMS)
    paged = await both_ways(http, TASKS_BOTH_WAYS, ("tasksOfProject",), size, costs=False)
    assert [node for node, _ in paged.edges] == [
        "$app#task_t1",
        "$app#task_t3",
        "$app#task_t5",
        "$app#task_t7",
    ]


TASKS_QUERY = """query($status: String!, $project: String, $employee: String, $maxPoints: Int,
    $first: Int, $after: String) {
  tasksOfProject(status: $status, project: $project, employee: $employee, maxPoints: $maxPoints,
      first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { id title points } } } }"""


async def _tasks(http: httpx.AsyncClient, **variables: Any) -> tuple[list[str], int, dict]:
    body = await gql(http, TASKS_QUERY, {"status": "open", **variables})
    assert "errors" not in body, body["errors"]
    connection = body["data"]["tasksOfProject"]
    titles = [e["node"]["title"].removeprefix("Task ") for e in connection["edges"]]
    return titles, connection["totalCount"], body


def _ties(titles: list[str]) -> list[set[str]]:
    """Tasks in the order answered, those of one index sort key (project and employee) together.
    A Query is ordered by the sort key alone and a GSI's keys need not be unique (Amazon
    DynamoDB Developer Guide, Using Global Secondary Indexes; the Query API: results are
    sorted by the sort key value), so DynamoDB defines no order among equal keys: moto gave
    t1 before t2, DynamoDB Local t2 before t1."""
    key = {id_: (project, employee) for id_, project, employee, _ in ROWS}
    return [set(group) for _, group in groupby(titles, key=key.__getitem__)]


async def test_sort_arguments_narrow_coarse_to_fine_at_a_literal_boundary(served: Serve) -> None:
    http = await served(TASKS, TASK_ITEMS)
    everything, total, body = await _tasks(http)
    assert total == 9
    assert _ties(everything) == _ties(["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"])
    assert _cost(body) == (2, 1, {"Query": 2})
    project, total, _ = await _tasks(http, project="p1")
    assert total == 7
    assert _ties(project) == _ties(["t1", "t2", "t3", "t4", "t5", "t6", "t7"])  # never p10
    employee, total, body = await _tasks(http, project="p1", employee="e1")
    assert (set(employee), len(employee), total) == ({"t1", "t2"}, 2, 2)  # never e10
    assert _cost(body) == (2, 1, {"Query": 2})


async def test_a_finer_sort_argument_without_the_coarser_is_bad_user_input(
    served: Serve,
) -> None:
    http = await served(TASKS, TASK_ITEMS)
    body = await gql(http, TASKS_QUERY, {"status": "open", "employee": "e1"})
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "employee needs project" in body["errors"][0]["message"]
    assert body["extensions"]["dynamodb"]["requests"] == 0


async def test_a_filter_counts_and_pages_only_what_passes(served: Serve) -> None:
    http = await served(TASKS, TASK_ITEMS)
    passed, total, body = await _tasks(http, project="p1", maxPoints=3)
    assert (passed, total) == (["t1", "t3", "t5"], 3)
    first, total, body = await _tasks(http, project="p1", maxPoints=5, first=2)
    assert (first, total) == (["t1", "t3"], 4)  # exactly `first`, though t2 was read between
    page = body["data"]["tasksOfProject"]
    assert page["pageInfo"]["hasNextPage"] is True
    variables = {"status": "open", "project": "p1", "maxPoints": 5, "first": 2}
    uncounted = await gql(http, TASKS_QUERY.replace("totalCount ", ""), variables)
    assert uncounted["data"]["tasksOfProject"]["edges"] == page["edges"]
    # Limit 3 (first + 1) reads t1 t2 t3, of which two pass: the page reads on (t4 t5 t6)
    # until a third passes, to know a next page exists
    assert _cost(uncounted) == (2, 2, {"Query": 2})
    after = page["pageInfo"]["endCursor"]
    rest, _, _ = await _tasks(http, project="p1", maxPoints=5, first=2, after=after)
    assert rest == ["t5", "t7"]
    none, total, _ = await _tasks(http, project="p1", maxPoints=0)
    assert (none, total) == ([], 0)


async def test_a_filter_whose_argument_is_not_given_is_left_out(served: Serve) -> None:
    http = await served(TASKS, TASK_ITEMS)
    unfiltered, total, _ = await _tasks(http, project="p1", employee="e3")
    assert (set(unfiltered), len(unfiltered), total) == ({"t6", "t7"}, 2, 2)  # one key: any order
    filtered, total, _ = await _tasks(http, project="p1", employee="e3", maxPoints=5)
    assert (filtered, total) == (["t7"], 1)


# ---- check-model -----------------------------------------------------------------------------

BROKEN = [
    (
        OFFICES,
        "  workplaces:\n    types: [Office, Employee]",
        "  workplaces:\n    types: [Office, Employe]",
        "queries.workplaces.types.1 (line 21): unknown type 'Employe'; did you mean 'Employee'?",
    ),
    (
        OFFICES,
        '    union: Workplace\n    partition: "$app#office_{office}"',
        '    union: Desk\n    partition: "$app#office_{office}"',
        "queries.workplaces.union (line 22): 'Desk' is already a type; name the union otherwise",
    ),
    (
        OFFICES,
        "  workplaces:\n    types:",
        "  workplaces:\n    type: Office\n    types:",
        "queries.workplaces.types (line 22): give `type` (one type) or `types` with `union` "
        "(several types), not both; remove one",
    ),
    (
        OFFICES,
        '    union: Workplace\n    partition: "$app#office_{office}"',
        '    partition: "$app#office_{office}"',
        "queries.workplaces.types (line 21): several types are answered as a GraphQL union: add "
        "`union: <Name>`",
    ),
    (
        TASKS,
        "arguments: [project, employee]",
        "arguments: [employee]",
        "queries.tasksOfProject.sort.arguments (line 22): sort arguments are the template's "
        "leading placeholders, in order; write [project]",
    ),
    (
        OFFICES,
        "    fields: {name: String!, city: String}",
        "    fields: {name: String!, city: String, head: {type: Employee, first: staff}}",
        "types.Office.fields.head.first (line 10): staff lists the union Workplace: first reads "
        "a collection of one type",
    ),
    (
        TASKS,
        "{maxPoints: Int}",
        "{maxPoints: Int, minPoints: Int}",
        "queries.tasksOfProject.arguments.minPoints (line 24): minPoints is not used: compare "
        "with it in `where` (`$minPoints`) or remove it",
    ),
    (
        TASKS,
        "{points: {lte: $maxPoints}}",
        "{points: {lte: $maxPonts}}",
        "queries.tasksOfProject.where.points.lte (line 23): unknown argument '$maxPonts'; did you "
        "mean 'maxPoints'?",
    ),
    (
        TASKS,
        "{maxPoints: Int}",
        "{maxPoints: String}",
        "queries.tasksOfProject.where.points.lte (line 23): $maxPoints is a String, which does not "
        "compare with points (Int) by lte; declare `maxPoints: Int`",
    ),
    (
        TASKS,
        "{points: {lte: $maxPoints}}",
        "{pints: {lte: $maxPoints}}",
        "queries.tasksOfProject.where.pints (line 23): Task has no field 'pints'; did you mean "
        "'points'?",
    ),
]


@pytest.mark.parametrize(
    ("good", "old", "new", "expected"), BROKEN, ids=[b[3][:50] for b in BROKEN]
)
def test_each_access_pattern_mistake_names_its_place_and_the_fix(
    good: str, old: str, new: str, expected: str
) -> None:
    assert old in good
    with pytest.raises(ModelError) as raised:
        parse_model(good.replace(old, new, 1), "model.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


def test_the_good_access_pattern_models_compile() -> None:
    offices = parse_model(OFFICES)
    assert offices.queries["workplaces"].types == ("Office", "Employee")
    tasks = parse_model(TASKS)
    query = tasks.queries["tasksOfProject"]
    assert query.equal == ("project", "employee")
    assert [(a, str(t)) for a, t in query.arguments] == [
        ("status", "String!"),
        ("project", "String"),
        ("employee", "String"),
        ("maxPoints", "Int"),
    ]


# ---- the FilterExpression agrees with the filter's own test ---------------------------------

POINTS = Comparison("points", "lte", "number", argument="maxPoints")
FILTERS = [
    Where((Comparison("points", "eq", "number", None),)),
    Where((Comparison("points", "ne", "number", None),)),
    Where((Comparison("points", "ne", "number", Decimal(3)),)),
    Where((Comparison("points", "gt", "number", Decimal(2)),)),
    Where((Comparison("points", "in", "number", (Decimal(1), None)),)),
    Where((Comparison("title", "in", "string", ("a", "c")),)),
    Where((Comparison("due", "lt", "date", date(2026, 3, 1)),)),
    Where((Comparison("due", "gte", "date", None, now=True),)),
    Where(
        (Comparison("title", "ne", "string", "b"),),
        ((Where((Comparison("points", "eq", "number", None),)), Where((POINTS,))),),
    ),
]
FILTERED = [
    {"title": "a", "points": 1, "due": "2026-01-10"},
    {"title": "b", "points": 3, "due": "2026-02-28"},
    {"title": "c", "points": None, "due": "2099-01-01"},
    {"title": "d", "due": "2026-03-01"},
    {"title": "e", "points": "3"},  # a string where a number is stored elsewhere
    {"title": "f", "points": 7, "due": "2099-12-31"},
]


@pytest.fixture
async def filtered(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Table]:
    """The items of FILTERED, written with boto3 into one partition."""
    dynamodb.reset()
    _write(dynamodb.url, "filtered", [], [{"pk": "P", "sk": i["title"], **i} for i in FILTERED])
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        yield Table(client, "filtered", layout=Layout("pk", "sk"))


@pytest.mark.parametrize("where", FILTERS, ids=range(len(FILTERS)))
async def test_a_filter_expression_keeps_exactly_what_the_filter_holds_for(
    filtered: Table, where: Where
) -> None:
    bound = where.bound({"maxPoints": 5})
    assert bound is not None
    now = datetime.now(UTC)
    expected = [
        i["title"] for i in FILTERED if bound.holds({k: _number(v) for k, v in i.items()}, now)
    ]
    listing = Listing(None, (Branch("P"),), where=bound)
    page = await Reads(filtered).pages.load(PageKey(listing, 2))
    count = await Reads(filtered).counts.load(listing)
    assert [item["title"] for item in page.items] == expected[:2]
    assert count == len(expected)


def _number(value: Any) -> Any:
    return Decimal(value) if isinstance(value, int) else value


@pytest.mark.parametrize("where", FILTERS, ids=range(len(FILTERS)))
def test_a_filter_expression_names_only_the_values_it_uses(where: Where) -> None:
    """DynamoDB refuses a request whose ExpressionAttributeValues hold a value no expression
    uses (``Value provided in ExpressionAttributeValues unused in expressions``); moto takes
    it. Each comparison used to reserve the values of both its type test and its null test
    and to use one or neither (``lte: $maxPoints`` left the NULL value unused)."""
    bound = where.bound({"maxPoints": 5})
    assert bound is not None
    expr = Expr()
    condition = expr.condition(bound, datetime.now(UTC))
    assert set(re.findall(r":v[0-9]+", condition)) == set(expr.values), condition
    assert set(re.findall(r"#n[0-9]+", condition)) == set(expr.names), condition


def test_a_filter_leaves_out_what_its_arguments_do_not_give() -> None:
    alone = Where((POINTS,))
    assert alone.bound({}) is None
    assert alone.bound({"maxPoints": 2}) == Where(
        (Comparison("points", "lte", "number", Decimal(2)),)
    )
    either = FILTERS[-1]
    assert either.bound({}) == Where(either.tests)  # an alternative that always holds
