"""Where and as whom the lean client calls, from the environment alone (a Lambda function's), or
left to botocore's chain and resolver (imported only then): graph/dynamo/client.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.dynamo.client import Endpoint, _from_environment, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.wire import LeanClient
from tests.helpers import DEMO_LAYOUT


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """A function's environment: credentials and region, no AWS config file."""
    for name in (
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_USE_FIPS_ENDPOINT",
        "AWS_USE_DUALSTACK_ENDPOINT",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
        "AWS_SECURITY_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIAKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "token")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    return monkeypatch


def test_aws_from_a_functions_environment(env: pytest.MonkeyPatch) -> None:
    found = _from_environment(Endpoint.parse("aws"))
    assert found is not None
    url, region, credentials = found
    assert (url, region) == ("https://dynamodb.eu-west-1.amazonaws.com", "eu-west-1")
    assert credentials.get_frozen_credentials() == ("ASIAKEY", "secret", "token")


def test_an_endpoint_url_from_the_environment(env: pytest.MonkeyPatch) -> None:
    env.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8001")
    assert _from_environment(Endpoint.parse("aws"))[:2] == (  # type: ignore[index]
        "http://127.0.0.1:8001",
        "eu-west-1",
    )
    env.setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
    found = _from_environment(Endpoint.parse("aws"))
    assert found is not None and found[0] == "https://dynamodb.eu-west-1.amazonaws.com"


def test_a_given_endpoint_keeps_its_region(env: pytest.MonkeyPatch) -> None:
    found = _from_environment(Endpoint("http://127.0.0.1:8001"))
    assert found is not None and found[:2] == ("http://127.0.0.1:8001", "us-east-1")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("AWS_ACCESS_KEY_ID", ""),  # no credentials: botocore's chain (profiles, SSO, IMDS ...)
        ("AWS_REGION", "cn-north-1"),  # another partition
        ("AWS_USE_FIPS_ENDPOINT", "true"),
        ("AWS_USE_DUALSTACK_ENDPOINT", "true"),
    ],
)
def test_what_the_environment_does_not_settle_is_left_to_botocore(
    env: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    env.setenv(variable, value)
    assert _from_environment(Endpoint.parse("aws")) is None


def test_a_config_file_is_left_to_botocore(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[default]\nendpoint_url = http://127.0.0.1:8001\n")
    env.setenv("AWS_CONFIG_FILE", str(config))
    assert _from_environment(Endpoint.parse("aws")) is None


async def test_either_way_the_lean_client_calls_the_same_endpoint(
    env: pytest.MonkeyPatch, dynamodb: EmbeddedDynamoDB
) -> None:
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        assert isinstance(client, LeanClient) and client.url == dynamodb.url
        assert (await client.credentials()).access_key == "ASIAKEY"
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
    env.delenv("AWS_ACCESS_KEY_ID")  # botocore's chain finds none: a local endpoint's dummies
    async with open_client(Endpoint(dynamodb.url)) as client:
        assert isinstance(client, LeanClient) and client.url == dynamodb.url
        assert (await client.credentials()).access_key != "ASIAKEY"
        described = await client.control.describe_table({"TableName": "graph"})
        assert described["Table"]["TableStatus"] == "ACTIVE"
