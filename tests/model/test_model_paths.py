"""Transitive path fields (``path:``) in a model written only here: authors WROTE books, books
are IN_SERIES, with a filter on the series edge's fields. Each path is served by the engine with
no code of its own: its answers, and its DynamoDB operations and rounds from the trace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from model import parse_model
from model.values import Comparison
from server.cli.summary import summary
from tests.helpers import gql

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

SHELVES = """
table:
  name: shelves
  partitionKey: pk
  sortKey: sk
  typeAttribute: kind
  indexes:
    byTarget: {partitionKey: sk, sortKey: pk}
enums:
  Line: [MAIN, SPINOFF]
types:
  Author:
    key: "A#{id}"
    fields:
      name: String!
      series:                      # 2 hops, one object per series reached
        type: "[SeriesShare!]!"
        path: [books, series]
        where: &main {line: MAIN, or: [{volume: null}, {volume: {lte: 3}}]}
        shape: {series: series, books: books}
      inSeries:                    # 2 hops, whether one series is reached
        type: Boolean!
        path: [books, series]
        where: *main
        arguments: {seriesId: ID!}
      coauthors:                   # a reverse hop; the nodes reached
        type: "[Author!]!"
        path: [books, authors]
      shelf:                       # 3 hops; a hop named by its position
        type: "[Shelf!]!"
        path: [books, series, books]
        where: {line: {in: [MAIN]}}
        shape: {book: 3, from: 1, series: series}
  Book:
    key: "B#{id}"
    fields: {title: String!}
  Series:
    key: "S#{id}"
    fields: {name: String!}
edges:
  WROTE:
    from: Author
    to: Book
    forward: books
    reverse: {field: authors, index: byTarget}
  IN_SERIES:
    from: Book
    to: Series
    fields: {volume: Int, line: Line!}
    forward: series
    reverse: {field: books, index: byTarget}
objects:
  SeriesShare:
    fields: {series: Series!, books: "[Book!]!"}
  Shelf:
    fields: {book: Book!, from: "[Book!]!", series: "[Series!]!"}
"""

SAMPLE = """
nodes:
  - {type: Author, id: ann, name: Ann}
  - {type: Author, id: bo, name: Bo}
  - {type: Book, id: b1, title: One}
  - {type: Book, id: b2, title: Two}
  - {type: Book, id: b3, title: Three}
  - {type: Book, id: b4, title: Four}
  - {type: Series, id: s1, name: First}
  - {type: Series, id: s2, name: Second}
  - {type: Series, id: s3, name: Third}
edges:
  - {label: WROTE, from: ann, to: b1}
  - {label: WROTE, from: ann, to: b2}
  - {label: WROTE, from: ann, to: b3}
  - {label: WROTE, from: bo, to: b2}
  - {label: WROTE, from: bo, to: b4}
  - {label: IN_SERIES, from: b1, to: s1, volume: 1, line: MAIN}
  - {label: IN_SERIES, from: b2, to: s1, volume: 2, line: MAIN}
  - {label: IN_SERIES, from: b2, to: s2, volume: 5, line: SPINOFF}
  - {label: IN_SERIES, from: b3, to: s2, volume: 7, line: MAIN}
  - {label: IN_SERIES, from: b4, to: s3, line: MAIN}
"""


@pytest.fixture
async def http(model_http: Serve, tmp_path: Path) -> httpx.AsyncClient:
    (tmp_path / "shelves.yaml").write_text(SHELVES)
    (tmp_path / "sample.yaml").write_text(SAMPLE)
    return await model_http(str(tmp_path / "shelves.yaml"))


def cost(body: dict[str, Any]) -> tuple[dict[str, int], int]:
    assert "errors" not in body, body["errors"]
    trace = body["extensions"]["dynamodb"]
    return trace["operations"], trace["rounds"]


def ids(value: Any) -> Any:
    if isinstance(value, dict):
        return value["id"] if set(value) == {"id"} else {k: ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [ids(v) for v in value]
    return value


SERIES = "query($a: ID!) { author(id: $a) { series { series { id } books { id } } } }"


async def test_a_two_hop_path_lists_each_series_once_with_the_books_it_comes_through(
    http: httpx.AsyncClient,
) -> None:
    ann = await gql(http, SERIES, {"a": "ann"})
    # b2 -> s2 is a SPINOFF and b3 -> s2 volume 7: the filter on IN_SERIES leaves s2 out
    assert ids(ann["data"]["author"]["series"]) == [{"series": "S#s1", "books": ["B#b1", "B#b2"]}]
    # wave 1: the author's item and its books (the lookup starts the first hop); wave 2: one
    # Query per book; selecting only ids reads no node
    assert cost(ann) == ({"BatchGetItem": 1, "Query": 4}, 2)
    bo = await gql(http, SERIES.replace("series { id }", "series { id name }"), {"a": "A#bo"})
    assert bo["data"]["author"]["series"] == [
        {"series": {"id": "S#s1", "name": "First"}, "books": [{"id": "B#b2"}]},
        {"series": {"id": "S#s3", "name": "Third"}, "books": [{"id": "B#b4"}]},  # no volume
    ]
    assert cost(bo) == ({"BatchGetItem": 2, "Query": 3}, 3)  # wave 3: the series' names


@pytest.mark.parametrize(
    ("author", "series", "expected"),
    [
        ("ann", "s1", True),
        ("ann", "S#s1", True),
        ("ann", "s2", False),  # reached only through edges the filter leaves out
        ("ann", "s3", False),  # not reached
        ("bo", "s3", True),
        ("ann", "B#b1", False),  # a global id of another type names no series
        ("nobody", "s1", False),
    ],
)
async def test_an_existence_check_reads_the_last_edges_by_key(
    http: httpx.AsyncClient, author: str, series: str, expected: bool
) -> None:
    body = await gql(
        http,
        "query($a: ID!, $s: ID!) { author(id: $a) { id inSeries(seriesId: $s) } }",
        {"a": author, "s": series},
    )
    answer = body["data"]["author"]
    assert (answer["inSeries"] if answer else False) is expected
    if author == "ann" and series == "s1":
        # the author's books (one Query, beside the author's item), then the three
        # (book, series) edge items by key: one BatchGetItem
        assert cost(body) == ({"BatchGetItem": 2, "Query": 1}, 2)


async def test_an_existence_check_of_a_malformed_id_is_bad_user_input(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(http, '{ author(id: "ann") { inSeries(seriesId: "") } }')
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    spaced = await gql(http, '{ author(id: "ann") { inSeries(seriesId: "s 1") } }')
    assert spaced["data"]["author"]["inSeries"] is False  # an id may hold a space


async def test_a_reverse_hop_and_three_hops_with_a_hop_named_by_its_position(
    http: httpx.AsyncClient,
) -> None:
    coauthors = await gql(http, '{ author(id: "bo") { coauthors { id name } } }')
    assert coauthors["data"]["author"]["coauthors"] == [
        {"id": "A#ann", "name": "Ann"},
        {"id": "A#bo", "name": "Bo"},  # a path may come back to where it started
    ]
    body = await gql(
        http, '{ author(id: "ann") { shelf { book { id } from { id } series { id } } } }'
    )
    assert ids(body["data"]["author"]["shelf"]) == [
        {"book": "B#b1", "from": ["B#b1", "B#b2"], "series": ["S#s1"]},
        {"book": "B#b2", "from": ["B#b1", "B#b2"], "series": ["S#s1"]},
        {"book": "B#b3", "from": ["B#b2", "B#b3"], "series": ["S#s2"]},  # b2 -> s2 is SPINOFF
    ]
    # one wave per hop: the books; their 4 series edges (3 Queries); the series' books, read
    # in reverse from the index (2 Queries)
    assert cost(body) == ({"BatchGetItem": 1, "Query": 6}, 3)


async def test_a_path_under_a_connection_walks_from_each_node(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        '{ book(id: "b2") { authors { edges { node { id series { series { id } } } } } } }',
    )
    edges = body["data"]["book"]["authors"]["edges"]
    assert ids([e["node"] for e in edges]) == [
        {"id": "A#ann", "series": [{"series": "S#s1"}]},
        {"id": "A#bo", "series": [{"series": "S#s1"}, {"series": "S#s3"}]},
    ]


NOW = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("test", "item", "holds"),
    [
        (Comparison("until", "gt", "datetime", now=True), {"until": "2026-03-14T10:00:00Z"}, True),
        (Comparison("until", "gt", "datetime", now=True), {"until": "2026-03-14T08:00:00"}, False),
        (Comparison("until", "gt", "datetime", now=True), {}, False),  # null orders with nothing
        (Comparison("until", "eq", "datetime"), {"until": None}, True),  # absent or null
        (Comparison("until", "ne", "datetime"), {"until": "2026-03-14T10:00:00Z"}, True),
        (Comparison("until", "gt", "datetime", now=True), {"until": "soon"}, False),  # wrong type
        (Comparison("day", "lte", "date", now=True), {"day": "2026-03-14"}, True),
        (Comparison("n", "gte", "number", Decimal(2)), {"n": Decimal("2.0")}, True),
        (Comparison("n", "eq", "number", Decimal(2)), {"n": "2"}, False),  # a string is no number
        (Comparison("tag", "in", "string", ("a", None)), {}, True),
        (Comparison("tag", "ne", "string", "a"), {}, True),
    ],
)
def test_a_filter_compares_stored_values_by_their_graphql_type(
    test: Comparison, item: dict[str, Any], holds: bool
) -> None:
    assert test.holds(item, NOW) is holds


def test_check_model_summarises_what_each_path_costs() -> None:
    text = summary(parse_model(SHELVES, "shelves.yaml"))
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  Author.")}
    assert rows["Author.inSeries(seriesId:)"].endswith(
        "a Query of the table per node; then a BatchGetItem of the last edges by key "
        "(2 waves; a lookup starts the first with its own read)"
    )
    assert "then a Query of byTarget per node (2 waves" in rows["Author.coauthors"]
