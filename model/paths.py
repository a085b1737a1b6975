"""Transitive paths, compiled: a field that follows edge fields hop by hop (``path: [groups,
subscriptions]``), keeps the last edges a filter lets through (``where:``) and answers the nodes
reached, one object per node reached (``shape:``), or whether one given node is reached. Hops and
shapes are checked here against the model, filters in :mod:`model.filters`;
:mod:`server.engine.paths` resolves them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Literal, Protocol

from pydantic.alias_generators import to_camel

from . import spec as s
from .access import hops_of, ref_hops
from .filters import compile_where
from .replicas import compile_replica, replica_misses
from .types import Field, Model, NodeType, TypeRef
from .values import Hop, Replica, Walk

__all__ = ["Walk", "compile_walks", "path_field"]

Place = tuple[str | int, ...]
Report = Callable[[Place, str], None]
Suggest = Callable[[str, list[str]], str]

OPTIONS = {"type", "description", "path", "where", "shape", "arguments", "materialize"}


class _Checks(Protocol):
    """What :func:`path_field` needs of the model compiler."""

    def problem(self, path: Place, message: str) -> None: ...

    def type_ref(self, path: Place, text: str, objects: bool = True) -> TypeRef | None: ...


def path_field(checks: _Checks, place: Place, name: str, decl: s.FieldSpec) -> Field | None:
    """A path field's own options; its hops, filter and shape are checked once the model's
    edges are known (:func:`compile_walks`)."""
    if decl.path is None:
        option = "where" if decl.where is not None else "shape"
        checks.problem(
            (*place, option),
            f"`{option}` belongs to a path; add `path: [<edge field>, …]` or remove `{option}`",
        )
        return None
    others = sorted(to_camel(o) for o in decl.model_fields_set - OPTIONS)
    if others:
        checks.problem(
            (*place, others[0]),
            f"a path field is computed from its path; remove `{others[0]}` (a path field takes "
            "type, path, where, shape, arguments and description)",
        )
        return None
    if decl.type is None:
        checks.problem(
            place,
            'give the path field a type: `type: "[Product!]!"`, a list of an object, or `Boolean!`',
        )
        return None
    type_ = checks.type_ref((*place, "type"), decl.type)
    arguments = []
    for arg, text in decl.arguments.items():
        ref = checks.type_ref((*place, "arguments", arg), text, False)
        if ref is not None:
            arguments.append((arg, ref))
    if type_ is None:
        return None
    return Field(name, type_, name, "path", decl.description, arguments=tuple(arguments))


def compile_walks(
    file: s.ModelSpec, model: Model, report: Report, suggest: Suggest
) -> tuple[Replica, ...]:
    """Check every path field of ``model`` and give it its :class:`Walk` (in place); returns
    the replicas they declare."""
    shared: list[tuple[Place, NodeType, str, str]] = []
    for type_name, spec in file.types.items():
        node = model.types.get(type_name)
        if node is None:
            continue
        for name, decl in spec.fields.items():
            field = node.fields.get(name)
            if field is None or field.kind != "path" or isinstance(decl, str):
                continue
            place: Place = ("types", type_name, "fields", name)
            walk = _Compiler(model, report, suggest, place).walk(node, field, decl)
            if walk is not None:
                node.fields[name] = replace(field, walk=walk)
                if isinstance(decl.materialize, str):
                    shared.append((place, node, name, decl.materialize))
    for place, node, name, other in shared:
        other_decl = file.types[node.name].fields.get(other)
        if (
            isinstance(other_decl, s.FieldSpec)
            and isinstance(other_decl.materialize, s.MaterializeSpec)
            and node.fields[other].walk is None
        ):
            continue  # its own mistake is reported
        _share(model, report, suggest, (*place, "materialize"), node, name, other)
    return tuple(
        dict.fromkeys(
            f.walk.replica
            for t in model.types.values()
            for f in t.fields.values()
            if f.walk is not None and f.walk.replica is not None
        )
    )


def _share(
    model: Model,
    report: Report,
    suggest: Suggest,
    place: Place,
    node: NodeType,
    name: str,
    other: str,
) -> None:
    """Answer the path field ``name`` from the replica of its type's path field ``other``."""
    field, found = node.fields[name], node.fields.get(other)
    walk = field.walk
    assert walk is not None
    replicated = [n for n, f in node.fields.items() if f.walk is not None and f.walk.replica]
    if found is None or found.walk is None or found.walk.replica is None:
        report(
            place,
            f"{node.name}.{other} declares no replica; name a field that does ("
            + (suggest(other, replicated) if replicated else f"{node.name} has none")
            + ")",
        )
        return
    replica = found.walk.replica
    if replica.hops != walk.hops:
        report(
            place,
            f"{node.name}.{other} replicates the path "
            f"[{', '.join(h.field for h in replica.hops)}]; this field follows "
            f"[{', '.join(h.field for h in walk.hops)}]",
        )
        return
    missing = replica_misses(replica.copies, walk.where)
    if missing:
        report(
            place,
            f"this field's `where` reads {', '.join(missing)}, which {node.name}.{other}'s "
            "replica does not copy; add it to that `copy`",
        )
        return
    node.fields[name] = replace(field, walk=replace(walk, replica=replica))


class _Compiler:
    def __init__(self, model: Model, report: Report, suggest: Suggest, place: Place) -> None:
        self.model = model
        self.report = report
        self.suggest = suggest
        self.place = place

    def walk(self, node: NodeType, field: Field, decl: s.FieldSpec) -> Walk | None:
        hops = self.hops(node, decl.path or [])
        if hops is None:
            return None
        answer = self.answer(field, hops, decl)
        if answer is None:
            return None
        where = None
        if decl.where is not None and hops[-1].ref:
            self.report(
                (*self.place, "where"),
                f"a filter is on the last hop's edge items, and {hops[-1].start}."
                f"{hops[-1].field} is a reference (no edge item); end the path with an edge "
                "field or remove `where`",
            )
            return None
        if decl.where is not None:
            edge = self.model.edges[hops[-1].edge]
            where = compile_where(
                (*self.place, "where"), decl.where, edge, self.model, self.report, self.suggest
            )
            if where is None:
                return None
        fills: tuple[tuple[str, int], ...] = ()
        if answer == "objects":
            found = self.fills(field.type.name, hops, decl.shape or {})
            if found is None:
                return None
            fills = found
        argument = field.arguments[0][0] if answer == "exists" else None
        replica = None
        if isinstance(decl.materialize, s.MaterializeSpec):
            replica = compile_replica(
                self.model,
                self.report,
                self.place,
                node,
                field.name,
                hops,
                where,
                decl.materialize,
            )
            if replica is None:
                return None
        return Walk(hops, where, answer, fills, argument, replica)

    # ---- hops ------------------------------------------------------------------------------

    def hops(self, node: NodeType, names: list[str]) -> tuple[Hop, ...] | None:
        if not names:
            self.report(
                (*self.place, "path"),
                "a path follows at least one edge field; list them, e.g. [groups, subscriptions]",
            )
            return None
        at = node.name
        hops = []
        for i, name in enumerate(names):
            choices = hops_of(self.model, at) | ref_hops(self.model, at)
            hop = choices.get(name)
            if hop is None:
                if name in self._other_fields(at):
                    what = f"{at}.{name} is not an edge or reference field (a path follows them)"
                else:
                    what = f"{at} has no edge field {name!r}"
                fix = (
                    self.suggest(name, sorted(choices))
                    if choices
                    else f"{at} has none to follow: end the path before it"
                )
                self.report((*self.place, "path", i), f"{what}; {fix}")
                return None
            hops.append(hop)
            at = hop.type
        return tuple(hops)

    def _other_fields(self, type_name: str) -> set[str]:
        model = self.model
        names = set(model.types[type_name].fields) | {"id"}
        names |= {
            t.parent.collection
            for t in model.types.values()
            if t.parent and t.parent.type == type_name
        }
        names |= {q.field for q in model.queries.values() if q.on == type_name}
        return names

    # ---- what it answers -------------------------------------------------------------------

    def answer(
        self, field: Field, hops: tuple[Hop, ...], decl: s.FieldSpec
    ) -> Literal["nodes", "objects", "exists"] | None:
        type_, end = field.type, hops[-1].type
        answer: Literal["nodes", "objects", "exists"]
        if type_.list and type_.name == end:
            answer = "nodes"
        elif type_.list and type_.name in self.model.objects:
            answer = "objects"
        elif not type_.list and type_.name == "Boolean":
            answer = "exists"
        else:
            self.report(
                (*self.place, "type"),
                f"this path ends at a {end}: make its type [{end}!]! (the {end} nodes reached), a "
                f"list of a type under `objects:` (filled by `shape`), or Boolean! with one ID! "
                f"argument (whether the {end} it names is reached); not {type_}",
            )
            return None
        arguments = field.arguments
        if answer == "exists":
            if len(arguments) != 1 or arguments[0][1].name != "ID" or arguments[0][1].list:
                self.report(
                    (*self.place, "arguments"),
                    f"a Boolean! path takes one ID! argument, the {end} to look for; write "
                    f"`arguments: {{{end[:1].lower()}{end[1:]}Id: ID!}}`",
                )
                return None
        elif arguments:
            self.report(
                (*self.place, "arguments"),
                "only a Boolean! path takes an argument (the id of the node to look for); "
                "remove `arguments`",
            )
            return None
        if answer != "objects" and decl.shape is not None:
            self.report(
                (*self.place, "shape"),
                "`shape` fills the fields of a type under `objects:`; make the field's type a "
                "list of one, or remove `shape`",
            )
            return None
        if answer == "objects" and decl.shape is None:
            self.report(
                self.place,
                f"say which hop fills each field of {type_.name}: add `shape: {{<field>: "
                f"<hop>, …}}` (the last hop, {hops[-1].field}, fills the field holding the {end})",
            )
            return None
        return answer

    def fills(
        self, name: str, hops: tuple[Hop, ...], shape: Mapping[str, str | int]
    ) -> tuple[tuple[str, int], ...] | None:
        plain = self.model.objects[name]
        where = (*self.place, "shape")
        last = len(hops) - 1
        fills = []
        for field_name, hop_name in shape.items():
            place = (*where, field_name)
            target = plain.fields.get(field_name)
            if target is None:
                self.report(
                    place,
                    f"{name} has no field {field_name!r}; "
                    + self.suggest(field_name, list(plain.fields)),
                )
                return None
            index = self.hop_index(place, hops, hop_name)
            if index is None:
                return None
            hop = hops[index]
            if index == last and (target.type.list or target.type.name != hop.type):
                self.report(
                    place,
                    f"{name}.{field_name} holds the {hop.type} reached: give it the type "
                    f"{hop.type}!",
                )
                return None
            if index < last and not (target.type.list and target.type.name == hop.type):
                self.report(
                    place,
                    f"{name}.{field_name} lists the {hop.type} nodes of hop {hop_name!r} that "
                    f"reach each node: give it the type [{hop.type}!]!",
                )
                return None
            fills.append((field_name, index))
        unfilled = [f for f in plain.fields if f not in shape]
        if unfilled:
            self.report(
                where,
                f"{name}.{unfilled[0]} is not filled; add `{unfilled[0]}: <hop>` to `shape`, or "
                f"remove the field from {name}",
            )
            return None
        if not any(index == last for _, index in fills):
            self.report(
                where,
                f"no field of {name} holds the {hops[-1].type} reached; map one to the last "
                f"hop, {hops[-1].field}",
            )
            return None
        return tuple(fills)

    def hop_index(self, place: Place, hops: tuple[Hop, ...], hop: str | int) -> int | None:
        if isinstance(hop, int):
            if 1 <= hop <= len(hops):
                return hop - 1
            self.report(
                place,
                f"this path has {len(hops)} hops: name one by its edge field or a position "
                f"from 1 to {len(hops)}, not {hop}",
            )
            return None
        found = [i for i, h in enumerate(hops) if h.field == hop]
        if len(found) == 1:
            return found[0]
        if found:
            positions = " or ".join(str(i + 1) for i in found)
            self.report(
                place,
                f"the path follows {hop!r} {len(found)} times; name the hop by its "
                f"position: {positions}",
            )
        else:
            fields = list(dict.fromkeys(h.field for h in hops))
            self.report(place, f"{hop!r} is not a hop of this path; {self.suggest(hop, fields)}")
        return None
