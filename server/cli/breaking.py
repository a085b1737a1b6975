"""``edgewise check-model M --against SCHEMA``: what a model edit breaks for the clients of the
API already served. SCHEMA is the SDL it serves (``schema.graphql``, as ``export-schema``
wrote it) or its URL, read by introspection; graphql-core's ``find_breaking_changes`` compares
it with the model's schema (removed or retyped fields and types, arguments removed, retyped or
made required, enum values removed …), and ``find_dangerous_changes`` with what clients may
notice (a default changed, an enum value or an optional argument added …)."""

from __future__ import annotations

from pathlib import Path

import httpx
from graphql import (
    GraphQLError,
    GraphQLSchema,
    build_client_schema,
    build_schema,
    find_breaking_changes,
    find_dangerous_changes,
    get_introspection_query,
)

__all__ = ["AgainstError", "changes", "federated", "served_schema"]

FEDERATION_FIELDS = ("_service", "_entities")


class AgainstError(Exception):
    """The schema to compare with cannot be read: one line saying why and what to do."""


def served_schema(against: str, timeout: float = 30.0) -> GraphQLSchema:
    """The schema ``against`` names: a URL (introspected) or an SDL file."""
    if against.startswith(("http://", "https://")):
        return _introspected(against, timeout)
    path = Path(against)
    try:
        text = path.read_text()
    except OSError as exc:
        raise AgainstError(
            f"--against {against}: {exc.strerror or exc}; give the SDL file the API serves "
            "(edgewise export-schema --output schema.graphql) or its /graphql URL"
        ) from None
    try:
        return build_schema(text)
    except GraphQLError as exc:
        where = f" (line {exc.locations[0].line})" if exc.locations else ""
        raise AgainstError(
            f"--against {against}{where}: {exc.message}; give the SDL that "
            "edgewise export-schema writes"
        ) from None


def _introspected(url: str, timeout: float) -> GraphQLSchema:
    query = get_introspection_query(descriptions=False, input_value_deprecation=True)
    try:
        response = httpx.post(url, json={"query": query}, timeout=timeout)
        body = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise AgainstError(
            f"--against {url}: {exc}; give the URL of a running API's /graphql"
        ) from None
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        errors = body.get("errors") if isinstance(body, dict) else None
        message = errors[0].get("message") if errors else f"HTTP {response.status_code}"
        raise AgainstError(
            f"--against {url}: introspection answered {str(message)[:200]!r}; under "
            "--production introspection is off: compare with the SDL file it serves instead"
        )
    try:
        return build_client_schema(body["data"])
    except (TypeError, GraphQLError) as exc:
        raise AgainstError(f"--against {url}: not a GraphQL introspection result: {exc}") from None


def federated(schema: GraphQLSchema) -> bool:
    """Whether ``schema`` is served as a federation subgraph (``serve --federation``)."""
    query = schema.query_type
    return query is not None and any(name in query.fields for name in FEDERATION_FIELDS)


def changes(old: GraphQLSchema, new: GraphQLSchema) -> tuple[list[str], list[str]]:
    """The breaking and the dangerous changes from ``old`` to ``new``, a line each, sorted."""
    breaking = sorted(f"{c.type.name}: {c.description}" for c in find_breaking_changes(old, new))
    dangerous = sorted(f"{c.type.name}: {c.description}" for c in find_dangerous_changes(old, new))
    return breaking, dangerous
