"""``edgewise check-model M --against SCHEMA``: the changes a model edit makes to the API served
now that break its clients, one line each and exit 1; against the committed SDL file and against
a running API's URL (introspection), as a CI step runs it before a deploy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graph.table import Table
from server.http.app import create_app
from server.settings import Settings
from tests.served import serve_in_thread

ROOT = Path(__file__).parents[2]
DEMO = (ROOT / "models" / "demo" / "model.yaml").read_text()
SCHEMA = str(ROOT / "schema.graphql")

USER_BY_EMAIL = DEMO[DEMO.index("  Query.userByEmail: ") : DEMO.index("  Query.tickets(status:)")]
ADDRESS = "      address: String\n    description: Add an office"

# (an edit of the demo model: (old, new) replacements, the breaking changes it makes)
EDITS = {
    "a root field removed": (
        [
            ("ticket, userByEmail, tickets]", "ticket, tickets]"),
            (
                DEMO[DEMO.index("  Query.userByEmail: ") : DEMO.index("  Query.tickets(status:)")],
                "",
            ),
        ],
        [  # the Subscription type mirrors Query
            "FIELD_REMOVED: Field Query.userByEmail was removed.",
            "FIELD_REMOVED: Field Subscription.userByEmail was removed.",
        ],
    ),
    "a field retyped": (
        [("plan: {type: String,", "plan: {type: Int,")],
        [
            "FIELD_CHANGED_KIND: Field CreateOrganizationInput.plan changed type from String to "
            "Int.",
            "FIELD_CHANGED_KIND: Field Organization.plan changed type from String to Int.",
            "FIELD_CHANGED_KIND: Field UpdateOrganizationInput.plan changed type from String to "
            "Int.",
        ],
    ),
    "an enum value removed": (
        [("GroupRole: [OWNER, MEMBER]", "GroupRole: [MEMBER]")],
        ["VALUE_REMOVED_FROM_ENUM: Enum value GroupRole.OWNER was removed."],
    ),
    "an argument made required": (
        [
            (
                "      address: String\n    description: Add",
                "      address: String!\n    description: Add",
            )
        ],
        [
            "ARG_CHANGED_KIND: Argument Mutation.addOffice(address:) has changed type from "
            "String to String!."
        ],
    ),
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=120
    )


def edited(tmp_path: Path, replacements: list[tuple[str, str]]) -> str:
    text = DEMO
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return str(path)


def breaking(result: subprocess.CompletedProcess[str], against: str) -> list[str]:
    prefix = f"breaking change against {against}: "
    return [line.removeprefix(prefix) for line in result.stderr.splitlines() if prefix in line]


def test_the_model_as_it_is_breaks_nothing() -> None:
    result = run("check-model", "demo", "--against", SCHEMA)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(f"no breaking change against {SCHEMA}\n")
    assert result.stderr == ""


@pytest.mark.parametrize("edit", list(EDITS))
def test_each_breaking_change_is_a_line_and_exit_1(tmp_path: Path, edit: str) -> None:
    replacements, expected = EDITS[edit]
    result = run("check-model", edited(tmp_path, replacements), "--against", SCHEMA)
    assert result.returncode == 1, result.stderr
    assert breaking(result, SCHEMA) == expected


def test_an_added_optional_argument_is_reported_but_breaks_nothing(tmp_path: Path) -> None:
    old = (ROOT / "schema.graphql").read_text()
    before = tmp_path / "schema.graphql"  # as if `address` were not an argument yet
    address = '\n\n    """Street address."""\n    address: String\n  ): OfficeEdge!'
    before.write_text(old.replace(address, "\n  ): OfficeEdge!"))
    assert before.read_text() != old
    result = run("check-model", "demo", "--against", str(before))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"dangerous change against {before}: OPTIONAL_ARG_ADDED: An optional argument "
        "Mutation.addOffice(address:) was added."
    ]


def test_against_a_url_compares_with_the_served_api(tmp_path: Path, demo: Table) -> None:
    with serve_in_thread(create_app(table=demo)) as url:
        same = run("check-model", "demo", "--against", f"{url}/graphql")
        replacements, expected = EDITS["an enum value removed"]
        changed = run("check-model", edited(tmp_path, replacements), "--against", f"{url}/graphql")
    assert same.returncode == 0, same.stderr
    assert changed.returncode == 1
    assert breaking(changed, f"{url}/graphql") == expected


def test_a_federated_api_is_compared_with_the_model_served_the_same_way(demo: Table) -> None:
    with serve_in_thread(create_app(Settings(federation=True), table=demo)) as url:
        result = run("check-model", "demo", "--against", f"{url}/graphql")
    assert result.returncode == 0, result.stderr  # _service and _entities are not removed


def test_production_has_no_introspection_and_says_what_to_compare_with(demo: Table) -> None:
    app = create_app(Settings(production=True, jwt_secret="x" * 40), table=demo)
    with serve_in_thread(app) as url:
        result = run("check-model", "demo", "--against", f"{url}/graphql")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"--against {url}/graphql: introspection answered ")
    assert "compare with the SDL file it serves instead" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "No such file or directory; give the SDL file the API serves"),
        ("type Query {", "(line 1): Syntax Error: Expected Name, found <EOF>."),
    ],
)
def test_a_schema_that_cannot_be_read_is_one_line(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "schema.graphql"
    if content is not None:
        path.write_text(content)
    result = run("check-model", "demo", "--against", str(path))
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"--against {path}") and expected in line
