"""deploy/template.yaml: it passes cfn-lint, its table is the one ``create-table`` makes (and
``--print-cloudformation`` prints), and its IAM grants exactly CONTRACT.md's actions on the table
and its indexes."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

import server.lambda_handler
from graph.table import Table
from server.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "template.yaml"
CONTRACT_ACTIONS = {
    f"dynamodb:{action}"
    for action in (
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "ConditionCheckItem",
        "TransactGetItems",
        "TransactWriteItems",
        "DescribeTable",
    )
}
TABLE_ARN = {"Fn::GetAtt": ["GraphTable", "Arn"]}
INDEX_ARNS = {"Fn::Sub": "${GraphTable.Arn}/index/*"}


def template() -> dict[str, Any]:
    decoded, problems = decode(str(TEMPLATE))
    assert not problems, problems
    assert decoded is not None
    return json.loads(json.dumps(decoded))  # plain dicts, intrinsic functions in long form


def print_cloudformation(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    main(["create-table", "--print-cloudformation", *args])
    printed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return printed


def layout(properties: dict[str, Any]) -> dict[str, Any]:
    """A table's layout from CloudFormation properties or a DescribeTable answer."""
    billing = properties.get("BillingMode") or properties["BillingModeSummary"]["BillingMode"]
    return {
        "attributes": sorted(
            (a["AttributeName"], a["AttributeType"]) for a in properties["AttributeDefinitions"]
        ),
        "keys": [(k["AttributeName"], k["KeyType"]) for k in properties["KeySchema"]],
        "billing": billing,
        "indexes": sorted(
            (
                i["IndexName"],
                tuple((k["AttributeName"], k["KeyType"]) for k in i["KeySchema"]),
                i["Projection"]["ProjectionType"],
                "ProvisionedThroughput" in i and billing == "PROVISIONED",
            )
            for i in properties["GlobalSecondaryIndexes"]
        ),
    }


def test_template_passes_cfn_lint_with_no_error_or_warning() -> None:
    cfn_lint = shutil.which("cfn-lint", path=str(Path(sys.executable).parent))
    assert cfn_lint is not None, "cfn-lint is a test extra: pip install -e '.[test]'"
    result = subprocess.run(
        [cfn_lint, str(TEMPLATE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


async def test_template_table_is_what_create_table_makes_and_prints(
    table: Table, capsys: pytest.CaptureFixture[str]
) -> None:
    resource = template()["Resources"]["GraphTable"]
    printed = print_cloudformation(capsys, "--table", "graph")
    assert printed["Type"] == resource["Type"] == "AWS::DynamoDB::Table"
    assert printed["Properties"].pop("TableName") == "graph"
    assert resource["Properties"] == printed["Properties"]
    described = (await table.client.describe_table(TableName=table.name))["Table"]
    assert layout(described) == layout(printed["Properties"])


def test_print_cloudformation_calls_no_dynamodb_api(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as trap:  # a DynamoDB endpoint that notes any connection
        trap.bind(("127.0.0.1", 0))
        trap.listen()
        trap.settimeout(0.5)
        url = f"http://127.0.0.1:{trap.getsockname()[1]}"
        printed = print_cloudformation(capsys, "--dynamodb", url, "--table", "t")
        with pytest.raises(TimeoutError):
            trap.accept()
    assert printed["Properties"]["TableName"] == "t"


def test_iam_grants_only_the_contract_actions_on_the_table_and_its_indexes() -> None:
    resources = template()["Resources"]
    function = resources["Function"]["Properties"]
    assert "Policies" not in function  # SAM would add its own; the role below is the only one
    assert function["Role"] == {"Fn::GetAtt": ["FunctionRole", "Arn"]}
    roles = [r for r in resources.values() if r["Type"] == "AWS::IAM::Role"]
    assert len(roles) == 1
    assert not [r for r in resources.values() if r["Type"] in ("AWS::IAM::Policy",)]
    statements = [
        statement
        for policy in roles[0]["Properties"]["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
    ]
    assert all(s["Effect"] == "Allow" for s in statements)
    dynamodb = [s for s in statements if any(a.startswith("dynamodb:") for a in s["Action"])]
    assert len(dynamodb) == 1
    assert set(dynamodb[0]["Action"]) == CONTRACT_ACTIONS
    assert len(dynamodb[0]["Action"]) == len(CONTRACT_ACTIONS)
    assert dynamodb[0]["Resource"] == [TABLE_ARN, INDEX_ARNS]
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else []
        assert not [a for a in actions if "*" in a], statement
        resource = statement["Resource"]
        assert resource != "*" and "*" not in (resource if isinstance(resource, list) else [])
    others = [s for s in statements if s not in dynamodb]
    assert others == [
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": {"Fn::GetAtt": ["FunctionLogs", "Arn"]},
        }
    ]


def test_function_runs_the_lambda_handler_from_the_environment() -> None:
    function = template()["Resources"]["Function"]["Properties"]
    module, _, name = function["Handler"].rpartition(".")
    assert (module, name) == ("server.lambda_handler", "handler")
    assert callable(getattr(server.lambda_handler, name))
    variables = function["Environment"]["Variables"]
    assert variables["EDGEWISE_DYNAMODB"] == "aws"
    assert variables["EDGEWISE_TABLE"] == {"Ref": "GraphTable"}
    assert function["Events"]["Api"]["Type"] == "HttpApi"
