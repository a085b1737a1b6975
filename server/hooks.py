"""What a hook may import: the one module a model's hooks (``hook:`` on a field or a mutation,
``package.module:function`` in the model file) depend on, so the engine's own modules can move
without breaking them.

A mutation hook is called as ``await hook(ctx, **arguments)`` and a field hook as
``await hook(ctx, ref, **arguments)``, ``ref`` the node the field is on. Through ``ctx`` a hook
has:

- ``ctx.codec``: the model's keys and items (:class:`Codec`): ``by_id``, ``key``, ``item_key``,
  ``global_id``; ``ctx.codec.model`` the compiled model (its ``types`` and ``edges``);
- ``ctx.table``: the request's view of the table, for a :class:`Writer` (every write the
  generated mutations make: ``update``, ``add_edge``, ``update_edge``, ``insert``,
  ``find_child``, ``delete_child``, ``node_item``, ``edge_item``), which keeps replicas,
  counters, copies and claims as those do;
- ``ctx.reads``: the request's loaders (``ctx.reads.items.load(key)``, batched with the rest
  of the request), and ``ctx.require_admin(action)`` for a mutation only admins may run.

A mutation hook answers a :class:`Ref` for a node type, an :class:`EdgeValue` for an edge type
(``cursor_of`` makes its cursor), or a plain value; it raises :class:`BadUserInput`,
:class:`NotFound` or :class:`Conflict` for the client to see its code. The demo's hooks
(``models/demo/hooks.py``) use nothing else.
"""

from __future__ import annotations

from graph.errors import BadUserInput, Conflict, NotFound
from graph.items import Codec, Ref
from graph.keys import ItemKey, new_id
from graph.marks import is_marked
from graph.reads import cursor_of
from graph.table import Item
from graph.writes.items import now_iso
from graph.writes.writer import Writer
from model import EdgeType, NodeType
from server.engine.context import ModelContext
from server.engine.listings import EdgeValue

__all__ = [
    "BadUserInput",
    "Codec",
    "Conflict",
    "EdgeType",
    "EdgeValue",
    "Item",
    "ItemKey",
    "ModelContext",
    "NodeType",
    "NotFound",
    "Ref",
    "Writer",
    "cursor_of",
    "is_marked",
    "new_id",
    "now_iso",
]
