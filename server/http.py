"""GraphQL over HTTP: ``/graphql`` by GET (queries) and POST, with authentication, limits checked
before execution, error codes, and the DynamoDB trace."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types.graphql import OperationType

from graph.errors import EdgewiseError, Unauthenticated

from . import playground
from .auth import Authenticator
from .context import Context
from .limits import Limits, check
from .schema import Schema, format_error
from .settings import Settings

__all__ = ["graphql"]

SUGGESTION = re.compile(r"\s*Did you mean [^?]*\?")


def _error(
    status: int,
    message: str,
    code: str = "BAD_USER_INPUT",
    headers: dict[str, str] | None = None,
) -> Response:
    body = {"errors": [{"message": message, "extensions": {"code": code}}]}
    return JSONResponse(body, status_code=status, headers=headers)


async def _body(request: Request, limit: int) -> bytes | Response:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return _error(413, f"the request body is over {limit} bytes", "QUERY_TOO_COMPLEX")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return _error(413, f"the request body is over {limit} bytes", "QUERY_TOO_COMPLEX")
    return bytes(body)


async def _read_params(request: Request, limit: int) -> dict[str, Any] | Response:
    if request.method == "GET":
        params: dict[str, Any] = dict(request.query_params)
        if len(request.url.query) > limit:
            return _error(413, f"the query string is over {limit} bytes", "QUERY_TOO_COMPLEX")
        for name in ("variables", "extensions"):
            if isinstance(params.get(name), str):
                try:
                    params[name] = json.loads(params[name])
                except ValueError:
                    return _error(400, f"the {name} parameter is not valid JSON")
        return params
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "send the GraphQL request as Content-Type: application/json")
    raw = await _body(request, limit)
    if isinstance(raw, Response):
        return raw
    try:
        body = json.loads(raw)
    except ValueError:
        return _error(400, "the request body is not valid JSON")
    if isinstance(body, list):
        return _error(400, "batched requests are not supported: send one operation a request")
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object")
    return body


async def graphql(request: Request) -> Response:
    """Queries by GET or POST, mutations by POST only."""
    state = request.app.state
    settings: Settings = state.settings
    if (
        request.method == "GET"
        and "query" not in request.query_params
        and "text/html" in request.headers.get("accept", "")
    ):
        return PlainTextResponse("Not Found", 404) if settings.production else playground.page()
    authenticator: Authenticator = state.authenticator
    try:
        principal = authenticator.principal(request.headers.get("authorization"))
    except Unauthenticated as exc:
        return _error(401, str(exc), exc.code, headers={"WWW-Authenticate": "Bearer"})
    limits: Limits = state.limits
    params = await _read_params(request, limits.body_bytes)
    if isinstance(params, Response):
        return params
    query, variables = params.get("query"), params.get("variables")
    if not isinstance(query, str) or not query.strip():
        return _error(400, "no GraphQL query: pass `query` in the JSON body or the query string")
    if variables is not None and not isinstance(variables, dict):
        return _error(400, "`variables` must be a JSON object")
    schema: Schema = state.schema
    try:
        check(schema._schema, query, variables, limits)
    except EdgewiseError as exc:
        return _error(200, str(exc), exc.code)
    allowed = {OperationType.QUERY}
    if request.method == "POST":
        allowed.add(OperationType.MUTATION)
    context = Context.for_request(request, state.table, principal)
    try:
        result = await schema.execute(
            query,
            variable_values=variables,
            context_value=context,
            operation_name=params.get("operationName"),
            allowed_operation_types=allowed,
        )
    except InvalidOperationTypeError:
        return _error(405, "mutations are sent with POST", headers={"Allow": "POST"})
    except CannotGetOperationTypeError as exc:
        return _error(400, str(exc) or "unknown operation")
    body: dict[str, Any] = {}
    if result.errors:
        body["errors"] = [format_error(e) for e in result.errors]
        if settings.production:
            for error in body["errors"]:
                error["message"] = SUGGESTION.sub("", error["message"])
    if result.data is not None or not result.errors or any(e.path for e in result.errors):
        body["data"] = result.data
    traced = request.headers.get("edgewise-trace") == "1"
    if traced and (principal.admin or not settings.production):
        body["extensions"] = {"dynamodb": context.table.trace.as_dict()}
    return JSONResponse(body)
