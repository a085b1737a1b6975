"""OpenTelemetry traces, configured by the standard ``OTEL_*`` environment.

Off unless ``OTEL_TRACES_EXPORTER`` names an exporter (``console``, ``otlp``, or both
comma-separated; ``none`` or ``OTEL_SDK_DISABLED=true`` keep it off). The SDK is the ``otel``
extra (``pip install 'edgewise[otel]'``) and is imported only then. The OTLP exporter reads its
own variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._HEADERS``, ``..._PROTOCOL`` ...);
``OTEL_SERVICE_NAME`` defaults to ``edgewise``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["flushing", "tracer_provider_from_env"]

EXTRA = "pip install 'edgewise[otel]'"
App = TypeVar("App")
Lifespan = Callable[[App], AbstractAsyncContextManager[None]]


def flushing(lifespan: Lifespan[App], provider: TracerProvider | None) -> Lifespan[App]:
    """``lifespan``, then ``provider``'s last spans exported (SIGTERM skips atexit handlers)."""
    if provider is None:
        return lifespan

    @asynccontextmanager
    async def run(app: App) -> AsyncIterator[None]:
        try:
            async with lifespan(app):
                yield
        finally:
            provider.shutdown()

    return run


def tracer_provider_from_env(environ: Mapping[str, str] = os.environ) -> TracerProvider | None:
    """A tracer provider exporting as ``OTEL_TRACES_EXPORTER`` says, or None when it is unset."""
    names = [n.strip() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    names = [n for n in names if n != "none"]
    if not names or environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise SystemExit(
            f"OTEL_TRACES_EXPORTER={environ['OTEL_TRACES_EXPORTER']} needs OpenTelemetry's SDK: "
            f"{EXTRA}, or unset OTEL_TRACES_EXPORTER"
        ) from None
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "edgewise"}))
    provider = TracerProvider(resource=resource)
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, environ)))
    return provider


def _exporter(name: str, environ: Mapping[str, str]) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # one span a line, so a JSON log stays one JSON object a line
        return ConsoleSpanExporter(formatter=lambda span: span.to_json(indent=None) + "\n")
    if name == "otlp":
        protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get(
            "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
        )
        if protocol != "http/protobuf":
            raise SystemExit(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: Edgewise exports "
                "OTLP over http/protobuf (the default; port 4318)"
            )
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise SystemExit(
                f"OTEL_TRACES_EXPORTER=otlp needs the OTLP exporter: {EXTRA}"
            ) from None
        return OTLPSpanExporter()
    raise SystemExit(f"OTEL_TRACES_EXPORTER={name} is not supported: use console, otlp, or none")
