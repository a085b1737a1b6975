"""Round trips of tables as teams have them: each written with boto3 in its own style, drafted by
`edgewise infer`, checked by `edgewise check-model`, served in-process, and every declared type
answered by `node(id:)` for an item found by a brute force over the items."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

from graph.dynamo.embedded import EmbeddedDynamoDB
from model import load_model
from tests.engine.test_team_tables import HR_ITEMS
from tests.helpers import gql
from tests.model.listings import Listing, answered, listings, wanted
from tests.model.team_tables import (
    Index,
    draft,
    expected,
    lookups,
    served,
    served_nodes,
    write_table,
)


def _invoices() -> list[dict[str, Any]]:
    """AWS's adjacency-list example: invoices and bills keyed `Invoice-92551`, `Bill-4224663`,
    an edge item per bill of an invoice, contacts named by people's names; `Data` overloaded
    (an invoice's date, a bill's due date, a contact's name), the sort key of `GSI_1`, whose
    partition key is the table's sort key."""
    items = []
    contacts = ["Maria Anders", "Ana Trujillo", "Thomas Hardy"]
    for n in range(6):
        inv = f"Invoice-{92551 + n}"
        items.append(
            {"PK": inv, "SK": inv, "Data": f"2026-01-{n + 10}", "Amount": Decimal(100 + n)}
        )
        contact = contacts[n % 3]
        items.append(
            {"PK": inv, "SK": f"Contact-{contact}", "contactName": contact, "Data": contact}
        )
    for b in range(4):
        bill = f"Bill-{4224663 + b}"
        due = f"2026-02-0{b + 1}"
        items.append({"PK": bill, "SK": bill, "Status": "PAID" if b % 2 else "DUE", "Data": due})
        items.append({"PK": f"Invoice-{92551 + b}", "SK": bill, "BillAmount": Decimal(10 + b)})
        items.append({"PK": f"Invoice-{92552 + b}", "SK": bill, "BillAmount": Decimal(20 + b)})
    return items


def _electrodb() -> list[dict[str, Any]]:
    items = []
    for e in ["JLowe", "tyler", "Ann Marie"]:
        items.append(
            {
                "pk": f"$taskapp#employee_{e.lower()}",
                "sk": "$employee_1",
                "employee": e,
                "firstName": e.split()[0],
                "office": "gw zoo",
                "gsi1pk": "$taskapp#office_gw zoo",
                "gsi1sk": f"$workplaces#employee_1#employee_{e.lower()}",
                "__edb_e__": "employee",
                "__edb_v__": "1",
            }
        )
    for t, p, e in [
        ("t1", "p1", "jlowe"),
        ("t2", "p1", "tyler"),
        ("t3", "p2", "jlowe"),
        ("t4", "p2", "tyler"),
    ]:
        items.append(
            {
                "pk": f"$taskapp#task_{t}",
                "sk": f"$task_1#project_{p}",
                "task": t,
                "project": p,
                "employee": e,
                "points": Decimal(3),
                "status": "in-progress" if t in ("t1", "t4") else "open",
                "gsi1pk": f"$taskapp#project_{p}",
                "gsi1sk": f"$task_1#task_{t}",
                "__edb_e__": "task",
                "__edb_v__": "1",
            }
        )
    items.append(
        {
            "pk": "$taskapp#country_usa#state_wa",
            "sk": "$office_1#city_seattle#zip_98101#office_gw zoo",
            "country": "USA",
            "state": "WA",
            "city": "Seattle",
            "zip": "98101",
            "office": "gw zoo",
            "gsi1pk": "$taskapp#office_gw zoo",
            "gsi1sk": "$workplaces#office_1",
            "__edb_e__": "office",
            "__edb_v__": "1",
        }
    )
    return items


def _toolbox() -> list[dict[str, Any]]:
    items = []
    for c in ["c1", "c2", "c3"]:
        items.append(
            {
                "pk": f"CUSTOMER#{c}",
                "sk": f"CUSTOMER#{c}",
                "_et": "Customer",
                "_ct": "2026-01-01T00:00:00.000Z",
                "_md": "2026-01-02T00:00:00.000Z",
                "name": c.upper(),
            }
        )
    for p in ["p1", "p2"]:
        items.append(
            {
                "pk": f"PRODUCT#{p}",
                "sk": f"PRODUCT#{p}",
                "_et": "Product",
                "_ct": "2026-01-01T00:00:00.000Z",
                "_md": "2026-01-02T00:00:00.000Z",
                "title": f"Widget {p}",
            }
        )
    for i, c in enumerate(["c1", "c1", "c2"]):
        items.append(
            {
                "pk": f"CUSTOMER#{c}",
                "sk": f"ORDER#o{i}",
                "_et": "Order",
                "_ct": "2026-01-01T00:00:00.000Z",
                "_md": "2026-01-02T00:00:00.000Z",
                "productIds": ["p1", "p2"][: i + 1],
                "customerId": c,
            }
        )
    return items


def _students() -> list[dict[str, Any]]:
    return [
        {"studentID": f"stu#{s}", "courseID": f"cs#{c}", "grade": "A"}
        for s, c in [(101, 201), (101, 202), (102, 201), (103, 203), (102, 203)]
    ]


def _customer_orders() -> list[dict[str, Any]]:
    """AWS's CustomerOrders: a string partition key (`Maria Anders`), a number sort key, and a
    local index on a number creation date projecting two attributes."""
    return [
        {
            "CustomerId": customer,
            "OrderId": n,
            "OrderCreationDate": date,
            "ProductName": f"p{n}",
            "ProductCategory": "c",
            "total": Decimal(n) / 10,
        }
        for customer, n, date in [
            ("Maria Anders", 5, 20200105),
            ("Maria Anders", 9, 20190301),
            ("Maria Anders", 10, 20210707),
            ("Maria Anders", 55779, 20200520),
            ("Ana Trujillo", 7, 20200101),
        ]
    ]


def _blobs() -> list[dict[str, Any]]:
    """A binary sort key: content digests per owner."""
    return [
        {"owner": o, "digest": bytes([b, 7]), "size": b}
        for o, b in [("ann", 1), ("ann", 200), ("bo", 3)]
    ]


def _northwind() -> list[dict[str, Any]]:
    """References as teams store them: an order's item under a constant sort key (`ORDER`)
    holding its customer's whole key (`customerID#VINET`), its lines in its partition, each
    with a product id, and groups holding lists of product ids."""
    items: list[dict[str, Any]] = [
        {"PK": f"PRODUCT#p{n}", "SK": f"PRODUCT#p{n}", "productName": f"Widget {n}"}
        for n in (1, 2, 3)
    ]
    for c, name in (("VINET", "Vins et alcools"), ("TOMSP", "Toms Spezialitäten")):
        items.append({"PK": f"customerID#{c}", "SK": f"customerID#{c}", "companyName": name})
    for order, customer, lines in (
        ("10248", "VINET", ("p1", "p3")),
        ("10249", "TOMSP", ("p2",)),
        ("10250", "VINET", ("p1", "p2", "p3")),
    ):
        items.append(
            {"PK": f"orderID#{order}", "SK": "ORDER", "customerID": f"customerID#{customer}"}
        )
        for n, product in enumerate(lines):
            items.append(
                {
                    "PK": f"orderID#{order}",
                    "SK": f"productID#{product}",
                    "productId": product,
                    "quantity": n + 1,
                }
            )
    items += [
        {"PK": "GROUP#g1", "SK": "GROUP#g1", "Subscriptions": ["p2", "p1"]},
        {"PK": "GROUP#g2", "SK": "GROUP#g2", "Subscriptions": ["p3"]},
    ]
    return items


def _hr() -> list[dict[str, Any]]:
    """AWS's "Overloading global secondary indexes" example: an employee's partition
    `HR-EMPLOYEE1` holds the employee's item (`EMPLOYEE1`, `Data` their name), their warehouse
    (`Warehouse_01`, `Data` since when) and their confidential record (`HR_confidential`, `Data`
    the hire date) and a quarter's sales (`2017-Q1`); `GSI_1` is keyed on the sort key and
    `Data`."""
    items: list[dict[str, Any]] = []
    people = ["Murphy, John", "Roberts, Ann", "Nguyen, Bao", "Smith, Alex"]
    for n, name in enumerate(people, start=1):
        pk = f"HR-EMPLOYEE{n}"
        items += [
            {"PK": pk, "SK": f"EMPLOYEE{n}", "Data": name},
            {"PK": pk, "SK": f"Warehouse_0{n % 2 + 1}", "Data": f"2017-0{n}-13"},
            {"PK": pk, "SK": "HR_confidential", "Data": f"201{n}-11-06", "Salary": 1000 * n},
            {"PK": pk, "SK": "2017-Q1", "Data": f"{5000 * n}"},  # quarterly sales
        ]
    return items


def _members_and_posts() -> list[dict[str, Any]]:
    """Users that exist only as partitions: their group memberships (edges to group items) and
    their posts (items under their partition)."""
    items: list[dict[str, Any]] = [
        {"PK": f"GROUP#{g}", "SK": f"GROUP#{g}", "title": f"Group {g}"} for g in ("g1", "g2")
    ]
    for user, group, role in (
        ("alice", "g1", "admin"),
        ("bob", "g1", "member"),
        ("alice", "g2", "member"),
    ):
        items.append({"PK": f"USER#{user}", "SK": f"GROUP#{group}", "role": role})
    for user, post in (("alice", "p1"), ("bob", "p2"), ("alice", "p3")):
        items.append({"PK": f"USER#{user}", "SK": f"POST#{post}", "text": f"post {post}"})
    return items


def _round_trip(
    dynamodb: EmbeddedDynamoDB,
    tmp_path: Path,
    name: str,
    items: list[dict[str, Any]],
    keys: tuple[str, str] = ("PK", "SK"),
    indexes: tuple[Index, ...] = (),
    types: dict[str, str] | None = None,
    local: tuple[tuple[str, str, tuple[str, ...]], ...] = (),
) -> tuple[str, set[str], dict[str, Any]]:
    """The draft's text, its type names, and each type's node(id:) answer."""
    dynamodb.reset()
    write_table(dynamodb.url, name, items, keys, indexes, types, local)
    path, text = draft(dynamodb, name, tmp_path)
    model = load_model(str(path))
    ids = lookups(model, items)
    assert set(ids) == set(model.types), "a declared type fits no item"
    answers = asyncio.run(served_nodes(dynamodb, path, name, ids))
    assert answers == expected(model, ids)  # every type, every stored field
    asked = listings(model, items)
    got = asyncio.run(served_listings(dynamodb, path, name, asked))
    assert got == {x.label: wanted(x) for x in asked}  # every listing, by brute force
    return text, set(model.types), answers


async def served_listings(
    dynamodb: EmbeddedDynamoDB, path: Path, name: str, asked: list[Listing]
) -> dict[str, Any]:
    """Each listing's answer (ids, totalCount) from the served draft."""
    out = {}
    async with served(dynamodb, path, name) as http:
        for listing in asked:
            out[listing.label] = answered(
                listing, await gql(http, listing.query, listing.variables)
            )
    return out


def test_keys_separated_by_dashes_with_spaces_in_ids(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "invoices", _invoices(), indexes=(("GSI_1", "SK", "Data"),)
    )
    assert types == {"Invoice", "Bill", "Contact"}  # 3 of 3, and the edge
    assert 'key: {pk: "Invoice-{invoiceId}", sk: "Contact-{contactName}"}' in text
    assert "from: Invoice" in text and "to: Bill" in text
    # the overloaded Data: a field of each type where nothing else holds it, GSI_1's sort key
    assert 'GSI_1: {pk: "Invoice-{id}", sk: "{date}"}' in text
    # named after what it holds (a date), not after the attribute
    assert "date: {type: Date!, attribute: Data}" in text and "overloaded: Data" in text
    assert "data:" not in text
    assert 'GSI_1: {pk: "Contact-{contactName}", sk: "{contactName}"}' in text


def test_an_electrodb_table_is_drafted_in_its_own_terms(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "tasks", _electrodb(), ("pk", "sk"), (("gsi1", "gsi1pk", "gsi1sk"),)
    )
    assert types == {"Employee", "Task", "Office"}  # 3 of 3
    assert "# An ElectroDB table (__edb_e__ and __edb_v__ on 8 of 8 items)" in text
    assert 'key: {pk: "$taskapp#employee_{employee}", sk: "$employee_1"}' in text
    assert 'gsi1: {pk: "$taskapp#project_{project}", sk: "$task_1#task_{task}"}' in text
    assert "keyCasing: lower  # guess: keys hold lower-cased values (" in text
    assert "edbV" not in text
    # a task's employee is the key value of an Employee (one placeholder): a reference
    assert "employeeNode: {type: Employee, ref: employee}" in text
    # few lower-case values: an enum mapping GraphQL values to the strings stored
    assert '  TaskStatus: {IN_PROGRESS: "in-progress", OPEN: open}  # guess: 2 values' in text
    assert "status: TaskStatus!  # on all 4 items, 2 distinct values: an enum whose" in text
    assert "# Collection 'workplaces': Employee, Office share gsi1's partition" in text
    # the collection: one query of the union of its entities
    assert "  workplaces:  # guess: ElectroDB's collection 'workplaces'" in text
    assert "    types: [Employee, Office]\n    union: Workplace\n    index: gsi1\n" in text


def test_a_dynamodb_toolbox_table_is_drafted_in_its_own_terms(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "toolbox", _toolbox(), ("pk", "sk"))
    assert types == {"Customer", "Product", "Order"}  # 3 of 3
    assert "# A dynamodb-toolbox table (_et, _ct, _md on 8 of 8 items)" in text
    assert "typeAttribute: _et" in text
    assert "timestamps: {created: _ct, modified: _md}  # guess: ISO date-times in _ct" in text
    assert "created: {type: DateTime!, attribute: _ct}" in text
    assert "modified: {type: DateTime!, attribute: _md}" in text
    assert 'productIds: "[String!]!"' in text
    # a list whose elements are ids of a type: a ref over the list
    assert 'products: {type: "[Product!]!", ref: productIds}  # guess: every element' in text


def test_a_table_of_only_edge_items_with_its_reverse_lookup(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(
        dynamodb,
        tmp_path,
        "courses",
        _students(),
        ("studentID", "courseID"),
        (("reverse", "courseID", "studentID"),),
    )
    # Student and Course exist only as key values: implicit types, named after the key
    # attributes holding them, and the items are edges between them, read back by `reverse`
    assert types == {"Student", "Course"}  # 2 of 2
    assert '  Student:  # guess: an implicit node: "stu#…" keys appear only inside' in text
    assert "named after the key attribute studentID" in text
    assert '    key: "stu#{id}"\n    implicit: true\n' in text
    assert '    key: "cs#{id}"\n    implicit: true\n' in text
    assert "    from: Student\n    to: Course\n" in text
    assert "reverse: {field: students, index: reverse}" in text


def _members() -> list[dict[str, Any]]:
    """Seed 000's replicas under users named by people's names: `USER#Maria Anders` /
    `GROUPSUB#prod1|group1`."""
    names = ["Maria Anders", "Ana Trujillo", "Thomas Hardy"]
    items: list[dict[str, Any]] = [
        {"PK": f"USER#{n}", "SK": f"USER#{n}", "userName": n} for n in names
    ]
    pairs = [("prod1", "group1"), ("prod2", "group1"), ("prod1", "group2")]
    for n in names:
        for product, group in pairs[: names.index(n) + 1]:
            items.append(
                {
                    "PK": f"USER#{n}",
                    "SK": f"GROUPSUB#{product}|{group}",
                    "productId": product,
                    "groupId": group,
                    "status": "ACTIVE",
                }
            )
    return items


def test_ids_with_spaces_and_parts_joined_by_another_separator(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "members", _members())
    assert types == {"User", "Groupsub"}  # 2 of 2
    # 'Maria Anders' is no `{id}`: the placeholder is named after the attribute holding it
    assert 'key: {pk: "USER#{userName}", sk: "USER#{userName}"}' in text
    assert 'sk: "GROUPSUB#{productId}|{groupId}"}' in text
    assert "ids such as 'Ana Trujillo' fall outside the id alphabet" in text


def _saas() -> list[dict[str, Any]]:
    """Seed 001's SaaS table (Alex DeBrie): an organisation's item `ORG#<name>` /
    `METADATA#<name>`, its users `USER#<name>` in its partition, tickets `TICKET#<id>` listed per
    user through GSI1 (`ORG#<org>#USER#<user>` / `TICKET#<id>`)."""
    items: list[dict[str, Any]] = []
    orgs = {
        "MICROSOFT": ("Enterprise", [("BILLGATES", "Bill Gates"), ("SATYANADELLA", "Satya N")]),
        "AMAZON": ("Pro", [("JEFFBEZOS", "Jeff Bezos")]),
    }
    for org, (plan, users) in orgs.items():
        items.append(
            {"PK": f"ORG#{org}", "SK": f"METADATA#{org}", "OrgName": org, "PlanType": plan}
        )
        for user, name in users:
            items.append(
                {
                    "PK": f"ORG#{org}",
                    "SK": f"USER#{user}",
                    "UserName": name,
                    "UserType": "Admin",
                    "GSI1PK": f"ORG#{org}#USER#{user}",
                    "GSI1SK": f"USER#{user}",
                }
            )
    for ticket, user in (("1569468714-JM14", "BILLGATES"), ("1570952398-MQR0", "SATYANADELLA")):
        items.append(
            {
                "PK": f"TICKET#{ticket}",
                "SK": f"TICKET#{ticket}",
                "CreatedAt": "2019-09-25 22:31:54",
                "GSI1PK": f"ORG#MICROSOFT#USER#{user}",
                "GSI1SK": f"TICKET#{ticket}",
            }
        )
    return items


def test_a_partitions_own_item_under_a_metadata_sort_key(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "saas", _saas(), indexes=(("GSI1", "GSI1PK", "GSI1SK"),)
    )
    assert types == {"Org", "User", "Ticket"}  # 3 of 3
    assert 'key: {pk: "ORG#{orgName}", sk: "METADATA#{orgName}"}' in text
    assert '# the item of its "ORG#…" partition' in text
    assert 'GSI1: {pk: "ORG#{orgId}#USER#{id}", sk: "USER#{id}"}' in text


def test_a_number_sort_key_and_a_local_index(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> None:
    text, types, _ = _round_trip(
        dynamodb,
        tmp_path,
        "customer-orders",
        _customer_orders(),
        ("CustomerId", "OrderId"),
        types={"OrderId": "N", "OrderCreationDate": "N"},
        local=(("byDate", "OrderCreationDate", ("ProductCategory", "ProductName")),),
    )
    assert types == {"CustomerOrder"}  # 1 of 1
    assert "  sortKey: {name: OrderId, type: N}\n" in text
    assert (
        "    byDate: {partitionKey: CustomerId, sortKey: {name: OrderCreationDate, type: N}, "
        "local: true, projection: [ProductCategory, ProductName]}" in text
    )
    assert 'key: {pk: "{customerId}", sk: "{orderId}"}' in text
    assert "orderId: {type: Int!, attribute: OrderId}" in text
    assert "customerId: {type: String!, attribute: CustomerId}" in text
    assert 'sort: {template: "{orderId}", between: [from, to]}' in text
    assert 'index: byDate\n    partition: "{customerId}"\n' in text


def test_a_binary_sort_key(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> None:
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "blobs", _blobs(), ("owner", "digest"), types={"digest": "B"}
    )
    assert types == {"Blob"}  # 1 of 1
    assert "  sortKey: {name: digest, type: B}\n" in text
    assert 'key: {pk: "{owner}", sk: "{digest}"}' in text
    assert "digest: String!  # on all 3 items, a binary key: base64 in GraphQL" in text


def test_a_constant_sort_key_parent_and_references_as_teams_store_them(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "northwind", _northwind())
    assert types == {"Product", "Customer", "Group", "Order", "OrderProduct"}  # 5 of 5
    # the order's own item under the constant sort key ORDER: a parent of its lines
    assert 'key: {pk: "orderID#{id}", sk: ORDER}' in text
    assert "every item of this shape has the sort key 'ORDER', one per partition" in text
    assert "parent: {type: Order, field: order, collection: orderProducts" in text
    # customerID holds the customer's whole key; Subscriptions a list of product ids
    assert "customer: {type: Customer, ref: {field: customerID, holds: key}}" in text
    assert 'products: {type: "[Product!]!", ref: subscriptions}' in text
    assert "product: {type: Product, ref: productId}" in text


def test_aws_gsi_overloading_example(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> None:
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "hr-table", _hr(), indexes=(("GSI_1", "SK", "Data"),)
    )
    assert types == {"Employee", "Warehouse", "HrConfidential", "Quarter"}  # 4 of 4
    # the employee's own item: its sort key repeats the partition's value after `HR-`
    assert 'key: {pk: "HR-EMPLOYEE{employeeId}", sk: "EMPLOYEE{employeeId}"}' in text
    assert 'key: {pk: "HR-EMPLOYEE{employeeId}", sk: "Warehouse_{id}"}' in text
    assert 'key: {pk: "HR-EMPLOYEE{employeeId}", sk: HR_confidential}' in text
    # Data, overloaded, read back into each type's own field, named by what it holds
    assert "name: {type: String!, attribute: Data}" in text
    assert "date: {type: Date!, attribute: Data}" in text and "data:" not in text
    assert 'GSI_1: {pk: "EMPLOYEE{employeeId}", sk: "{name}"}' in text
    # the page's access patterns: employees of a warehouse, recent hires by date
    assert 'partition: "Warehouse_{id}"\n    sort: {template: "{date}"' in text
    # a quarter's sort key has no word of its own, but is one literal: a type of that sort key,
    # and the comment says why other quarters cannot be declared without a type attribute
    assert "Quarter:  # a keyed node" in text and "left out" not in text
    assert 'key: {pk: "HR-EMPLOYEE{employeeId}", sk: "2017-Q1"}' in text
    assert "their template would be '{year}-Q{quarter}', which begins with a placeholder" in text
    assert "('EMPLOYEE1-Q1' fits both it and the EMPLOYEE… keys)" in text
    assert "amount: {type: String!, attribute: Data}" in text  # the quarter's sales
    assert 'partition: "2017-Q1"\n    sort: {template: "{amount}"}' in text
    assert 'partition: HR_confidential\n    sort: {template: "{date}", between: [from, to]}' in text


def test_a_reverse_edge_over_an_index_on_the_sort_key_with_another_sort_key(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    """AWS's relational-to-adjacency-list example (test_team_tables.HR_ITEMS): `Data` a name on
    a node item, a date on an edge item, GSI_1 keyed on the sort key and `Data`."""
    text, types, _ = _round_trip(
        dynamodb, tmp_path, "hr-table", HR_ITEMS, indexes=(("GSI_1", "SK", "Data"),)
    )
    assert types == {"Employee", "Project"}  # 2 of 2, and the edge
    assert "date: {type: Date!, attribute: Data}  # on all 3 items, ISO dates; overloaded" in text
    assert "reverse: {field: employees, index: GSI_1}  # guess: GSI_1 is keyed on the" in text
    # one item's Data is no constant: the project's name
    assert 'GSI_1: {pk: "PROJ#{id}", sk: "{name}"}' in text


def test_items_under_partitions_no_item_owns_hang_on_an_implicit_node(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "posts", _members_and_posts())
    assert types == {"Group", "User", "Post"}  # 3 of 3, and the edge
    assert '  User:  # guess: an implicit node: "USER#…" keys appear only inside' in text
    assert "parent: {type: User, field: user, collection: posts" in text
    assert "    from: User\n    to: Group\n" in text
    assert "an edge from an implicit type" in text and "a child of an implicit type" in text


def _shipments() -> list[dict[str, Any]]:
    """References to a composite key and over sets: an order's items live in its partition
    (`ORDER#o1` / `ITEM#i1`), a shipment names one by `orderId` and `itemId`; a group holds a
    number set (NS) of product ids and a string set (SS) of tag ids."""
    items: list[dict[str, Any]] = []
    for order in ("o1", "o2"):
        items.append({"PK": f"ORDER#{order}", "SK": f"ORDER#{order}", "total": Decimal(5)})
        for item in ("i1", "i2"):
            items.append({"PK": f"ORDER#{order}", "SK": f"ITEM#{item}", "qty": Decimal(7)})
    for n, (order, item) in enumerate((("o1", "i1"), ("o1", "i2"), ("o2", "i1"))):
        items.append(
            {"PK": f"SHIPMENT#s{n}", "SK": f"SHIPMENT#s{n}", "orderId": order, "itemId": item}
        )
    items += [{"PK": f"PRODUCT#{n}", "SK": f"PRODUCT#{n}", "name": f"w{n}"} for n in (1, 2, 3)]
    items += [{"PK": f"TAG#{t}", "SK": f"TAG#{t}", "label": t} for t in ("red", "blue")]
    items += [
        {
            "PK": "GROUP#g1",
            "SK": "GROUP#g1",
            "productIds": {Decimal(1), Decimal(3)},
            "tags": {"red", "blue"},
        },
        {"PK": "GROUP#g2", "SK": "GROUP#g2", "productIds": {Decimal(2)}, "tags": {"red"}},
    ]
    return items


def test_references_to_a_composite_key_and_over_number_and_string_sets(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "shipments", _shipments())
    assert types == {"Order", "Item", "Shipment", "Product", "Tag", "Group"}  # 6 of 6
    # (orderId, itemId) is, on every shipment, the key of a sampled Item: a composite ref
    assert "item: {type: Item, ref: {orderId: orderId, id: itemId}}  # guess: on all 3" in text
    assert "order: {type: Order, ref: orderId}" in text
    # a number set and a string set of ids: refs over the sets
    assert 'products: {type: "[Product!]!", ref: productIds}  # guess: every element of ' in text
    assert "productIds (a number set (NS)) is the id of a sampled Product item" in text
    assert 'tagNodes: {type: "[Tag!]!", ref: tags}  # guess: every element of tags (a' in text
    # a tag's label repeats its own id: no reference to itself
    assert "labelNode" not in text


def _follows() -> list[dict[str, Any]]:
    """Users that exist only as keys, following each other (`USER#a` / `USER#b`) and writing
    posts under their partitions: no item has pk = sk."""
    items: list[dict[str, Any]] = [
        {"PK": f"USER#{a}", "SK": f"USER#{b}", "since": f"2026-01-0{n + 1}"}
        for n, (a, b) in enumerate((("ann", "bo"), ("ann", "cy"), ("bo", "cy"), ("cy", "ann")))
    ]
    items += [
        {"PK": f"USER#{a}", "SK": f"POST#{p}", "text": f"post {p}"}
        for a, p in (("ann", "p1"), ("bo", "p2"), ("ann", "p3"))
    ]
    return items


def test_an_edge_between_two_nodes_of_one_implicit_type(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "follows", _follows())
    assert types == {"User", "Post"}  # 2 of 2, and the edge
    assert '  User:  # guess: an implicit node: "USER#…" keys appear only inside' in text
    assert "  USER_TO_USER:  # guess: an edge User -> User: 4 items" in text
    assert "an edge between two nodes of one implicit type (" in text
    assert "    from: User\n    to: User\n" in text
    assert "parent: {type: User, field: user, collection: posts" in text


def _people() -> list[dict[str, Any]]:
    """An index sort key carrying a literal prefix and a value no other attribute holds:
    `GSI1SK = NAME#John`, users listed by name in GSI1's partition `USERS`."""
    return [
        {"PK": f"USER#u{n}", "SK": f"USER#u{n}", "GSI1PK": "USERS", "GSI1SK": f"NAME#{name}"}
        | ({"email": f"{name.lower()}@example.com"} if n else {})
        for n, name in enumerate(("John", "Ann", "Bao Nguyen"))
    ]


def test_an_index_value_with_a_literal_prefix_is_a_field_named_after_it(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, answers = _round_trip(
        dynamodb, tmp_path, "people", _people(), indexes=(("GSI1", "GSI1PK", "GSI1SK"),)
    )
    assert types == {"User"}  # 1 of 1
    assert 'GSI1: {pk: USERS, sk: "NAME#{name}"}  # guess: GSI1PK, GSI1SK on all 3' in text
    assert "      name: String  # guess: written into GSI1SK (GSI1's key) as NAME#{name}" in text
    assert "An index key is not read back into a field: null on items" in text
    assert "declare its template by hand" not in text
    assert "  usersByName:  # guess: User items are written to GSI1 this way" in text
    assert answers["User"]["name"] is None  # stored only inside GSI1SK
