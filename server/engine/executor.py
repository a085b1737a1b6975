"""Executing a request against a model-built schema: each query text's execution record
(:mod:`server.engine.records`: parsed, validated, its operation selected, compiled and planned
once), and the same result shape and errors the HTTP layer read from strawberry before (without
importing strawberry, a sixth of a cold start)."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from graphql import (
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    default_field_resolver,
    default_type_resolver,
    specified_rules,
)
from graphql.execution.incremental.incremental_executor import IncrementalExecutor
from graphql.execution.values import get_variable_values
from graphql.utilities import print_type
from graphql.validation import NoSchemaIntrospectionCustomRule

from graph.errors import BadUserInput
from server.engine.context import ModelContext
from server.engine.records import SIZE, Record, Records
from server.errors import log_unexpected

__all__ = ["CannotGetOperationTypeError", "InvalidOperationTypeError", "ModelSchema", "Record"]

MAX_COERCION_ERRORS = 50  # graphql-core's default


class CannotGetOperationTypeError(Exception):
    """No operation of the document answers to the name asked for (or several, and none
    named); the message is the name, if any."""


class InvalidOperationTypeError(Exception):
    """The selected operation is of a type this request may not run (a mutation by GET, a
    subscription in one response)."""

    def __init__(self, operation_type: OperationType) -> None:
        super().__init__(operation_type.value)
        self.operation_type = operation_type


class ModelSchema:
    """A graphql-core schema with ``execute`` and ``as_str`` as the HTTP layer and the CLI use
    them, and its execution records (``record``); ``production`` turns introspection off;
    ``compiled=False`` leaves every operation to graphql-core (the bench's comparison)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        production: bool = False,
        compiled: bool = True,
        records: int = SIZE,
    ) -> None:
        self._schema = schema
        self.compiled = compiled
        rules = list(specified_rules)
        if production:
            rules.append(NoSchemaIntrospectionCustomRule)
        self.record = Records(schema, rules, records)

    @property
    def graphql_schema(self) -> GraphQLSchema:
        return self._schema

    async def execute(
        self,
        query: str | Record,
        variable_values: dict[str, Any] | None = None,
        context_value: Any = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] = (OperationType.QUERY,),
        operation: OperationDefinitionNode | None = None,
    ) -> ExecutionResult:
        """Run ``operation`` of ``query`` (a text or its record), or the operation
        ``operation_name`` selects (selected once per record and name)."""
        record = self.record(query) if isinstance(query, str) else query
        document = record.parsed
        if isinstance(document, GraphQLError):
            return ExecutionResult(None, [document])
        if record.errors:
            return ExecutionResult(None, list(record.errors))
        if operation is None:
            try:
                operation = record.operation(operation_name)
            except BadUserInput:
                raise CannotGetOperationTypeError(operation_name) from None
        operation_type = operation.operation
        if operation_type not in set(allowed_operation_types):
            raise InvalidOperationTypeError(operation_type)
        variables = get_variable_values(
            self._schema,
            operation.variable_definitions or (),
            variable_values or {},
            max_errors=MAX_COERCION_ERRORS,
        )
        if isinstance(variables, list):  # variables that do not coerce
            return ExecutionResult(None, variables)
        definitions, fragments = record.fragments
        executor = IncrementalExecutor(
            self._schema,
            definitions,
            fragments,
            None,
            context_value,
            operation,
            variables,
            default_field_resolver,
            default_type_resolver,
            default_field_resolver,
        )
        if record.static and isinstance(context_value, ModelContext):
            context_value.planned = record.planned  # planned once per document
        if self.compiled and operation_type is OperationType.QUERY:
            compiled = record.compiled(operation, executor)
            if compiled is not None:
                data = await compiled.run(executor)
                if data is not None:
                    return ExecutionResult(data, None)
        result = executor.execute_operation()
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, ExecutionResult)
        log_unexpected(result.errors or ())
        return result

    def as_str(self) -> str:
        """The SDL: every named type, sorted by name, as strawberry prints a schema."""
        type_map = self._schema.type_map
        types = [
            type_map[name]
            for name in sorted(type_map)
            if not name.startswith("__") and name not in ("String", "Int", "Float", "Boolean", "ID")
        ]
        return "\n\n".join(print_type(t) for t in types)
