"""The model compiler's shared state, its report of problems, and the checks of keys and types
every section uses; names and suggestions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .. import spec as s
from ..common import camel, did_you_mean, lower_first, singular, upper_first
from ..templates import Template, TemplateSyntaxError
from ..types import (
    SCALARS,
    Field,
    Index,
    TypeRef,
)

__all__ = ["Path", "Problem", "camel", "did_you_mean", "lower_first", "singular", "upper_first"]


Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str


class _Base:
    """The compiler's state and the checks every section uses."""

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
