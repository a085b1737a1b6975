"""The model compiler's shared state, its report of problems, and the checks of keys and types
every section uses; names and suggestions."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
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

__all__ = [
    "Path",
    "Problem",
    "camel",
    "did_you_mean",
    "located_key",
    "lower_first",
    "misfit",
    "singular",
    "split_key",
    "upper_first",
]


Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str


def split_key(key: s.KeyPair) -> bool:
    """Whether a pair of templates has sort-key placeholders its partition key has not (so a
    partition may hold several items of the type)."""
    try:
        pk, sk = Template.compile(key.pk), Template.compile(key.sk, runs=True)
    except TemplateSyntaxError:
        return False
    return bool(set(sk.placeholders) - set(pk.placeholders))


def located_key(key: s.KeyPair) -> bool:
    """Whether a pair of templates keys a type by more than its id (``NodeType.located``)."""
    try:
        pk = Template.compile(key.pk)
    except TemplateSyntaxError:
        return False
    return "id" in pk.placeholders and split_key(key)


_FITS = {
    "String": (str,),
    "ID": (str,),
    "Date": (str,),
    "DateTime": (str,),
    "Int": (int,),
    "Float": (int, float),
    "Boolean": (bool,),
}


def misfit(
    value: object, type_: TypeRef, option: str, enums: Mapping[str, Mapping[str, str]]
) -> str | None:
    """Why a field's ``default`` or ``initial`` cannot be its value, or None."""
    if type_.list:
        return f"{option} gives one value and the field is a list ({type_}); remove `{option}`"
    if option == "initial" and value == "now":
        if type_.name in ("DateTime", "String"):
            return None
        return f"`now` is a DateTime and the field is a {type_.name}; give a value or remove it"
    if type_.name in enums:
        if value in enums[type_.name]:
            return None
        return (
            f"{value!r} is not a value of {type_.name}; use one of: {', '.join(enums[type_.name])}"
        )
    kinds = _FITS.get(type_.name)
    wrong = kinds is not None and (
        not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
    )
    if wrong or (type_.name == "Date" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(value))):
        article = "an" if type_.name[:1] in "AEIOU" else "a"
        return f"{value!r} is not {article} {type_.name}; give {article} {type_.name} value"
    return None


_INDEX_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")  # as DynamoDB's CreateTable takes it


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
        self._check_attribute_names(table)
        for n in table.indexes:
            if not _INDEX_NAME.fullmatch(n):
                self.problem(
                    ("table", "indexes", n),
                    "DynamoDB names an index with 3 to 255 characters of A-Z a-z 0-9 _ . -, not "
                    f"{n!r}; rename it",
                )
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

    def _check_attribute_names(self, table: s.TableSpec) -> None:
        """The attributes the table section names: DynamoDB holds none named by the empty
        string, nor a key attribute of more than 255 bytes."""
        named: list[tuple[Path, str | None]] = [
            (("table", "partitionKey"), s.key_name(table.partition_key)),
            (("table", "sortKey"), s.key_name(table.sort_key)),
            (("table", "typeAttribute"), table.type_attribute),
            (("table", "labelAttribute"), table.label_attribute),
            (("table", "versionAttribute"), table.version_attribute),
        ]
        for n, i in table.indexes.items():
            named.append((("table", "indexes", n, "partitionKey"), s.key_name(i.partition_key)))
            if i.sort_key is not None:
                named.append((("table", "indexes", n, "sortKey"), s.key_name(i.sort_key)))
        for path, name in named:
            if name is not None and not 0 < len(name.encode()) <= 255:
                self.problem(
                    path,
                    f"DynamoDB names an attribute with 1 to 255 bytes, not {name[:20]!r}; "
                    "give it such a name",
                )

    def problem(self, path: Path, message: str) -> None:
        self.problems.append(Problem(path, message))

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
            self.problem(path, f"{module_name} has no function {function!r}; check its name")

    def template(self, path: Path, text: str, runs: bool = False) -> Template | None:
        """``runs``: placeholders may follow each other (``{name}{id}``) where their values are
        read from their own attributes (:meth:`check_runs`)."""
        try:
            return Template.compile(text, self.file.table.key_casing, runs)
        except TemplateSyntaxError as exc:
            self.problem(path, str(exc))
            return None

    def stored(self, fields: Mapping[str, Field], declared: Iterable[str]) -> set[str]:
        """The fields of a type whose values its items hold in attributes of their own: its
        stored values, and its key fields where the file declares them or
        ``storeKeyFields`` writes them (``id`` too); not one read ``from: key``, which writes
        the key alone."""
        keep = self.file.table.store_key_fields
        names = {
            n
            for n, f in fields.items()
            if f.kind in ("value", "stamp")
            or (f.kind == "key" and (keep or n in declared) and not f.from_key)
        }
        return names | {"id"} if keep else names

    def check_runs(self, path: Path, template: Template, stored: set[str]) -> None:
        """Placeholders with no text between them (a run, ``{name}{id}``): the key cannot be
        split, so each value must also be in an attribute of its own."""
        unstored = [n for n in template.placeholders if n in template.runs and n not in stored]
        if not unstored:
            return
        groups: list[list[str]] = []
        after_placeholder = False
        for part in template.parts:
            if not isinstance(part, str) and after_placeholder:
                groups[-1].append(part.name)
            elif not isinstance(part, str):
                groups.append([part.name])
            after_placeholder = not isinstance(part, str)
        run = ", ".join(
            "".join(f"{{{n}}}" for n in g) for g in groups if len(g) > 1 and set(g) & set(unstored)
        )
        names = ", ".join(f"{{{n}}}" for n in unstored)
        self.problem(
            path,
            f"{template.text!r}: {run} has no text between them, so the key cannot be split and "
            f"each value is read from its own attribute, which {names} has not; put a separator "
            "such as # between them, or store it (declare the field, not `from: key`; for {id}, "
            "table.storeKeyFields: true)",
        )

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
