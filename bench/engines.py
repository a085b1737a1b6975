"""The DynamoDB engine a bench script starts for itself (``--engine``): moto's server, the
default, or DynamoDB Local, AWS's own emulator (``graph/dynamo/local.py``; Java and its jar,
``make dynamodb-local``). Each figure names the engine it ran on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version

from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.local import DynamoDBLocal, jar_dir

__all__ = ["ENGINES", "described", "started", "suffix"]

ENGINES = {"moto": "moto", "local": "DynamoDB Local"}  # --engine: its name in the figures


@contextmanager
def started(engine: str) -> Iterator[str]:
    """``with started("local") as url:`` the engine on a free loopback port until the block
    ends. DynamoDB Local runs with the JVM's defaults (its optimizing compiler pays back over a
    figure's minutes), unlike the tests' quick-start options."""
    server = EmbeddedDynamoDB() if engine == "moto" else DynamoDBLocal(jvm_options=())
    with server:
        yield server.url


def described(engine: str) -> str:
    """The engine and its version, for a report's first paragraph."""
    if engine == "moto":
        try:
            return f"moto {version('moto')}"
        except PackageNotFoundError:
            return "moto"
    package = jar_dir().parent / "package.json"
    try:
        shipped = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "DynamoDB Local"
    return f"DynamoDB Local (the jar of amplify-dynamodb-simulator {shipped})"


def suffix(engine: str) -> str:
    """What a results file's name gets for the engine: nothing for moto, ``-LOCAL``."""
    return "" if engine == "moto" else "-" + engine.upper()
