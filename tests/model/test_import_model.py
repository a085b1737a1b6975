"""`edgewise import-model --from nosql-workbench`: a NoSQL Workbench export (tests/model/workbench,
written in Workbench's format 3.0: DataModel tables with KeyAttributes, GlobalSecondaryIndexes,
TableFacets and TableData) drafted into a model that check-model accepts and that serves the
table Workbench would commit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from graph.dynamo.embedded import EmbeddedDynamoDB
from model import load_model
from server.cli.main import main
from tests.model.team_tables import expected, lookups, served_nodes, write_table

HR = Path(__file__).parent / "workbench" / "hr.json"


def _import(tmp_path: Path, *extra: str) -> tuple[Path, str]:
    output = tmp_path / "hr.yaml"
    main(["import-model", "--from", "nosql-workbench", str(HR), "--output", str(output), *extra])
    main(["check-model", str(output)])  # passes as is
    return output, output.read_text()


def _rows() -> list[dict[str, Any]]:
    """Every sample row of the export's HumanResources table, as plain items."""
    (table,) = [
        t for t in json.loads(HR.read_text())["DataModel"] if t["TableName"] == "HumanResources"
    ]
    rows = list(table["TableData"])
    for facet in table["TableFacets"]:
        alias = facet["KeyAttributeAlias"]
        renames = {alias["PartitionKeyAlias"]: "PK", alias["SortKeyAlias"]: "SK"}
        rows += [{renames.get(k, k): v for k, v in r.items()} for r in facet["TableData"]]
    decode = TypeDeserializer().deserialize
    return [{k: decode(v) for k, v in r.items()} for r in rows]


def test_facets_become_types_and_an_edge_with_its_index(tmp_path: Path) -> None:
    path, text = _import(tmp_path, "--table", "HumanResources")
    model = load_model(str(path))
    assert set(model.types) == {"Employee", "Warehouse", "JobHistory"}  # Payslip: no rows
    assert model.types["Employee"].pk.text == "EMP#{id}"
    job = model.types["JobHistory"]
    assert (job.pk.text, job.sk.text) == ("EMP#{employeeId}", "JH#{startDate}#{jobId}")
    assert job.parent is not None and job.parent.type == "Employee"
    (edge,) = model.edges.values()
    assert (edge.label, edge.source, edge.target) == ("WorksAt", "Employee", "Warehouse")
    assert edge.reverse is not None and edge.reverse.index is not None
    assert edge.reverse.index.name == "GSI1"
    assert "employeesByEmployeeName" in model.queries
    assert "# note: facet 'Payslip' has no sample rows (TableData)" in text
    assert text.startswith(
        "# Drafted by `edgewise import-model --from nosql-workbench` from hr.json (model 'HR', "
        "table 'HumanResources': 5 facets, 11 sample rows)."
    )


def test_an_export_of_several_tables_needs_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["import-model", "--from", "nosql-workbench", str(HR)])
    assert "the export holds 2 tables (HumanResources, Audit): pick one with --table" in str(
        exit_.value.code
    )
    with pytest.raises(SystemExit) as exit_:
        main(["import-model", "--from", "nosql-workbench", str(HR), "--table", "Audit"])
    assert "has no sample rows (TableData)" in str(exit_.value.code)
    assert capsys.readouterr().out == ""


def test_a_file_that_is_not_an_export_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tables": []}')
    with pytest.raises(SystemExit) as exit_:
        main(["import-model", "--from", "nosql-workbench", str(bad)])
    assert "not a NoSQL Workbench data model export" in str(exit_.value.code)


def test_the_imported_model_serves_the_committed_table(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    path, _ = _import(tmp_path, "--table", "HumanResources")
    dynamodb.reset()
    items = _rows()
    write_table(dynamodb.url, "HumanResources", items, indexes=(("GSI1", "GSI1PK", "GSI1SK"),))
    model = load_model(str(path))
    ids = lookups(model, items)
    assert set(ids) == set(model.types)
    answers = asyncio.run(served_nodes(dynamodb, path, "HumanResources", ids))
    assert answers == expected(model, ids)  # every type, every stored field


def test_an_export_without_facets_is_typed_by_its_rows(tmp_path: Path) -> None:
    def row(pk: str, sk: str, entity: str, **more: str) -> dict[str, Any]:
        return {"PK": {"S": pk}, "SK": {"S": sk}, "Entity": {"S": entity}} | {
            k: {"S": v} for k, v in more.items()
        }

    rows = [row(f"C#{c}", f"C#{c}", "CUSTOMER", Email=f"{c}@example.com") for c in ("a", "b")]
    rows += [row(f"P#{p}", f"P#{p}", "PRODUCT", Name=p) for p in ("ipad", "mac")]
    rows += [row("O#1", f"P#{p}", "ORDER_DETAIL", Quantity="2") for p in ("ipad", "mac")]
    key = {"AttributeName": "PK", "AttributeType": "S"}
    table = {
        "TableName": "OnlineShop",
        "KeyAttributes": {"PartitionKey": key, "SortKey": key | {"AttributeName": "SK"}},
        "GlobalSecondaryIndexes": [],
        "TableData": rows,
    }
    export = tmp_path / "shop.json"
    export.write_text(json.dumps({"ModelName": "OnlineShop", "DataModel": [table]}))
    output = tmp_path / "shop.yaml"
    main(["import-model", "--from", "nosql-workbench", str(export), "--output", str(output)])
    model = load_model(str(output))
    assert model.type_attribute == "Entity"  # found as infer finds it, with no facet to say
    assert {"Customer", "Product", "OrderDetail"} <= set(model.types)
    assert "note: 6 rows of the table's TableData fit no facet's attributes" in output.read_text()
