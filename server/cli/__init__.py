"""The ``edgewise`` command line: :mod:`server.cli.main` parses and dispatches, and each command
is a module of its own (``serve``, ``seed``, ``create_table`` …)."""

from server.cli.main import main

__all__ = ["main"]
