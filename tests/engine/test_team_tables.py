"""Tables as teams have them, written with boto3 straight into moto (not through Edgewise),
then served: each answer is compared with what DynamoDB's own semantics give over the items
written, and each cost read from the trace."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from graph.dynamo.embedded import EmbeddedDynamoDB
from model import ModelError, parse_model
from tests.conftest import TeamTable
from tests.helpers import gql


def _table(
    name: str, pk: str, sk: str, *gsis: tuple[str, str, str], types: dict[str, str] | None = None
) -> dict[str, Any]:
    """CreateTable's arguments as a team would write them: keys ``pk``/``sk``, each GSI
    ``(name, hash, range)`` projecting ALL; every key attribute a string unless ``types`` says."""
    attributes = dict.fromkeys([pk, sk, *(a for _, h, r in gsis for a in (h, r))])
    table: dict[str, Any] = {
        "TableName": name,
        "KeySchema": [
            {"AttributeName": pk, "KeyType": "HASH"},
            {"AttributeName": sk, "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": (types or {}).get(a, "S")} for a in attributes
        ],
    }
    if gsis:
        table["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index,
                "KeySchema": [
                    {"AttributeName": h, "KeyType": "HASH"},
                    {"AttributeName": r, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index, h, r in gsis
        ]
    return table


# AWS's relational-to-adjacency-list layout: node and edge items side by side, and one GSI on
# the table's sort key whose sort key is an overloaded `Data` attribute (a name on a node, a
# date on an edge), so an index partition holds the node's own item beside its incoming edges.
HR = """
table:
  name: hr-table
  partitionKey: PK
  sortKey: SK
  typeAttribute: type
  indexes:
    GSI_1: {partitionKey: SK, sortKey: Data}
types:
  Employee:
    key: "EMP#{id}"
    fields: {name: {type: String!, attribute: Data}}
  Project:
    key: "PROJ#{id}"
    fields: {title: {type: String!, attribute: Data}}
edges:
  WORKS_ON:
    from: Employee
    to: Project
    fields: {start: {type: Date!, attribute: Data}}
    forward: projects
    reverse: {field: members, index: GSI_1}
"""
# A table name has 3 to 255 characters (CreateTable's TableName; moto took "hr", DynamoDB
# refuses it: "Table/index names must be between 3 and 255 characters long").
HR_TABLE = _table("hr-table", "PK", "SK", ("GSI_1", "SK", "Data"))
HR_ITEMS: list[dict[str, Any]] = [
    {"PK": "EMP#e1", "SK": "EMP#e1", "type": "Employee", "Data": "Ann"},
    {"PK": "EMP#e2", "SK": "EMP#e2", "type": "Employee", "Data": "Bo"},
    {"PK": "EMP#e3", "SK": "EMP#e3", "type": "Employee", "Data": "Cy"},
    {"PK": "PROJ#p1", "SK": "PROJ#p1", "type": "Project", "Data": "Apollo"},
    {"PK": "EMP#e2", "SK": "PROJ#p1", "type": "WORKS_ON", "Data": "2020-01-05"},
    {"PK": "EMP#e1", "SK": "PROJ#p1", "type": "WORKS_ON", "Data": "2021-03-01"},
    {"PK": "EMP#e3", "SK": "PROJ#p1", "type": "WORKS_ON", "Data": "2022-07-09"},
]


async def test_a_reverse_edge_over_an_index_whose_sort_key_is_another_attribute(
    team_http: TeamTable,
) -> None:
    http = await team_http(HR, HR_TABLE, HR_ITEMS)
    body = await gql(
        http,
        '{ project(id: "p1") { title members { totalCount edges { start node { name } } } } }',
    )
    project = body["data"]["project"]
    assert project["title"] == "Apollo"
    # ordered by the index's sort key (the start date); the project's own item is not an edge
    assert [(e["start"], e["node"]["name"]) for e in project["members"]["edges"]] == [
        ("2020-01-05", "Bo"),
        ("2021-03-01", "Ann"),
        ("2022-07-09", "Cy"),
    ]
    assert project["members"]["totalCount"] == 3


async def test_first_answers_first_edges_past_the_owner_item_in_an_index_partition(
    team_http: TeamTable,
) -> None:
    http = await team_http(HR, HR_TABLE, HR_ITEMS)
    query = """query($after: String) { project(id: "p1") { members(first: 1, after: $after) {
      edges { cursor node { name } } pageInfo { hasNextPage endCursor } } } }"""
    names, after, pages = [], None, 0
    while True:
        body = await gql(http, query, {"after": after})
        members = body["data"]["project"]["members"]
        assert (
            len(members["edges"]) == 1
        )  # never 0: the node's own item (Data "Apollo") is read past
        names += [e["node"]["name"] for e in members["edges"]]
        pages += 1
        if not members["pageInfo"]["hasNextPage"]:
            break
        after = members["pageInfo"]["endCursor"]
    assert names == ["Bo", "Ann", "Cy"] and pages == 3


# An overloaded GSI partition holding customers, the rep's orders and an item no declaration
# explains: a pattern listing customers answers and counts customers only.
SALES = """
table:
  name: sales
  partitionKey: PK
  sortKey: SK
  typeAttribute: type
  indexes:
    GSI1: {partitionKey: GSI1PK, sortKey: GSI1SK}
types:
  Rep:
    key: "REP#{id}"
    fields: {name: String!}
  Customer:
    key: "CUST#{id}"
    fields:
      name: String!
      since: DateTime
      city: {type: String!}
      repId: String
  Branch:
    key: {pk: "branch#{city}", sk: "BRANCH#{region}"}
    fields: {city: String!, region: String!}
queries:
  customersOfRep:
    on: Rep
    field: customers
    type: Customer
    index: GSI1
    partition: "REP#{id}"
  colleagues:
    on: Customer
    type: Customer
    index: GSI1
    partition: "REP#{repId}"
  branches:
    type: Branch
    index: GSI1
    partition: "BRANCHES"
"""
SALES_TABLE = _table("sales", "PK", "SK", ("GSI1", "GSI1PK", "GSI1SK"))
SALES_ITEMS: list[dict[str, Any]] = [
    {
        "PK": "REP#r1",
        "SK": "REP#r1",
        "type": "Rep",
        "name": "Rita",
        "GSI1PK": "REP#r1",
        "GSI1SK": "A",
    },
    *[
        {
            "PK": f"CUST#c{i}",
            "SK": f"CUST#c{i}",
            "type": "Customer",
            "name": f"Customer {i}",
            "city": "Atlanta",
            "since": "2020-08-10T09:30:00.145Z",
            "repId": "r1",
            "GSI1PK": "REP#r1",
            "GSI1SK": f"CUST#c{i}",
        }
        for i in range(1, 4)
    ],
    {"PK": "ORDER#o1", "SK": "ORDER#o1", "type": "Order", "GSI1PK": "REP#r1", "GSI1SK": "CUST#c15"},
    {"PK": "NOTE#n1", "SK": "NOTE#n1", "GSI1PK": "REP#r1", "GSI1SK": "CUST#c2x"},
    {
        "PK": "branch#atlanta branch",
        "SK": "BRANCH#south",
        "type": "Branch",
        "city": "Atlanta Branch",
        "GSI1PK": "BRANCHES",
        "GSI1SK": "atlanta branch",
    },
]


async def test_an_overloaded_partition_answers_and_counts_only_its_type(
    team_http: TeamTable,
) -> None:
    http = await team_http(SALES, SALES_TABLE, SALES_ITEMS)
    body = await gql(
        http,
        '{ rep(id: "r1") { customers(first: 2) { totalCount edges { node { id since } } '
        "pageInfo { hasNextPage } } } }",
    )
    customers = body["data"]["rep"]["customers"]
    assert customers["totalCount"] == 3  # not the rep, the order or the unexplained note
    assert [e["node"]["id"] for e in customers["edges"]] == ["CUST#c1", "CUST#c2"]
    assert customers["pageInfo"]["hasNextPage"] is True
    # values as stored, not reformatted
    assert {e["node"]["since"] for e in customers["edges"]} == {"2020-08-10T09:30:00.145Z"}
    every = await gql(http, '{ rep(id: "r1") { customers(first: 5) { edges { node { id } } } } }')
    assert [e["node"]["id"] for e in every["data"]["rep"]["customers"]["edges"]] == [
        "CUST#c1",
        "CUST#c2",
        "CUST#c3",
    ]


async def test_a_key_placeholder_answers_its_own_attribute_over_the_key_copy(
    team_http: TeamTable,
) -> None:
    http = await team_http(SALES, SALES_TABLE, SALES_ITEMS)
    body = await gql(http, "{ branches { edges { node { city region } } } }")
    assert body["data"]["branches"]["edges"] == [
        {"node": {"city": "Atlanta Branch", "region": "south"}}  # region: parsed from the key
    ]


# Seed 000's replicas: a user's partition holds `GROUPSUB#<product>|<group>` items. `|` sorts
# above every letter and digit, so a range on the product must not take prod10 for prod1.
ACCESS = """
table:
  name: access
  partitionKey: PK
  sortKey: SK
types:
  User:
    key: "USER#{id}"
    fields: {name: String!}
  GroupSub:
    key: {pk: "USER#{userId}", sk: "GROUPSUB#{productId}|{groupId}"}
    parent: {type: User, field: user, collection: groupSubs}
    fields: {status: String}
queries:
  access:
    on: User
    field: access
    type: GroupSub
    partition: "USER#{id}"
    sort: {between: [from, to], template: "GROUPSUB#{productId}|{groupId}"}
"""
ACCESS_TABLE = _table("access", "PK", "SK")
ACCESS_ITEMS: list[dict[str, Any]] = [
    {"PK": "USER#alice", "SK": "USER#alice", "name": "Alice"},
    *[
        {"PK": "USER#alice", "SK": f"GROUPSUB#{product}|{group}", "status": "ACTIVE"}
        for product, group in [
            ("prod1", "group1"),
            ("prod1", "group2"),
            ("prod10", "group1"),
            ("prod11", "group2"),
            ("prod2", "group2"),
        ]
    ],
]


async def test_a_range_on_a_placeholder_followed_by_a_separator_is_exact(
    team_http: TeamTable,
) -> None:
    http = await team_http(ACCESS, ACCESS_TABLE, ACCESS_ITEMS)
    body = await gql(
        http,
        '{ user(id: "alice") { one: access(from: "prod1", to: "prod1") { totalCount '
        "edges { node { productId groupId } } } "
        'upTo: access(to: "prod10") { edges { node { productId } } } '
        'prefix: groupSubs(productId: "prod1") { totalCount } } }',
    )
    alice = body["data"]["user"]
    assert [(e["node"]["productId"], e["node"]["groupId"]) for e in alice["one"]["edges"]] == [
        ("prod1", "group1"),
        ("prod1", "group2"),
    ]
    assert alice["one"]["totalCount"] == 2
    # in the key's order: `prod10|` sorts before `prod1|`, as DynamoDB compares them
    assert [e["node"]["productId"] for e in alice["upTo"]["edges"]] == ["prod10", "prod1", "prod1"]
    assert alice["prefix"]["totalCount"] == 2
    trace = body["extensions"]["dynamodb"]
    # a page and a count for `one`, a page for `upTo`, a count for `prefix`
    assert trace["operations"] == {"BatchGetItem": 1, "Query": 4}, trace
    assert trace["rounds"] <= 2  # the Queries start with the user's read, or right after it


# A number sort key (AWS's CustomerOrders example): keys and bounds are sent as numbers and
# compared as numbers (9 < 10 < 55779), never as text.
NUMBERED = """
table:
  name: customer-orders
  partitionKey: CustomerId
  sortKey: {name: OrderId, type: N}
types:
  CustomerOrder:
    key: {pk: "{customerId}", sk: "{orderId}"}
    fields:
      customerId: {type: String!, attribute: CustomerId}
      orderId: {type: Int!, attribute: OrderId}
      total: Float!
queries:
  ordersOf:
    type: CustomerOrder
    partition: "{customerId}"
    sort: {between: [from, to], template: "{orderId}"}
  ordersAbove:
    type: CustomerOrder
    partition: "{customerId}"
    sort: {between: [above, below], template: "{orderId}", exclusive: true}
    order: desc
"""
NUMBERED_TABLE = _table("customer-orders", "CustomerId", "OrderId", types={"OrderId": "N"})
NUMBERED_ITEMS: list[dict[str, Any]] = [
    {"CustomerId": "Maria Anders", "OrderId": n, "total": Decimal(n) / 10}
    for n in (5, 9, 10, 55, 100, 55779)
] + [{"CustomerId": "Ana Trujillo", "OrderId": 7, "total": 1}]


async def test_a_number_sort_key_is_read_and_bounded_as_a_number(team_http: TeamTable) -> None:
    http = await team_http(NUMBERED, NUMBERED_TABLE, NUMBERED_ITEMS)
    body = await gql(
        http,
        '{ one: customerOrder(customerId: "Maria Anders", orderId: 55) { id orderId total } '
        'range: ordersOf(customerId: "Maria Anders", from: 9, to: 100) { totalCount '
        "edges { node { orderId } } } "
        'open: ordersAbove(customerId: "Maria Anders", above: 5, first: 2) { '
        "edges { node { orderId } } pageInfo { hasNextPage endCursor } } }",
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["one"]["orderId"] == 55 and data["one"]["total"] == 5.5
    assert [e["node"]["orderId"] for e in data["range"]["edges"]] == [9, 10, 55, 100]
    assert data["range"]["totalCount"] == 4
    assert [e["node"]["orderId"] for e in data["open"]["edges"]] == [55779, 100]
    assert data["open"]["pageInfo"]["hasNextPage"] is True
    assert body["extensions"]["dynamodb"]["rounds"] == 1
    rest = await gql(
        http,
        'query($c: String) { ordersAbove(customerId: "Maria Anders", above: 5, after: $c) '
        "{ edges { node { orderId } } } }",
        {"c": data["open"]["pageInfo"]["endCursor"]},
    )
    assert [e["node"]["orderId"] for e in rest["data"]["ordersAbove"]["edges"]] == [55, 10, 9]
    again = await gql(
        http,
        "query($id: ID!) { node(id: $id) { ... on CustomerOrder { orderId } } }",
        {"id": data["one"]["id"]},
    )
    assert again["data"]["node"] == {"orderId": 55}


async def test_a_reversed_number_range_is_empty_and_sends_no_query(team_http: TeamTable) -> None:
    """from 100 to 9 holds nothing (as numbers: as text "100" sorts before "9"); DynamoDB
    refuses a BETWEEN whose low bound is above its high one, so none is sent."""
    http = await team_http(NUMBERED, NUMBERED_TABLE, NUMBERED_ITEMS)
    body = await gql(
        http,
        '{ ordersOf(customerId: "Maria Anders", from: 100, to: 9) { totalCount '
        "edges { node { orderId } } pageInfo { hasNextPage } } }",
    )
    assert body["data"]["ordersOf"] == {
        "totalCount": 0,
        "edges": [],
        "pageInfo": {"hasNextPage": False},
    }, body
    assert body["extensions"]["dynamodb"]["requests"] == 0


async def test_text_where_a_number_key_is_declared_is_bad_user_input(team_http: TeamTable) -> None:
    http = await team_http(NUMBERED, NUMBERED_TABLE, NUMBERED_ITEMS)
    raw = json.dumps(["CustomerOrder", "Maria Anders", "55x"], separators=(",", ":"))
    opaque = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    body = await gql(http, "query($id: ID!) { node(id: $id) { id } }", {"id": opaque})
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "OrderId is a number key" in body["errors"][0]["message"]
    assert body["extensions"]["dynamodb"]["requests"] == 0  # refused before any call


def _edgewise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=120
    )


def test_a_model_that_disagrees_with_the_table_is_refused_naming_both_types(
    dynamodb: EmbeddedDynamoDB,
    tmp_path: Path,
    team_client: Any,
) -> None:
    dynamodb.reset()
    team_client.create_table(BillingMode="PAY_PER_REQUEST", **NUMBERED_TABLE)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(NUMBERED.replace("sortKey: {name: OrderId, type: N}", "sortKey: OrderId"))
    right = tmp_path / "right.yaml"
    right.write_text(NUMBERED)
    checked = _edgewise("check-model", str(wrong), "--dynamodb", dynamodb.url)
    assert checked.returncode == 1
    assert (
        "table 'customer-orders': the table's sort key OrderId is of type N in the table, S in the "
        "model; declare it as `{name: OrderId, type: N}`" in checked.stderr
    )
    served = _edgewise("serve", "--model", str(wrong), "--dynamodb", dynamodb.url, "--port", "0")
    assert served.returncode != 0
    assert "OrderId is of type N in the table, S in the model" in served.stderr
    assert _edgewise("check-model", str(right), "--dynamodb", dynamodb.url).returncode == 0


def test_create_table_makes_number_keys_numbers(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, team_client: Any
) -> None:
    dynamodb.reset()
    model = tmp_path / "numbered.yaml"
    model.write_text(NUMBERED)
    created = _edgewise("create-table", "--model", str(model), "--dynamodb", dynamodb.url)
    assert created.returncode == 0, created.stderr
    described = team_client.describe_table(TableName="customer-orders")["Table"]
    assert {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]} == {
        "CustomerId": "S",
        "OrderId": "N",
    }


# Seed 002: students and courses exist only as the keys of their enrollments (a table of edge
# items alone); the model names no table (`--table` does).
ENROLMENTS = """
table:
  partitionKey: PK
  sortKey: SK
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
types:
  Student:
    key: "STUDENT#{id}"
    implicit: true
  Course:
    key: "COURSE#{id}"
    implicit: true
    fields: {title: String}
edges:
  ENROLLED:
    from: Student
    to: Course
    fields: {grade: String}
    forward: courses
    reverse: {field: students, index: inverted}
"""
ENROLMENTS_TABLE = _table("enrolments", "PK", "SK", ("inverted", "SK", "PK"))
ENROLMENTS_ITEMS: list[dict[str, Any]] = [
    {"PK": f"STUDENT#{s}", "SK": f"COURSE#{c}", "grade": g}
    for s, c, g in [("s1", "c1", "A"), ("s1", "c2", "B"), ("s2", "c1", "C")]
]


async def test_nodes_that_exist_only_as_keys_are_answered_without_a_read(
    team_http: TeamTable,
) -> None:
    http = await team_http(ENROLMENTS, ENROLMENTS_TABLE, ENROLMENTS_ITEMS)
    body = await gql(
        http,
        '{ student(id: "s1") { id courses { totalCount edges { grade node { id title } } } } '
        'course(id: "c1") { students { totalCount edges { node { id } } } } '
        'nobody: node(id: "STUDENT#nobody") { id ... on Student { courses { totalCount } } } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    assert [(e["grade"], e["node"]["id"]) for e in data["student"]["courses"]["edges"]] == [
        ("A", "COURSE#c1"),
        ("B", "COURSE#c2"),
    ]
    assert data["student"]["courses"]["edges"][0]["node"]["title"] is None  # nothing stored
    assert data["course"]["students"]["totalCount"] == 2
    assert data["nobody"] == {"id": "STUDENT#nobody", "courses": {"totalCount": 0}}
    trace = body["extensions"]["dynamodb"]
    # no GetItem for the students or courses themselves: their connections' Queries, and the
    # courses' titles (one batch)
    assert trace["operations"] == {"Query": 5, "BatchGetItem": 1}, trace
    schema = (
        await http.post(
            "/graphql", json={"query": "{ __schema { mutationType { fields { name } } } }"}
        )
    ).json()
    mutations = {f["name"] for f in schema["data"]["__schema"]["mutationType"]["fields"]}
    assert mutations == {"addEnrolled", "removeEnrolled"}


async def test_an_edge_to_a_node_with_no_item_is_added_and_removed(team_http: TeamTable) -> None:
    http = await team_http(ENROLMENTS, ENROLMENTS_TABLE, ENROLMENTS_ITEMS)
    added = await gql(
        http,
        'mutation { addEnrolled(studentId: "s3", courseId: "c9", grade: "A") '
        "{ grade node { id } } }",
    )
    assert added["data"]["addEnrolled"] == {"grade": "A", "node": {"id": "COURSE#c9"}}
    body = await gql(http, '{ course(id: "c9") { students { edges { node { id } } } } }')
    assert body["data"]["course"]["students"]["edges"] == [{"node": {"id": "STUDENT#s3"}}]
    removed = await gql(http, 'mutation { removeEnrolled(studentId: "s3", courseId: "c9") }')
    assert removed["data"]["removeEnrolled"] is True


# ElectroDB's layout: `$service#attr_value` keys, lower-cased (the attributes keep their case),
# `__edb_e__` naming the entity, a constant sort key, an enum stored as `in-progress`.
ELECTRO = """
table:
  name: electro
  partitionKey: pk
  sortKey: sk
  typeAttribute: __edb_e__
  keyCasing: lower
  indexes:
    gsi1: {partitionKey: gsi1pk, sortKey: gsi1sk}
    gsi2: {partitionKey: gsi2pk, sortKey: gsi2sk}
enums:
  TaskStatus: {OPEN: open, IN_PROGRESS: in-progress}
types:
  Employee:
    typeValue: employee
    key: {pk: "$taskapp#employee_{employee}", sk: "$employee_1"}
    fields:
      employee: String!
      firstName: String!
      office: String!
      manager: String
    indexes:
      gsi1: {pk: "$taskapp#office_{office}", sk: "$workplaces#employee_1#employee_{employee}"}
      gsi2: {pk: "$taskapp#manager_{manager}", sk: "$employee_1#employee_{employee}", partial: true}
  Task:
    typeValue: task
    key: {pk: "$taskapp#task_{task}", sk: "$task_1#project_{project}"}
    fields: {task: String!, project: String!, status: TaskStatus!, title: String}
queries:
  employeesOfOffice:
    type: Employee
    index: gsi1
    partition: "$taskapp#office_{office}"
"""
ELECTRO_TABLE = _table(
    "electro", "pk", "sk", ("gsi1", "gsi1pk", "gsi1sk"), ("gsi2", "gsi2pk", "gsi2sk")
)
ELECTRO_ITEMS: list[dict[str, Any]] = [
    {
        "pk": "$taskapp#employee_jlowe",
        "sk": "$employee_1",
        "gsi1pk": "$taskapp#office_gw zoo",
        "gsi1sk": "$workplaces#employee_1#employee_jlowe",
        "employee": "JLowe",
        "firstName": "Joe",
        "office": "Gw Zoo",
        "__edb_e__": "employee",
        "__edb_v__": "1",
    },
    {
        "pk": "$taskapp#task_t1",
        "sk": "$task_1#project_p1",
        "task": "t1",
        "project": "p1",
        "status": "in-progress",
        "__edb_e__": "task",
        "__edb_v__": "1",
    },
]


async def test_lower_cased_keys_answer_the_attributes_as_stored(team_http: TeamTable) -> None:
    http = await team_http(ELECTRO, ELECTRO_TABLE, ELECTRO_ITEMS)
    body = await gql(
        http,
        '{ employee(employee: "JLOWE") { employee firstName office } '
        'employeesOfOffice(office: "GW ZOO") { edges { node { employee office } } } '
        'task(task: "t1", project: "p1") { status } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["employee"] == {"employee": "JLowe", "firstName": "Joe", "office": "Gw Zoo"}
    assert data["employeesOfOffice"]["edges"] == [
        {"node": {"employee": "JLowe", "office": "Gw Zoo"}}
    ]
    assert data["task"] == {"status": "IN_PROGRESS"}


async def test_writes_case_the_keys_and_store_values_and_enums_as_the_library_does(
    team_http: TeamTable,
    dynamodb: EmbeddedDynamoDB,
    team_client: Any,
) -> None:
    http = await team_http(ELECTRO, ELECTRO_TABLE, ELECTRO_ITEMS)
    created = await gql(
        http,
        'mutation { createTask(input: {task: "T2", project: "Apollo", status: OPEN, '
        'title: "Fly"}) { task project status } }',
    )
    assert created["data"]["createTask"] == {"task": "T2", "project": "Apollo", "status": "OPEN"}
    item = team_client.get_item(
        TableName="electro",
        Key={"pk": {"S": "$taskapp#task_t2"}, "sk": {"S": "$task_1#project_apollo"}},
    )["Item"]
    assert item["task"] == {"S": "T2"} and item["project"] == {"S": "Apollo"}
    assert item["status"] == {"S": "open"} and item["__edb_e__"] == {"S": "task"}
    found = await gql(http, '{ task(task: "t2", project: "APOLLO") { title status } }')
    assert found["data"]["task"] == {"title": "Fly", "status": "OPEN"}


# dynamodb-toolbox's layout: `_et` names the entity, `_ct`/`_md` hold when it was created and
# modified (the library's format, kept as stored).
TOOLBOX = """
table:
  name: toolbox
  partitionKey: pk
  sortKey: sk
  typeAttribute: _et
  timestamps: {created: _ct, modified: _md}
types:
  Pokemon:
    key: "POKEMON#{id}"
    fields:
      name: String!
      created: {type: DateTime!, attribute: _ct}
      modified: {type: DateTime!, attribute: _md}
"""
TOOLBOX_TABLE = _table("toolbox", "pk", "sk")
TOOLBOX_ITEMS: list[dict[str, Any]] = [
    {
        "pk": "POKEMON#pikachu",
        "sk": "POKEMON#pikachu",
        "_et": "Pokemon",
        "name": "Pikachu",
        "_ct": "2020-08-10T09:30:00.145Z",
        "_md": "2020-08-10T09:30:00.145Z",
    }
]


async def test_named_timestamps_are_served_as_stored_and_rewritten_on_update(
    team_http: TeamTable,
    team_client: Any,
) -> None:
    http = await team_http(TOOLBOX, TOOLBOX_TABLE, TOOLBOX_ITEMS)
    body = await gql(http, '{ pokemon(id: "pikachu") { name created modified } }')
    assert body["data"]["pokemon"] == {
        "name": "Pikachu",
        "created": "2020-08-10T09:30:00.145Z",
        "modified": "2020-08-10T09:30:00.145Z",
    }
    updated = await gql(
        http,
        'mutation { updatePokemon(input: {id: "pikachu", name: "Raichu"}) '
        "{ name created modified } }",
    )
    pokemon = updated["data"]["updatePokemon"]
    assert pokemon["name"] == "Raichu" and pokemon["created"] == "2020-08-10T09:30:00.145Z"
    assert pokemon["modified"] > "2026"
    created = await gql(
        http, 'mutation { createPokemon(input: {id: "eevee", name: "Eevee"}) { id } }'
    )
    assert created["data"]["createPokemon"] == {"id": "POKEMON#eevee"}
    item = team_client.get_item(
        TableName="toolbox", Key={"pk": {"S": "POKEMON#eevee"}, "sk": {"S": "POKEMON#eevee"}}
    )["Item"]
    assert (
        item["_ct"] == item["_md"] and "createdAt" not in item and item["_et"] == {"S": "Pokemon"}
    )


# A number sort key with a local secondary index projecting two attributes (AWS's
# CustomerOrders with an LSI on OrderCreationDate): a selection within the projection is
# answered from the index; one outside it reads the items, in one batch.
LOCAL = """
table:
  name: local-orders
  partitionKey: CustomerId
  sortKey: {name: OrderId, type: N}
  indexes:
    byDate:
      partitionKey: CustomerId
      sortKey: {name: OrderCreationDate, type: N}
      local: true
      projection: [ProductCategory, ProductName]
types:
  CustomerOrder:
    key: {pk: "{customerId}", sk: "{orderId}"}
    fields:
      customerId: {type: String!, attribute: CustomerId}
      orderId: {type: Int!, attribute: OrderId}
      createdOn: {type: Int!, attribute: OrderCreationDate}
      productName: {type: String, attribute: ProductName}
      total: Float
queries:
  ordersByDate:
    type: CustomerOrder
    index: byDate
    partition: "{customerId}"
    sort: {between: [from, to], template: "{createdOn}"}
"""
LOCAL_ITEMS: list[dict[str, Any]] = [
    {
        "CustomerId": "Maria Anders",
        "OrderId": n,
        "OrderCreationDate": date,
        "ProductName": f"p{n}",
        "ProductCategory": "c",
        "total": n,
    }
    for n, date in [(1, 20200105), (2, 20190301), (3, 20210707), (4, 20200520)]
]


async def test_a_local_index_of_a_number_key_projecting_two_attributes(
    team_http: TeamTable,
    dynamodb: EmbeddedDynamoDB,
    tmp_path: Path,
    team_client: Any,
) -> None:
    model = tmp_path / "local.yaml"
    model.write_text(LOCAL)
    made = _edgewise("create-table", "--model", str(model), "--dynamodb", dynamodb.url)
    assert made.returncode == 0, made.stderr
    described = team_client.describe_table(TableName="local-orders")["Table"]
    (index,) = described["LocalSecondaryIndexes"]
    assert index["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["ProductCategory", "ProductName"],
    }
    dynamodb.reset()
    table = {k: v for k, v in described.items() if k in ("TableName", "KeySchema")}
    table["AttributeDefinitions"] = described["AttributeDefinitions"]
    table["LocalSecondaryIndexes"] = [
        {k: index[k] for k in ("IndexName", "KeySchema", "Projection")}
    ]
    http = await team_http(LOCAL, table, LOCAL_ITEMS)
    projected = await gql(
        http,
        '{ ordersByDate(customerId: "Maria Anders", from: 20200101, to: 20201231) '
        "{ edges { node { orderId createdOn productName } } } }",
    )
    edges = projected["data"]["ordersByDate"]["edges"]
    assert [e["node"] for e in edges] == [
        {"orderId": 1, "createdOn": 20200105, "productName": "p1"},
        {"orderId": 4, "createdOn": 20200520, "productName": "p4"},
    ]
    outside = await gql(
        http,
        '{ ordersByDate(customerId: "Maria Anders", from: 20200101) '
        "{ edges { node { orderId total } } } }",
    )
    assert [e["node"] for e in outside["data"]["ordersByDate"]["edges"]] == [
        {"orderId": 1, "total": 1},
        {"orderId": 4, "total": 4},
        {"orderId": 3, "total": 3},
    ]
    assert outside["extensions"]["dynamodb"]["operations"] == {"Query": 1, "BatchGetItem": 1}


# References as teams store them: seed 000's group item holding a list of product ids, a
# Northwind-style attribute holding the customer's whole key (`customerID#VINET`), a composite
# reference, and an order whose sort key is constant text (`ORDER`).
REFS = """
table:
  name: refs
  partitionKey: PK
  sortKey: SK
types:
  Product:
    key: "PRODUCT#{id}"
    fields: {name: String!}
  Group:
    key: "GROUP#{id}"
    fields:
      subscriptions: {type: "[String!]!", attribute: Subscriptions}
      products: {type: "[Product!]!", ref: subscriptions}
  User:
    key: "USER#{id}"
    fields:
      products: {type: "[Product!]!", path: [groups, products]}
      mayUse: {type: Boolean!, path: [groups, products], arguments: {productId: ID!}}
  Customer:
    key: "customerID#{id}"
    fields: {companyName: String!}
  Order:
    key: {pk: "orderID#{id}", sk: ORDER}
    fields:
      customerID: String!
      customer: {type: Customer, ref: {field: customerID, holds: key}}
  Line:
    key: {pk: "orderID#{orderId}", sk: "productID#{productId}"}
    parent: {type: Order, field: order, collection: lines}
    fields:
      productId: String!
      product: {type: Product!, ref: productId}
      quantity: Int!
  Shipment:
    key: {pk: "SHIP#{id}", sk: "SHIP#{id}"}
    fields:
      lineOrder: String!
      lineProduct: String!
      line: {type: Line, ref: {orderId: lineOrder, productId: lineProduct}}
edges:
  MEMBER_OF: {from: User, to: Group, forward: groups}
"""
REFS_ITEMS: list[dict[str, Any]] = [
    *[{"PK": f"PRODUCT#{p}", "SK": f"PRODUCT#{p}", "name": p.upper()} for p in ("p1", "p2", "p3")],
    {"PK": "GROUP#g1", "SK": "GROUP#g1", "Subscriptions": ["p2", "p1"]},
    {"PK": "GROUP#g2", "SK": "GROUP#g2", "Subscriptions": ["p1"]},
    {"PK": "USER#alice", "SK": "USER#alice"},
    {"PK": "USER#alice", "SK": "GROUP#g1"},
    {"PK": "USER#alice", "SK": "GROUP#g2"},
    {"PK": "customerID#VINET", "SK": "customerID#VINET", "companyName": "Vins et alcools"},
    {"PK": "orderID#10248", "SK": "ORDER", "customerID": "customerID#VINET"},
    {"PK": "orderID#10248", "SK": "productID#p3", "productId": "p3", "quantity": 12},
    {"PK": "SHIP#s1", "SK": "SHIP#s1", "lineOrder": "10248", "lineProduct": "p3"},
]


async def test_references_over_lists_whole_keys_and_composite_keys(team_http: TeamTable) -> None:
    table = {**ACCESS_TABLE, "TableName": "refs"}
    http = await team_http(REFS, table, REFS_ITEMS)
    body = await gql(
        http,
        '{ group(id: "g1") { products { id name } } '
        'order(id: "10248") { customer { companyName } lines { edges { node { quantity '
        "product { name } order { id } } } } } "
        'shipment(id: "s1") { line { quantity product { name } } } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["group"]["products"] == [
        {"id": "PRODUCT#p2", "name": "P2"},
        {"id": "PRODUCT#p1", "name": "P1"},
    ]
    assert data["order"]["customer"] == {"companyName": "Vins et alcools"}
    (line,) = data["order"]["lines"]["edges"]
    assert line["node"]["quantity"] == 12 and line["node"]["product"] == {"name": "P3"}
    assert data["shipment"]["line"] == {"quantity": 12, "product": {"name": "P3"}}
    # the list's products are read together, in one BatchGetItem with the other wave's reads
    assert body["extensions"]["dynamodb"]["operations"].get("GetItem", 0) == 0


async def test_a_partial_index_key_is_written_with_an_empty_value(
    team_http: TeamTable,
    team_client: Any,
) -> None:
    http = await team_http(ELECTRO, ELECTRO_TABLE, ELECTRO_ITEMS)
    for employee, manager in (("Ann", None), ("Bo", "Ann")):
        given = f', manager: "{manager}"' if manager else ""
        created = await gql(
            http,
            f'mutation {{ createEmployee(input: {{employee: "{employee}", firstName: "x", '
            f'office: "HQ"{given}}}) {{ employee }} }}',
        )
        assert created["data"]["createEmployee"] == {"employee": employee}, created
    client = team_client
    key = {"pk": {"S": "$taskapp#employee_ann"}, "sk": {"S": "$employee_1"}}
    ann = client.get_item(TableName="electro", Key=key)["Item"]
    assert ann["gsi2pk"] == {"S": "$taskapp#manager_"}  # ElectroDB's partial key, not left out
    assert ann["gsi2sk"] == {"S": "$employee_1#employee_ann"}
    key["pk"] = {"S": "$taskapp#employee_bo"}
    assert client.get_item(TableName="electro", Key=key)["Item"]["gsi2pk"] == {
        "S": "$taskapp#manager_ann"
    }


async def test_an_on_pattern_fills_its_partition_from_the_owners_stored_field(
    team_http: TeamTable,
) -> None:
    http = await team_http(SALES, SALES_TABLE, SALES_ITEMS)
    body = await gql(
        http, '{ customer(id: "c2") { colleagues { totalCount edges { node { id } } } } }'
    )
    colleagues = body["data"]["customer"]["colleagues"]
    assert [e["node"]["id"] for e in colleagues["edges"]] == ["CUST#c1", "CUST#c2", "CUST#c3"]
    assert colleagues["totalCount"] == 3


async def test_writes_to_a_number_keyed_table_keep_their_guarantees(
    team_http: TeamTable,
    team_client: Any,
) -> None:
    http = await team_http(NUMBERED, NUMBERED_TABLE, NUMBERED_ITEMS)
    created = await gql(
        http,
        'mutation { createCustomerOrder(input: {customerId: "Maria Anders", orderId: 77, '
        "total: 1.5}) { orderId total } }",
    )
    assert created["data"]["createCustomerOrder"] == {"orderId": 77, "total": 1.5}, created
    key = {"CustomerId": {"S": "Maria Anders"}, "OrderId": {"N": "77"}}
    assert team_client.get_item(TableName="customer-orders", Key=key)["Item"]["total"] == {
        "N": "1.5"
    }
    again = await gql(
        http,
        'mutation { createCustomerOrder(input: {customerId: "Maria Anders", orderId: 77, '
        "total: 2}) { orderId } }",
    )
    assert again["errors"][0]["extensions"]["code"] == "CONFLICT"  # the key is taken
    updated = await gql(
        http,
        'mutation { updateCustomerOrder(input: {customerId: "Maria Anders", orderId: 77, '
        "total: 3}) { total } }",
    )
    assert updated["data"]["updateCustomerOrder"] == {"total": 3.0}
    deleted = await gql(
        http, 'mutation { deleteCustomerOrder(customerId: "Maria Anders", orderId: 77) { id } }'
    )
    assert "errors" not in deleted, deleted
    assert "Item" not in team_client.get_item(TableName="customer-orders", Key=key)


# A binary sort key: a base64 String in GraphQL, bytes in the table, compared as bytes.
BINARY = """
table:
  name: blobs
  partitionKey: owner
  sortKey: {name: digest, type: B}
types:
  Blob:
    key: {pk: "{ownerId}", sk: "{digest}"}
    fields:
      ownerId: {type: String!, attribute: owner}
      digest: {type: String!, attribute: digest}
      size: Int
queries:
  blobsOf:
    type: Blob
    partition: "{ownerId}"
    sort: {between: [from, to], template: "{digest}"}
"""
BINARY_TABLE = _table("blobs", "owner", "digest", types={"digest": "B"})
BINARY_ITEMS: list[dict[str, Any]] = [
    {"owner": "ann", "digest": bytes([b]), "size": b} for b in (1, 2, 200, 255)
]


async def test_a_binary_sort_key_is_base64_in_graphql_and_bytes_in_the_table(
    team_http: TeamTable,
) -> None:
    http = await team_http(BINARY, BINARY_TABLE, BINARY_ITEMS)
    b64 = {b: base64.b64encode(bytes([b])).decode() for b in (1, 2, 200, 255)}
    body = await gql(
        http,
        'query($from: String, $d: String!) { blobsOf(ownerId: "ann", from: $from) '
        '{ edges { node { digest size } } } blob(ownerId: "ann", digest: $d) { size } }',
        {"from": b64[2], "d": b64[200]},
    )
    assert "errors" not in body, body
    assert [e["node"] for e in body["data"]["blobsOf"]["edges"]] == [
        {"digest": b64[2], "size": 2},
        {"digest": b64[200], "size": 200},
        {"digest": b64[255], "size": 255},
    ]
    assert body["data"]["blob"] == {"size": 200}


async def test_a_path_hops_over_a_list_of_ids(team_http: TeamTable) -> None:
    """Seed 000: a user's products through their groups' lists of product ids."""
    http = await team_http(REFS, {**ACCESS_TABLE, "TableName": "refs"}, REFS_ITEMS)
    body = await gql(
        http,
        '{ user(id: "alice") { products { id name } yes: mayUse(productId: "p1") '
        'no: mayUse(productId: "p3") } }',
    )
    assert "errors" not in body, body
    alice = body["data"]["user"]
    assert alice["products"] == [
        {"id": "PRODUCT#p2", "name": "P2"},
        {"id": "PRODUCT#p1", "name": "P1"},
    ]
    assert (alice["yes"], alice["no"]) == (True, False)
    # the user and its edges, then the groups' items (one batch), then the products (one batch)
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 3, "Query": 1}


def test_a_filter_on_a_path_ending_with_a_reference_is_refused() -> None:
    broken = REFS.replace(
        "path: [groups, products]}\n      mayUse",
        "path: [groups, products], where: {name: x}}\n      mayUse",
    )
    assert broken != REFS
    with pytest.raises(ModelError) as raised:
        parse_model(broken, "refs.yaml")
    assert any(
        "Group.products is a reference (no edge item)" in line for line in raised.value.lines
    ), raised.value.lines


async def test_a_query_over_a_node_partition_of_an_index_on_the_sort_key_answers_the_node_once(
    team_http: TeamTable,
) -> None:
    """The GSI_1 partition PROJ#p1 holds the project's own item and its three incoming edges;
    an access pattern answering Projects there answers p1 once: an edge whose target is the
    partition's node is not another answer (its source, an Employee, is not a Project)."""
    model = HR.replace(
        "edges:\n",
        'queries:\n  projectsX: {type: Project, index: GSI_1, partition: "PROJ#{id}"}\nedges:\n',
        1,
    )
    http = await team_http(model, HR_TABLE, HR_ITEMS)
    body = await gql(http, '{ projectsX(id: "p1") { totalCount edges { node { title } } } }')
    assert body["data"]["projectsX"] == {"totalCount": 1, "edges": [{"node": {"title": "Apollo"}}]}
