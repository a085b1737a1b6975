"""Model files: one broken file per kind of mistake, each reported as
``<dotted.path> (line N): <problem>; <what to write instead>``; the JSON Schema; the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from model import SHIPPED, ModelError, json_schema, load_model, model_path, parse_model
from model.templates import KeyValueError, Template

GOOD = """\
table:
  name: books
  partitionKey: pk
  sortKey: sk
  indexes:
    inverted: {partitionKey: sk, sortKey: pk}
    byDate: {partitionKey: gpk, sortKey: gsk}
enums:
  Genre: [NOVEL, POETRY]
types:
  Author:
    key: "AUTHOR#{id}"
    fields:
      name: String!
  Book:
    key: "BOOK#{id}"
    fields:
      title: String!
      genre: Genre
      authorId: ID
      author: {type: Author, ref: authorId}
    indexes:
      byDate: {pk: "GENRE#{genre}#{shard}", sk: "{title}#{id}", shards: 4}
  Chapter:
    key: {pk: "BOOK#{bookId}", sk: "CHAPTER#{number}"}
    parent: {type: Book, field: book, collection: chapters}
    fields:
      number: Int!
edges:
  WROTE:
    from: Author
    to: Book
    forward: books
    reverse: {field: authors, index: inverted}
queries:
  booksByGenre:
    type: Book
    index: byDate
    partition: "GENRE#{genre}#{shard}"
    sort: {template: "{title}#{id}"}
"""

# (what changes in GOOD, the line it must report)
BROKEN = [
    (
        "    to: Book\n    forward",
        "    to: Bok\n    forward",
        "edges.WROTE.to (line 32): unknown type 'Bok'; did you mean 'Book'?",
    ),
    (
        "  partitionKey: pk\n  sortKey",
        "  partitonKey: pk\n  sortKey",
        "table.partitonKey (line 3): unknown key 'partitonKey'; did you mean 'partitionKey'?",
    ),
    (
        '    key: "AUTHOR#{id}"\n',
        "",
        "types.Author.key (line 11): missing required key 'key'; add it",
    ),
    (
        'key: "AUTHOR#{id}"',
        'key: "AUTHOR#{id"',
        "types.Author.key (line 12): 'AUTHOR#{id': expected '}' before end of string",
    ),
    (
        'sk: "{title}#{id}", shards',
        'sk: "{title}{id}", shards',
        "types.Book.indexes.byDate.sk (line 23): '{title}{id}': {title}{id} has no text between",
    ),
    (
        "      name: String!",
        "      name: Strng!",
        "types.Author.fields.name (line 14): unknown type 'Strng'; did you mean 'String'?",
    ),
    (
        "      byDate: {pk",
        "      byDat: {pk",
        "types.Book.indexes.byDat (line 23): unknown index 'byDat'; did you mean 'byDate'?",
    ),
    (
        'sk: "{title}#{id}", shards',
        'sk: "{titel}#{id}", shards',
        "types.Book.indexes.byDate (line 23): unknown placeholder {titel}; did you mean 'title'?",
    ),
    (", shards: 4}", "}", "types.Book.indexes.byDate (line 23): {shard} needs `shards: N`"),
    (
        'pk: "BOOK#{bookId}"',
        'pk: "BOOKS#{bookId}"',
        "types.Chapter.key.pk (line 25): a child's pk is its parent's key; write 'BOOK#{bookId}'",
    ),
    (
        "ref: authorId}",
        "ref: writerId}",
        "types.Book.fields.author.ref (line 21): Book has no field 'writerId'; use one of",
    ),
    (
        "forward: books",
        "forward: name",
        "edges.WROTE.forward (line 33): Author already has a field 'name'",
    ),
    (
        "      number: Int!",
        "      number: Int!\n      id: ID!",
        "types.Chapter.fields.id (line 29): `id` is implicit on every type; remove this field",
    ),
    (
        'partition: "GENRE#{genre}#{shard}"\n    sort',
        'partition: "GENRE#{genra}#{shard}"\n    sort',
        "queries.booksByGenre.partition (line 39): {genra} is not a field of Book; did you mean",
    ),
    (
        "  Genre: [NOVEL, POETRY]",
        "  Genre: [NOVEL, POETRY\n",
        "(file) (line 11): not valid YAML: expected ',' or ']', but got ':'",
    ),
    (
        "      name: String!",
        "      name: {type: String!, hook: 'nowhere.at.all:resolve'}",
        "types.Author.fields.name.hook (line 14): cannot import 'nowhere.at.all'",
    ),
    (
        "    reverse: {field: authors, index: inverted}\n",
        "    reverse: {field: authors, index: inverted}\n    owns: true\n",
        "edges.WROTE.owns (line 35): Book also has Chapter; an owned node is deleted alone",
    ),
    (
        "      name: String!\n  Book:",
        "      name: String!\n    expose: [id, nam]\n  Book:",
        "types.Author.expose.1 (line 15): there is no field 'nam'; did you mean 'name'?",
    ),
    (
        '    sort: {template: "{title}#{id}"}\n',
        '    sort: {template: "{title}#{id}"}\nexpose:\n  Query: [node, booksByGenre, node]\n',
        "expose.Query.2 (line 42): 'node' is listed twice; list it once",
    ),
    (
        '    sort: {template: "{title}#{id}"}\n',
        '    sort: {template: "{title}#{id}"}\n'
        "mutations:\n  retitle: {type: Book!, hook: 'model.spec:nothing', arguments: {x: Strin}}\n",
        "mutations.retitle.hook (line 42): model.spec has no function 'nothing'; check its name",
    ),
    (
        '    sort: {template: "{title}#{id}"}\n',
        '    sort: {template: "{title}#{id}"}\n'
        "objects:\n  Stats: {fields: {books: Int!, top: Bok}}\n",
        "objects.Stats.fields.top (line 42): unknown type 'Bok'; did you mean 'Book'?",
    ),
    (
        "      name: String!\n  Book:",
        "      name: {type: String!, unique: {key: 'NAME#{name}', owner: sk}}\n  Book:",
        "types.Author.fields.name.unique.owner (line 14): 'sk' is a key or the type attribute",
    ),
    (
        "      name: String!\n  Book:",
        "      name: {type: String!, unique: {key: 'NAME#{name}', typeValue: NAME}}\n  Book:",
        "types.Author.fields.name.unique.typeValue (line 14): the table has no typeAttribute",
    ),
    (
        "      number: Int!",
        "      number: {type: Int!, length: [1, 3]}",
        "types.Chapter.fields.number.length (line 28): length constrains a String field, not Int!",
    ),
    (
        "      title: String!",
        "      title: {type: String!, length: [200, 1]}",
        "types.Book.fields.title.length (line 18): [200, 1] has its fewest above its most; "
        "write [1, 200]",
    ),
    (
        "      title: String!",
        "      title: {type: String!, format: phone}",
        "types.Book.fields.title.format (line 18): input should be 'email'",
    ),
    (
        "      genre: Genre\n",
        "      genre: {type: Genre, format: email}\n",
        "types.Book.fields.genre.format (line 19): format constrains a String field, not Genre",
    ),
    (
        "author: {type: Author, ref: authorId}",
        "author: {type: Author, ref: authorId, length: [1, 9]}",
        "types.Book.fields.author.length (line 21): length constrains a stored value; remove it "
        "from this ref field",
    ),
    # tables as teams have them
    (
        "  sortKey: sk\n",
        "  sortKey: {name: sk, type: N}\n",
        "types.Chapter.key.sk (line 25): sk is a number (N) key: its template is one "
        "placeholder of an Int or Float field with no literal text, e.g. '{number}'",
    ),
    (
        "    byDate: {partitionKey: gpk, sortKey: gsk}",
        "    byDate: {partitionKey: gpk, sortKey: gsk, local: true}",
        "table.indexes.byDate (line 7): a local index shares the table's partition key",
    ),
    (
        '    key: "AUTHOR#{id}"\n    fields:\n      name: String!',
        '    key: "AUTHOR#{id}"\n    implicit: true\n    fields:\n      name: String!',
        "types.Author.fields.name (line 15): Author is implicit (no item of its own), so name is "
        "null where nothing is stored; make it nullable: String",
    ),
    (
        "author: {type: Author, ref: authorId}",
        "chapter: {type: Chapter, ref: authorId}",
        "types.Book.fields.chapter.ref (line 21): Chapter's key has {bookId}, {number}: name a "
        "field for each, `{placeholder: field, …}`",
    ),
    (
        "author: {type: Author, ref: authorId}",
        "chapter: {type: Chapter, ref: {bookId: authorId}}",
        "types.Book.fields.chapter.ref (line 21): Chapter's key has {bookId}, {number}: give a "
        "field for each placeholder",
    ),
    (
        "    inverted: {partitionKey: sk, sortKey: pk}",
        "    inverted: {partitionKey: sk, sortKey: pk, projection: KEYS_ONLY}\n"
        "    other: {partitionKey: {name: sk, type: N}}",
        "table.indexes.other.partitionKey.type (line 7): sk is declared S elsewhere",
    ),
]


def test_the_good_model_compiles() -> None:
    model = parse_model(GOOD)
    assert list(model.types) == ["Author", "Book", "Chapter"]
    assert model.queries["booksByGenre"].shards == 4


@pytest.mark.parametrize(("old", "new", "expected"), BROKEN, ids=[b[2][:40] for b in BROKEN])
def test_each_mistake_names_its_place_and_the_fix(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    with pytest.raises(ModelError) as raised:
        parse_model(GOOD.replace(old, new, 1), "books.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


PATHS = """\
table:
  name: shelves
  partitionKey: pk
  sortKey: sk
  indexes:
    inverted: {partitionKey: sk, sortKey: pk}
enums:
  Line: [MAIN, SPINOFF]
types:
  Author:
    key: "A#{id}"
    fields:
      name: String!
      series:
        type: "[Share!]!"
        path: [books, series]
        where: {line: MAIN, or: [{volume: null}, {volume: {lte: 3}}]}
        shape: {series: series, books: books}
      inSeries:
        type: Boolean!
        path: [books, series]
        arguments: {seriesId: ID!}
  Book:
    key: "B#{id}"
    fields: {title: String!}
  Series:
    key: "S#{id}"
edges:
  WROTE: {from: Author, to: Book, forward: books, reverse: {field: authors, index: inverted}}
  IN_SERIES:
    from: Book
    to: Series
    fields: {volume: Int, line: Line!}
    forward: series
objects:
  Share:
    fields: {series: Series!, books: "[Book!]!"}
"""

# transitive paths: (what changes in PATHS, the line it must report)
BROKEN_PATHS = [
    (
        "path: [books, series]\n        where",
        "path: [books, seires]\n        where",
        "types.Author.fields.series.path.1 (line 16): Book has no edge field 'seires'; did you "
        "mean 'series'?",
    ),
    (
        "path: [books, series]\n        where",
        "path: [books, title]\n        where",
        "types.Author.fields.series.path.1 (line 16): Book.title is not an edge or reference "
        "field (a path follows them); use one of: authors, series",
    ),
    (
        "path: [books, series]\n        arguments",
        "path: [books, series, books]\n        arguments",
        "types.Author.fields.inSeries.path.2 (line 21): Series has no edge field 'books'; Series "
        "has none to follow: end the path before it",
    ),
    (
        "where: {line: MAIN,",
        "where: {lien: MAIN,",
        "types.Author.fields.series.where.lien (line 17): the last edge of the path, IN_SERIES, "
        "has no field 'lien'; did you mean 'line'?",
    ),
    (
        "where: {line: MAIN,",
        "where: {line: MAN,",
        "types.Author.fields.series.where.line (line 17): 'MAN' is not a value of Line; did you "
        "mean 'MAIN'?",
    ),
    (
        "{volume: {lte: 3}}",
        "{volume: {lt3: 3}}",
        "types.Author.fields.series.where.or.1.volume.lt3 (line 17): unknown operator 'lt3'",
    ),
    (
        "{volume: {lte: 3}}",
        "{volume: {lte: three}}",
        "types.Author.fields.series.where.or.1.volume.lte (line 17): 'three' does not compare "
        "with volume (Int); write e.g. 42",
    ),
    (
        "{volume: {lte: 3}}",
        "{volume: {lte: null}}",
        "types.Author.fields.series.where.or.1.volume.lte (line 17): null has no order; write "
        "`volume: null` (absent or null) or `volume: {ne: null}` (present)",
    ),
    (
        "{line: MAIN,",
        "{line: {gt: MAIN},",
        "types.Author.fields.series.where.line.gt (line 17): line is a Line, which has no order; "
        "use eq, ne or in",
    ),
    (
        "or: [{volume: null}, {volume: {lte: 3}}]",
        "or: {volume: null}",
        "types.Author.fields.series.where.or (line 17): `or` lists filters, one of which must "
        "hold: write `or: [",
    ),
    (
        'type: "[Share!]!"',
        'type: "[Book!]!"',
        "types.Author.fields.series.type (line 15): this path ends at a Series: make its type "
        "[Series!]! (the Series nodes reached), a list of a type under `objects:`",
    ),
    (
        "arguments: {seriesId: ID!}",
        "arguments: {seriesId: String!}",
        "types.Author.fields.inSeries.arguments (line 22): a Boolean! path takes one ID! "
        "argument, the Series to look for; write `arguments: {seriesId: ID!}`",
    ),
    (
        "        shape: {series: series, books: books}\n",
        "",
        "types.Author.fields.series (line 14): say which hop fills each field of Share: add "
        "`shape: {<field>: <hop>, …}`",
    ),
    (
        "shape: {series: series, books: books}",
        "shape: {series: series, books: authors}",
        "types.Author.fields.series.shape.books (line 18): 'authors' is not a hop of this path; "
        "use one of: books, series",
    ),
    (
        "shape: {series: series, books: books}",
        "shape: {series: books, books: books}",
        "types.Author.fields.series.shape.series (line 18): Share.series lists the Book nodes "
        "of hop 'books' that reach each node: give it the type [Book!]!",
    ),
    (
        "shape: {series: series, books: books}",
        "shape: {series: series}",
        "types.Author.fields.series.shape (line 18): Share.books is not filled; add `books: "
        "<hop>` to `shape`, or remove the field from Share",
    ),
    (
        "path: [books, series]\n        arguments",
        "path: [books, series]\n        hook: 'x.y:z'\n        arguments",
        "types.Author.fields.inSeries.hook (line 22): a path field is computed from its path; "
        "remove `hook`",
    ),
    (
        "path: [books, series]\n        arguments",
        "where: {line: MAIN}\n        arguments",
        "types.Author.fields.inSeries.where (line 21): `where` belongs to a path; add `path: "
        "[<edge field>, …]`",
    ),
]


def test_the_good_paths_compile() -> None:
    walk = parse_model(PATHS).types["Author"].fields["series"].walk
    assert walk is not None and walk.answer == "objects"
    assert [hop.edge for hop in walk.hops] == ["WROTE", "IN_SERIES"]
    assert walk.fills == (("series", 1), ("books", 0))


@pytest.mark.parametrize(
    ("old", "new", "expected"), BROKEN_PATHS, ids=[b[2][27:70] for b in BROKEN_PATHS]
)
def test_each_path_mistake_names_its_place_and_the_fix(old: str, new: str, expected: str) -> None:
    assert old in PATHS
    with pytest.raises(ModelError) as raised:
        parse_model(PATHS.replace(old, new, 1), "shelves.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


def test_keys_that_could_match_the_same_item_are_reported_without_a_type_attribute() -> None:
    editor = '  Editor:\n    key: "AUTHOR#{id}"\n    fields: {name: String!}\n'
    overlapping = GOOD.replace("  Book:\n", editor + "  Book:\n", 1)
    with pytest.raises(ModelError) as raised:
        parse_model(overlapping)
    assert any("can have the same keys" in line for line in raised.value.lines)
    typed = overlapping.replace("  sortKey: sk\n", "  sortKey: sk\n  typeAttribute: kind\n", 1)
    assert list(parse_model(typed).types) == ["Author", "Editor", "Book", "Chapter"]


FOLLOWS = """
table: {name: t, partitionKey: PK, sortKey: SK}
types:
  User: {key: "USER#{id}", implicit: true}
edges:
  FOLLOWS: {from: User, to: User, forward: follows}
"""


def test_an_edge_between_nodes_of_one_implicit_type_is_no_overlap() -> None:
    """An implicit type has no item of its own: `USER#a` / `USER#b` is only ever the edge's."""
    assert list(parse_model(FOLLOWS).edges) == ["FOLLOWS"]
    stored = FOLLOWS.replace(", implicit: true", "")
    with pytest.raises(ModelError) as raised:
        parse_model(stored)  # a User item (pk = sk) and the edge: told apart by no attribute
    assert any("can have the same keys" in line for line in raised.value.lines)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_models_load_and_validate_against_the_json_schema(name: str) -> None:
    load_model(name)
    data = yaml.load(model_path(name).read_text(), Loader=yaml.BaseLoader)
    jsonschema.validate(_typed(data), json_schema())


def _typed(value: object) -> object:
    """BaseLoader keeps every scalar a string; give booleans and numbers back their type."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if value in ("true", "false"):
        return value == "true"
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def test_templates_format_parse_and_refuse_values_that_break_out() -> None:
    template = Template.compile("OFFICE#{country}#{city}#{id}")
    assert template.format({"country": "NL", "city": "Delft", "id": "o1"}) == "OFFICE#NL#Delft#o1"
    assert template.parse("OFFICE#NL#Delft#o1") == {"country": "NL", "city": "Delft", "id": "o1"}
    assert template.parse("OFFICE#NL#Delft") is None
    assert template.prefix({"country": "NL"}) == "OFFICE#NL#"
    with pytest.raises(KeyValueError):
        template.format({"country": "N#L", "city": "Delft", "id": "o1"})
    assert Template.compile("{cents:012d}#{rep}").format({"cents": 6950, "rep": "e1"}) == (
        "000000006950#e1"
    )


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=60
    )


def test_check_model_prints_each_mistake_and_exits_1(tmp_path: Path) -> None:
    broken = tmp_path / "books.yaml"
    broken.write_text(GOOD.replace("to: Book\n    forward", "to: Bok\n    forward"))
    result = run("check-model", str(broken))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "edges.WROTE.to (line 32): unknown type 'Bok'; did you mean 'Book'?"
    ]
    served = run("serve", "--model", str(broken), "--port", "0")
    assert served.returncode == 1 and "edges.WROTE.to (line 32)" in served.stderr


def test_check_model_summarises_costs_and_model_schema_is_json() -> None:
    result = run("check-model", "order-entry")
    assert result.returncode == 0, result.stderr
    rows = {
        line.split("  ")[1].strip(): line
        for line in result.stdout.splitlines()
        if line.startswith("  ") and "  " in line.strip()
    }
    assert "15 Queries on GSI2 in parallel (shards)" in rows["orders(status:, from:, to:)"]
    schema = json.loads(run("model-schema").stdout)
    assert schema["title"] == "Edgewise model" and "types" in schema["properties"]
