"""Cross-origin requests (CORS), answered by Starlette's CORSMiddleware.

Without ``--production`` and without ``--cors-origin`` any origin may call the API
(``Access-Control-Allow-Origin: *``); ``--cors-origin`` (repeatable; env ``EDGEWISE_CORS_ORIGINS``,
comma-separated) lists the origins allowed instead, and under ``--production`` only listed origins
are. Clients send their token in ``Authorization``, never a cookie, so credentials stay off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from graph.errors import BadUserInput

__all__ = ["ALLOWED_HEADERS", "ALLOWED_METHODS", "MAX_AGE", "cors", "parse_origins"]

ALLOWED_METHODS = ("GET", "POST")
ALLOWED_HEADERS = ("content-type", "authorization", "edgewise-trace", "idempotency-key")
EXPOSED_HEADERS = ("retry-after", "www-authenticate", "x-request-id")
MAX_AGE = 7200  # seconds a browser may reuse a preflight answer (Chromium's own maximum)
ORIGIN = re.compile(r"https?://[^/?#\s*]+", re.IGNORECASE)


def parse_origins(values: Iterable[str]) -> tuple[str, ...]:
    """Origins from ``--cors-origin`` values or ``EDGEWISE_CORS_ORIGINS`` (comma-separated)."""
    origins: list[str] = []
    for value in values:
        for origin in (part.strip() for part in value.split(",")):
            if not origin:
                continue
            if origin != "*" and not ORIGIN.fullmatch(origin):
                raise BadUserInput(
                    f"--cors-origin {origin!r} is not an origin: write scheme://host[:port] with "
                    "no path or trailing slash, e.g. http://localhost:5173 (or * for any origin)"
                )
            origins.append(origin.lower())
    return tuple(dict.fromkeys(origins))


def cors(origins: tuple[str, ...], production: bool) -> Middleware:
    """The middleware for the listed origins, or for the default (any origin outside production,
    none under it) when none is listed."""
    allowed = origins or (() if production else ("*",))
    return Middleware(
        CORSMiddleware,
        allow_origins=allowed,
        allow_methods=ALLOWED_METHODS,
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        max_age=MAX_AGE,
    )
