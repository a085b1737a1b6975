"""The data layer: DynamoDB only, no GraphQL or HTTP."""

from .errors import BadUserInput, Conflict, EdgewiseError, NotFound, Unavailable
from .keys import ItemKey
from .table import Item, Page, RetryPolicy, Table, Trace

__all__ = [
    "BadUserInput",
    "Conflict",
    "EdgewiseError",
    "Item",
    "ItemKey",
    "NotFound",
    "Page",
    "RetryPolicy",
    "Table",
    "Trace",
    "Unavailable",
]
