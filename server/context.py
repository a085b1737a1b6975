"""The typed per-request context: who asks, the request's table view, loaders and scope."""

from __future__ import annotations

from dataclasses import dataclass

import strawberry
from starlette.requests import Request

from graph.loaders import Loaders
from graph.table import Table

from .auth import ADMIN, Principal
from .authz import Scope

__all__ = ["Context", "Info"]


@dataclass
class Context:
    request: Request
    table: Table
    loaders: Loaders
    scope: Scope

    @classmethod
    def for_request(cls, request: Request, table: Table, principal: Principal = ADMIN) -> Context:
        """Loaders bind the running loop, so build this inside the request's task."""
        # see server.observe; a request may be None (the CPU benchmark executes without one)
        observation = getattr(getattr(request, "state", None), "observation", None)
        scoped = table.for_request(observation)
        loaders = Loaders(scoped)
        if observation is not None:
            observation.watch(loaders)
        return cls(request, scoped, loaders, Scope(principal, loaders))


Info = strawberry.Info[Context, None]
