"""One execution record per document, as Grafast caches its plan on the schema keyed by the
operation: what a query text parses to, its validation errors, its operations as each name
selects them, each query operation compiled (:mod:`server.engine.compiled`) and the planned
selections of its fields (:mod:`server.engine.plan`), each made once and kept while the
record is. The records of a schema live in one bounded cache, :class:`Records`, shared by every
way a document arrives (GET, POST, WebSocket, Server-Sent Events, live queries, the limits'
check): a query text is parsed, validated and planned once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)
from graphql.execution.collect_fields import FragmentDetails

from graph.errors import BadUserInput
from server.engine.compiled import Compiled, compile_operation
from server.engine.plan import has_directives

__all__ = ["Record", "Records"]

SIZE = 512  # records a schema keeps, the least recently used dropped first


class Record:
    """What one query text is to a schema: each part made the first time it is asked for.
    ``planned`` holds the planned selections (:mod:`server.engine.plan`) of a document without
    ``@skip``/``@include``; one with them is planned per request, since variables decide its
    fields."""

    def __init__(
        self, schema: GraphQLSchema, rules: Sequence[type[ASTValidationRule]], query: str
    ) -> None:
        self.schema = schema
        self.rules = rules
        self.query = query
        self.planned: dict[tuple[int, ...], Any] = {}
        self._tokens: dict[int, int] = {}
        self._operations: dict[str | None, OperationDefinitionNode] = {}
        self._compiled: dict[int, Compiled | None] = {}
        self._as_query: dict[int, Record] = {}

    @classmethod
    def of(
        cls,
        schema: GraphQLSchema,
        rules: Sequence[type[ASTValidationRule]],
        query: str,
        document: DocumentNode,
    ) -> Record:
        """A record of a document already parsed (a subscription's operation as a query)."""
        record = cls(schema, rules, query)
        record.__dict__["parsed"] = document
        return record

    def tokens(self, limit: int, count: Callable[[str, int], int]) -> int:
        """The tokens ``count`` finds in the text, up to ``limit``, counted once per limit (the
        limits' check, before anything parses: :mod:`server.http.limits`)."""
        found = self._tokens.get(limit)
        if found is None:
            found = self._tokens[limit] = count(self.query, limit)
        return found

    @cached_property
    def parsed(self) -> DocumentNode | GraphQLError:
        """The document, or the syntax error."""
        try:
            return parse(self.query)
        except GraphQLError as error:
            return error

    @cached_property
    def errors(self) -> tuple[GraphQLError, ...]:
        """The validation errors of a document that parsed."""
        document = self.parsed
        assert isinstance(document, DocumentNode)
        return tuple(validate(self.schema, document, self.rules))

    @property
    def document(self) -> DocumentNode:
        """The parsed document (its caller knows it parsed)."""
        document = self.parsed
        assert isinstance(document, DocumentNode)
        return document

    @cached_property
    def static(self) -> bool:
        """No ``@skip``/``@include``: the same fields whatever the variables."""
        return not has_directives(self.document)

    @cached_property
    def fragments(self) -> tuple[dict[str, FragmentDefinitionNode], dict[str, FragmentDetails]]:
        """The fragment definitions by name, as graphql-core's executor takes them."""
        definitions = {
            d.name.value: d
            for d in self.document.definitions
            if isinstance(d, FragmentDefinitionNode)
        }
        return definitions, {name: FragmentDetails(d) for name, d in definitions.items()}

    def operation(self, name: str | None) -> OperationDefinitionNode:
        """The operation named ``name``, or the document's only operation when ``name`` is None,
        selected once per name with graphql-js's rules and messages; raises BadUserInput. Only
        what is found is kept, so names a client makes up cannot grow the record."""
        known = self._operations.get(name)
        if known is not None:
            return known
        found = _select(self.document, name)
        if isinstance(found, BadUserInput):
            raise found
        self._operations[name] = found
        return found

    def compiled(self, operation: OperationDefinitionNode, executor: Any) -> Compiled | None:
        """``operation`` compiled, once (None: graphql-core runs it)."""
        key = id(operation)
        if key not in self._compiled:
            compiled = None
            if self.static and operation.operation is OperationType.QUERY:
                compiled = compile_operation(self.schema, executor)
            self._compiled[key] = compiled
        return self._compiled[key]

    def as_query(self, operation: OperationDefinitionNode) -> Record:
        """The record of this document with ``operation`` (a subscription) made a query: the
        same nodes, so every error's line and column are the client's; validated as a query
        once (the Subscription type's root fields are Query's)."""
        found = self._as_query.get(id(operation))
        if found is None:
            query = OperationDefinitionNode(
                operation=OperationType.QUERY,
                name=operation.name,
                variable_definitions=operation.variable_definitions,
                directives=operation.directives,
                selection_set=operation.selection_set,
                loc=operation.loc,
            )
            definitions = tuple(query if d is operation else d for d in self.document.definitions)
            document = DocumentNode(definitions=definitions, loc=self.document.loc)
            found = Record.of(self.schema, self.rules, self.query, document)
            self._as_query[id(operation)] = found
        return found


class Records:
    """A schema's execution records by query text, at most ``size``, the least recently used
    dropped first."""

    def __init__(
        self, schema: GraphQLSchema, rules: Sequence[type[ASTValidationRule]], size: int = SIZE
    ) -> None:
        self.schema = schema
        self.rules = tuple(rules)
        self.size = size
        self._records: OrderedDict[str, Record] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def __call__(self, query: str) -> Record:
        """The record of ``query``, made on first use."""
        records = self._records
        found = records.get(query)
        if found is not None:
            records.move_to_end(query)
            return found
        found = records[query] = Record(self.schema, self.rules, query)
        if len(records) > self.size:
            records.popitem(last=False)
        return found


def _select(document: DocumentNode, name: str | None) -> OperationDefinitionNode | BadUserInput:
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if name is None:
        if len(operations) > 1:
            return BadUserInput(
                "Must provide operation name if query contains multiple operations."
            )
        if not operations:
            return BadUserInput("Must provide an operation.")
        return operations[0]
    for operation in operations:
        if operation.name is not None and operation.name.value == name:
            return operation
    return BadUserInput(f'Unknown operation named "{name}".')
