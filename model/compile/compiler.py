"""The types, edges, objects and mutations of a model file, and the whole model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from .. import spec as s
from ..access import compile_access
from ..paths import compile_walks, path_field
from ..templates import Template, TemplateSyntaxError
from ..types import (
    SCALARS,
    SHARD,
    Deletions,
    EdgeEnd,
    EdgeType,
    Field,
    Index,
    IndexWrite,
    Model,
    NodeType,
    Parent,
    Query,
    TypeRef,
    Unique,
)

__all__ = ["compile_model"]
from .base import (
    Path,
    Problem,
    camel,
    did_you_mean,
    located_key,
    lower_first,
    misfit,
    singular,
    split_key,
    upper_first,
)
from .checks import _Checks
from .objects import _Objects
from .queries import _Queries


class _Compiler(_Checks, _Queries, _Objects):
    # ---- types -----------------------------------------------------------------------------

    def collections(self) -> dict[str, set[str]]:
        """Collection fields per type: children lists and `on:` access patterns."""
        out: dict[str, set[str]] = {}
        for t in self.file.types.values():
            if t.parent is not None:
                out.setdefault(t.parent.type, set()).add(t.parent.collection)
        for q_name, q in self.file.queries.items():
            if q.on is not None:
                out.setdefault(q.on, set()).add(q.field or q_name)
        return out

    def node_type(self, name: str, t: s.TypeSpec) -> NodeType | None:
        path: Path = ("types", name)
        if isinstance(t.key, str):
            pk = sk = self.template((*path, "key"), t.key)
            single = True
        else:
            pk = self.template((*path, "key", "pk"), t.key.pk)
            sk = self.template((*path, "key", "sk"), t.key.sk, runs=True)
            single = False
        if pk is None or sk is None:
            return None
        key_fields = tuple(dict.fromkeys(pk.placeholders + sk.placeholders))
        if not key_fields:
            self.problem((*path, "key"), "a key needs a placeholder; write e.g. 'ORDER#{id}'")
            return None
        if SHARD in key_fields:
            self.problem(
                (*path, "key"), "{shard} belongs in an index template, not the key; remove it"
            )
        if single and len(key_fields) != 1:
            self.problem(
                (*path, "key"),
                f"a one-template key holds one placeholder (its global id is the key: "
                f"'ORDER#{{id}}', 'ACCOUNT#{{username}}'), not {{{', '.join(key_fields)}}}; "
                "write {pk, sk} for a composite key",
            )
        link: tuple[tuple[str, str], ...] = ()
        parent = None
        if t.parent is not None:
            parent, link = self.parent(name, t, pk, sk)
        fields: dict[str, Field] = {}
        linked = {child for child, _ in link}
        for placeholder in key_fields:
            if placeholder == "id":
                continue
            declared = t.fields.get(placeholder)
            if declared is None:
                type_ = TypeRef("ID" if placeholder in linked else "String", True)
                fields[placeholder] = Field(placeholder, type_, placeholder, "key")
        for field_name, decl in t.fields.items():
            if field_name == "id":
                self.problem(
                    (*path, "fields", "id"), "`id` is implicit on every type; remove this field"
                )
                continue
            compiled = self.field((*path, "fields", field_name), field_name, decl, name)
            if compiled is not None:
                kind = "key" if field_name in key_fields and compiled.kind == "value" else None
                if kind:
                    compiled = replace(compiled, kind="key")
                if isinstance(decl, s.FieldSpec) and decl.from_ == "key":
                    compiled = self.from_key((*path, "fields", field_name), compiled, key_fields)
                fields[field_name] = compiled
        if t.implicit:
            for field_name, f in fields.items():
                if f.kind in ("value", "ref") and f.type.non_null:
                    self.problem(
                        (*path, "fields", field_name),
                        f"{name} is implicit (no item of its own), so {field_name} is null "
                        f"where nothing is stored; make it nullable: {f.type.nullable()}",
                    )
        stored = self.stored(fields, t.fields)
        self.check_runs((*path, "key", "sk"), sk, stored)
        where = (*path, "key") if single else (*path, "key", "pk")
        self.typed_key(where, pk, self.pk, fields)
        self.typed_key(where if single else (*path, "key", "sk"), sk, self.sk, fields)
        for field_name, compiled_field in fields.items():
            if compiled_field.unique is not None and not single:
                self.problem(
                    (*path, "fields", field_name, "unique"),
                    "a unique field's claim names its node by id, and this key is composite; keep "
                    "unique fields on types keyed by one template such as 'USER#{id}'",
                )
        stamps = self.stamps()
        if self.file.table.timestamps is True:
            for stamp in stamps:  # null on an implicit type, which has no item to hold them
                if stamp not in fields:
                    stamped = TypeRef("DateTime", not t.implicit)
                    fields[stamp] = Field(stamp, stamped, stamp, "stamp")
        elif self.file.table.timestamps:  # named attributes: served where a field declares them
            for field_name, f in fields.items():
                if f.kind == "value" and f.attribute in stamps:
                    fields[field_name] = replace(f, kind="stamp")
        named = set(fields) | ({"id"} if "id" in key_fields else set())  # `id` of the key
        writes = self.index_writes(path, t.indexes, named, True, stored)
        lookup = lower_first(name)
        names = {
            "lookup": t.names.lookup or lookup,
            "create": t.names.create or f"create{name}",
            "update": t.names.update or f"update{name}",
            "delete": t.names.delete or f"delete{name}",
            "connection": t.names.connection or f"{name}Connection",
            "edge": t.names.edge or f"{name}Edge",
        }
        return NodeType(
            name,
            pk,
            sk,
            single,
            key_fields,
            fields,
            writes,
            parent,
            t.description,
            names,
            t.mutations and not t.implicit,
            t.type_value or name,
            frozenset(t.fields),
            t.node,
            tuple(t.expose) if t.expose is not None else None,
            t.implicit,
        )

    def from_key(self, path: Path, field: Field, key_fields: tuple[str, ...]) -> Field:
        """A field read from the key alone (``from: key``): a key placeholder's."""
        if field.kind != "key":
            self.problem(
                (*path, "from"),
                f"`from: key` reads a key placeholder, and {field.name} is none of "
                f"{{{', '.join(key_fields)}}}; remove `from`, or name the field after the "
                "placeholder",
            )
            return field
        return replace(field, from_key=True)

    def parent(
        self, name: str, t: s.TypeSpec, pk: Template, sk: Template
    ) -> tuple[Parent | None, tuple[tuple[str, str], ...]]:
        assert t.parent is not None
        path: Path = ("types", name, "parent")
        parent_spec = self.file.types.get(t.parent.type)
        if parent_spec is None:
            self.problem(
                (*path, "type"),
                f"unknown type {t.parent.type!r}; {did_you_mean(t.parent.type, self.file.types)}",
            )
            return None, ()
        parent_text = parent_spec.key if isinstance(parent_spec.key, str) else parent_spec.key.pk
        located = not isinstance(parent_spec.key, str) and located_key(parent_spec.key)
        if not isinstance(parent_spec.key, str) and not located and split_key(parent_spec.key):
            self.problem(
                (*path, "type"),
                "a parent is one node per partition: a one-template key such as 'ORDER#{id}', "
                "a constant sort key such as {pk: 'ORDER#{id}', sk: ORDER}, or {id} in its pk "
                "and other fields in its sk, {pk: 'o#{id}', sk: 'c#{customerId}'}",
            )
            return None, ()
        if t.parent.count == "counter" and (parent_spec.implicit or located):
            why = (
                "is implicit (no item to hold a counter)"
                if parent_spec.implicit
                else "is found by a Query of its partition (its key is not known to count on)"
            )
            self.problem((*path, "count"), f"{t.parent.type} {why}; write `count: query`")
        if isinstance(t.key, str):
            self.problem(("types", name, "key"), "a child's key is {pk, sk}: pk the parent's key")
            return None, ()
        try:
            parent_key = Template.compile(parent_text, self.file.table.key_casing)
        except TemplateSyntaxError:
            return None, ()
        shape = [p if isinstance(p, str) else None for p in pk.parts]
        parent_shape = [p if isinstance(p, str) else None for p in parent_key.parts]
        if shape != parent_shape:
            self.problem(
                ("types", name, "key", "pk"),
                f"a child's pk is its parent's key; write "
                f"{parent_text.replace('{id}', '{' + lower_first(t.parent.type) + 'Id}')!r}",
            )
            return None, ()
        link = tuple(zip(pk.placeholders, parent_key.placeholders, strict=True))
        arguments = tuple(p for p in sk.placeholders if p != "id" and p not in pk.placeholders)
        parent = Parent(
            t.parent.type,
            t.parent.field,
            t.parent.collection,
            t.parent.order,
            t.parent.count,
            link,
            arguments,
            t.parent.description,
        )
        return parent, link

    def field(self, path: Path, name: str, decl: s.FieldDecl, owner: str) -> Field | None:
        if isinstance(decl, str):
            decl = s.FieldSpec(type=decl)
        if decl.from_ is not None and path[0] != "types":
            self.problem(
                (*path, "from"),
                "`from: key` belongs to a field of a type over one of its key placeholders; "
                "remove it",
            )
        if decl.model_fields_set & {"path", "where", "shape"}:  # a transitive path
            return path_field(self, path, name, decl)
        kinds = [k for k in ("copy_of", "ref", "first", "sum", "hook") if getattr(decl, k)]
        if len(kinds) > 1:
            self.problem(
                path, f"a field is one of copyOf, ref, first, sum or hook, not {kinds}; keep one"
            )
            return None
        attribute = decl.attribute or name
        unique = None
        if decl.unique is not None:
            template = self.template((*path, "unique", "key"), decl.unique.key)
            if template is not None and template.placeholders != (name,):
                self.problem(
                    (*path, "unique", "key"),
                    f"the claim's key holds {{{name}}} alone; "
                    f"write e.g. '{name.upper()}#{{{name}}}'",
                )
            elif template is not None:
                unique = Unique(
                    template,
                    decl.unique.case_insensitive,
                    decl.unique.owner,
                    decl.unique.type_value,
                )
        if decl.copy_of is not None:  # checked against the edge's ends in edge()
            end, _, source = decl.copy_of.partition(".")
            type_ = self.type_ref(path, decl.type, False) if decl.type else TypeRef("String")
            return Field(
                name,
                type_ or TypeRef("String"),
                attribute,
                "copy",
                decl.description,
                source=source,
                end=end,
            )
        if decl.type is None:
            self.problem(path, "give the field a type, e.g. `name: String!`")
            return None
        type_ = self.type_ref(
            (*path, "type") if decl.model_fields_set - {"type"} else path, decl.type
        )
        if type_ is None:
            return None
        if decl.ref is not None:
            return self.ref(path, name, decl, type_, attribute)
        if decl.first is not None or decl.sum is not None:
            collection, _, summed = (decl.first or decl.sum or "").partition(".")
            available = self.collections().get(owner, set())
            if collection not in available:
                self.problem(
                    (*path, "first" if decl.first else "sum"),
                    f"{owner} has no collection {collection!r}; "
                    + did_you_mean(collection, available),
                )
                return None
            if decl.sum is not None and not summed:
                self.problem(
                    (*path, "sum"), "a sum names the field summed; write e.g. inventory.quantity"
                )
                return None
            return Field(
                name,
                type_,
                attribute,
                "first" if decl.first is not None else "sum",
                decl.description,
                collection=collection,
                summed=summed or None,
            )
        if decl.hook is not None:
            self.check_hook((*path, "hook"), decl.hook)
            arguments = []
            for arg, arg_type in decl.arguments.items():
                ref = self.type_ref((*path, "arguments", arg), arg_type, False)
                if ref is not None:
                    arguments.append((arg, ref))
            return Field(
                name,
                type_,
                attribute,
                "hook",
                decl.description,
                hook=decl.hook,
                arguments=tuple(arguments),
            )
        if type_.name in self.file.types:
            self.problem(
                (*path, "type"),
                f"{type_.name} is a node type: make the field a `ref`, an edge or a collection",
            )
            return None
        for option in ("default", "initial"):
            given = getattr(decl, option)
            wrong = None if given is None else misfit(given, type_, option, self.enums)
            if wrong is not None:
                self.problem((*path, option), wrong)
        return Field(
            name,
            type_,
            attribute,
            "value",
            decl.description,
            unique=unique,
            default=decl.default,
            initial=decl.initial,
            length=decl.length,
            format=decl.format,
            entries=decl.entries,
        )

    def index_writes(
        self,
        path: Path,
        writes: Mapping[str, s.IndexKeys],
        placeholders: set[str],
        shards_allowed: bool,
        stored: set[str] | None = None,
    ) -> tuple[IndexWrite, ...]:
        """The index writes of a type (``stored``: its fields held in attributes of their own,
        which a run of placeholders may hold) or an edge."""
        out = []
        runs = stored is not None
        for index_name, keys in writes.items():
            where = (*path, "indexes", index_name)
            index = self.indexes.get(index_name)
            if index is None:
                self.problem(
                    where,
                    f"unknown index {index_name!r}; {did_you_mean(index_name, self.indexes)} "
                    "(declare it under table.indexes)",
                )
                continue
            pk = self.template((*where, "pk"), keys.pk, runs)
            sk = self.template((*where, "sk"), keys.sk, runs) if keys.sk is not None else None
            if pk is None or (keys.sk is not None and sk is None):
                continue
            for part, template in (("pk", pk), ("sk", sk)):
                if template is not None and stored is not None:
                    self.check_runs((*where, part), template, stored)
            if (sk is None) != (index.sk is None):
                self.problem(
                    where,
                    f"index {index_name} has {'a' if index.sk else 'no'} sort key; "
                    f"{'add' if index.sk else 'remove'} `sk` (given exactly when it has one)",
                )
            used = set(pk.placeholders) | set(sk.placeholders if sk else ())
            if SHARD in used and not shards_allowed:
                self.problem(where, "an edge's index entry is not write-sharded; remove {shard}")
            elif SHARD in used and keys.shards is None:
                self.problem(
                    where, "{shard} needs `shards: N` on this index entry; add it, e.g. `shards: 4`"
                )
            if keys.shards is not None and SHARD not in pk.placeholders:
                self.problem(
                    where, "`shards` needs {shard} in the pk template; add it or remove `shards`"
                )
            for unknown in sorted(used - placeholders - {SHARD}):
                self.problem(
                    where,
                    f"unknown placeholder {{{unknown}}}; {did_you_mean(unknown, placeholders)}",
                )
            self.typed_key((*where, "pk"), pk, index.pk, {})
            if sk is not None and index.sk is not None:
                self.typed_key((*where, "sk"), sk, index.sk, {})
            out.append(IndexWrite(index, pk, sk, keys.shards, keys.partial))
        return tuple(out)

    # ---- edges -----------------------------------------------------------------------------

    def edge(self, label: str, e: s.EdgeSpec, types: Mapping[str, NodeType]) -> EdgeType | None:
        path: Path = ("edges", label)
        ends = {"from": e.from_, "to": e.to}
        for end, type_name in ends.items():
            if type_name not in self.file.types:
                self.problem(
                    (*path, end),
                    f"unknown type {type_name!r}; {did_you_mean(type_name, self.file.types)}",
                )
                return None
            if type_name in types and not types[type_name].single:
                self.problem(
                    (*path, end),
                    f"{type_name} has a composite key: edges join node "
                    "types with a one-template key",
                )
                return None
        fields: dict[str, Field] = {}
        for field_name, decl in e.fields.items():
            compiled = self.field((*path, "fields", field_name), field_name, decl, "")
            if compiled is None:
                continue
            if compiled.kind == "copy":
                end_type = ends.get(compiled.end or "")
                end_node = types.get(end_type or "")
                if end_node is None or compiled.source not in end_node.fields:
                    choices = (
                        [f"{k}.{f}" for k in ends for f in types[ends[k]].fields]
                        if all(t in types for t in ends.values())
                        else []
                    )
                    self.problem(
                        (*path, "fields", field_name, "copyOf"),
                        f"{compiled.end}.{compiled.source} is not a field of an end; "
                        f"{did_you_mean(f'{compiled.end}.{compiled.source}', choices)}",
                    )
                    continue
                source = end_node.fields[compiled.source or ""]
                declared = decl.type if isinstance(decl, s.FieldSpec) else None
                if source.kind not in ("value", "key", "stamp"):
                    self.problem(
                        (*path, "fields", field_name, "copyOf"),
                        f"{compiled.end}.{compiled.source} is a {source.kind} field, not a "
                        "stored value; copy a field stored on the node's item",
                    )
                    continue
                if declared is not None and TypeRef.parse(declared) != source.type:
                    self.problem(
                        (*path, "fields", field_name, "type"),
                        f"a copy has its source's type: {compiled.end}.{compiled.source} is "
                        f"{source.type}, not {declared}; write `type: {source.type}` or leave "
                        "the type out",
                    )
                    continue
                compiled = Field(
                    field_name,
                    source.type,
                    compiled.attribute,
                    "copy",
                    compiled.description,
                    source=compiled.source,
                    end=compiled.end,
                )
            elif compiled.kind not in ("value",):
                self.problem(
                    (*path, "fields", field_name),
                    "an edge field is a value or a copyOf; make it one (`since: Date`)",
                )
                continue
            fields[field_name] = compiled
        implicit = [t for t in (e.from_, e.to) if self.file.types[t].implicit]
        if e.count == "counter" and implicit:
            self.problem(
                (*path, "count"),
                f"{implicit[0]} is implicit (no item to hold a counter); write `count: query`",
            )
        writes = self.index_writes(path, e.indexes, set(fields) | {"from", "to"}, False)
        incoming = any(w.index.name and set(w.pk.placeholders) <= {"to"} for w in writes) or any(
            i.pk == self.sk for i in self.indexes.values()
        )
        for field_name, f in fields.items():  # a copy of `to` is refreshed from its edges
            if f.kind == "copy" and f.end == "to" and not incoming:
                self.problem(
                    (*path, "fields", field_name, "copyOf"),
                    f"to.{f.source} cannot be kept in sync: no index lists a {e.to}'s incoming "
                    f"{label} edges; add an inverted index (its pk the table's sort key) or "
                    f'edges.{label}.indexes with a pk of {{to}} alone (e.g. "TO#{{to}}")',
                )
        forward = None
        if e.forward is not None:
            spec = s.EdgeEnd(field=e.forward) if isinstance(e.forward, str) else e.forward
            forward = self.edge_end(spec, e.from_, None)
        reverse = None
        if e.reverse is not None:
            index = None
            where = (*path, "reverse", "index")
            if e.reverse.index is None:
                self.problem(
                    (*path, "reverse"),
                    "a reverse edge is read from an index; add "
                    "`index:` (one whose pk holds the edge's `to` end)",
                )
            elif e.reverse.index not in self.indexes:
                self.problem(
                    where,
                    f"unknown index {e.reverse.index!r}; "
                    f"{did_you_mean(e.reverse.index, self.indexes)}",
                )
            else:
                index = self.indexes[e.reverse.index]
                inverted = index.pk == self.sk
                if not inverted and not any(w.index == index for w in writes):
                    self.problem(
                        where,
                        f"index {index.name} does not hold the table's sort key "
                        f"as its pk: write its templates under edges.{label}.indexes",
                    )
                if index.projection is not None:
                    unheld = sorted({f.attribute for f in fields.values()} - set(index.projection))
                    if unheld:
                        self.problem(
                            where,
                            f"index {index.name} does not project {', '.join(unheld)}, which "
                            f"the {label} edges' fields read; add them to its projection",
                        )
            reverse = self.edge_end(e.reverse, e.to, index)
        base = camel(label)
        return EdgeType(
            label,
            e.from_,
            e.to,
            fields,
            forward,
            reverse,
            writes,
            e.count,
            e.add or f"add{base}",
            e.remove or f"remove{base}",
            e.mutations,
            e.owns,
        )

    def edge_end(self, spec: s.EdgeEnd, owner: str, index: Index | None) -> EdgeEnd:
        stem = owner + upper_first(singular(spec.field))
        return EdgeEnd(
            spec.field,
            spec.one,
            index,
            spec.description,
            spec.connection or f"{stem}Connection",
            spec.edge or f"{stem}Edge",
            spec.order,
        )

    def ref(
        self, path: Path, name: str, decl: s.FieldSpec, type_: TypeRef, attribute: str
    ) -> Field | None:
        """A reference: by the one placeholder of the target's key, by its whole key
        (``holds: key``), or by each placeholder of a composite key."""
        target = self.file.types.get(type_.name)
        if target is None:
            self.problem(
                path, f"{type_.name} is not a node type of the model; give the ref a node type"
            )
            return None
        key = target.key
        try:
            texts = [
                Template.compile(t) for t in ([key] if isinstance(key, str) else [key.pk, key.sk])
            ]
        except TemplateSyntaxError:
            return None  # reported where the key is declared
        placeholders = list(dict.fromkeys(p for t in texts for p in t.placeholders))
        where = (*path, "ref")
        if isinstance(decl.ref, dict):  # composite: placeholder <- field
            link = tuple(decl.ref.items())
            if sorted(decl.ref) != sorted(placeholders):
                self.problem(
                    where,
                    f"{type_.name}'s key has {{{'}, {'.join(placeholders)}}}: give a field for "
                    "each placeholder, `{placeholder: field, …}`",
                )
                return None
            return Field(
                name, type_, attribute, "ref", decl.description, target=type_.name, link=link
            )
        if isinstance(decl.ref, s.KeysOfSpec):  # one target per key of a map
            if not type_.list:
                self.problem(
                    (*path, "type"),
                    f"a ref over a map's keys names several nodes; write `type: "
                    f'"[{type_.name}!]!"`',
                )
                return None
            if len(placeholders) != 1:
                self.problem(
                    where,
                    f"{type_.name}'s key has {{{'}, {'.join(placeholders)}}}: a map's keys name "
                    "nodes whose key has one placeholder",
                )
                return None
            return Field(
                name,
                type_,
                attribute,
                "ref",
                decl.description,
                target=type_.name,
                source=decl.ref.keys_of,
                keys_of=True,
            )
        holds = isinstance(decl.ref, s.RefSpec)
        source = decl.ref.field if isinstance(decl.ref, s.RefSpec) else decl.ref
        if not holds and len(placeholders) != 1:
            self.problem(
                where,
                f"{type_.name}'s key has {{{'}, {'.join(placeholders)}}}: name a field for "
                "each, `{placeholder: field, …}`, or one holding the whole key, "
                "`{field: …, holds: key}`",
            )
            return None
        if holds and not (isinstance(key, str) or len(placeholders) == 1):
            self.problem(
                where, f"{type_.name}'s key has several placeholders: a whole key needs one"
            )
            return None
        return Field(
            name,
            type_,
            attribute,
            "ref",
            decl.description,
            target=type_.name,
            source=source,
            holds_key=holds,
        )

    # ---- the whole model -------------------------------------------------------------------

    def compile(self) -> Model:
        file = self.file
        for enum_name, values in file.enums.items():
            if not values:
                self.problem(("enums", enum_name), "an enum has no value; list them, e.g. [A, B]")
            if enum_name in SCALARS or enum_name in file.types:
                self.problem(("enums", enum_name), f"{enum_name} is already a type; rename it")
        types: dict[str, NodeType] = {}
        for name, t in file.types.items():
            if name in SCALARS or name in ("Node", "PageInfo", "Query", "Mutation", "Subscription"):
                self.problem(("types", name), f"{name} is a built-in type name; rename the type")
                continue
            node = self.node_type(name, t)
            if node is not None:
                types[name] = node
        edges: dict[str, EdgeType] = {}
        for label, e in file.edges.items():
            edge = self.edge(label, e, types)
            if edge is not None:
                edges[label] = edge
        queries: dict[str, Query] = {}
        for name, q in file.queries.items():
            query = self.query(name, q, types, edges)
            if query is not None:
                queries[name] = query
        self.check_unions(types, queries)
        self.check_refs(types)
        self.check_owned(types, edges)
        self.check_uniques(types)
        self.check_constraints()
        self.check_names(types, edges, queries)
        self.check_overlap(types, edges)
        self.check_attributes(types, edges)
        objects = {name: self.object_type(name, o) for name, o in file.objects.items()}
        self.check_stored(types, edges, queries, objects)
        mutations = {name: self.mutation(name, m) for name, m in file.mutations.items()}
        self.check_roots(types, edges, queries, mutations)
        table = file.table
        return Model(
            self.name,
            table.name,
            self.pk,
            self.sk,
            table.type_attribute,
            table.label_attribute or table.type_attribute,
            table.version_attribute,
            table.store_key_fields,
            bool(table.timestamps),
            self.indexes,
            self.enums,
            types,
            edges,
            queries,
            objects,
            mutations,
            {root: tuple(names) for root, names in file.expose.items()},
            dict(file.descriptions),
            deletions=self.deletions(types),
            key_types={a: t for a, t in self.key_types.items() if t != "S"},
            ids=self.ids(),
            key_casing=self.file.table.key_casing,
            stamps=self.stamps(),
            generator=self.generator(),
        )

    def generator(self) -> str | None:
        dotted = self.file.generator
        if dotted is not None:
            self.check_hook(("generator",), dotted)
        return dotted

    def stamps(self) -> tuple[str, str]:
        spec = self.file.table.timestamps
        if isinstance(spec, s.TimestampsSpec):
            return spec.created, spec.modified
        return "createdAt", "updatedAt"

    def ids(self) -> tuple[str, str] | None:
        spec = self.file.table.ids
        if spec is None:
            return None
        try:
            re.compile(spec.pattern)
        except re.error as exc:
            self.problem(("table", "ids", "pattern"), f"not a regular expression: {exc}")
            return None
        return spec.pattern, spec.description

    def deletions(self, types: Mapping[str, NodeType]) -> Deletions | None:
        """Where large deletes mark their node: an index whose keys the mark may write."""
        table = self.file.table
        spec = table.deletions
        if spec is None:
            return None
        index = self.indexes.get(spec.index)
        if index is None:
            self.problem(
                ("table", "deletions", "index"),
                f"unknown index {spec.index!r}; {did_you_mean(spec.index, self.indexes)}",
            )
            return None
        if {index.pk, index.sk} & {self.pk, self.sk}:
            self.problem(
                ("table", "deletions", "index"),
                f"index {spec.index} is keyed by the table's own key attributes, which the mark "
                "cannot change; name an index with key attributes of its own, e.g. "
                "`gsi2: {partitionKey: GSI2PK, sortKey: GSI2SK}`",
            )
            return None
        for node in types.values():
            for field in node.fields.values():
                if field.attribute == spec.attribute:
                    self.problem(
                        ("table", "deletions", "attribute"),
                        f"{node.name}.{field.name} is stored in {spec.attribute!r}; "
                        "name another attribute for the mark, e.g. `deleting`",
                    )
                    return None
        return Deletions(index, spec.partition, spec.attribute)


def compile_model(file: s.ModelSpec, name: str) -> tuple[Model, list[Problem]]:
    from dataclasses import replace

    compiler = _Compiler(file, name)
    model = compiler.compile()
    replicas = compile_walks(file, model, compiler.problem, did_you_mean)
    model = replace(model, replicas=replicas)
    if file.access is not None:
        access = compile_access(file.access, model, compiler.problem, did_you_mean)
        model = replace(model, access=access)
    return model, compiler.problems
