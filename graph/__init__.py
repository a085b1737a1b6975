"""The data layer: DynamoDB only, no GraphQL or HTTP."""

from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound, Unavailable
from graph.keys import ItemKey
from graph.table import Item, RetryPolicy, Table, Trace

__all__ = [
    "BadUserInput",
    "Conflict",
    "EdgewiseError",
    "Item",
    "ItemKey",
    "NotFound",
    "RetryPolicy",
    "Table",
    "Trace",
    "Unavailable",
]
