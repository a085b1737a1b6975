"""The planned executor (server.engine.compiled) answers exactly what graphql-core answers, on
the demo and order-entry models over moto: the same data and errors for every query, whether
it is compiled, given up on (graphql-core answers) or never compiled."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from graphql import execute, parse
from graphql.execution import Executor

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from server.engine import engine_for
from server.errors import format_error
from server.http.auth import ADMIN, Principal
from tests.helpers import LEAN

Run = Callable[[str, dict[str, Any] | None], Awaitable[tuple[Any, Any, str]]]
ANSWERED, GAVE_UP, NEVER = "answered", "gave up: graphql-core answered", "never compiled"

DEMO = [
    # the benchmark's chain, with variables, aliases, a named and an inline fragment
    (
        """query Chain($id: ID!) { user(id: $id) { __typename id name ...Counts
             mine: groups(first: 2) { pageInfo { hasNextPage endCursor } edges { cursor role
               node { ... on Group { name } subscriptions { edges { plan status validUntil
                 node { id name } } } } } } } }
           fragment Counts on User { groups { totalCount } }""",
        {"id": "alice"},
        ANSWERED,
    ),
    ('{ a: user(id: "alice") { name } b: user(id: "bob") { email version } }', None, ANSWERED),
    ('{ user(id: "nobody") { name groups { edges { node { name } } } } }', None, ANSWERED),
    ('{ product(id: "prod2") { subscribers { edges { node { id name } } } } }', None, ANSWERED),
    (
        '{ organization(id: "microsoft") { name members { edges { role node { name '
        "organization { id name } } } } } }",
        None,
        ANSWERED,
    ),
    # path fields walk their hops themselves, after the prefetch: their kind says so, and
    # graphql-core answers
    ('{ user(id: "alice") { products { product { name } via { name } } } }', None, NEVER),
    ('{ user(id: "alice") { hasAccess(productId: "prod1") } }', None, NEVER),
    (  # a page read backward, its pageInfo both ways
        '{ user(id: "alice") { groups(last: 1) { totalCount pageInfo { hasNextPage '
        "hasPreviousPage startCursor endCursor } edges { cursor role node { name } } } } }",
        None,
        ANSWERED,
    ),
    ('{ user(id: "alice") { groups(first: 500) { totalCount } } }', None, GAVE_UP),  # an error
    ('{ user(id: "alice") { groups(first: 1, last: 1) { totalCount } } }', None, GAVE_UP),
    ('{ user(id: "a#b") { name } }', None, ANSWERED),  # BAD_USER_INPUT
    ('{ node(id: "USER#alice") { id __typename ... on User { name } } }', None, ANSWERED),
    (  # an interface in a list, a missing node and a node of another type among them
        '{ nodes(ids: ["USER#alice", "USER#nobody", "GROUP#group1"]) { id __typename '
        "... on User { name groups { edges { node { name } } } } ... on Group { name } } }",
        None,
        ANSWERED,
    ),
    ('{ user(id: "alice") { name @include(if: true) } }', None, NEVER),  # a directive
    ("{ __schema { queryType { name } } }", None, NEVER),  # introspection
]

ORDER_ENTRY = [
    (
        '{ employee(id: "e1") { name orders(status: OPEN) { edges { node { id total '
        "status customer { name } } } } } }",
        None,
        ANSWERED,
    ),
    (
        '{ order(id: "o1") { status total items { edges { node { productId quantity } } } } }',
        None,
        ANSWERED,
    ),
    (
        "{ orders(status: OPEN, first: 2) { totalCount edges { cursor node { id date } } } }",
        None,
        ANSWERED,
    ),
    (  # shards merged backward
        "{ orders(status: OPEN, last: 2) { totalCount pageInfo { hasPreviousPage startCursor } "
        "edges { cursor node { id date } } } }",
        None,
        ANSWERED,
    ),
    (
        '{ salesRanking(period: "2026-Q1") { edges { node { total rep { name } } } } }',
        None,
        ANSWERED,
    ),
]


# under the demo's access rules, as a user who is not an admin
AS_BOB = [
    (  # bob's own chain: every node decided from what the pages read
        '{ user(id: "bob") { name email groups { edges { node { name subscriptions { edges { '
        "node { name } } } } } } } }",
        None,
        ANSWERED,
    ),
    # alice's groups less group2, which bob may not read
    ('{ user(id: "alice") { groups { edges { node { id name } } } } }', None, ANSWERED),
    ('{ user(id: "alice") { email } }', None, GAVE_UP),  # User.email is for the user: FORBIDDEN
    ('{ user(id: "jeffbezos") { name } }', None, ANSWERED),  # not reachable by bob: as missing
    ('{ group(id: "group2") { name } }', None, ANSWERED),
]
# the same under --explain-forbidden: the unreadable nodes are FORBIDDEN, which graphql-core says
AS_BOB_EXPLAINED = [
    ('{ user(id: "jeffbezos") { name } }', None, GAVE_UP),
    ('{ group(id: "group2") { name } }', None, GAVE_UP),
]


@pytest.fixture
async def run(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Callable[..., Run]]:
    """``run(model)(query, variables)``: (the executor's answer, graphql-core's, and who gave the
    first: ANSWERED, GAVE_UP or NEVER), each on a fresh request context over the model's sample
    data."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:

        def serve(model: str, principal: Principal = ADMIN, explain: bool = False) -> Run:
            engine = engine_for(model)
            schema = engine.schema()
            new_context = engine.context_factory(explain)
            loaded: list[Table] = []

            async def answer(query: str, variables: dict[str, Any] | None) -> Any:
                if not loaded:
                    await create_table(client.control, engine.table_name, layout=engine.layout)
                    table = Table(client, engine.table_name, layout=engine.layout)
                    await table.batch_write(engine.sample_items(table))
                    loaded.append(table)
                ours = await schema.execute(
                    query, variables, new_context(None, loaded[0], principal)
                )
                context = new_context(None, loaded[0], principal)
                theirs = execute(schema._schema, parse(query), None, context, variables)
                if not isinstance(theirs, type(ours)):
                    theirs = await theirs
                record = schema.record(query)  # the execution record ours ran
                executor = Executor.build(schema._schema, record.document, None, context, variables)
                assert not isinstance(executor, list)
                compiled = record.compiled(record.operation(None), executor)
                if compiled is None:
                    return (ours, theirs, NEVER)
                return (ours, theirs, GAVE_UP if compiled.misses else ANSWERED)

            return answer

        yield serve


BOB = Principal("bob", False)
CASES = (
    [("demo", ADMIN, False, *case) for case in DEMO]
    + [("order-entry", ADMIN, False, *case) for case in ORDER_ENTRY]
    + [("demo", BOB, False, *case) for case in AS_BOB]
    + [("demo", BOB, True, *case) for case in AS_BOB_EXPLAINED]
)


@pytest.mark.parametrize(("model", "principal", "explain", "query", "variables", "expected"), CASES)
async def test_the_executor_answers_as_graphql_core(
    run: Callable[..., Run],
    model: str,
    principal: Principal,
    explain: bool,
    query: str,
    variables: dict[str, Any] | None,
    expected: str,
) -> None:
    ours, theirs, who = await run(model, principal, explain)(query, variables)
    assert ours.data == theirs.data
    assert [format_error(e) for e in ours.errors or ()] == [
        format_error(e) for e in theirs.errors or ()
    ]
    assert who == expected
    assert ours.data is not None or ours.errors


async def test_the_executor_leaves_out_what_the_principal_may_not_read(
    run: Callable[[str, Principal], Run],
) -> None:
    query = '{ user(id: "alice") { groups { edges { node { id } } } } }'
    ours, _, who = await run("demo", BOB)(query, None)
    assert ours.data == {"user": {"groups": {"edges": [{"node": {"id": "GROUP#group1"}}]}}}
    assert who == ANSWERED
    admin, _, _ = await run("demo", ADMIN)(query, None)
    assert len(admin.data["user"]["groups"]["edges"]) == 2
