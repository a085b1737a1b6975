"""Tables as teams have them, written with boto3 straight into moto (not through Edgewise),
then served: each answer is compared with what DynamoDB's own semantics give over the items
written, and each cost read from the trace."""

from __future__ import annotations

from typing import Any

from tests.conftest import TeamTable
from tests.helpers import gql


def _keys(*names: str) -> list[dict[str, str]]:
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


# AWS's relational-to-adjacency-list layout: node and edge items side by side, and one GSI on
# the table's sort key whose sort key is an overloaded `Data` attribute (a name on a node, a
# date on an edge), so an index partition holds the node's own item beside its incoming edges.
HR = """
table:
  name: hr
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
HR_TABLE = {
    "TableName": "hr",
    "KeySchema": [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": _keys("PK", "SK", "Data"),
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "GSI_1",
            "KeySchema": [
                {"AttributeName": "SK", "KeyType": "HASH"},
                {"AttributeName": "Data", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
}
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
  branches:
    type: Branch
    index: GSI1
    partition: "BRANCHES"
"""
SALES_TABLE = {
    "TableName": "sales",
    "KeySchema": [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": _keys("PK", "SK", "GSI1PK", "GSI1SK"),
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "GSI1",
            "KeySchema": [
                {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
}
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
ACCESS_TABLE = {
    "TableName": "access",
    "KeySchema": [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": _keys("PK", "SK"),
}
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
    assert body["extensions"]["dynamodb"]["rounds"] == 2  # the user, then its three Queries
