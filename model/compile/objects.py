"""The ``objects:`` section: object types without a key, output only (what paths and hooks
return) or ``stored`` in map attributes; and the checks of every field such an object types."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .. import spec as s
from ..types import SCALARS, EdgeType, Field, IndexWrite, NodeType, ObjectType, Query
from .base import Path, _Base, did_you_mean

STORED_OPTIONS = frozenset({"type", "description", "attribute", "entries"})


class _Objects(_Base):
    def object_type(self, name: str, o: s.ObjectSpec) -> ObjectType:
        path: Path = ("objects", name)
        if name in self.file.types or name in self.enums or name in SCALARS:
            self.problem(path, f"{name} is already a type; rename the object")
        if not o.fields:
            self.problem((*path, "fields"), "an object needs a field; write e.g. `{name: String!}`")
        fields = {}
        for field_name, decl in o.fields.items():
            spec = s.FieldSpec(type=decl) if isinstance(decl, str) else decl
            where = (*path, "fields", field_name)
            extra = sorted(spec.model_fields_set - {"type", "description"})
            if o.stored and set(extra) - STORED_OPTIONS:
                option = sorted(set(extra) - STORED_OPTIONS)[0]
                self.problem(
                    (*where, option),
                    f"a stored object's field has a type, an attribute and entries only; "
                    f"remove {option}",
                )
            elif not o.stored and extra:
                fix = (
                    f"add `stored: true` to objects.{name} to read it from a map attribute"
                    if set(extra) <= STORED_OPTIONS
                    else f"remove {extra[0]}"
                )
                self.problem(where, f"an object's field has a type only; {fix}")
            ref = self.type_ref(where, spec.type or "")
            if ref is not None:
                attribute = spec.attribute or field_name
                fields[field_name] = Field(
                    field_name, ref, attribute, "value", spec.description, entries=spec.entries
                )
        return ObjectType(name, fields, o.description, o.stored)

    def check_stored(
        self,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
        queries: Mapping[str, Query],
        objects: Mapping[str, ObjectType],
    ) -> None:
        """Every field an object types is stored where the object is (`stored: true`), and a
        stored object holds values only; `entries` reads a map of maps into a list of a stored
        object keyed by one of its String fields; no key holds an object; every stored object
        has an input to write."""
        for path, field, decl in self._declared(types, edges, objects):
            spec = decl if isinstance(decl, s.FieldSpec) else s.FieldSpec(type=decl)
            where = (*path, "type") if spec.model_fields_set - {"type"} else path
            name = field.type.name
            plain = objects.get(name)
            if spec.entries is not None and field.kind not in ("value", "key"):
                self.problem(
                    (*path, "entries"),
                    f"entries reads a stored map attribute; remove it from this {field.kind} field",
                )
                continue
            if path[0] == "objects" and name in types:
                self.problem(
                    where,
                    f"{name} is a node type; a stored object's field holds a scalar, an enum, "
                    "JSON or a stored object (a list of them too)",
                )
                continue
            if plain is not None and field.kind == "key":
                self.problem(
                    where, f"{field.name} is a key placeholder, which holds text; give it a scalar"
                )
                continue
            if plain is not None and field.kind == "value":
                if not plain.stored:
                    self.problem(
                        where,
                        f"{name} is not stored, so it cannot hold the attribute "
                        f"{field.attribute!r}; add `stored: true` to objects.{name}",
                    )
                    continue
                for option in ("unique", "default", "initial"):
                    if getattr(spec, option) is not None:
                        self.problem(
                            (*path, option),
                            f"{option} is for a scalar; remove it from this {name} field",
                        )
            if field.entries is not None:
                self._check_entries(path, field, plain)
        self._check_templates(types, edges, queries, objects)
        self._check_cycles(objects)
        self._check_inputs(types, objects)

    def _check_templates(
        self,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
        queries: Mapping[str, Query],
        objects: Mapping[str, ObjectType],
    ) -> None:
        """An index's templates and an access pattern's hold text: no placeholder of theirs
        names a field an object types."""
        owners: list[tuple[Path, Mapping[str, Field], tuple[IndexWrite, ...]]] = [
            (("types", n.name, "indexes"), n.fields, n.indexes) for n in types.values()
        ]
        owners += [(("edges", e.label, "indexes"), e.fields, e.indexes) for e in edges.values()]
        for path, fields, writes in owners:
            for write in writes:
                used = write.pk.placeholders + (write.sk.placeholders if write.sk else ())
                for name in used:
                    field = fields.get(name)
                    if field is not None and field.type.name in objects:
                        self.problem(
                            (*path, write.index.name or ""),
                            f"{{{name}}} is an object ({field.type.name}), which a key cannot "
                            "hold; use a scalar field",
                        )
        for query in queries.values():
            for name, ref in query.arguments:
                if ref.name in objects:
                    self.problem(
                        ("queries", query.name),
                        f"{{{name}}} is an object ({ref.name}), which a key cannot hold; use a "
                        "scalar field",
                    )

    def _declared(
        self,
        types: Mapping[str, NodeType],
        edges: Mapping[str, EdgeType],
        objects: Mapping[str, ObjectType],
    ) -> Iterator[tuple[Path, Field, s.FieldDecl]]:
        """(path, compiled field, its declaration) of every declared field of the types, the
        edges and the stored objects."""
        for node in types.values():
            spec_fields = self.file.types[node.name].fields
            for name, field in node.fields.items():
                if name in spec_fields:
                    yield ("types", node.name, "fields", name), field, spec_fields[name]
        for edge in edges.values():
            spec_fields = self.file.edges[edge.label].fields
            for name, field in edge.fields.items():
                if name in spec_fields:
                    yield ("edges", edge.label, "fields", name), field, spec_fields[name]
        for plain in objects.values():
            if plain.stored:
                spec_fields = self.file.objects[plain.name].fields
                for name, field in plain.fields.items():
                    yield ("objects", plain.name, "fields", name), field, spec_fields[name]

    def _check_entries(self, path: Path, field: Field, plain: ObjectType | None) -> None:
        where = (*path, "entries")
        if plain is None or not field.type.list:
            example = f"[{plain.name if plain else 'Address'}!]!"
            self.problem(
                where,
                f"entries reads a map of maps into a list of a stored object; type the field "
                f"as one, e.g. `{example}`",
            )
            return
        if not plain.stored:
            return  # reported: not stored
        key = plain.fields.get(field.entries or "")
        if key is None:
            self.problem(
                where,
                f"{plain.name} has no field {field.entries!r}; "
                f"{did_you_mean(field.entries or '', plain.fields)}",
            )
        elif key.type.name not in ("String", "ID") or key.type.list or not key.type.non_null:
            self.problem(
                where,
                f"{plain.name}.{key.name} holds each entry's key (a map's keys are strings); "
                f"declare `{key.name}: String!`",
            )

    def _check_cycles(self, objects: Mapping[str, ObjectType]) -> None:
        """No stored object holds itself through non-null fields: no input could be written."""
        held = {
            plain.name: [
                (f.name, f.type.name)
                for f in plain.fields.values()
                if f.type.non_null and not f.type.list and f.type.name in objects
            ]
            for plain in objects.values()
            if plain.stored
        }
        reported: set[str] = set()
        for start in held:
            found = None if start in reported else _cycle(held, start)
            if found is None:
                continue
            reported.update(owner for owner, _ in found)
            shown = " → ".join(f"{owner}.{name}" for owner, name in found)
            self.problem(
                ("objects", start, "fields", found[0][1]),
                f"{start} holds itself through non-null fields ({shown} → {start}), so no "
                "input can be written; make one of them nullable",
            )

    def _check_inputs(
        self, types: Mapping[str, NodeType], objects: Mapping[str, ObjectType]
    ) -> None:
        taken = set(SCALARS) | set(types) | set(objects) | set(self.enums)
        taken |= {f"{verb}{t}Input" for t in types for verb in ("Create", "Update")}
        for plain in objects.values():
            if plain.stored and f"{plain.name}Input" in taken:
                self.problem(
                    ("objects", plain.name),
                    f"{plain.name}Input, the input generated to write it, is already a type; "
                    "rename the object",
                )


def _cycle(held: Mapping[str, list[tuple[str, str]]], start: str) -> list[tuple[str, str]] | None:
    """The fields (owner, name) leading from ``start`` back to it, if any."""
    stack: list[tuple[str, list[tuple[str, str]]]] = [(start, [])]
    seen = {start}
    while stack:
        current, trail = stack.pop()
        for name, target in held.get(current, []):
            step = [*trail, (current, name)]
            if target == start:
                return step
            if target not in seen:
                seen.add(target)
                stack.append((target, step))
    return None
