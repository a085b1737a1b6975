"""From a parsed file (:class:`model.spec.ModelSpec`) to the compiled :class:`model.types.Model`:
defaults applied, names resolved, templates compiled, and every cross-reference checked. Each
mistake is a :class:`Problem` naming its place in the file and what to write instead."""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from . import spec as s
from .filters import Where
from .templates import Template, TemplateSyntaxError, overlap
from .types import (
    SCALARS,
    SHARD,
    Deletions,
    EdgeEnd,
    EdgeType,
    Field,
    Index,
    IndexWrite,
    Model,
    Mutation,
    NodeType,
    ObjectType,
    Parent,
    Query,
    TypeRef,
    Unique,
)

__all__ = ["Problem", "compile_model", "lower_first", "singular"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str


def lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def upper_first(name: str) -> str:
    return name[:1].upper() + name[1:]


def camel(label: str) -> str:
    """``WORKS_AT`` -> ``WorksAt``."""
    return "".join(part.capitalize() for part in label.lower().split("_") if part)


def singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    known = ", ".join(sorted(choices)) or "none"
    return f"use one of: {known}"


class _Compiler:
    def __init__(self, file: s.ModelSpec, name: str) -> None:
        self.file = file
        self.name = name
        self.problems: list[Problem] = []
        table = file.table
        self.pk, self.sk = s.key_name(table.partition_key), s.key_name(table.sort_key)
        self.indexes = {
            n: Index(
                n,
                s.key_name(i.partition_key),
                s.key_name(i.sort_key) if i.sort_key else None,
                i.local,
                None
                if i.projection == "ALL"
                else ()
                if i.projection == "KEYS_ONLY"
                else tuple(i.projection),
            )
            for n, i in table.indexes.items()
        }
        for n, i in table.indexes.items():
            if i.local and (s.key_name(i.partition_key) != self.pk or i.sort_key is None):
                self.problem(
                    ("table", "indexes", n),
                    f"a local index shares the table's partition key and has a sort key of its "
                    f"own: write `{{partitionKey: {self.pk}, sortKey: <attribute>, local: true}}`",
                )
        declared: list[tuple[s.KeyDecl, Path]] = [(table.partition_key, ("table", "partitionKey"))]
        declared.append((table.sort_key, ("table", "sortKey")))
        for n, i in table.indexes.items():
            declared.append((i.partition_key, ("table", "indexes", n, "partitionKey")))
            if i.sort_key is not None:
                declared.append((i.sort_key, ("table", "indexes", n, "sortKey")))
        self.key_types: dict[str, str] = {}
        for key, where in declared:
            name, kind = s.key_name(key), s.key_type(key)
            if self.key_types.get(name, kind) != kind:
                self.problem(
                    (*where, "type"),
                    f"{name} is declared {self.key_types[name]} elsewhere; an attribute has "
                    "one type",
                )
            self.key_types.setdefault(name, kind)
        self.enums = {
            n: dict(zip(v, v, strict=True)) if isinstance(v, list) else dict(v)
            for n, v in file.enums.items()
        }

    def problem(self, path: Path, message: str) -> None:
        self.problems.append(Problem(path, message))

    def template(self, path: Path, text: str) -> Template | None:
        try:
            return Template.compile(text, self.file.table.key_casing)
        except TemplateSyntaxError as exc:
            self.problem(path, str(exc))
            return None

    def typed_key(
        self, where: Path, template: Template, attribute: str, fields: Mapping[str, Field]
    ) -> None:
        """A template over an N key is one placeholder of an Int or Float field, over a B key one
        placeholder of a (base64) String or ID field: DynamoDB compares such keys as numbers or
        bytes, so they hold no literal text."""
        kind = self.key_types.get(attribute, "S")
        if kind == "S":
            return
        names = template.placeholders
        wanted = ("Int", "Float", "ID") if kind == "N" else ("String", "ID")
        shown = "an Int or Float" if kind == "N" else "a base64 String"
        kinds = {"N": "a number (N)", "B": "a binary (B)"}
        if len(template.parts) != 1 or len(names) != 1:
            self.problem(
                where,
                f"{attribute} is {kinds[kind]} key: its template is one placeholder of {shown} "
                f"field with no literal text, e.g. '{{{names[0] if names else 'id'}}}'",
            )
            return
        field = fields.get(names[0])
        if names[0] != "id" and field is not None and field.type.name not in wanted:
            self.problem(
                where,
                f"{attribute} is {kinds[kind]} key, so {{{names[0]}}} must be {shown} field, "
                f"not {field.type.name}; declare `{names[0]}: "
                f"{'Int!' if kind == 'N' else 'String!'}`",
            )

    def type_ref(self, path: Path, text: str, objects: bool = True) -> TypeRef | None:
        ref = TypeRef.parse(text)
        known = set(SCALARS) | set(self.enums)
        if objects:
            known |= set(self.file.types) | set(self.file.objects)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ref.name):
            self.problem(
                path, f"{text!r} is not a GraphQL type; write e.g. String!, [Int!] or Date"
            )
            return None
        if ref.name not in known:
            self.problem(path, f"unknown type {ref.name!r}; {did_you_mean(ref.name, known)}")
            return None
        return ref

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
            sk = self.template((*path, "key", "sk"), t.key.sk)
            single = False
        if pk is None or sk is None:
            return None
        key_fields = tuple(dict.fromkeys(pk.placeholders + sk.placeholders))
        if not key_fields:
            self.problem((*path, "key"), "a key needs a placeholder; write e.g. 'ORDER#{id}'")
            return None
        if SHARD in key_fields:
            self.problem((*path, "key"), "{shard} belongs in an index template, not the key")
        if single and key_fields != ("id",):
            self.problem(
                (*path, "key"),
                f"a one-template key holds exactly {{id}}, not {{{', '.join(key_fields)}}}; "
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
                fields[field_name] = compiled
        if t.implicit:
            for field_name, f in fields.items():
                if f.kind in ("value", "ref") and f.type.non_null:
                    self.problem(
                        (*path, "fields", field_name),
                        f"{name} is implicit (no item of its own), so {field_name} is null "
                        f"where nothing is stored; make it nullable: {f.type.nullable()}",
                    )
        where = (*path, "key") if single else (*path, "key", "pk")
        self.typed_key(where, pk, self.pk, fields)
        self.typed_key(where if single else (*path, "key", "sk"), sk, self.sk, fields)
        for field_name, compiled_field in fields.items():
            if compiled_field.unique is not None and not single:
                self.problem(
                    (*path, "fields", field_name, "unique"),
                    "a unique field belongs to a type with a one-template key such as 'USER#{id}'",
                )
        stamps = self.stamps()
        if self.file.table.timestamps is True:
            for stamp in stamps:
                if stamp not in fields:
                    fields[stamp] = Field(stamp, TypeRef("DateTime", True), stamp, "stamp")
        elif self.file.table.timestamps:  # named attributes: served where a field declares them
            for field_name, f in fields.items():
                if f.kind == "value" and f.attribute in stamps:
                    fields[field_name] = replace(f, kind="stamp")
        writes = self.index_writes(path, t.indexes, set(fields) | {"id"}, shards_allowed=True)
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
        if not isinstance(parent_spec.key, str) and "{" in parent_spec.key.sk:
            self.problem(
                (*path, "type"),
                "a parent has a one-template key such as 'ORDER#{id}', or a constant sort key "
                "such as {pk: 'ORDER#{id}', sk: ORDER}",
            )
            return None, ()
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
        if decl.model_fields_set & {"path", "where", "shape"}:  # a transitive path
            from .paths import path_field

            return path_field(self, path, name, decl)
        kinds = [k for k in ("copy_of", "ref", "first", "sum", "hook") if getattr(decl, k)]
        if len(kinds) > 1:
            self.problem(path, f"a field is one of copyOf, ref, first, sum or hook, not {kinds}")
            return None
        attribute = decl.attribute or name
        unique = None
        if decl.unique is not None:
            template = self.template((*path, "unique", "key"), decl.unique.key)
            if template is not None and template.placeholders != (name,):
                self.problem(
                    (*path, "unique", "key"),
                    f"write a template of {{{name}}} alone, e.g. '{name.upper()}#{{{name}}}'",
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
                self.problem((*path, "sum"), "write `collection.field`, e.g. inventory.quantity")
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
        )

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

    def check_hook(self, path: Path, dotted: str) -> None:
        module_name, colon, function = dotted.partition(":")
        if not colon or not module_name or not function:
            self.problem(path, f"{dotted!r}: write `package.module:function`")
            return
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            self.problem(path, f"cannot import {module_name!r} ({exc}); check the module path")
            return
        if not callable(getattr(module, function, None)):
            self.problem(path, f"{module_name} has no function {function!r}")

    def index_writes(
        self,
        path: Path,
        writes: Mapping[str, s.IndexKeys],
        placeholders: set[str],
        shards_allowed: bool,
    ) -> tuple[IndexWrite, ...]:
        out = []
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
            pk = self.template((*where, "pk"), keys.pk)
            sk = self.template((*where, "sk"), keys.sk) if keys.sk is not None else None
            if pk is None or (keys.sk is not None and sk is None):
                continue
            if (sk is None) != (index.sk is None):
                self.problem(
                    where,
                    f"index {index_name} {'has' if index.sk else 'has no'} a "
                    "sort key: give `sk` exactly when it has one",
                )
            used = set(pk.placeholders) | set(sk.placeholders if sk else ())
            if SHARD in used and (not shards_allowed or keys.shards is None):
                self.problem(where, "{shard} needs `shards: N` on this index entry")
            if keys.shards is not None and SHARD not in pk.placeholders:
                self.problem(where, "`shards` needs {shard} in the pk template")
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
                self.problem((*path, "fields", field_name), "an edge field is a value or a copyOf")
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
        partition = self.template((*path, "partition"), q.partition)
        sort = self.template((*path, "sort", "template"), q.sort.template) if q.sort else None
        if partition is None or (q.sort is not None and sort is None):
            return None
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
        owner_fields = set(owner.fields) | {"id"} if owner else set()
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
                    self.problem((*path, "sort", "between"), "no placeholder left to bound")
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
        taken = {a for a, _ in arguments} | {"first", "after"}
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
        from .filters import compile_filter

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

    # ---- the whole model -------------------------------------------------------------------

    def compile(self) -> Model:
        file = self.file
        for enum_name, values in file.enums.items():
            if not values:
                self.problem(("enums", enum_name), "an enum needs at least one value")
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
        self.checkoverlap(types, edges)
        objects = {name: self.object_type(name, o) for name, o in file.objects.items()}
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
        )

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

    def object_type(self, name: str, o: s.ObjectSpec) -> ObjectType:
        path: Path = ("objects", name)
        if name in self.file.types or name in self.enums or name in SCALARS:
            self.problem(path, f"{name} is already a type; rename the object")
        fields = {}
        for field_name, decl in o.fields.items():
            spec = s.FieldSpec(type=decl) if isinstance(decl, str) else decl
            if spec.model_fields_set - {"type", "description"}:
                self.problem((*path, "fields", field_name), "an object's field has a type only")
            ref = self.type_ref((*path, "fields", field_name), spec.type or "")
            if ref is not None:
                fields[field_name] = Field(field_name, ref, field_name, "value", spec.description)
        return ObjectType(name, fields, o.description)

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
                self.problem((*path, "ids", arg), f"{name} has no argument {arg!r}")
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

    def ref(
        self, path: Path, name: str, decl: s.FieldSpec, type_: TypeRef, attribute: str
    ) -> Field | None:
        """A reference: by the one placeholder of the target's key, by its whole key
        (``holds: key``), or by each placeholder of a composite key."""
        target = self.file.types.get(type_.name)
        if target is None:
            self.problem(path, f"a ref's type is a node type of the model, not {type_.name}")
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
                self.problem(("queries", query.name), f"root field {query.field!r} is taken")
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

    def checkoverlap(self, types: Mapping[str, NodeType], edges: Mapping[str, EdgeType]) -> None:
        """Without a type attribute, items are told apart by their key templates: report two
        declarations whose keys can match the same item."""
        if self.file.table.type_attribute is not None:
            return
        shapes: list[tuple[Path, str, Template, Template]] = [
            (("types", n.name, "key"), n.name, n.pk, n.sk) for n in types.values()
        ]
        for e in edges.values():
            if e.source in types and e.target in types:
                shapes.append((("edges", e.label), e.label, types[e.source].pk, types[e.target].sk))
        # an implicit type has no item of its own: an edge's items (two keys, pk != sk) are never
        # its, even where its key template fits both ends (follows between `USER#a` and `USER#b`)
        implicit = {n.name for n in types.values() if n.implicit and n.single}
        for i, (path, name, pk, sk) in enumerate(shapes):
            for opath, other, opk, osk in shapes[:i]:
                kinds = {path[0], opath[0]}
                if kinds == {"types", "edges"} and {name, other} & implicit:
                    continue
                if (
                    overlap(pk, opk)
                    and overlap(sk, osk)
                    and ((pk, sk) != (opk, osk) or name != other)
                ):
                    self.problem(
                        path,
                        f"items of {name} and {other} can have the same keys, and "
                        "the table has no typeAttribute to tell them apart; give one of "
                        "them a distinct literal prefix",
                    )


def compile_model(file: s.ModelSpec, name: str) -> tuple[Model, list[Problem]]:
    from dataclasses import replace

    from .paths import compile_walks  # path fields follow edges: checked once edges are known

    compiler = _Compiler(file, name)
    model = compiler.compile()
    replicas = compile_walks(file, model, compiler.problem, did_you_mean)
    model = replace(model, replicas=replicas)
    if file.access is not None:
        from .access import compile_access

        access = compile_access(file.access, model, compiler.problem, did_you_mean)
        model = replace(model, access=access)
    return model, compiler.problems
