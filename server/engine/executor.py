"""Executing a request against a model-built schema: parsing and validation cached per query
text, operation selection, and the same result shape the HTTP layer reads from strawberry."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    execute,
    get_operation_ast,
    parse,
    specified_rules,
    validate,
)
from graphql.execution import Executor
from graphql.utilities import print_type
from graphql.validation import NoSchemaIntrospectionCustomRule
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types.graphql import OperationType

from server.engine.compiled import compile_operation
from server.errors import log_unexpected

__all__ = ["ModelSchema"]


class ModelSchema:
    """A graphql-core schema with ``execute`` and ``as_str`` as the HTTP layer and the CLI use
    them; ``production`` turns introspection off."""

    def __init__(self, schema: GraphQLSchema, production: bool = False) -> None:
        self._schema = schema
        rules = list(specified_rules)
        if production:
            rules.append(NoSchemaIntrospectionCustomRule)

        @lru_cache(maxsize=512)
        def parsed(query: str) -> DocumentNode | GraphQLError:
            try:
                return parse(query)
            except GraphQLError as error:
                return error

        @lru_cache(maxsize=512)
        def validated(query: str) -> tuple[GraphQLError, ...]:
            document = parsed(query)
            assert isinstance(document, DocumentNode)
            return tuple(validate(schema, document, rules))

        self.parsed = parsed  # shared with the limits' check (server.http.limits.check)
        self._validated = self.validated = validated  # validated: server.http.prepare's too

    async def execute(
        self,
        query: str,
        variable_values: dict[str, Any] | None = None,
        context_value: Any = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] = (OperationType.QUERY,),
    ) -> ExecutionResult:
        document = self.parsed(query)
        if isinstance(document, GraphQLError):
            return ExecutionResult(None, [document])
        errors = self._validated(query)
        if errors:
            return ExecutionResult(None, list(errors))
        operation = get_operation_ast(document, operation_name)
        if not isinstance(operation, OperationDefinitionNode):
            raise CannotGetOperationTypeError(operation_name)
        kind = OperationType(operation.operation.value)
        if kind not in set(allowed_operation_types):
            raise InvalidOperationTypeError(kind)
        if kind is OperationType.QUERY:
            data = await self._compiled(document, context_value, variable_values, operation_name)
            if data is not None:
                return ExecutionResult(data, None)
        result = execute(
            self._schema,
            document,
            context_value=context_value,
            variable_values=variable_values,
            operation_name=operation_name,
        )
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, ExecutionResult)
        log_unexpected(result.errors or ())
        return result

    async def _compiled(
        self,
        document: DocumentNode,
        context_value: Any,
        variable_values: dict[str, Any] | None,
        operation_name: str | None,
    ) -> dict[str, Any] | None:
        """The planned executor's answer (:mod:`server.engine.compiled`), or None."""
        executor = Executor.build(
            self._schema, document, None, context_value, variable_values, operation_name
        )
        if isinstance(executor, list):  # variables that do not coerce: graphql-core says so
            return None
        compiled = compile_operation(self._schema, document, executor, operation_name)
        return None if compiled is None else await compiled.run(executor)

    def as_str(self) -> str:
        """The SDL: every named type, sorted by name, as strawberry prints a schema."""
        type_map = self._schema.type_map
        types = [
            type_map[name]
            for name in sorted(type_map)
            if not name.startswith("__") and name not in ("String", "Int", "Float", "Boolean", "ID")
        ]
        return "\n\n".join(print_type(t) for t in types)
