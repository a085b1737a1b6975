"""The summary ``edgewise check-model`` prints: the model's types, edges and indexes, and each
access pattern with the DynamoDB operations it costs."""

from __future__ import annotations

import json

from graph.errors import BadUserInput
from graph.items import Codec
from graph.keys import ItemKey
from graph.reads import Branch
from model import EdgeType, Model, NodeType, Query, Template
from model.templates import Placeholder
from model.types import SHARD, Index
from model.values import Walk

__all__ = ["access_patterns", "key_condition", "summary"]


def _key(node: NodeType) -> str:
    return node.pk.text if node.single else f"{node.pk.text} / {node.sk.text}"


def _where(index: str | None) -> str:
    return "the table" if index is None else index


def key_condition(index: Index, branch: Branch) -> str:
    """The KeyConditionExpression of one Query, in words: ``GSI1PK = "CUST#{id}" AND
    begins_with(GSI1SK, "ORDER#")`` (placeholders stand for the values sent)."""
    text = f"{index.pk} = {json.dumps(branch.partition)}"
    if index.sk is None:
        return text
    if branch.low is not None and branch.low == branch.high:
        return f"{text} AND {index.sk} = {json.dumps(branch.low)}"
    if branch.low is not None or branch.high is not None:
        low, high = json.dumps(branch.low or branch.prefix), json.dumps(branch.high or "…")
        return f"{text} AND {index.sk} BETWEEN {low} AND {high}"
    if branch.prefix:
        return f"{text} AND begins_with({index.sk}, {json.dumps(branch.prefix)})"
    return text


def _shown(template: Template, fixed: set[str], through: str | None = None) -> str:
    """``template`` up to its first placeholder not ``fixed`` (``through``: up to that one,
    included), placeholders written ``{name}``: a template without one is all prefix."""
    out = []
    for part in template.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        if part.name not in fixed and part.name != through:
            break
        out.append(f"{{{part.name}}}")
        if part.name == through:
            break
    return "".join(out)


def _query_branch(query: Query) -> Branch:
    """The Query an access pattern sends, its arguments as placeholders: the leading optional
    equality arguments left out, an enum fanned out fixed, ``between``'s two bounds given."""
    branch = Branch(query.partition.text)
    sort = query.sort
    if sort is None:
        return branch
    fixed = set(query.fan_out)
    names = sort.placeholders
    if names and all(n in fixed for n in names):
        return branch._replace(low=sort.text, high=sort.text)
    if query.between is not None and query.target is not None:
        fixed |= set(query.equal)
        head = _shown(sort, fixed)
        low, high = (
            _shown(sort, fixed, query.target).replace(f"{{{query.target}}}", f"{{{b}}}")
            for b in query.between
        )
        return branch._replace(prefix=head, low=low, high=high)
    return branch._replace(prefix=_shown(sort, fixed))


def _symbolic(node: NodeType) -> ItemKey:
    """A key of ``node`` whose values are its placeholders' names, ``{id}``: what a summary
    shows for the key a Query is sent with."""
    values = {
        p.name: f"{{{p.name}}}"
        for p in (*node.pk.parts, *node.sk.parts)
        if isinstance(p, Placeholder)
    }
    return ItemKey(node.pk.format(values), node.sk.format(values))


def _edge_condition(codec: Codec, edge: EdgeType, end: str) -> str:
    """The Query listing ``edge``'s items at its ``end`` node, as :meth:`Codec.edges_at`
    sends it."""
    model = codec.model
    node = model.types[edge.source if end == "from" else edge.target]
    index = edge.reverse.index if end == "to" and edge.reverse is not None else None
    try:
        listing = codec.edges_at(edge, _symbolic(node), end, index)
    except BadUserInput:  # a key that cannot hold its own placeholder names: none shown
        return "Query " + _where(index.name if index else None)
    if listing is None:
        return "Query " + _where(index.name if index else None)
    used = (
        model.indexes[listing.index]
        if listing.index
        else Index(None, model.partition_key, model.sort_key)
    )
    return f"Query {_where(listing.index)}: {key_condition(used, listing.branches[0])}"


def _query_cost(model: Model, query: Query) -> str:
    where = _where(query.index.name)
    branches = (query.shards or 1) if SHARD in query.partition.placeholders else 1
    fan = ""
    if query.fan_out:
        values = 1
        for name in query.fan_out:
            values *= len(model.enums[model.types[query.type].fields[name].type.name])
        fan = (
            f"; without {', '.join(query.fan_out)}: {values * branches} Queries in parallel, merged"
        )
    order = "newest first" if query.order == "desc" else "in key order"
    if query.union is not None:
        order += f", {' and '.join(query.types)} as {query.union}"
    if query.equal:
        order += f", sort key narrowed by {', '.join(query.equal)} (coarse to fine)"
    if query.where is not None:
        fan += "; filtered (read units for every item read, before the filter)"
    condition = key_condition(query.index, _query_branch(query))
    if branches > 1:
        return (
            f"{branches} Queries on {where} in parallel (shards): {condition}, merged, {order}{fan}"
        )
    return f"Query {where}: {condition}, {order}{fan}"


def _path_cost(model: Model, walk: Walk) -> str:
    """One wave per hop: a Query per node the hop starts from; an existence test reads its last
    hop's edge items by key instead."""
    reads = []
    for i, hop in enumerate(walk.hops):
        if hop.ref:  # a reference: the items of the nodes reached name the next ones
            reads.append(f"a BatchGetItem of the {hop.start} items (the {hop.field} they name)")
            continue
        if walk.answer == "exists" and i == len(walk.hops) - 1:
            reads.append("a BatchGetItem of the last edges by key")
            continue
        end = model.edges[hop.edge].reverse
        index = end.index if hop.far == "from" and end is not None else None
        reads.append(f"a Query of {_where(index.name if index else None)} per node")
    waves = f"{len(reads)} wave{'s' if len(reads) > 1 else ''}"
    walked = "; then ".join(reads) + f" ({waves}; a lookup starts the first with its own read)"
    replica = walk.replica
    if replica is None:
        return walked
    prefix = replica.sk.literal_prefix
    if walk.answer == "exists" and walk.argument is not None:
        prefix = replica.sk.prefix({"to": f"<{walk.argument}>"})
    return (
        f"Query the table, begins_with({model.sort_key}, {prefix!r}), the replica "
        f"{replica.name} (1 wave, with a lookup's own read); without it: {walked}"
    )


def _lookup_cost(model: Model, node: NodeType) -> str:
    if node.implicit:
        return "no read (no item of its own: answered from its key)"
    if node.located:  # known by its partition: MODELS.md, parents keyed by more than their id
        prefix = node.sk.literal_prefix
        return (
            f"Query the table, begins_with({model.sort_key}, {prefix!r}), Limit 2 (a second "
            "match is a data error, logged; with its wave)"
        )
    return "GetItem (BatchGetItem with its wave)"


def access_patterns(model: Model) -> list[tuple[str, str]]:
    """(GraphQL field, DynamoDB cost) for every way the schema reads."""
    rows: list[tuple[str, str]] = []
    codec = Codec(model)
    table = Index(None, model.partition_key, model.sort_key)
    for node in model.types.values():
        keys = node.pk.placeholders if node.located else node.key_fields
        args = "id:" if node.id_keyed else ", ".join(f"{k}:" for k in keys)
        rows.append((f"{node.names['lookup']}({args})", _lookup_cost(model, node)))
        if node.parent is not None:
            fixed = {mine for mine, _ in node.parent.link}
            branch = Branch(node.pk.text, _shown(node.sk, fixed))
            if node.sk.placeholders and set(node.sk.placeholders) <= fixed:
                branch = branch._replace(prefix="", low=node.sk.text, high=node.sk.text)
            parent = model.types[node.parent.type]
            rows.append(
                (
                    f"{node.parent.type}.{node.parent.collection}",
                    f"Query the table: {key_condition(table, branch)}"
                    + (
                        ""
                        if parent.implicit
                        else " (in the same round as a lookup of the parent)"
                        if parent.located
                        else " (a lookup of the parent reads it in the same Query)"
                    ),
                )
            )
    for edge in model.edges.values():
        source = model.types[edge.source]
        if edge.forward is not None:
            rows.append(
                (
                    f"{edge.source}.{edge.forward.field}",
                    _edge_condition(codec, edge, "from")
                    + (", limit 1" if edge.forward.one else ""),
                )
            )
        if edge.reverse is not None and edge.reverse.index is not None:
            rows.append(
                (
                    f"{edge.target}.{edge.reverse.field}",
                    _edge_condition(codec, edge, "to") + " (edges read in reverse; "
                    f"{source.name} ends batched with the next wave)",
                )
            )
    for query in model.queries.values():
        name = f"{query.on}.{query.field}" if query.on else query.field
        args = ", ".join(f"{a}:" for a, _ in query.arguments)
        rows.append((f"{name}({args})" if args else name, _query_cost(model, query)))
    for node in model.types.values():
        for f in node.fields.values():
            if f.kind == "ref" and f.keys_of:
                rows.append(
                    (
                        f"{node.name}.{f.name}",
                        f"BatchGetItem of the keys of {f.source}, batched with its wave, in "
                        "key order (a key with no item left out)",
                    )
                )
            elif f.kind == "ref":
                rows.append((f"{node.name}.{f.name}", "BatchGetItem, batched with its wave"))
            elif f.kind == "path" and f.walk is not None:
                args = "".join(f"({a}:)" for a, _ in f.arguments)
                rows.append((f"{node.name}.{f.name}{args}", _path_cost(model, f.walk)))
            elif f.kind in ("first", "sum"):
                rows.append(
                    (
                        f"{node.name}.{f.name}",
                        f"the {f.collection} Query"
                        + (", limit 1" if f.kind == "first" else ", every page, summed"),
                    )
                )
    return rows


def summary(model: Model) -> str:
    lines = [
        f"model {model.name}: table {model.table!r}, keys {model.partition_key}/{model.sort_key}"
        + (f", type attribute {model.type_attribute!r}" if model.type_attribute else ""),
    ]
    if model.indexes:
        lines.append(
            "indexes: "
            + ", ".join(
                f"{i.name} ({i.pk}{', ' + i.sk if i.sk else ''})" for i in model.indexes.values()
            )
        )
    lines.append(f"types ({len(model.types)}):")
    for node in model.types.values():
        parent = f", child of {node.parent.type}" if node.parent else ""
        lines.append(f"  {node.name}: {_key(node)}{parent}")
    if model.edges:
        lines.append(f"edges ({len(model.edges)}):")
        for edge in model.edges.values():
            lines.append(f"  {edge.label}: {edge.source} -> {edge.target}")
    rows = access_patterns(model)
    width = max((len(name) for name, _ in rows), default=0)
    lines.append(f"access patterns ({len(rows)}):")
    lines += [f"  {name.ljust(width)}  {cost}" for name, cost in rows]
    return "\n".join(lines) + "\n"
