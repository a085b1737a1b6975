"""deploy/template.yaml: it passes cfn-lint, its table is the one ``create-table`` makes (and
``--print-cloudformation`` prints), its API function's role grants exactly CONTRACT.md's actions on
the table and its indexes, and its stream consumer (``edgewise relay`` as a Lambda function) only
reads the table's stream, and is invoked by the stream and by a heartbeat schedule."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

import server.lambda_handler
import server.live.stream_consumer
from graph.table import Table
from server.cli.main import main

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
STREAM_ACTIONS = {
    f"dynamodb:{action}"
    for action in ("DescribeStream", "GetRecords", "GetShardIterator", "ListStreams")
}
TABLE_ARN = {"Fn::GetAtt": ["GraphTable", "Arn"]}
STREAM_ARN = {"Fn::GetAtt": ["GraphTable", "StreamArn"]}
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
    described = (await table.client.control.describe_table(dict(TableName=table.name)))["Table"]
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


def role_statements(resources: dict[str, Any], function: str) -> list[dict[str, Any]]:
    """The statements of ``function``'s own role, checked for what no role may grant."""
    properties = resources[function]["Properties"]
    assert "Policies" not in properties  # SAM would add its own; the role is the only grant
    role, attribute = properties["Role"]["Fn::GetAtt"]
    assert attribute == "Arn" and resources[role]["Type"] == "AWS::IAM::Role"
    assumed = resources[role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in assumed] == [{"Service": "lambda.amazonaws.com"}]
    statements = [
        statement
        for policy in resources[role]["Properties"]["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
    ]
    assert all(s["Effect"] == "Allow" for s in statements)
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else []
        assert not [a for a in actions if "*" in a], statement
        resource = statement["Resource"]
        assert resource != "*" and "*" not in (resource if isinstance(resource, list) else [])
    return statements


@pytest.mark.parametrize(
    ("function", "actions", "arns", "logs"),
    [
        ("Function", CONTRACT_ACTIONS, [TABLE_ARN, INDEX_ARNS], "FunctionLogs"),
        ("StreamConsumer", STREAM_ACTIONS, [STREAM_ARN], "StreamConsumerLogs"),
    ],
)
def test_each_function_role_grants_only_its_own_actions_on_its_own_resources(
    function: str, actions: set[str], arns: list[Any], logs: str
) -> None:
    """The API function: exactly the contract's actions on the table and its indexes; the
    stream consumer: exactly reading the stream, on the stream; each its own log group."""
    resources = template()["Resources"]
    statements = role_statements(resources, function)
    dynamodb = [s for s in statements if any(a.startswith("dynamodb:") for a in s["Action"])]
    assert len(dynamodb) == 1
    assert set(dynamodb[0]["Action"]) == actions
    assert len(dynamodb[0]["Action"]) == len(actions)
    assert dynamodb[0]["Resource"] == arns
    others = [s for s in statements if s not in dynamodb]
    assert others == [
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": {"Fn::GetAtt": [logs, "Arn"]},
        }
    ]


def test_one_role_per_function_and_no_other_grant() -> None:
    resources = template()["Resources"]
    functions = [r for r in resources.values() if r["Type"] == "AWS::Serverless::Function"]
    roles = sorted(n for n, r in resources.items() if r["Type"] == "AWS::IAM::Role")
    assert roles == ["FunctionRole", "StreamConsumerRole"]
    assert sorted(f["Properties"]["Role"]["Fn::GetAtt"][0] for f in functions) == roles
    assert not [
        r
        for r in resources.values()
        if r["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
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
    # the model compiled into the package by `make lambda` (CodeUri dist/lambda: /var/task)
    assert function["CodeUri"] == "../dist/lambda/"
    assert variables["EDGEWISE_COMPILED"] == "/var/task/compiled"
    recipe = (ROOT / "Makefile").read_text().split("\nlambda:", 1)[1].split("\n\n", 1)[0]
    assert "edgewise build --model $(LAMBDA_MODEL) --output dist/lambda/compiled" in recipe


def test_stream_consumer_reads_the_stream_and_beats_at_the_interval_it_announces() -> None:
    decoded = template()
    resources = decoded["Resources"]
    consumer = resources["StreamConsumer"]
    module, _, name = consumer["Properties"]["Handler"].rpartition(".")
    assert (module, name) == ("server.live.stream_consumer", "handler")
    assert callable(getattr(server.live.stream_consumer, name))
    # made only when the Redis URL is given
    assert decoded["Parameters"]["PubSubUrl"]["Default"] == ""
    assert "HasPubSub" in decoded["Conditions"]
    for made in ("StreamConsumer", "StreamConsumerRole", "StreamConsumerLogs"):
        assert resources[made]["Condition"] == "HasPubSub"
    variables = consumer["Properties"]["Environment"]["Variables"]
    assert variables == {
        "EDGEWISE_TABLE": {"Ref": "GraphTable"},
        "EDGEWISE_PUBSUB": {"Ref": "PubSubUrl"},
    }
    events = consumer["Properties"]["Events"]
    assert events["Stream"]["Type"] == "DynamoDB"
    assert events["Stream"]["Properties"]["Stream"] == STREAM_ARN
    heartbeat = events["Heartbeat"]
    assert heartbeat["Type"] == "Schedule"
    matched = re.fullmatch(
        r"rate\((\d+) (minute|minutes|hour|hours)\)", heartbeat["Properties"]["Schedule"]
    )
    assert matched is not None
    every = int(matched[1]) * (60 if matched[2].startswith("minute") else 3600)
    event = json.loads(heartbeat["Properties"]["Input"])
    assert event == {"edgewise": server.live.stream_consumer.HEARTBEAT_EVENT, "every": every}
