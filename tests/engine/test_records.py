"""Execution records (server.engine.records): one per query text, in one bounded cache on the
schema, each part made once."""

from __future__ import annotations

import pytest
from graphql import GraphQLError

from graph.errors import BadUserInput
from server.engine import engine_for
from server.engine.executor import ModelSchema


def fresh(size: int = 4) -> ModelSchema:
    """A schema of its own (the engine's is shared by the whole process)."""
    return ModelSchema(engine_for("demo").schema().graphql_schema, records=size)


def test_one_record_per_query_text() -> None:
    schema = fresh()
    first = schema.record('{ user(id: "alice") { name } }')
    assert schema.record('{ user(id: "alice") { name } }') is first
    assert first.parsed is first.parsed
    assert first.errors == ()
    assert first.errors is first.errors


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    schema = fresh(size=2)
    a, b = schema.record("{ a: __typename }"), schema.record("{ b: __typename }")
    assert schema.record("{ a: __typename }") is a  # a used: b is now the oldest
    schema.record("{ c: __typename }")
    assert len(schema.record) == 2
    assert schema.record("{ a: __typename }") is a
    assert schema.record("{ b: __typename }") is not b


def test_a_syntax_error_and_validation_errors_are_kept() -> None:
    schema = fresh()
    assert isinstance(schema.record("{ user(").parsed, GraphQLError)
    errors = schema.record("{ nothing }").errors
    assert [e.message for e in errors] == ["Cannot query field 'nothing' on type 'Query'."]


@pytest.mark.parametrize(
    ("query", "name", "message"),
    [
        ("query A { __typename } query B { __typename }", None, "Must provide operation name"),
        ("fragment F on Query { __typename }", None, "Must provide an operation."),
        ("query A { __typename }", "B", 'Unknown operation named "B".'),
    ],
)
def test_an_operation_that_cannot_be_selected_is_bad_user_input(
    query: str, name: str | None, message: str
) -> None:
    record = fresh().record(query)
    for _ in range(2):  # the same answer each time
        with pytest.raises(BadUserInput, match=message):
            record.operation(name)


def test_names_a_client_makes_up_do_not_grow_the_record() -> None:
    record = fresh().record("query A { __typename }")
    for number in range(100):
        with pytest.raises(BadUserInput):
            record.operation(f"Made{number}")
    record.operation("A")
    assert list(record._operations) == ["A"]


def test_an_operation_is_selected_once_per_name() -> None:
    record = fresh().record("query A { a: __typename } query B { b: __typename }")
    a = record.operation("A")
    assert record.operation("A") is a
    assert record.operation("B") is not a


def test_a_subscription_as_a_query_shares_the_nodes_and_the_text() -> None:
    record = fresh().record('subscription S { user(id: "alice") { name } }')
    operation = record.operation("S")
    as_query = record.as_query(operation)
    assert record.as_query(operation) is as_query
    assert as_query.query == record.query
    selected = as_query.operation("S")
    assert selected.operation.value == "query"
    assert selected.selection_set is operation.selection_set
    assert as_query.errors == ()
