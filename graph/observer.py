"""What a :class:`graph.table.Table` tells an observer (metrics, spans) about what it sends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from graph.errors import EdgewiseError

__all__ = ["Observer", "Sent", "outcome"]

THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)


@dataclass(frozen=True)
class Sent:
    """One HTTP request the table sent to DynamoDB (every attempt is one), as it ended.

    ``outcome`` is ``ok``, ``throttled`` (a throttling error) or ``error`` (any other failure,
    a timeout or a cut-short attempt too); ``unprocessed`` says a batch was answered only in
    part, so its remainder is sent again."""

    operation: str
    outcome: str
    seconds: float
    read_units: float = 0.0
    write_units: float = 0.0
    unprocessed: bool = False


class Observer(Protocol):
    """Told of what a table sends (for metrics and spans): each attempt as it ends, each retry
    after a failed attempt, and each round's start and end (in-flight calls rising from 0 and
    falling back to 0, as :class:`graph.table.Trace` counts rounds). Runs on the event loop."""

    def round_started(self) -> None: ...
    def round_ended(self) -> None: ...
    def sent(self, call: Sent) -> None: ...
    def retrying(self, operation: str) -> None: ...


def outcome(exc: BaseException) -> str:
    """The outcome of an attempt that failed with ``exc``: ``throttled`` or ``error``."""
    throttled = isinstance(exc, EdgewiseError) and exc.code in THROTTLING_CODES
    return "throttled" if throttled else "error"
