"""Relay, for real: relay-compiler compiles an app's fragments (``tests/clients/relay/*.js``:
``@connection`` paged both ways, ``@refetchable``) against the committed ``schema.graphql``, and
relay-runtime in Node (``tests/clients/relay.mjs``) pages a 45-edge connection of the served API
forward and backward to its ends, as ``usePaginationFragment``'s ``loadNext``/``loadPrevious``
do, with the pagination queries relay-compiler generated. The npm packages are pinned in
``tests/clients/package.json`` and its lockfile (``make test`` runs ``npm ci``; relay-compiler's
package holds its native binary, nothing is downloaded at run time)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from graph.table import Table
from models.demo.generate import build
from server.http.app import create_app
from tests.helpers import N, long_lists
from tests.http.node import CLIENTS, run_node
from tests.served import serve

ROOT = Path(__file__).parents[2]


async def compile_relay(project: Path, schema: Path) -> tuple[int, str]:
    """relay-compiler run on a fresh project of the fragments in ``tests/clients/relay``:
    its exit status and what it printed."""
    if not (CLIENTS / "node_modules" / ".package-lock.json").exists():
        pytest.fail("the npm packages of tests/clients are not installed: run `make test`")
    shutil.copytree(CLIENTS / "relay", project / "src")
    shutil.copy(schema, project / "schema.graphql")
    (project / "generated").mkdir()
    (project / "relay.config.json").write_text(
        '{"src": "./src", "schema": "./schema.graphql", "language": "javascript", '
        '"artifactDirectory": "./generated", "eagerEsModules": false}'
    )
    process = await asyncio.create_subprocess_exec(
        str(CLIENTS / "node_modules" / ".bin" / "relay-compiler"),
        cwd=project,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(120):
        output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode(errors="replace")


async def test_relay_compiler_compiles_connections_paged_both_ways(tmp_path: Path) -> None:
    status, output = await compile_relay(tmp_path, ROOT / "schema.graphql")
    assert status == 0, output
    generated = {p.name for p in (tmp_path / "generated").iterdir()}
    assert {
        "GroupMembers_group.graphql.js",
        "GroupMembersPaginationQuery.graphql.js",
        "TicketsPaginationQuery.graphql.js",
        "UserGroupsPaginationQuery.graphql.js",
    } <= generated
    members = (tmp_path / "generated" / "GroupMembers_group.graphql.js").read_text()
    assert '"direction": "bidirectional"' in members
    assert '"backward"' in members and '"forward"' in members


async def test_relay_compiler_refuses_a_schema_without_last_and_before(tmp_path: Path) -> None:
    """What the issue saw: the schema before last/before and pageInfo's start."""
    schema = (ROOT / "schema.graphql").read_text()
    old = tmp_path / "old.graphql"
    for field in ("hasPreviousPage: Boolean!", "startCursor: String"):
        schema, found = re.subn(rf'\n\n  """[^"]*"""\n  {field}\n', "\n", schema)
        assert found == 1, field
    old.write_text(schema)
    status, output = await compile_relay(tmp_path / "project", old)
    assert status != 0
    assert "hasPreviousPage" in output or "startCursor" in output, output


@pytest.fixture
async def long_demo(table: Table) -> Table:
    await table.batch_write(build(long_lists()))
    return table


async def test_relay_runtime_pages_45_edges_forward_and_backward_to_the_ends(
    long_demo: Table, tmp_path: Path
) -> None:
    status, output = await compile_relay(tmp_path, ROOT / "schema.graphql")
    assert status == 0, output
    async with serve(create_app(table=long_demo)) as url:
        report: dict[str, Any] = await run_node(
            "relay.mjs", f"{url}/graphql", str(tmp_path / "generated"), "g00", folder=CLIENTS
        )
    forward, backward = report["forward"]["seen"], report["backward"]["seen"]
    members = forward[-1]["names"]
    assert len(members) == N == len(set(members))
    assert members == backward[-1]["names"]  # the same edges, in the same order
    # loadNext appended 10 at a time to the end; loadPrevious prepended them at the start
    assert [len(s["names"]) for s in forward] == [10, 20, 30, 40, 45]
    assert [len(s["names"]) for s in backward] == [10, 20, 30, 40, 45]
    assert all(s["names"] == members[: len(s["names"])] for s in forward)
    assert all(s["names"] == members[-len(s["names"]) :] for s in backward)
    assert [s["hasNextPage"] for s in forward] == [True] * 4 + [False]
    assert [s["hasPreviousPage"] for s in backward] == [True] * 4 + [False]
    assert {s["totalCount"] for s in forward + backward} == {N}
    # relay's own pagination variables: the other direction's set to null
    requests = report["backward"]["requests"][1:]
    assert [r["name"] for r in requests] == ["GroupMembersPaginationQuery"] * 4
    assert all(
        r["variables"]["first"] is None and r["variables"]["after"] is None for r in requests
    )
    assert all(r["variables"]["last"] == 10 and r["variables"]["before"] for r in requests)
    # the root tickets (eight shards merged), newest first, loaded from the oldest backward
    tickets = report["tickets"]["seen"]
    assert tickets[-1]["names"] == [f"Ticket {i}" for i in reversed(range(N))]
    assert [len(s["names"]) for s in tickets] == [7, 14, 21, 28, 35, 42, 45]


RELAY_RULES = "relay-connection-types-spec,relay-connection-arguments-spec,relay-page-info-spec"


async def lint(schema: Path) -> tuple[int, list[dict[str, Any]]]:
    """graphql-schema-linter's Relay rules on ``schema``: its exit status and its errors."""
    process = await asyncio.create_subprocess_exec(
        str(CLIENTS / "node_modules" / ".bin" / "graphql-schema-linter"),
        "--rules",
        RELAY_RULES,
        "--format",
        "json",
        str(schema),
        cwd=CLIENTS,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        output, errors = await process.communicate()
    assert process.returncode is not None
    assert output, errors.decode(errors="replace")
    found: list[dict[str, Any]] = json.loads(output)["errors"]
    return process.returncode, found


async def test_graphql_schema_linter_relay_rules_pass_on_the_schema() -> None:
    assert await lint(ROOT / "schema.graphql") == (0, [])


async def test_graphql_schema_linter_refuses_a_page_info_without_its_start(
    tmp_path: Path,
) -> None:
    """What the issue saw: relay-page-info-spec on pageInfo without hasPreviousPage."""
    schema = (ROOT / "schema.graphql").read_text()
    schema = re.sub(r'\n\n  """[^"]*"""\n  hasPreviousPage: Boolean!\n', "\n", schema)
    (tmp_path / "old.graphql").write_text(schema)
    status, found = await lint(tmp_path / "old.graphql")
    assert status != 0
    assert {e["rule"] for e in found} == {"relay-page-info-spec"}
