"""The process's logging: ``text`` (a line per record) or ``json`` (one JSON object a line),
uvicorn's own and access logs included. Access log paths never carry their query string (a GET
request's variables are there)."""

from __future__ import annotations

import json
import logging
import logging.config
from datetime import UTC, datetime
from typing import Any

__all__ = ["FIELDS", "FORMATS", "JsonFormatter", "configure", "logging_config"]

FORMATS = ("text", "json")
# what a record may carry besides its message (set with ``extra=``), copied into the JSON object
FIELDS = (
    "request_id",
    "operation",
    "status",
    "duration_ms",
    "dynamodb_requests",
    "dynamodb_rounds",
    "error_codes",
    "trace_id",
    "span_id",
    "client",
    "method",
    "path",
    "http_version",
    "transport",
    "subscription_id",
)


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
    ``message``, ``pid``, the :data:`FIELDS` it carries, and ``exception`` (the traceback, one
    string)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,  # which worker of `serve --workers N`
        }
        for name in FIELDS:
            if name in record.__dict__:
                entry[name] = record.__dict__[name]
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)


class AccessPath(logging.Filter):
    """Cuts the query string off uvicorn's access log paths, and gives the record its fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = args
            path = str(path).split("?", 1)[0]
            record.args = (client, method, path, version, status)
            record.__dict__.update(
                client=client, method=method, path=path, http_version=version, status=status
            )
        return True


def logging_config(log_format: str = "text", level: str = "INFO") -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` for the whole process: every logger (uvicorn's too)
    writes through one stderr handler in ``log_format``."""
    if log_format not in FORMATS:
        raise ValueError(f"log format {log_format!r}: use one of {', '.join(FORMATS)}")
    formatter: dict[str, Any] = (
        {"()": JsonFormatter}
        if log_format == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    )
    propagate = {"handlers": [], "propagate": True}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "filters": {"access_path": {"()": AccessPath}},
        "handlers": {
            "main": {
                "class": "logging.StreamHandler",
                "formatter": "main",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["main"], "level": level},
        "loggers": {
            "uvicorn": {**propagate, "level": level},
            "uvicorn.error": {**propagate, "level": level},
            "uvicorn.access": {**propagate, "level": level, "filters": ["access_path"]},
        },
    }


def configure(log_format: str = "text", level: str = "INFO") -> None:
    """Route every log record (and Python warnings) through :func:`logging_config`."""
    logging.config.dictConfig(logging_config(log_format, level))
    logging.captureWarnings(True)
