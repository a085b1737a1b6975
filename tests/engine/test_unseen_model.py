"""A fourth model, written only here (an unseen domain): authors and their books in one
partition, readers following readers (an edge between nodes of one type) and liking authors,
read in reverse from an inverted index. The engine serves it with no code of its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from tests.helpers import gql

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

LIBRARY = """
table:
  name: library
  partitionKey: pk
  sortKey: sk
  typeAttribute: kind
  indexes:
    byTarget: {partitionKey: sk, sortKey: pk}
enums:
  Genre: [NOVEL, POETRY]
types:
  Author:
    key: "A#{id}"
    fields:
      name: String!
      email: {type: String, unique: {key: "EMAIL#{email}", caseInsensitive: true}}
  Book:
    key: {pk: "A#{authorId}", sk: "B#{year}#{id}"}
    parent: {type: Author, field: author, collection: books, order: desc, count: counter}
    fields:
      title: String!
      year: Int!
      genre: Genre!
      tags: "[String!]"
  Reader:
    key: "R#{id}"
    fields: {name: String!}
edges:
  FOLLOWS:
    from: Reader
    to: Reader
    fields: {since: Date}
    forward: following
    reverse: {field: followers, index: byTarget}
  LIKES:
    from: Reader
    to: Author
    forward: likes
    reverse: {field: fans, index: byTarget}
    count: counter
"""

SAMPLE = """
nodes:
  - {type: Author, id: woolf, name: Virginia Woolf, email: virginia@example.com}
  - {type: Author, id: rilke, name: Rainer Maria Rilke}
  - {type: Book, authorId: woolf, year: 1925, id: dalloway, title: Mrs Dalloway, genre: NOVEL,
     tags: [london]}
  - {type: Book, authorId: woolf, year: 1927, id: lighthouse, title: To the Lighthouse,
     genre: NOVEL}
  - {type: Book, authorId: rilke, year: 1923, id: elegies, title: Duino Elegies, genre: POETRY}
  - {type: Reader, id: ann, name: Ann}
  - {type: Reader, id: bo, name: Bo}
  - {type: Reader, id: cy, name: Cy}
edges:
  - {label: FOLLOWS, from: ann, to: bo, since: "2026-01-01"}
  - {label: FOLLOWS, from: cy, to: bo, since: "2026-02-01"}
  - {label: FOLLOWS, from: bo, to: ann}
  - {label: LIKES, from: ann, to: woolf}
  - {label: LIKES, from: bo, to: woolf}
"""


@pytest.fixture
async def http(model_http: Serve, tmp_path: Path) -> httpx.AsyncClient:
    (tmp_path / "library.yaml").write_text(LIBRARY)
    (tmp_path / "sample.yaml").write_text(SAMPLE)
    return await model_http(str(tmp_path / "library.yaml"))


async def test_children_in_the_parent_partition_newest_first_with_numeric_keys(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(
        http,
        '{ author(id: "woolf") { name books { edges { node { title year '
        "genre tags author { name } } } } } }",
    )
    books = [e["node"] for e in body["data"]["author"]["books"]["edges"]]
    assert [(b["title"], b["year"], b["genre"]) for b in books] == [
        ("To the Lighthouse", 1927, "NOVEL"),
        ("Mrs Dalloway", 1925, "NOVEL"),
    ]
    assert books[1]["tags"] == ["london"] and books[0]["tags"] is None
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1}
    narrowed = await gql(
        http, '{ author(id: "woolf") { books(year: 1925) { edges { node { id title } } } } }'
    )
    assert [e["node"]["title"] for e in narrowed["data"]["author"]["books"]["edges"]] == [
        "Mrs Dalloway"
    ]


async def test_an_edge_between_nodes_of_one_type_reads_both_ways(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        '{ reader(id: "bo") { following { edges { node { name } } } '
        "followers { totalCount edges { since node { name } } } } }",
    )
    bo = body["data"]["reader"]
    assert [e["node"]["name"] for e in bo["following"]["edges"]] == ["Ann"]
    assert [(e["since"], e["node"]["name"]) for e in bo["followers"]["edges"]] == [
        ("2026-01-01", "Ann"),
        ("2026-02-01", "Cy"),
    ]
    assert bo["followers"]["totalCount"] == 2


async def test_a_node_cannot_follow_itself_and_removing_that_removes_nothing(
    http: httpx.AsyncClient,
) -> None:
    """A FOLLOWS edge from a reader to itself would be keyed R#bo / R#bo: the reader's own
    item. Adding it is BAD_USER_INPUT; removing it answers false and leaves the reader."""
    added = await gql(
        http, 'mutation { addFollows(fromReaderId: "bo", toReaderId: "bo") { cursor } }'
    )
    assert added["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "itself" in added["errors"][0]["message"]
    removed = await gql(http, 'mutation { removeFollows(fromReaderId: "bo", toReaderId: "bo") }')
    assert removed["data"] == {"removeFollows": False}
    after = await gql(http, '{ reader(id: "bo") { name following { totalCount } } }')
    assert after["data"]["reader"] == {"name": "Bo", "following": {"totalCount": 1}}


async def test_reverse_edges_and_generated_mutations(http: httpx.AsyncClient) -> None:
    fans = await gql(http, '{ author(id: "woolf") { fans { edges { node { id } } } } }')
    assert [e["node"]["id"] for e in fans["data"]["author"]["fans"]["edges"]] == ["R#ann", "R#bo"]
    follow = await gql(
        http, 'mutation { addFollows(fromReaderId: "cy", toReaderId: "ann") { node { name } } }'
    )
    assert follow["data"]["addFollows"] == {"node": {"name": "Ann"}}
    created = await gql(
        http,
        'mutation { createBook(input: {authorId: "rilke", year: 1929, '
        'title: "Letters", genre: POETRY}) { id year author { name } } }',
    )
    book = created["data"]["createBook"]
    assert book["year"] == 1929 and book["author"] == {"name": "Rainer Maria Rilke"}
    found = await gql(
        http, "query($id: ID!) { node(id: $id) { ... on Book { title } } }", {"id": book["id"]}
    )
    assert found["data"]["node"] == {"title": "Letters"}
    deleted = await gql(http, 'mutation { deleteAuthor(id: "woolf") { id } }')
    assert deleted["data"]["deleteAuthor"] == {"id": "A#woolf"}
    after = await gql(
        http,
        '{ reader(id: "ann") { likes { totalCount } } '
        'book(authorId: "woolf", year: 1925, id: "dalloway") { id } }',
    )
    assert after["data"] == {"reader": {"likes": {"totalCount": 0}}, "book": None}


async def test_counters_answer_total_count_without_a_query(http: httpx.AsyncClient) -> None:
    query = '{ author(id: "woolf") { fans { totalCount } books { totalCount } } }'
    body = await gql(http, query)
    assert body["data"]["author"] == {"fans": {"totalCount": 2}, "books": {"totalCount": 2}}
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}
    await gql(http, 'mutation { addLikes(readerId: "cy", authorId: "woolf") { cursor } }')
    await gql(http, 'mutation { removeLikes(readerId: "ann", authorId: "woolf") }')
    await gql(
        http,
        'mutation { createBook(input: {authorId: "woolf", year: 1931, '
        'title: "The Waves", genre: NOVEL}) { id } }',
    )
    after = await gql(http, query[:-1] + ' reader(id: "cy") { likes { totalCount } } }')
    assert after["data"]["author"] == {"fans": {"totalCount": 2}, "books": {"totalCount": 3}}
    assert after["data"]["reader"] == {"likes": {"totalCount": 1}}


async def test_unique_fields_are_claimed_case_insensitively(http: httpx.AsyncClient) -> None:
    taken = await gql(
        http,
        'mutation { createAuthor(input: {id: "vw", name: "V", '
        'email: "Virginia@Example.com"}) { id } }',
    )
    assert taken["errors"][0]["extensions"]["code"] == "CONFLICT"
    found = await gql(http, '{ authorByEmail(email: "VIRGINIA@example.com") { id } }')
    assert found["data"]["authorByEmail"] == {"id": "A#woolf"}
    assert found["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 2}
    moved = await gql(
        http, 'mutation { updateAuthor(input: {id: "woolf", email: "vw@example.com"}) { email } }'
    )
    assert moved["data"]["updateAuthor"] == {"email": "vw@example.com"}
    freed = await gql(
        http,
        'mutation { createAuthor(input: {id: "vw", name: "V", '
        'email: "virginia@example.com"}) { email } }',
    )
    assert freed["data"]["createAuthor"] == {"email": "virginia@example.com"}
    await gql(http, 'mutation { deleteAuthor(id: "woolf") { id } }')
    again = await gql(
        http,
        'mutation { createAuthor(input: {id: "w2", name: "W", email: "VW@example.com"}) { id } }',
    )
    assert again["data"]["createAuthor"] == {"id": "A#w2"}
