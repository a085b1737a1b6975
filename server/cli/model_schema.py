"""``edgewise model-schema``: the JSON Schema of model files, for editors."""

from __future__ import annotations

import argparse
import json
import sys

from model import json_schema
from server.cli.command import Command

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    """No flags."""


def run(args: argparse.Namespace) -> None:
    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")


COMMAND = Command(
    "model-schema",
    "print the JSON Schema of the model file format",
    arguments,
    run,
    description="Print the JSON Schema of model files, for editors (e.g. the YAML "
    "language server's `# yaml-language-server: $schema=...`).",
)
