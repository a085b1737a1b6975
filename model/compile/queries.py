"""The ``queries:`` section: access patterns over an index, their arguments and filters; the
``mutations:`` section (hooks)."""

from __future__ import annotations

from collections.abc import Mapping

from .. import spec as s
from ..filters import compile_filter
from ..types import (
    SCALARS,
    SHARD,
    EdgeType,
    Field,
    Index,
    Mutation,
    NodeType,
    Query,
    TypeRef,
)
from ..values import Where
from .base import Path, _Base, did_you_mean


class _Queries(_Base):
    # ---- queries ---------------------------------------------------------------------------

    def query(
        self,
        name: str,
        q: s.QuerySpec,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
    ) -> Query | None:
        path: Path = ("queries", name)
        names = self.query_types(path, q)
        if names is None or not all(n in types for n in names):
            return None  # an unknown type is reported; a broken one was
        results = [types[n] for n in names]
        result = results[0]
        owner = None
        if q.on is not None:
            owner = types.get(q.on)
            if owner is None:
                if q.on not in self.file.types:
                    self.problem(
                        (*path, "on"),
                        f"unknown type {q.on!r}; {did_you_mean(q.on, self.file.types)}",
                    )
                return None
        if q.index is not None and q.index not in self.indexes:
            self.problem(
                (*path, "index"),
                f"unknown index {q.index!r}; {did_you_mean(q.index, self.indexes)}",
            )
            return None
        index = self.indexes[q.index] if q.index else Index(None, self.pk, self.sk)
        partition = self.template((*path, "partition"), q.partition, runs=True)
        sort = (
            self.template((*path, "sort", "template"), q.sort.template, runs=True)
            if q.sort
            else None
        )
        if partition is None or (q.sort is not None and sort is None):
            return None
        stored = set.intersection(*(self.stored(r.fields, r.declared) for r in results))
        self.check_runs((*path, "partition"), partition, stored)
        if sort is not None:
            self.check_runs((*path, "sort", "template"), sort, stored)
        # who writes this index: the types themselves, or an edge touching one
        writers = [w for r in results for w in r.indexes if w.index == index]
        writers += [
            w
            for e in edges.values()
            if {e.source, e.target} & set(names)
            for w in e.indexes
            if w.index == index
        ]
        shards = next((w.shards for w in writers if w.shards), None)
        what = " or ".join(names)
        if SHARD in partition.placeholders and shards is None:
            self.problem(
                (*path, "partition"),
                f"{{shard}} needs `shards: N` on {what}'s entry for index {q.index}",
            )
        arguments: list[tuple[str, TypeRef]] = []
        owner_fields = set(owner.fields) | ({"id"} & set(owner.key_fields)) if owner else set()
        known = sorted({f for r in results for f in r.fields})
        for placeholder in partition.placeholders:
            if placeholder == SHARD or placeholder in owner_fields:
                continue
            ref = self.placeholders_type(results, placeholder)
            if ref is None:
                self.problem(
                    (*path, "partition"),
                    f"{{{placeholder}}} is not a field of "
                    f"{q.on or what}; {did_you_mean(placeholder, known)}",
                )
                return None
            arguments.append((placeholder, TypeRef(ref.name, True)))
        fan_out: list[str] = []
        target = None
        equal = tuple(q.sort.arguments) if q.sort else ()
        if sort is not None:
            leading = sort.placeholders[: len(equal)]
            if equal != leading:
                self.problem(
                    (*path, "sort", "arguments"),
                    f"sort arguments are the template's leading placeholders, in order; write "
                    f"[{', '.join(sort.placeholders[: len(equal)])}]",
                )
                return None
            for placeholder in sort.placeholders:
                if placeholder in equal:
                    ref = self.placeholders_type(results, placeholder) or TypeRef("String")
                    arguments.append((placeholder, ref.nullable()))
                    continue
                ref = self.placeholders_type(results, placeholder)
                if ref is None:
                    self.problem(
                        (*path, "sort", "template"),
                        f"{{{placeholder}}} is not a field "
                        f"of {what}; {did_you_mean(placeholder, known)}",
                    )
                    return None
                if q.sort and q.sort.between and target is None and ref.name in self.enums:
                    fan_out.append(placeholder)
                    arguments.append((placeholder, ref.nullable()))
                    continue
                if target is None:
                    target = placeholder
            if q.sort is not None and q.sort.between is not None:
                if target is None:
                    self.problem(
                        (*path, "sort", "between"),
                        "no placeholder of the sort template is left to bound; add one after "
                        "the equality arguments, or remove `between`",
                    )
                    return None
                if {target, *fan_out} & sort.runs:
                    self.problem(
                        (*path, "sort", "between"),
                        f"{{{target}}} has no text between it and a neighbour, so the key does "
                        "not order by its value; bound a placeholder followed by text, or use "
                        "`arguments` for equality",
                    )
                    return None
                target_type = self.placeholders_type(results, target)
                assert target_type is not None
                arguments += [(a, target_type.nullable()) for a in q.sort.between]
        where = self.query_filter(path, q, results, arguments)
        field_name = q.field or name
        connection = f"{q.union}Connection" if q.union else result.names["connection"]
        return Query(
            name,
            result.name,
            q.on,
            field_name,
            index,
            partition,
            sort,
            q.order,
            q.count,
            q.description,
            tuple(arguments),
            tuple(fan_out),
            q.sort.between if q.sort else None,
            target if q.sort and q.sort.between else None,
            shards,
            connection,
            bool(q.sort and q.sort.exclusive),
            tuple(names),
            q.union,
            equal,
            where,
        )

    def query_types(self, path: Path, q: s.QuerySpec) -> list[str] | None:
        """The types a query answers: ``type``, or ``types`` with the ``union`` naming them."""
        if q.type is not None and q.types is not None:
            self.problem(
                (*path, "types"),
                "give `type` (one type) or `types` with `union` (several types), not both; "
                "remove one",
            )
            return None
        if q.type is None and q.types is None:
            self.problem(
                path,
                "missing required key 'type'; write `type: <Type>`, or `types: [A, B]` and "
                "`union: <Name>` for several",
            )
            return None
        if q.types is None:
            if q.union is not None:
                self.problem(
                    (*path, "union"),
                    "`union` names the union of several `types`; write `types: [A, B]` "
                    "instead of `type`, or remove `union`",
                )
            return [q.type or ""] if self.known_type((*path, "type"), q.type or "") else None
        ok = True
        if not q.types:
            self.problem((*path, "types"), "list the types answered, e.g. `types: [A, B]`")
            ok = False
        for i, type_name in enumerate(q.types):
            if q.types.index(type_name) != i:
                self.problem((*path, "types", i), f"{type_name!r} is listed twice; list it once")
                ok = False
            elif not self.known_type((*path, "types", i), type_name):
                ok = False
        if q.union is None:
            self.problem(
                (*path, "types"),
                f"several types are answered as a GraphQL union: add `union: <Name>`, e.g. "
                f"`union: {''.join(q.types[:2])}`",
            )
            return None
        taken = (
            set(SCALARS)
            | set(self.file.types)
            | set(self.file.enums)
            | set(self.file.objects)
            | {"Node", "PageInfo", "Query", "Mutation"}
        )
        if q.union in taken:
            self.problem(
                (*path, "union"),
                f"{q.union!r} is already a type; name the union otherwise, e.g. '{q.union}Item'",
            )
            ok = False
        return list(q.types) if ok else None

    def known_type(self, path: Path, name: str) -> bool:
        if name in self.file.types:
            return True
        self.problem(path, f"unknown type {name!r}; {did_you_mean(name, self.file.types)}")
        return False

    def query_filter(
        self,
        path: Path,
        q: s.QuerySpec,
        results: list[NodeType],
        arguments: list[tuple[str, TypeRef]],
    ) -> Where | None:
        """The query's ``where`` over its types' stored fields; its ``arguments`` are added to
        ``arguments``."""
        declared: dict[str, TypeRef] = {}
        taken = {a for a, _ in arguments} | {"first", "after", "last", "before"}
        for arg, text in q.arguments.items():
            ref = self.type_ref((*path, "arguments", arg), text, False)
            if ref is None:
                continue
            if arg in taken:
                self.problem(
                    (*path, "arguments", arg),
                    f"{arg!r} is already an argument of this field; rename it",
                )
                continue
            declared[arg] = ref
        arguments += declared.items()
        if q.where is None:
            for arg in declared:
                self.problem(
                    (*path, "arguments", arg),
                    f"{arg} is not used: compare with it in `where` (`$" + arg + "`) or remove it",
                )
            return None

        fields: dict[str, Field] = {}
        for r in results:
            for field_name, f in r.fields.items():
                fields.setdefault(field_name, f)
        subject = q.union or results[0].name
        where = compile_filter(
            (*path, "where"),
            q.where,
            fields,
            subject,
            declared,
            self.enums,
            self.problem,
            did_you_mean,
        )
        if where is not None:
            for arg in sorted(set(declared) - where.names()):
                self.problem(
                    (*path, "arguments", arg),
                    f"{arg} is not used: compare with it in `where` (`$" + arg + "`) or remove it",
                )
        return where

    def placeholders_type(self, nodes: list[NodeType], placeholder: str) -> TypeRef | None:
        """The type of the field ``placeholder`` names on the first of ``nodes`` that has one."""
        return next(
            (t for t in (self.placeholder_type(n, placeholder) for n in nodes) if t is not None),
            None,
        )

    @staticmethod
    def placeholder_type(node: NodeType, placeholder: str) -> TypeRef | None:
        if placeholder == "id":
            return TypeRef("ID", True)
        field = node.fields.get(placeholder)
        return field.type if field is not None and field.kind in ("value", "key", "stamp") else None

    # ---- mutations -------------------------------------------------------------------------

    def mutation(self, name: str, m: s.MutationSpec) -> Mutation:
        path: Path = ("mutations", name)
        self.check_hook((*path, "hook"), m.hook)
        arguments = []
        for arg, text in m.arguments.items():
            ref = self.type_ref((*path, "arguments", arg), text, False)
            if ref is not None:
                arguments.append((arg, ref))
        for arg, type_name in m.ids.items():
            if arg not in m.arguments:
                self.problem(
                    (*path, "ids", arg),
                    f"{name} has no argument {arg!r}; declare it or remove this",
                )
            elif type_name not in self.file.types:
                known = list(self.file.types)
                self.problem(
                    (*path, "ids", arg),
                    f"unknown type {type_name!r}; {did_you_mean(type_name, known)}",
                )
        # the result may name a generated type (an edge, a connection): checked when built
        return Mutation(
            name, TypeRef.parse(m.type), m.hook, tuple(arguments), m.description, dict(m.ids)
        )
