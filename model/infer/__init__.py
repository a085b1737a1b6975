"""Drafting a model file from an existing table: DescribeTable's answer and a sample of items
(DynamoDB JSON, as Scan returns them) in, the text of a commented model file out. Pure: no I/O;
``graph.sample`` reads the table.

Reading (``shapes``, ``roles``, ``implicit``, ``keys``): items grouped by key shape into kinds,
classified (node, implicit node, child, keyed node, edge, uniqueness claim), named and given key
templates. Rendering (``fields``, ``indexes``, ``header``, ``edges``, ``render``): each kind's
fields, index writes and access patterns, as commented YAML.
"""

from .render import infer
from .table import Draft, InferError, TableInfo, table_info
from .workbench import import_workbench

__all__ = ["Draft", "InferError", "TableInfo", "import_workbench", "infer", "table_info"]
