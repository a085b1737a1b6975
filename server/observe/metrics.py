"""Prometheus metrics of one app, in a registry of its own (so several apps in one process, as in
the tests, never collide), exposed on ``/metrics`` in Prometheus' text format. prometheus-client is
imported when an app has metrics, not with this module."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from graph.observer import Sent

__all__ = ["OTHER", "Metrics", "endpoint"]

# Operation names come from clients: past this many distinct ones, the rest count as OTHER, so a
# client cannot grow the label set (and the server's memory) without bound.
MAX_OPERATIONS = 200
OTHER = "other"

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
ROUND_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30)
COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
BATCH_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500)


class Metrics:
    """The app's counters and histograms; :meth:`call` and :meth:`retry` take what the table
    reports (every HTTP request sent to DynamoDB, retries included), :meth:`request` one GraphQL
    request as it ends."""

    def __init__(self, max_operations: int = MAX_OPERATIONS) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.max_operations = max_operations
        self._operations: set[str] = set()
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}
        registry = self.registry
        self.requests = Counter(
            "edgewise_graphql_requests",
            "GraphQL requests by operation name (anonymous when the document names none) and "
            "outcome (ok, or error when the response carries an error)",
            ["operation", "outcome"],
            registry=registry,
        )
        self.request_seconds = Histogram(
            "edgewise_graphql_request_seconds",
            "Time to answer a GraphQL request, by operation name",
            ["operation"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.rounds = Histogram(
            "edgewise_dynamodb_rounds",
            "Sequential waves of DynamoDB calls per GraphQL request",
            buckets=ROUND_BUCKETS,
            registry=registry,
        )
        self.requests_per_request = Histogram(
            "edgewise_dynamodb_requests_per_graphql_request",
            "HTTP requests sent to DynamoDB per GraphQL request, retries included",
            buckets=COUNT_BUCKETS,
            registry=registry,
        )
        self.calls = Counter(
            "edgewise_dynamodb_calls",
            "HTTP requests sent to DynamoDB, retries included, by operation and outcome "
            "(ok, throttled or error)",
            ["operation", "outcome"],
            registry=registry,
        )
        self.call_seconds = Histogram(
            "edgewise_dynamodb_call_seconds",
            "Time of one HTTP request to DynamoDB, by operation",
            ["operation"],
            buckets=CALL_BUCKETS,
            registry=registry,
        )
        self.retries = Counter(
            "edgewise_dynamodb_retries",
            "DynamoDB calls sent again: after a throttle, a 5xx or a connection error, or to "
            "send the unprocessed part of a batch",
            ["operation"],
            registry=registry,
        )
        self.read_units = Counter(
            "edgewise_dynamodb_consumed_read_units",
            "Read capacity units DynamoDB reported consumed, by operation",
            ["operation"],
            registry=registry,
        )
        self.write_units = Counter(
            "edgewise_dynamodb_consumed_write_units",
            "Write capacity units DynamoDB reported consumed, by operation",
            ["operation"],
            registry=registry,
        )
        self.subscriptions = Gauge(
            "edgewise_subscriptions",
            "Subscriptions open, by transport (graphql-transport-ws or sse)",
            ["transport"],
            registry=registry,
        )
        self.subscription_messages = Counter(
            "edgewise_subscription_messages",
            "Answers sent to subscribers (the first one and each that differed)",
            registry=registry,
        )
        self.stream_records = Counter(
            "edgewise_stream_records",
            "Records read from the table's stream (changed items)",
            registry=registry,
        )
        self.batch_size = Histogram(
            "edgewise_dataloader_batch_size",
            "Keys per batch a per-request dataloader dispatched, by loader",
            ["loader"],
            buckets=BATCH_BUCKETS,
            registry=registry,
        )

    def operation_label(self, name: str) -> str:
        """``name``, or :data:`OTHER` once ``max_operations`` distinct names are in use."""
        if name in self._operations:
            return name
        if len(self._operations) >= self.max_operations:
            return OTHER
        self._operations.add(name)
        return name

    def request(
        self, operation: str, ok: bool, seconds: float, dynamodb_requests: int, rounds: int
    ) -> None:
        label = self.operation_label(operation)
        self.requests.labels(label, "ok" if ok else "error").inc()
        self.request_seconds.labels(label).observe(seconds)
        self.rounds.observe(rounds)
        self.requests_per_request.observe(dynamodb_requests)

    def _child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, kept: a DynamoDB call's metrics are written on every call,
        and prometheus-client validates the labels and takes a lock each time it is asked."""
        key = (metric, labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def call(self, call: Sent) -> None:
        operation = call.operation  # a DynamoDB operation: a few names
        self._child(self.calls, operation, call.outcome).inc()
        self._child(self.call_seconds, operation).observe(call.seconds)
        if call.read_units:
            self._child(self.read_units, operation).inc(call.read_units)
        if call.write_units:
            self._child(self.write_units, operation).inc(call.write_units)
        if call.unprocessed:
            self._child(self.retries, operation).inc()

    def retry(self, operation: str) -> None:
        self.retries.labels(operation).inc()

    def batch(self, loader: str, size: int) -> None:
        self.batch_size.labels(loader).observe(size)


async def endpoint(request: Request) -> Response:
    """``GET /metrics``: the app's metrics in Prometheus' text format (OpenMetrics when the
    scraper's ``Accept`` asks for it)."""
    metrics: Metrics = request.app.state.metrics
    from prometheus_client.exposition import choose_encoder

    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(metrics.registry), headers={"Content-Type": content_type})
