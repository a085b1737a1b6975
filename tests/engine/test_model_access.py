"""Access rules in a model file, beyond the demo's authorization tables (which
tests/http/test_authorization.py checks on the served demo): offices (a child type) readable
with their organization, a field readable from the token alone costs no read, one broken
``access`` section per kind of mistake, and an unseen model's rules."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
import yaml
from starlette.applications import Starlette

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.keys import ItemKey
from graph.sample_items import build_items
from graph.table import Table
from graph.writes.writer import Writer
from model import ModelError, model_path, parse_model
from server.engine import engine_for
from server.http.app import create_app
from server.http.auth import Authenticator, Principal
from server.settings import Settings
from tests.model.test_model_file import GOOD
from tests.tokens import SECRET, asgi, bearer, hs256

DEMO_MODEL = str(model_path("demo"))
ENGINE = engine_for(DEMO_MODEL)

ALICE, BOB, BILL, SATYA, ADMIN, LONER = (
    "alice",
    "bob",
    "billgates",
    "satyanadella",
    "admin",
    "loner",
)
TICKET_AUTHORS = [ALICE, BOB, BILL]


def headers(principal: str, trace: bool = False) -> dict[str, str]:
    """The principal's token (the admin is a user outside the graph holding the admin role)."""
    value = hs256("root", roles=["admin"]) if principal == ADMIN else hs256(principal)
    return {**bearer(value), **({"Edgewise-Trace": "1"} if trace else {})}


def app_for(table: Table, explain: bool = False) -> Starlette:
    settings = Settings(model=DEMO_MODEL, explain_forbidden=explain)
    return create_app(settings, table=table, authenticator=Authenticator(secret=SECRET))


async def post(
    client: httpx.AsyncClient,
    principal: str,
    query: str,
    variables: dict[str, Any] | None = None,
    trace: bool = False,
) -> dict[str, Any]:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers=headers(principal, trace),
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def seed(table: Table) -> dict[str, str]:
    """The demo data, a user with no edges and one ticket each for alice, bob and billgates
    (their OPENED edges and counters included); the tickets' global ids by author."""
    sample = yaml.safe_load((model_path("demo").parent / "sample.yaml").read_text())
    sample["nodes"].append({"type": "User", "id": "loner", "name": "Loner"})
    tickets = {}
    for user in TICKET_AUTHORS:
        ticket = f"t-{user}"
        sample["nodes"].append(
            {
                "type": "Ticket",
                "id": ticket,
                "title": f"{user}'s ticket",
                "status": "OPEN",
                "authorId": f"USER#{user}",
            }
        )
        sample["edges"].append({"label": "OPENED", "from": user, "to": ticket})
        tickets[user] = f"TICKET#{ticket}"
    assert ENGINE.codec is not None
    await table.batch_write(build_items(Writer(table, ENGINE.codec), sample, sample["time"]))
    return tickets


async def demo_table(client: Any) -> Table:
    await create_table(client.control, ENGINE.table_name, layout=ENGINE.layout)
    return Table(client, ENGINE.table_name, layout=ENGINE.layout)


@dataclass
class World:
    table: Table
    app: Starlette
    tickets: dict[str, str]  # author -> global ticket id

    def resolve(self, value: Any) -> Any:
        """``value`` with every ``ticket:<user>`` replaced by that ticket's global id."""
        if isinstance(value, str):
            for user, ticket in self.tickets.items():
                value = value.replace(f"ticket:{user}", ticket)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    async def ask(
        self,
        principal: str,
        query: str,
        variables: dict[str, Any] | None = None,
        trace: bool = False,
    ) -> dict[str, Any]:
        async with asgi(self.app) as client:
            return await post(client, principal, self.resolve(query), variables, trace)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world() -> AsyncIterator[World]:
    """The seeded demo on a moto server of this module's own (read-only: tests that write use
    the function-scoped ``served`` table)."""
    with EmbeddedDynamoDB() as server:
        async with open_client(Endpoint(server.url)) as client:
            table = await demo_table(client)
            tickets = await seed(table)
            yield World(table, app_for(table), tickets)


@pytest.fixture
async def served(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[tuple[Table, httpx.AsyncClient]]:
    """A fresh seeded demo table on the session's moto server, and a client of the engine."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        table = await demo_table(client)
        await seed(table)
        async with asgi(app_for(table)) as http:
            yield table, http


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def forbidden_paths(body: dict[str, Any]) -> list[list[Any]]:
    """The paths of the errors, all of which must be FORBIDDEN."""
    assert set(codes(body)) <= {"FORBIDDEN"}, body["errors"]
    return [e["path"] for e in body.get("errors", [])]


module_loop = pytest.mark.asyncio(loop_scope="module")


async def test_offices_are_as_readable_as_their_organization(
    served: tuple[Table, httpx.AsyncClient],
) -> None:
    table, client = served
    location = {"country": "US", "state": "WA", "city": "Redmond", "zip": "98052"}
    sample = {"nodes": [{"type": "Office", "organizationId": "microsoft", "id": "o1", **location}]}
    assert ENGINE.codec is not None
    await table.batch_write(build_items(Writer(table, ENGINE.codec), sample, "2024-01-15"))
    office = "o1"
    query = '{ organization(id: "microsoft") { offices { edges { node { id city } } } } }'

    body = await post(client, BILL, query)
    assert body == {
        "data": {
            "organization": {"offices": {"edges": [{"node": {"id": office, "city": "Redmond"}}]}}
        }
    }
    assert await post(client, SATYA, query) == body
    denied = await post(client, ALICE, query)
    assert denied == {"data": {"organization": None}}  # as if there were none
    async with asgi(app_for(table, explain=True)) as explaining:
        explained = await post(explaining, ALICE, query)
    assert explained["data"] == {"organization": None}
    assert forbidden_paths(explained) == [["organization"]]


# ---- the checks' cost ----------------------------------------------------------------------


UNREAD = ("Limit", "ReturnConsumedCapacity")  # Query parameters that do not change what is read


class RecordingClient:
    """Forwards to the real data plane and records what each call reads: a Query as its
    index, key condition and start; a BatchGetItem as each of its keys."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.reads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(params: dict[str, Any]) -> Any:
            if name == "query":
                read = {k: v for k, v in params.items() if k not in UNREAD}
                self.reads.append(json.dumps(read, sort_keys=True, default=str))
            elif name == "batch_get_item":
                for table, request in params["RequestItems"].items():
                    for key in request["Keys"]:
                        self.reads.append(json.dumps([table, key], sort_keys=True))
            return await method(params)

        return call


async def traced(table: Table, principal: str, query: str) -> tuple[dict[str, Any], list[str]]:
    """The request's trace, and the DynamoDB requests it sent (as comparable strings)."""
    recorder = RecordingClient(table.client)
    app = app_for(Table(recorder, table.name, layout=ENGINE.layout))
    async with asgi(app) as client:
        body = await post(client, principal, query, trace=True)
    assert "errors" not in body, body["errors"]
    return body["extensions"]["dynamodb"], recorder.reads


@module_loop
async def test_a_readable_field_costs_no_read(world: World) -> None:
    admin, _ = await traced(world.table, ADMIN, '{ user(id: "bob") { name email } }')
    bob, _ = await traced(world.table, BOB, '{ user(id: "bob") { name email } }')
    assert bob == admin  # `self`: decided from the token alone


# ---- broken access sections ----------------------------------------------------------------

ACCESS = """\
access:
  principal: Author
  read:
    Author: [self]
    Book: [books, books.authors.books]
  fields:
    Author.name: [self]
  mutations:
    updateAuthor: {input.id: [self]}
    addWrote: {authorId: [self], bookId: [books]}
"""


def test_a_good_access_section_compiles() -> None:
    model = parse_model(GOOD + ACCESS)
    assert model.access is not None
    assert [p.text for p in model.access.read["Book"]] == ["books", "books.authors.books"]
    assert [g.argument for g in model.access.mutations["addWrote"]] == [("authorId",), ("bookId",)]


# (what changes in ACCESS, the line GOOD + ACCESS reports); GOOD has 40 lines
BROKEN_ACCESS = [
    (
        "principal: Author",
        "principal: Autor",
        "access.principal (line 42): unknown type 'Autor'; did you mean 'Author'?",
    ),
    (
        "principal: Author",
        "principal: Chapter",
        "access.principal (line 42): a token's subject is an id: Chapter needs a one-template key",
    ),
    (
        "    Book: [books,",
        "    Bok: [books,",
        "access.read.Bok (line 45): unknown type 'Bok'; did you mean 'Book'?",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.autors.books]",
        "access.read.Book.1 (line 45): Book has no edge field 'autors' in 'books.autors.books';"
        " did you mean 'authors'?",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.title]",
        "access.read.Book.1 (line 45): Book.title is not an edge field (a path follows edges)",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.authors]",
        "access.read.Book.1 (line 45): 'books.authors' ends at a Author, not a Book; end it at",
    ),
    (
        "Book: [books,",
        "Book: [self, books,",
        "access.read.Book.0 (line 45): `self` is a Author, not a Book; start from `self`'s edge",
    ),
    ("Author: [self]", "Author: []", "access.read.Author (line 44): list at least one path"),
    (
        "Author.name: [self]",
        "Author.nam: [self]",
        "access.fields.Author.nam (line 47): Author has no field 'nam'; did you mean 'name'?",
    ),
    (
        "Author.name: [self]",
        "name: [self]",
        "access.fields.name (line 47): write `Type.field` with a type of the model",
    ),
    (
        "updateAuthor: {",
        "updateAuthr: {",
        "access.mutations.updateAuthr (line 49): unknown mutation 'updateAuthr'; did you mean "
        "'updateAuthor'?",
    ),
    (
        "{input.id: [self]}",
        "{input.idd: [self]}",
        "access.mutations.updateAuthor.input.idd (line 49): updateAuthor has no id argument "
        "'input.idd'; did you mean 'input.id'?",
    ),
    (
        "bookId: [books]}",
        "bookId: [self]}",
        "access.mutations.addWrote.bookId.0 (line 50): `self` is a Author, not a Book",
    ),
    (
        "  principal: Author\n",
        "",
        "access.principal (line 41): missing required key 'principal'; add it",
    ),
    (
        "  fields:",
        "  field:",
        "access.field (line 46): unknown key 'field'; did you mean 'fields'?",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), BROKEN_ACCESS, ids=[b[2][:50] for b in BROKEN_ACCESS]
)
def test_each_access_mistake_names_its_place_and_the_fix(old: str, new: str, expected: str) -> None:
    assert old in ACCESS
    with pytest.raises(ModelError) as raised:
        parse_model(GOOD + ACCESS.replace(old, new, 1), "books.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


# ---- an unseen model's rules ---------------------------------------------------------------

SERVED_ACCESS = """\
access:
  principal: Author
  read:
    Author: [self, books.authors]
    Book: [books, books.authors.books]
  mutations:
    updateAuthor: {input.id: [self]}
    createBook: {}
"""

BOOKS_DATA = [
    'createAuthor(input: {id: "a1", name: "One"}) { id }',
    'createAuthor(input: {id: "a2", name: "Two"}) { id }',
    'createAuthor(input: {id: "a3", name: "Three"}) { id }',
    'createBook(input: {id: "b1", title: "Shared", authorId: "a3"}) { id }',
    'createBook(input: {id: "b2", title: "Co-author\'s"}) { id }',
    'createBook(input: {id: "b3", title: "Other"}) { id }',
    'addWrote(authorId: "a1", bookId: "b1") { cursor }',
    'addWrote(authorId: "a2", bookId: "b1") { cursor }',
    'addWrote(authorId: "a2", bookId: "b2") { cursor }',
    'addWrote(authorId: "a3", bookId: "b3") { cursor }',
    'createChapter(input: {bookId: "b2", number: 1}) { id }',
    'createChapter(input: {bookId: "b3", number: 1}) { id }',
]

# (query, what a1 gets, the FORBIDDEN paths)
BOOKS_READS: list[tuple[str, Any, list[list[Any]]]] = [
    ('{ author(id: "a2") { name } }', {"author": {"name": "Two"}}, []),  # a co-author
    ('{ author(id: "a3") { name } }', {"author": None}, [["author"]]),
    ('{ book(id: "b2") { title } }', {"book": {"title": "Co-author's"}}, []),  # three hops
    ('{ book(id: "b3") { title } }', {"book": None}, [["book"]]),
    (
        '{ book(id: "b2") { chapters { edges { node { number } } } } }',
        {"book": {"chapters": {"edges": [{"node": {"number": 1}}]}}},
        [],
    ),
    ('{ chapter(bookId: "b3", number: 1) { number } }', {"chapter": None}, [["chapter"]]),
    (
        '{ chapter(bookId: "b2", number: 1) { book { id } } }',
        {"chapter": {"book": {"id": "BOOK#b2"}}},
        [],
    ),
    (  # a reference to an author a1 may not read
        '{ book(id: "b1") { title author { id } } }',
        {"book": {"title": "Shared", "author": None}},
        [["book", "author"]],
    ),
    (
        '{ author(id: "a1") { books { edges { node { id authors { edges { node { id } } } } } } }'
        " }",
        {
            "author": {
                "books": {
                    "edges": [
                        {
                            "node": {
                                "id": "BOOK#b1",
                                "authors": {
                                    "edges": [
                                        {"node": {"id": "AUTHOR#a1"}},
                                        {"node": {"id": "AUTHOR#a2"}},
                                    ]
                                },
                            }
                        }
                    ]
                }
            }
        },
        [],
    ),
]


async def test_an_unseen_models_rules(dynamodb: EmbeddedDynamoDB, tmp_path: Any) -> None:
    """Rules over a model written only here: a three-hop path, a child type readable with its
    parent, a reference, a mutation on oneself and one any signed-in author may run."""
    path = tmp_path / "books.yaml"
    path.write_text(GOOD + SERVED_ACCESS)
    engine = engine_for(str(path))
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client.control, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        authenticator = Authenticator(secret=SECRET)
        app = create_app(Settings(model=str(path)), table=table, authenticator=authenticator)
        explain = Settings(model=str(path), explain_forbidden=True)
        explaining_app = create_app(explain, table=table, authenticator=authenticator)
        async with asgi(app) as http, asgi(explaining_app) as explaining:
            for mutation in BOOKS_DATA:
                body = await post(http, ADMIN, f"mutation {{ {mutation} }}")
                assert "errors" not in body, (mutation, body)
            for query, data, forbidden in BOOKS_READS:
                body = await post(http, "a1", query)
                assert body["data"] == data, (query, body)
                # an unreadable node looked up is null with no error; a reference stays FORBIDDEN
                assert forbidden_paths(body) == [p for p in forbidden if len(p) > 1], query
                explained = await post(explaining, "a1", query)
                assert explained["data"] == data, (query, explained)
                assert forbidden_paths(explained) == forbidden, query
            mine = await post(
                http, "a1", 'mutation { updateAuthor(input: {id: "a1", name: "1"}) { name } }'
            )
            assert mine == {"data": {"updateAuthor": {"name": "1"}}}
            theirs = await post(
                http, "a1", 'mutation { updateAuthor(input: {id: "a2", name: "2"}) { name } }'
            )
            assert theirs["data"] is None and forbidden_paths(theirs) == [["updateAuthor"]]
            new = await post(
                http, "a1", 'mutation { createBook(input: {id: "b9", title: "New"}) { id } }'
            )
            assert new == {"data": {"createBook": {"id": "BOOK#b9"}}}
            deleted = await post(http, "a1", 'mutation { deleteBook(id: "b2") { id } }')
            assert deleted["data"] is None and forbidden_paths(deleted) == [["deleteBook"]]


@module_loop
async def test_the_edge_that_listed_a_node_decides_only_from_a_node_reached(world: World) -> None:
    """Products are readable by groups.subscriptions. The subscription edge that listed a
    product (``via``, an item a page read) decides its check without a read of its own, but
    only when that edge leaves one of the caller's own groups: bob is in group1, not group2.
    (The edge is read outside the request here, so that nothing else has it in hand.)"""
    codec, table = ENGINE.codec, world.table

    async def verdict(product: str, group: str) -> tuple[bool, int]:
        key = ItemKey(f"GROUP#{group}", f"PRODUCT#{product}")
        edge = (await table.for_request().get_many([key]))[key]
        context = ENGINE.context_factory()(None, table, Principal(BOB, False))
        assert context.scope is not None
        reads = context.table.trace.requests
        ref = codec.by_id(ENGINE.model.types["Product"], product)
        assert ref is not None
        allowed = await context.scope.can_read(ref, via=edge)
        return allowed, context.table.trace.requests - reads

    assert await verdict("prod1", "group1") == (True, 1)  # 1: bob's groups, then decided
    allowed, reads = await verdict("prod3", "group2")  # only alice's group2 subscribes
    assert not allowed and reads == 2  # bob's groups, then his groups' edges to it, read
