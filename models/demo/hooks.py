"""The demo's behaviours its model file cannot say, named by models/demo/model.yaml.

Not served yet: the demo is still served by the hand-written schema (``server.schema``); these
are replaced by the engine's implementations in the next step of the move."""

from __future__ import annotations

from typing import Any

__all__ = [
    "add_office",
    "cancel_subscription",
    "close_ticket",
    "has_access",
    "open_ticket",
    "products",
    "remove_office",
]


def _pending(name: str) -> NotImplementedError:
    return NotImplementedError(f"the demo's {name} is not on the model engine yet")


async def products(ctx: Any, ref: Any) -> Any:
    raise _pending("products")


async def has_access(ctx: Any, ref: Any, productId: str) -> Any:
    raise _pending("hasAccess")


async def cancel_subscription(ctx: Any, **args: Any) -> Any:
    raise _pending("cancelSubscription")


async def open_ticket(ctx: Any, **args: Any) -> Any:
    raise _pending("openTicket")


async def close_ticket(ctx: Any, **args: Any) -> Any:
    raise _pending("closeTicket")


async def add_office(ctx: Any, **args: Any) -> Any:
    raise _pending("addOffice")


async def remove_office(ctx: Any, **args: Any) -> Any:
    raise _pending("removeOffice")
