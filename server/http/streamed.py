"""What both streaming transports (WebSocket and Server-Sent Events) share: running a prepared
operation for a principal as a stream of answers, the subscription limits, a log line as each
subscription starts and stops (no variable values) and the subscription metrics."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from graphql import OperationType

from server.http.auth import Principal
from server.http.prepare import Prepared, Refused
from server.live.queries import Hub, answer_of
from server.observe.metrics import Metrics
from server.observe.requests import operation_name

__all__ = ["Refused", "answers"]

log = logging.getLogger("edgewise.subscriptions")


def _refusal(message: str, code: str) -> Refused:
    return Refused([{"message": message, "extensions": {"code": code}}])


def _remember(state: Any, prepared: Prepared) -> None:
    """A persisted query's text is kept once its operation ran (as for a request by HTTP)."""
    if prepared.register is not None:
        state.persisted.remember(prepared.register, prepared.source)


async def answers(
    state: Any, prepared: Prepared, principal: Principal, transport: str, params: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """The answers of ``prepared`` (``params`` as the client sent them, for the log): a query
    or mutation's one answer, or a subscription's, the first at once and then each that
    differs. Raises :class:`Refused` before the first when it cannot run."""
    metrics: Metrics | None = state.metrics
    if prepared.operation_type is not OperationType.SUBSCRIPTION:
        allowed = (OperationType.QUERY, OperationType.MUTATION)
        context = state.make_context(None, state.table, principal)
        try:
            result = await state.schema.execute(
                prepared.record,
                variable_values=prepared.variables,
                context_value=context,
                operation_name=prepared.operation_name,
                allowed_operation_types=allowed,
                operation=prepared.operation,
            )
        finally:
            context.close()
        _remember(state, prepared)
        if metrics is not None:
            metrics.subscription_messages.inc()
        yield answer_of(result, state.settings.production)
        return
    hub: Hub | None = state.live
    if hub is None:
        raise _refusal("subscriptions are off on this server", "BAD_USER_INPUT")
    if hub.subscribers >= state.settings.subscriptions_max:
        raise _refusal("this server serves its most subscriptions; retry later", "UNAVAILABLE")
    try:
        subscription = await hub.subscribe(prepared, principal)
    except TimeoutError:
        raise _refusal("the table's stream cannot be read", "UNAVAILABLE") from None
    except RuntimeError as exc:
        raise _refusal(f"the table's stream cannot be read: {exc}", "UNAVAILABLE") from None
    _remember(state, prepared)
    fields = {
        "transport": transport,
        "subscription_id": uuid.uuid4().hex,
        "operation": operation_name(params.get("query"), params.get("operationName")),
    }
    started = time.perf_counter()
    log.info("subscription %s started (%s)", fields["operation"], transport, extra=fields)
    gauge = metrics.subscriptions.labels(transport) if metrics is not None else None
    if gauge is not None:
        gauge.inc()
    sent = 0
    try:
        async for answer in subscription:
            sent += 1
            if metrics is not None:
                metrics.subscription_messages.inc()
            yield answer
    finally:
        subscription.close()
        if gauge is not None:
            gauge.dec()
        seconds = time.perf_counter() - started
        log.info(
            "subscription %s stopped (%s) after %.1f s, %d answers",
            fields["operation"],
            transport,
            seconds,
            sent,
            extra=fields | {"duration_ms": round(seconds * 1000, 1)},
        )
