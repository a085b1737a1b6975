"""The embedded DynamoDB's child process: moto's server, answering one request at a time.

``python -m graph.dynamo.moto_child -H 127.0.0.1 -p PORT`` (what :class:`EmbeddedDynamoDB
<graph.dynamo.embedded.EmbeddedDynamoDB>` starts). moto's own server (``moto_server``) answers
each request on its own thread, and its DynamoDB has no isolation between them: it checks a
transaction's conditions and applies its writes with no lock, so two transactions conditioned
on one version can both apply, and it undoes a cancelled transaction by putting back a copy of
the whole table taken when it began, which also undoes every write other requests made
meanwhile (whose callers were told they succeeded). Under concurrent writes that loses edges,
counters and replicas. DynamoDB serializes conflicting transactions; here one lock around
moto does, connections still being kept alive on their threads.

moto also keeps every model object it ever made, for its dashboard (``/moto-api/data.json``),
every copy of a table a transaction takes (one per action) included: its memory grows with
each transaction, by gigabytes over a few minutes of contended writes. Here it keeps none (the
dashboard lists nothing; ``data.json`` still answers, which is how the parent sees it start).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["main", "serialized"]

WSGI = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def serialized(app: WSGI) -> WSGI:
    """``app`` answering one request at a time (its whole answer read under the lock)."""
    lock = threading.Lock()

    def serial(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            return list(app(environ, start_response))

    return serial


def _untracked(cls: type, *args: Any, **kwargs: Any) -> Any:
    """moto's ``BaseModel.__new__``, less its record of every instance."""
    return object.__new__(cls)


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - runs in the child
    from moto.core import common_models
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    parser = argparse.ArgumentParser(prog="python -m graph.dynamo.moto_child")
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    common_models.BaseModel.__new__ = staticmethod(_untracked)  # type: ignore[method-assign]
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        args.host,
        args.port,
        serialized(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
