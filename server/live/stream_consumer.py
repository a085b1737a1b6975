"""AWS Lambda: ``server.live.stream_consumer.handler`` is ``edgewise relay`` as a consumer of the
table's stream, for the SAM template (``deploy/template.yaml``, ``StreamConsumer``).

Lambda's event source mapping reads the stream (one reader per shard, in order, retrying a
failed batch) and invokes the function with a batch of records; the function publishes each
changed key to Redis pub/sub on the channels, and in the message format, of ``edgewise relay``
(:func:`server.live.pubsub.publish_changes`), for every ``serve --pubsub`` to hear. A batch that
cannot be published raises, so Lambda retries it: a key published twice is harmless (servers
read the answer again and send it only if it differs).

A function runs only when invoked, so it cannot beat every second as the relay does. A
scheduled rule invokes it with ``{"edgewise": "heartbeat", "every": 60}`` every minute: it
publishes a heartbeat announcing that interval (:func:`server.live.pubsub.beat`), and servers allow
that long before they report the pub/sub down (:func:`server.live.pubsub.silence`).

Configuration: ``EDGEWISE_PUBSUB`` (the Redis URL), ``EDGEWISE_TABLE`` and ``EDGEWISE_MODEL``
(for the table's key layout), as for ``edgewise relay``.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from graph.dynamo.streams import record_key
from graph.table import Layout
from server.live.pubsub import beat, publish_changes
from server.observe.logs import configure

__all__ = ["HEARTBEAT_EVENT", "Consumer", "handler"]

log = logging.getLogger("edgewise.relay")

HEARTBEAT_EVENT = "heartbeat"  # the scheduled rule's event: {"edgewise": "heartbeat", "every": s}


def _table_of(arn: str) -> str | None:
    """The table an ``eventSourceARN`` (``arn:…:table/<name>/stream/<label>``) names."""
    _, found, rest = arn.partition(":table/")
    return rest.split("/", 1)[0] if found else None


class Consumer:
    """Publishes the keys of stream batches, and heartbeats, to the Redis at ``url``."""

    def __init__(self, url: str, table: str, layout: Layout, sender: str = "lambda") -> None:
        import redis

        # kept across invocations (the container may sit frozen for minutes in between): a
        # connection idle that long is checked before use; a Redis that does not answer fails
        # the invocation well within the function's timeout, and Lambda retries the batch
        self.redis: Any = redis.Redis.from_url(
            url, socket_connect_timeout=5, socket_timeout=5, health_check_interval=30
        )
        self.table = table
        self.layout = layout
        self.sender = sender

    def __call__(self, event: dict[str, Any], context: Any = None) -> dict[str, Any]:
        if "Records" in event:
            return {"published": self.publish(event["Records"])}
        if event.get("edgewise") == HEARTBEAT_EVENT:
            every = float(event["every"])
            pipeline = self.redis.pipeline(transaction=False)
            beat(pipeline, self.table, self.sender, every)
            pipeline.execute()
            return {"heartbeat": every}
        raise ValueError("neither a stream batch (Records) nor a heartbeat event")

    def publish(self, records: list[dict[str, Any]]) -> int:
        """Publish the keys ``records`` name; the number of distinct keys published."""
        keys = []
        for record in records:
            source = _table_of(record.get("eventSourceARN", ""))
            if source is not None and source != self.table:
                log.warning(
                    "a record of table %r's stream left out: this is %r's", source, self.table
                )
                continue
            key = record_key(record, self.layout)
            if key is not None:
                keys.append(key)
        pipeline = self.redis.pipeline(transaction=False)
        published = publish_changes(pipeline, self.table, self.layout, keys)
        pipeline.execute()  # a failure raises: Lambda retries the whole batch
        return published

    def close(self) -> None:
        self.redis.close()


def from_env() -> Consumer:
    """A consumer configured as ``edgewise relay`` is, from ``EDGEWISE_*`` variables."""
    from server.engine import engine_for
    from server.settings import load_settings

    settings = load_settings(who="edgewise stream consumer")
    configure(settings.log_format)
    if not settings.pubsub:
        raise SystemExit("edgewise stream consumer: set EDGEWISE_PUBSUB=redis://host:6379/0")
    engine = engine_for(settings.model)
    table = settings.table or engine.table_name
    sender = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "lambda")
    return Consumer(settings.pubsub, table, engine.layout, sender)


_consumer: Consumer | None = None


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda entry point (``server.live.stream_consumer.handler``); the consumer and its Redis
    connection are made at the container's first invocation and kept."""
    global _consumer
    if _consumer is None:
        _consumer = from_env()
    return _consumer(event, context)
