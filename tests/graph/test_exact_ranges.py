"""A range, prefix or equality read over a key placeholder returns exactly the items a brute
force over the same items keeps, whatever the separator sorts like: DynamoDB compares whole
keys, so ``GROUPSUB#prod1|…`` must not match ``prod10`` (``0`` sorts below ``|``) and an
exclusive ``> 5`` on the last placeholder must keep ``55779``. Items are written with boto3's
wire format straight into moto; the read is graph's own (superset Query, exact test)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.reads import Listing, PageKey, Reads, narrowed
from graph.table import Table
from model import Template
from tests.helpers import DEMO_LAYOUT, LEAN

SEPARATORS = ["|", "~", "-", "_", "$", "#"]
# Values over characters on both sides of every separator (digits and letters sort below `|`
# and `~`, above `-` and `$`), sharing prefixes often (prod1, prod10 …).
VALUES = st.text(alphabet="015az", min_size=1, max_size=4)


def _keep(value: str, low: str | None, high: str | None, exclusive: bool) -> bool:
    if exclusive:
        return (low is None or value > low) and (high is None or value < high)
    return (low is None or value >= low) and (high is None or value <= high)


async def _read(
    url: str, rows: list[tuple[str, str]], template: Template, pk: str = "P", **where: Any
) -> list:
    """The items of ``rows`` written in partition ``pk`` (new to the table), then read."""
    async with open_client(Endpoint(url), lean=LEAN) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        table = Table(client, "graph", layout=DEMO_LAYOUT)
        await table.batch_write(
            [{"PK": pk, "SK": template.format({"a": a, "b": b})} for a, b in rows]
        )
        branch = narrowed(pk, template, where.pop("values", {}), **where)
        page = await Reads(table).pages.load(PageKey(Listing(None, (branch,)), 100))
    return sorted(template.parse(item["SK"])["a"] + "/" + item["SK"] for item in page.items)


@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_range_over_a_placeholder_keeps_exactly_its_values(
    dynamodb: EmbeddedDynamoDB, separator: str
) -> None:
    template = Template.compile(f"S#{{a}}{separator}{{b}}")
    dynamodb.reset()
    partitions = itertools.count()

    @given(
        rows=st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=12, unique=True),
        low=st.none() | VALUES,
        high=st.none() | VALUES,
        exclusive=st.booleans(),
    )
    @settings(
        max_examples=8,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    def exact(
        rows: list[tuple[str, str]], low: str | None, high: str | None, exclusive: bool
    ) -> None:
        pk = f"P{next(partitions)}"  # a partition of its own: no table made for each example
        got = asyncio.run(
            _read(dynamodb.url, rows, template, pk, low=low, high=high, exclusive=exclusive)
        )
        brute = sorted(
            a + "/" + template.format({"a": a, "b": b})
            for a, b in rows
            if _keep(a, low, high, exclusive)
        )
        assert got == brute, (rows, low, high, exclusive)

    exact()


@pytest.mark.parametrize("separator", SEPARATORS)
def test_the_last_placeholder_compares_as_dynamodb_does(
    dynamodb: EmbeddedDynamoDB, separator: str
) -> None:
    template = Template.compile(f"S#{{b}}{separator}{{a}}")
    rows = [("5", "x"), ("55779", "x"), ("49", "x"), ("6", "x"), ("55779", "y")]
    dynamodb.reset()
    where = {"values": {"b": "x"}, "low": "5", "high": "6", "exclusive": True}
    got = asyncio.run(_read(dynamodb.url, rows, template, **where))
    assert got == [f"55779/S#x{separator}55779"]


@pytest.mark.parametrize("separator", SEPARATORS)
def test_equality_on_a_leading_placeholder_ends_at_its_separator(
    dynamodb: EmbeddedDynamoDB, separator: str
) -> None:
    template = Template.compile(f"S#{{a}}{separator}{{b}}")
    rows = [("prod1", "g1"), ("prod10", "g1"), ("prod1", "g2"), ("prod", "g3")]
    dynamodb.reset()
    got = asyncio.run(_read(dynamodb.url, rows, template, values={"a": "prod1"}))
    assert [g.split("/")[0] for g in got] == ["prod1", "prod1"]
    between = asyncio.run(_read(dynamodb.url, rows, template, low="prod1", high="prod1"))
    assert [g.split("/")[0] for g in between] == ["prod1", "prod1"]
