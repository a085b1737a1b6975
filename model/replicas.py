"""Replicas of a path (``materialize:`` on a path field, MODELS.md "Replicas of a path"),
compiled: one item per instance of the path in its start's partition, keyed by the ids of the
nodes along it, holding the last edge's copied fields. :mod:`graph.writes.replicas` keeps them exact
and :mod:`server.engine.paths` reads from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from . import spec as s
from .templates import Placeholder, Template, TemplateSyntaxError, overlap
from .types import Model, NodeType
from .values import Hop, Replica, Where

__all__ = ["Replica", "compile_replica", "replica_misses", "via_names"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]


def via_names(hops: int) -> tuple[str, ...]:
    """The placeholders of the nodes between start and end: none for one hop, ``via`` for two,
    ``via1``, ``via2`` … for more."""
    if hops == 2:
        return ("via",)
    return tuple(f"via{i}" for i in range(1, hops))


def compile_replica(
    model: Model,
    report: Report,
    place: Place,
    start: NodeType,
    field: str,
    hops: tuple[Hop, ...],
    where: Where | None,
    decl: s.MaterializeSpec,
) -> Replica | None:
    """Check one ``materialize:`` declaration (each mistake reported at its place)."""
    where_place = (*place, "materialize")
    for i, hop in enumerate(hops[:-1]):
        if hop.ref:
            report(
                (*place, "path", i),
                f"a replica follows a reference only as the path's last hop, and "
                f"{hop.start}.{hop.field} is hop {i + 1} of {len(hops)} (keeping it exact would "
                "need every node that names a given one); end the path at it, or follow an edge",
            )
            return None
    if set(model.key_types) & {model.partition_key, model.sort_key}:
        report(where_place, "a replica's key is text: the table's keys must be strings (type S)")
        return None
    clocked = {start.name, *(h.type for h in hops if not h.ref)}  # a reference's end: none
    for name in dict.fromkeys([start.name, *(h.type for h in hops)]):
        node = model.types[name]
        if node.implicit and name in clocked and "id" not in node.pk.placeholders:
            report(
                where_place,
                f"a replica keeps a clock on every node of its path, and {name}, which has no "
                f"item of its own, keeps it in its partition, so its partition key must hold "
                f"{{id}}; key it like '{name.upper()}#{{id}}'",
            )
            return None
        if node.key_fields != ("id",):
            report(
                where_place,
                f"a replica names each node of its path by its id and {name}'s key holds "
                f"{', '.join(node.key_fields)}; replicate a path of types keyed by `{{id}}`",
            )
            return None
    vias = via_names(len(hops))
    templates = _templates(report, (*where_place, "key"), decl.key, vias)
    if templates is None:
        return None
    pk, sk = templates
    if hops[-1].ref and decl.copies:
        report(
            (*where_place, "copy"),
            f"the path ends along the reference {hops[-1].start}.{hops[-1].field}, which has no "
            "edge item to copy from; remove `copy`",
        )
        return None
    copies = []
    for i, name in enumerate(decl.copies):
        edge = model.edges[hops[-1].edge]
        copied = edge.fields.get(name)
        if copied is None or copied.kind == "copy":
            what = "copies a node's field" if copied else "has no such field"
            plain = [n for n, f in edge.fields.items() if f.kind != "copy"]
            report(
                (*where_place, "copy", i),
                f"edge {edge.label} {what} ({name!r}); copy one of its own fields: "
                f"{', '.join(plain) or 'it has none'}",
            )
            return None
        copies.append((name, copied.attribute))
    missing = replica_misses(copies, where)
    if missing:
        report(
            (*where_place, "copy"),
            f"the path's `where` reads {', '.join(missing)}: add it to `copy` so the replica "
            "can be filtered at read time",
        )
        return None
    for j in range(len(hops)):
        problem = _unlisted(model, hops, j)
        if problem:
            report((*place, "path", j), problem)
            return None
    name = f"{start.name}.{field}"
    if model.type_attribute is None:  # items are told apart by their keys alone
        types = model.types
        shapes = [
            (t.name, t.pk, t.sk)
            for t in types.values()
            if t.name != decl.type and not t.implicit  # no item of its own: overlaps nothing
        ]
        shapes += [(e.label, types[e.source].pk, types[e.target].sk) for e in model.edges.values()]
        for other, other_pk, other_sk in shapes:
            if overlap(pk, other_pk) and overlap(sk, other_sk):
                report(
                    (*where_place, "key"),
                    f"the replica's items and {other}'s can have the same keys, and the table "
                    "has no typeAttribute to tell them apart; give the replica's sort key a "
                    "distinct literal prefix",
                )
                return None
    replica = Replica(name, start.name, hops, pk, sk, vias, tuple(copies), name)
    if decl.type is None:
        return replica
    return _declared(model, report, (*where_place, "type"), replica, decl.type)


def _templates(
    report: Report, place: Place, key: s.KeyPair, vias: tuple[str, ...]
) -> tuple[Template, Template] | None:
    try:
        pk, sk = Template.compile(key.pk), Template.compile(key.sk)
    except TemplateSyntaxError as exc:
        report(place, f"{exc}; write placeholders as {{from}}, {{to}}, {{via}}")
        return None
    if pk.placeholders != ("from",):
        report(
            (*place, "pk"),
            "a replica lives in its start's partition: its pk holds {from} and no other "
            f"placeholder (`USER#{{from}}`), not {key.pk!r}",
        )
        return None
    wanted = {"to", *vias}
    if sorted(sk.placeholders) != sorted(wanted):
        listed = ", ".join(f"{{{n}}}" for n in ("to", *vias))
        report(
            (*place, "sk"),
            f"the sort key names each instance of the path: it holds {listed}, each once, "
            f"not {key.sk!r}",
        )
        return None
    if not sk.literal_prefix:
        report(
            (*place, "sk"),
            "the sort key begins with a placeholder, so a start's replicas are no one Query of "
            "its partition; begin it with literal text (`GROUPSUB#`)",
        )
        return None
    return pk, sk


def replica_misses(
    copies: tuple[tuple[str, str], ...] | list[tuple[str, str]], where: Where | None
) -> list[str]:
    """The attributes ``where`` reads that ``copies`` do not keep."""
    kept = {attribute for _, attribute in copies}
    return sorted(_attributes(where) - kept)


def _attributes(where: Where | None) -> set[str]:
    if where is None:
        return set()
    found = {t.attribute for t in where.tests}
    for group in where.alternatives:
        for alternative in group:
            found |= _attributes(alternative)
    return found


def _unlisted(model: Model, hops: tuple[Hop, ...], j: int) -> str | None:
    """Why hop ``j``'s edges cannot be listed from the end the replica's upkeep reads them from:
    each hop is read forward (rebuilds, a change before it) and every hop but the last also
    backward (a change after it), and reading an edge from its ``to`` end needs an index."""
    hop = hops[j]
    if hop.ref:  # read from the item of the node it starts at
        return None
    edge = model.edges[hop.edge]
    ends = {"from" if hop.far == "to" else "to"}  # forward: from the hop's start
    if j < len(hops) - 1:
        ends.add(hop.far)  # backward: from the node the hop reaches
    if "to" not in ends or (edge.reverse is not None and edge.reverse.index is not None):
        return None
    nxt = hops[j + 1].field if j < len(hops) - 1 else hop.field
    return (
        f"keeping the replica exact when {nxt} changes needs {edge.label}'s edges listed "
        f"from their {edge.target} end; declare `reverse: {{field: …, index: …}}` on edge "
        f"{edge.label} (an index whose partition key is the table's sort key)"
    )


def _declared(
    model: Model, report: Report, place: Place, replica: Replica, name: str
) -> Replica | None:
    node = model.types.get(name)
    if node is None:
        report(place, f"no type {name!r} under `types:`; declare it or remove `type`")
        return None
    pairs: list[tuple[str, str]] = []
    for theirs, ours in ((node.pk, replica.pk), (node.sk, replica.sk)):
        if _literals(theirs) != _literals(ours):
            report(
                place,
                f"{name}'s key {theirs.text!r} differs from the replica's key {ours.text!r}; "
                "give it the same literal text, placeholders in the same places",
            )
            return None
        pairs += zip(theirs.placeholders, ours.placeholders, strict=True)
    if node.mutations:
        report(
            place,
            f"Edgewise alone writes the replica items: give {name} `mutations: false`",
        )
        return None
    return replace(replica, type_value=node.type_value, declared=name, names=tuple(pairs))


def _literals(template: Template) -> tuple[str | None, ...]:
    return tuple(None if isinstance(p, Placeholder) else p for p in template.parts)
