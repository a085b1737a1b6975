"""The typed per-request context: the request's table view, its loaders and its trace."""

from __future__ import annotations

from dataclasses import dataclass

import strawberry
from starlette.requests import Request

from graph.loaders import Loaders
from graph.table import Table

__all__ = ["Context", "Info"]


@dataclass
class Context:
    request: Request
    table: Table
    loaders: Loaders

    @classmethod
    def for_request(cls, request: Request, table: Table) -> Context:
        """Loaders bind the running loop, so build this inside the request's task."""
        scoped = table.for_request()
        return cls(request, scoped, Loaders(scoped))


Info = strawberry.Info[Context, None]
