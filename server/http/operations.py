"""Which operation of a document a request runs, decided before anything executes, with
graphql-js's rules and messages (``buildExecutionContext``)."""

from __future__ import annotations

from graphql import DocumentNode, OperationDefinitionNode

from graph.errors import BadUserInput

__all__ = ["select_operation"]


def select_operation(document: DocumentNode, name: str | None) -> OperationDefinitionNode:
    """The operation named ``name``, or the document's only operation when ``name`` is None."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if name is None:
        if len(operations) > 1:
            raise BadUserInput("Must provide operation name if query contains multiple operations.")
        if not operations:
            raise BadUserInput("Must provide an operation.")
        return operations[0]
    for operation in operations:
        if operation.name is not None and operation.name.value == name:
            return operation
    raise BadUserInput(f'Unknown operation named "{name}".')
