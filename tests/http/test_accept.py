"""Which answer an ``Accept`` header asks for: Server-Sent Events only when it prefers them."""

from __future__ import annotations

import pytest

from server.http.graphql import prefers_events

URQL = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)


@pytest.mark.parametrize(
    ("accept", "events"),
    [
        ("text/event-stream", True),  # graphql-sse's client
        ("text/event-stream, application/json", True),  # named first, as heavy
        ("application/json;q=0.5, text/event-stream", True),  # heavier
        (URQL, False),  # urql lists it after the JSON types: a query answers JSON
        ("application/json", False),
        ("*/*", False),
        ("text/*", False),  # never by a wildcard
        ("text/event-stream;q=0", False),
        (None, False),
    ],
)
def test_events_are_answered_only_where_the_client_prefers_them(
    accept: str | None, events: bool
) -> None:
    assert prefers_events(accept) is events
