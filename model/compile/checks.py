"""Checks across the compiled sections: constraints, unique fields, the root fields
exposed, owned edges, unions, references, clashing names and overlapping keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from .. import spec as s
from ..templates import Template, overlap
from ..types import (
    EdgeType,
    Field,
    Mutation,
    NodeType,
    Query,
    TypeRef,
)
from .base import Path, _Base, did_you_mean, upper_first


def _is_map(field: Field) -> bool:
    """A field that may hold a map attribute (whose keys a ``keysOf`` ref reads): JSON, or a
    map of stored objects (``entries:``)."""
    json = field.type.name == "JSON" and not field.type.list
    return field.kind == "value" and (json or field.entries is not None)


class _Checks(_Base):
    def check_constraints(self) -> None:
        """``length`` and ``format`` belong to stored String fields; ``length`` is [fewest,
        most]."""
        declared: list[tuple[Path, s.FieldDecl]] = [
            (("types", t, "fields", n), d)
            for t, spec in self.file.types.items()
            for n, d in spec.fields.items()
        ]
        declared += [
            (("edges", e, "fields", n), d)
            for e, spec in self.file.edges.items()
            for n, d in spec.fields.items()
        ]
        for path, decl in declared:
            if isinstance(decl, str):
                continue
            kinds = {"copyOf": decl.copy_of, "ref": decl.ref, "first": decl.first}
            computed = [k for k, v in (kinds | {"sum": decl.sum, "hook": decl.hook}).items() if v]
            type_ = TypeRef.parse(decl.type or "String")
            for option in ("length", "format"):
                if getattr(decl, option) is None:
                    continue
                if computed:
                    self.problem(
                        (*path, option),
                        f"{option} constrains a stored value; remove it from this "
                        f"{computed[0]} field",
                    )
                elif type_.name != "String" or type_.list:
                    self.problem(
                        (*path, option),
                        f"{option} constrains a String field, not {type_}; remove it or make "
                        "the field's type String",
                    )
            if decl.length is not None and decl.length[0] > decl.length[1]:
                low, high = decl.length
                self.problem(
                    (*path, "length"),
                    f"[{low}, {high}] has its fewest above its most; write [{high}, {low}]",
                )

    def check_uniques(self, types: Mapping[str, NodeType]) -> None:
        """A claim item's owner attribute and type value cannot be taken for anything else."""
        table = self.file.table
        values = {t.type_value: t.name for t in types.values()}
        keys = {self.pk, self.sk, table.type_attribute}
        for node in types.values():
            for field in node.fields.values():
                unique = field.unique
                if unique is None:
                    continue
                path: Path = ("types", node.name, "fields", field.name, "unique")
                if unique.owner in keys:
                    self.problem(
                        (*path, "owner"),
                        f"{unique.owner!r} is a key or the type attribute of the table; "
                        "name another attribute, e.g. 'owner'",
                    )
                if unique.type_value is None:
                    continue
                if table.type_attribute is None:
                    self.problem(
                        (*path, "typeValue"),
                        "the table has no typeAttribute to hold it; add table.typeAttribute "
                        "or remove typeValue",
                    )
                elif unique.type_value in values:
                    self.problem(
                        (*path, "typeValue"),
                        f"{unique.type_value!r} is the type value of "
                        f"{values[unique.type_value]}; choose another, e.g. "
                        f"{field.name.upper()!r}",
                    )

    def check_roots(
        self,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
        queries: Mapping[str, Query],
        mutations: Mapping[str, Mutation],
    ) -> None:
        """``expose`` lists only fields that exist, each once."""
        version = ["version"] if self.file.table.version_attribute else []
        for node in types.values():
            if node.expose is None:
                continue
            if node.node and "id" not in node.expose:
                self.problem(
                    ("types", node.name, "expose"),
                    f"{node.name} is a Node, whose `id` every Node serves; add id to the list, "
                    "or make the type `node: false`",
                )
            known = ["id", *node.fields, *version]
            if node.parent is not None:
                known.append(node.parent.field)
            known += [
                t.parent.collection
                for t in types.values()
                if t.parent and t.parent.type == node.name
            ]
            known += [
                e.forward.field for e in edges.values() if e.forward and e.source == node.name
            ]
            known += [
                e.reverse.field for e in edges.values() if e.reverse and e.target == node.name
            ]
            known += [q.field for q in queries.values() if q.on == node.name]
            self._check_listed(("types", node.name, "expose"), node.expose, known)
        lookups = []
        for node in types.values():
            if node.node:
                lookups.append(node.names["lookup"])
                lookups += [
                    f"{node.names['lookup']}By{upper_first(f.name)}"
                    for f in node.fields.values()
                    if f.unique is not None
                ]
        roots = {
            "Query": [
                "node",
                "nodes",
                *lookups,
                *(q.field for q in queries.values() if q.on is None),
            ],
            "Mutation": [
                *(
                    node.names[verb]
                    for node in types.values()
                    if node.mutations
                    for verb in ("create", "update", "delete")
                ),
                *(name for e in edges.values() if e.mutations for name in (e.add, e.remove)),
                *mutations,
            ],
        }
        for root, listed in self.file.expose.items():
            self._check_listed(("expose", root), listed, roots[root])

    def _check_listed(self, path: Path, listed: Iterable[str], known: list[str]) -> None:
        seen: set[str] = set()
        for i, name in enumerate(listed):
            if name not in known:
                self.problem((*path, i), f"there is no field {name!r}; {did_you_mean(name, known)}")
            elif name in seen:
                self.problem((*path, i), f"{name!r} is listed twice; list it once")
            seen.add(name)

    def check_owned(self, types: Mapping[str, NodeType], edges: Mapping[str, EdgeType]) -> None:
        """A node deleted with its owner is deleted alone: it has nothing else to delete."""
        for edge in edges.values():
            if not edge.owns or edge.target not in types:
                continue
            owned = types[edge.target]
            others = [
                e.label
                for e in edges.values()
                if e is not edge and owned.name in (e.source, e.target)
            ]
            children = [t.name for t in types.values() if t.parent and t.parent.type == owned.name]
            unique = [f.name for f in owned.fields.values() if f.unique is not None]
            if others or children or unique:
                self.problem(
                    ("edges", edge.label, "owns"),
                    f"{owned.name} also has {', '.join(others + children + unique)}; an owned "
                    "node is deleted alone, so give it no other edge, child or unique field",
                )

    def check_unions(self, types: Mapping[str, NodeType], queries: Mapping[str, Query]) -> None:
        """A union name means one set of types; a derived field reads a collection of one."""
        unions: dict[str, tuple[str, ...]] = {}
        for query in queries.values():
            if query.union is None:
                continue
            seen = unions.setdefault(query.union, query.types)
            if set(seen) != set(query.types):
                self.problem(
                    ("queries", query.name, "union"),
                    f"{query.union} is already the union of {', '.join(seen)}; name this one "
                    "otherwise",
                )
        for node in types.values():
            for field in node.fields.values():
                union = next(
                    (
                        q.union
                        for q in queries.values()
                        if q.union and q.on == node.name and q.field == field.collection
                    ),
                    None,
                )
                if field.kind in ("first", "sum") and union is not None:
                    self.problem(
                        ("types", node.name, "fields", field.name, field.kind),
                        f"{field.collection} lists the union {union}: {field.kind} reads a "
                        "collection of one type",
                    )

    def check_refs(self, types: Mapping[str, NodeType]) -> None:
        for node in types.values():
            for field in node.fields.values():
                if field.kind != "ref":
                    continue
                sources = [f for _, f in field.link] if field.link else [field.source or ""]
                for source in sources:
                    if source not in node.fields:
                        self.problem(
                            ("types", node.name, "fields", field.name, "ref"),
                            f"{node.name} has no field {source!r}; "
                            f"{did_you_mean(source, node.fields)}",
                        )
                    elif field.keys_of and not _is_map(node.fields[source]):
                        held = node.fields[source]
                        self.problem(
                            ("types", node.name, "fields", field.name, "ref", "keysOf"),
                            f"keysOf names a field over a map attribute, and {source} is a "
                            f"{held.type} {held.kind} field; declare it `{source}: "
                            f"{{type: JSON, attribute: {held.attribute}}}` (or a stored "
                            "object's map with `entries:`)",
                        )
                    elif (
                        field.type.non_null
                        and not field.type.list
                        and not node.fields[source].type.non_null
                    ):
                        held = node.fields[source]
                        self.problem(  # an item without the value would answer null for it
                            ("types", node.name, "fields", field.name, "ref"),
                            f"{field.name} is non-null ({field.type}) but {source} may be null "
                            f"({held.type}); make {source} non-null ({held.type.name}!) or the "
                            f"reference nullable (type: {field.type.name})",
                        )

    def check_names(
        self,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
        queries: Mapping[str, Query],
    ) -> None:
        fields: dict[str, dict[str, Path]] = {t: {} for t in types}
        for node in types.values():
            for field_name in node.fields:
                fields[node.name][field_name] = ("types", node.name, "fields", field_name)
            if node.parent is not None and node.parent.type in fields:
                fields[node.name].setdefault(node.parent.field, ("types", node.name, "parent"))

        def claim(owner: str, field_name: str, path: Path) -> None:
            taken = fields.setdefault(owner, {})
            if field_name in taken or field_name == "id":
                self.problem(
                    path,
                    f"{owner} already has a field {field_name!r} "
                    f"(from {'.'.join(map(str, taken.get(field_name, ('id',))))}); "
                    "rename one",
                )
            taken[field_name] = path

        for node in types.values():
            if node.parent is not None:
                claim(node.parent.type, node.parent.collection, ("types", node.name, "parent"))
        for edge in edges.values():
            if edge.forward is not None:
                claim(edge.source, edge.forward.field, ("edges", edge.label, "forward"))
            if edge.reverse is not None:
                claim(edge.target, edge.reverse.field, ("edges", edge.label, "reverse"))
        roots: dict[str, Path] = {"node": (), "nodes": ()}
        for query in queries.values():
            if query.on is not None:
                claim(query.on, query.field, ("queries", query.name))
            elif query.field in roots:
                self.problem(
                    ("queries", query.name),
                    f"root field {query.field!r} is taken; rename the query (`field:`)",
                )
            else:
                roots[query.field] = ("queries", query.name)
        for node in types.values():
            lookup = node.names["lookup"]
            if lookup in roots:
                self.problem(
                    ("types", node.name),
                    f"root field {lookup!r} is taken; rename "
                    "the lookup with names.lookup or the query",
                )
            roots[lookup] = ("types", node.name)

    def check_overlap(self, types: Mapping[str, NodeType], edges: Mapping[str, EdgeType]) -> None:
        """Report two declarations whose items can have the same keys and nothing else to tell
        them apart: without a type attribute, the key templates alone decide; with one, its
        value does (a type's typeValue, an edge's label), so only declarations with the same
        value can be confused. An implicit type has no item of its own, so its key template
        matches no item: it never overlaps (a child in its partition, an edge between two of
        its nodes)."""
        typed = self.file.table.type_attribute
        labelled = self.file.table.label_attribute or typed
        Shape = tuple[Path, str, Template, Template, tuple[str | None, str]]
        shapes: list[Shape] = [
            (("types", n.name, "key"), n.name, n.pk, n.sk, (typed, n.type_value))
            for n in types.values()
            if not n.implicit
        ]
        for e in edges.values():
            if e.source in types and e.target in types:
                pk, sk = types[e.source].pk, types[e.target].sk
                shapes.append((("edges", e.label), e.label, pk, sk, (labelled, e.label)))
        for i, (path, name, pk, sk, tag) in enumerate(shapes):
            for opath, other, opk, osk, otag in shapes[:i]:
                kinds = {path[0], opath[0]}
                if typed is not None and tag != otag:
                    continue  # the type attribute tells them apart
                if (
                    overlap(pk, opk)
                    and overlap(sk, osk)
                    and ((pk, sk) != (opk, osk) or name != other)
                ):
                    if typed is None:
                        self.problem(
                            path,
                            f"items of {name} and {other} can have the same keys, and "
                            "the table has no typeAttribute to tell them apart; give one of "
                            "them a distinct literal prefix, or the table a typeAttribute",
                        )
                        continue
                    which = "one of them" if kinds == {"types"} else "the type"
                    self.problem(
                        path,
                        f"items of {name} and {other} can have the same keys and the same "
                        f"{typed} value {tag[1]!r}, so nothing tells them apart; give {which} "
                        "another typeValue or a distinct literal prefix",
                    )

    def check_attributes(
        self, types: Mapping[str, NodeType], edges: Mapping[str, EdgeType]
    ) -> None:
        """A field is stored in an attribute of its own, not in one that holds its item's key,
        type, label, version or an index key it writes (one value would overwrite the other),
        except a key attribute whose template is that field alone (`{customerId}` over
        CustomerId)."""
        table = self.file.table
        roles = {
            table.type_attribute: "the table's typeAttribute, which holds each item's type",
            table.label_attribute: "the table's labelAttribute, which holds each edge's label",
            table.version_attribute: "the table's versionAttribute, which holds each version",
        }
        roles.pop(None, None)
        spec = table.timestamps
        created, modified = ("createdAt", "updatedAt")
        if isinstance(spec, s.TimestampsSpec):
            created, modified = spec.created, spec.modified
        stamps = {created: "created", modified: "modified"}
        owners: list[tuple[Path, Mapping[str, s.FieldDecl], Mapping[str, Field], list[_Key]]] = []
        for node in types.values():
            keys = [_Key(self.pk, "the table's partition key", node.pk)]
            keys.append(_Key(self.sk, "the table's sort key", node.sk))
            declared: Mapping[str, s.FieldDecl] = self.file.types[node.name].fields
            owners.append((("types", node.name), declared, node.fields, keys + _written(node)))
        for edge in edges.values():
            keys = [_Key(self.pk, "the table's partition key", None)]
            keys.append(_Key(self.sk, "the table's sort key", None))
            declared = self.file.edges[edge.label].fields
            owners.append((("edges", edge.label), declared, edge.fields, keys + _written(edge)))
        for node in types.values():
            self._check_shared(node)
        for place, declared, fields, keys in owners:
            for name, field in fields.items():
                if field.kind not in ("value", "key", "copy", "stamp"):
                    continue
                decl = declared.get(name)
                where: Path = (*place, "fields", name)
                if isinstance(decl, s.FieldSpec) and decl.attribute is not None:
                    where = (*where, "attribute")
                role = roles.get(field.attribute)
                stamp = stamps.get(field.attribute) if table.timestamps else None
                if stamp is not None and field.type.name != "DateTime":
                    self.problem(
                        where,
                        f"{field.attribute} is the table's timestamps.{stamp}, which Edgewise "
                        "writes as a date-time; declare the field a DateTime or name another "
                        "attribute",
                    )
                    continue
                if role is not None:
                    self.problem(
                        where, f"{field.attribute} is {role}; name another attribute (`attribute:`)"
                    )
                    continue
                for key in keys:
                    template = key.template
                    bare = template is not None and len(template.parts) == 1
                    bare = bare and template is not None and template.placeholders == (name,)
                    if field.attribute == key.attribute and not bare:
                        written = f' from its template "{template.text}"' if template else ""
                        self.problem(
                            where,
                            f"{key.attribute} is {key.what}, which {place[1]} writes{written}; "
                            "name another attribute",
                        )
                        break

    def _check_shared(self, node: NodeType) -> None:
        """Two fields of a type may read one attribute, the first declared writing it: another
        reads what that one wrote, so it has its type (non-null only where the writer is)."""
        writers: dict[str, Field] = {}
        declared = self.file.types[node.name].fields
        for name, field in node.fields.items():
            if field.kind not in ("value", "key") or field.from_key:
                continue
            writer = writers.setdefault(field.attribute, field)
            wrote, reads = writer.type, field.type
            fits = (reads.name, reads.list) == (wrote.name, wrote.list)
            fits = fits and (wrote.non_null or not reads.non_null)
            if writer is field or (fits and (wrote.item_non_null or not reads.item_non_null)):
                continue
            where: Path = ("types", node.name, "fields", name)
            if isinstance(declared.get(name), s.FieldSpec):
                where = (*where, "type")
            article = "an" if str(wrote)[:1] in "AEIOU" else "a"
            self.problem(
                where,
                f"{name} reads the attribute {field.attribute!r} that {writer.name} writes, so "
                f"it holds {article} {wrote}; declare it {wrote} (or name another attribute)",
            )


class _Key(NamedTuple):
    """A key attribute an item of a type or edge is written with: what it is, and the template
    that fills it (None: its ends' keys)."""

    attribute: str
    what: str
    template: Template | None


def _written(owner: NodeType | EdgeType) -> list[_Key]:
    """The index key attributes ``owner``'s index entries fill."""
    out = []
    for write in owner.indexes:
        index = write.index.name
        out.append(_Key(write.index.pk, f"the partition key of index {index}", write.pk))
        if write.sk is not None and write.index.sk is not None:
            out.append(_Key(write.index.sk, f"the sort key of index {index}", write.sk))
    return out
