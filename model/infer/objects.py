"""Stored objects drafted from map attributes: maps (M), lists of maps and maps of maps whose
entries share a shape become object types with ``stored: true`` (seed 001's
``MailingAddresses``: ``{"Home": {"StreetAddress": …}, "Business": {…}}``); maps whose shapes
disagree stay JSON, and the draft says why."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..types import SCALARS
from .values import DATE, DATETIME, NAME, field_decl, gql_name, type_name

__all__ = ["Disagree", "ObjectDrafts"]

ENTRIES = ("label", "key", "name", "entryKey")  # the field holding a map of maps' entry keys
MAX_DEPTH = 4  # objects nested deeper stay JSON
# names the schema gives its own types
RESERVED = frozenset(
    {*SCALARS, "Query", "Mutation", "Subscription", "Node", "PageInfo", "DeletedNode"}
)


class Disagree(Exception):
    """Maps whose shapes disagree: the reason, for the draft's comment."""


@dataclass
class Drafted:
    """One object type: its fields (name, declaration, comment) and where it was seen."""

    name: str
    fields: list[tuple[str, str, str]]
    evidence: str
    entries: str | None = None  # its field holding each entry's key, for a map of maps
    uses: list[str] = field(default_factory=list)


def _plain(raw: Mapping[str, Any]) -> tuple[str, Any]:
    [(kind, inner)] = raw.items()
    return kind, inner


def _maps(values: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [dict(inner) for kind, inner in values if kind == "M"]


class ObjectDrafts:
    """The stored objects of one draft, named after the attributes that hold them and shared
    by attributes of one shape."""

    def __init__(self, taken: Callable[[], set[str]]) -> None:
        self.taken = taken  # the draft's type and enum names
        self.objects: dict[str, Drafted] = {}

    def draft(
        self, owner: str, attribute: str, values: Sequence[tuple[str, Any]], depth: int = 0
    ) -> tuple[str, str, str | None]:
        """(GraphQL type without the outer ``!``, evidence, entries field) of an attribute
        whose values are all maps or all lists of maps; raises :class:`Disagree`."""
        if depth > MAX_DEPTH:
            raise Disagree(f"maps nested more than {MAX_DEPTH} deep")
        kinds = {kind for kind, _ in values}
        where = f"{owner}.{attribute}"
        if kinds == {"L"}:
            elements = [_plain(e) for _, inner in values for e in inner]
            if not elements:
                raise Disagree("only empty lists seen")
            if {kind for kind, _ in elements} != {"M"}:
                raise Disagree("lists whose elements are not all maps")
            maps = _maps(elements)
            name = self.object_of(where, attribute, maps, depth)
            return (
                f"[{name}!]",
                f"lists of maps sharing one shape ({_n_maps(len(maps))} in all): "
                f"a list of the stored object {name}",
                None,
            )
        if kinds != {"M"}:
            raise Disagree(f"values of several kinds ({'/'.join(sorted(kinds))})")
        maps = _maps(values)
        entries = [_plain(v) for m in maps for v in m.values()]
        if entries and all(kind == "M" for kind, _ in entries) and self._keyed_by_data(maps):
            inner = _maps(entries)
            label = next(n for n in ENTRIES if all(gql_name(k) != n for m in inner for k in m))
            name = self.object_of(where, attribute, inner, depth, label)
            keys = sorted({k for m in maps for k in m})
            shown = ", ".join(keys[:4]) + (", …" if len(keys) > 4 else "")
            return (
                f"[{name}!]",
                f"maps of maps whose keys vary from item to item ({shown}): one {name} per "
                f"entry, in key order, its key in {label}",
                label,
            )
        if not maps or not any(maps):
            raise Disagree("only empty maps seen")
        name = self.object_of(where, attribute, maps, depth)
        return name, f"maps sharing one shape: the stored object {name}", None

    @staticmethod
    def _keyed_by_data(maps: list[dict[str, Any]]) -> bool:
        """Whether maps whose values are all maps are keyed by data (``Home``, ``Business``
        on one item, ``Home`` on another; ids) rather than by a fixed set of names."""
        key_sets = {frozenset(m) for m in maps}
        return len(key_sets) > 1 or any(not NAME.match(k) for m in maps for k in m)

    def object_of(
        self,
        where: str,
        attribute: str,
        maps: list[dict[str, Any]],
        depth: int,
        label: str | None = None,
    ) -> str:
        """The object type of maps sharing one shape (reused where one of the same fields
        exists); raises :class:`Disagree` where their shapes disagree."""
        keys = list(dict.fromkeys(k for m in maps for k in m))
        present = {k: [m[k] for m in maps if k in m and "NULL" not in m[k]] for k in keys}
        if len(maps) > 1 and not any(len(v) == len(maps) for v in present.values()):
            counts = ", ".join(f"{k} on {len(present[k])} of {len(maps)}" for k in sorted(present))
            raise Disagree(f"no key is on every map ({counts})")
        fields: list[tuple[str, str, str]] = []
        if label is not None:
            fields.append((label, "String!", "each entry's key in the map"))
        names = {label} if label else set()
        skipped: list[str] = []
        for key in keys:
            values = [_plain(v) for v in present[key]]
            if not values:
                continue
            typed = self.value_type(where, key, values, depth)
            if typed is None:
                skipped.append(key)
                continue
            graphql, evidence = typed[0], typed[1]
            entries = typed[2] if len(typed) > 2 else None
            name, n = gql_name(key), 2
            while name in names:
                name, n = f"{gql_name(key)}{n}", n + 1
            names.add(name)
            bang = "!" if len(values) == len(maps) else ""
            presence = (
                f"on all {len(maps)} maps" if bang else f"on {len(values)} of {len(maps)} maps"
            )
            comment = f"{presence}, {evidence}" if evidence else presence
            fields.append((name, field_decl(graphql + bang, name, key, entries), comment))
        if not fields:
            raise Disagree("no key of these maps holds a value GraphQL can type")
        for existing in self.objects.values():
            if existing.fields == fields and existing.entries == label:
                if where not in existing.uses:
                    existing.uses.append(where)
                return existing.name
        name = self._name(attribute)
        evidence = f"the shape of {_n_maps(len(maps))} in {where}"
        if skipped:
            evidence += f"; binary keys left out ({', '.join(skipped)})"
        self.objects[name] = Drafted(name, fields, evidence, label, [where])
        return name

    def value_type(
        self, where: str, key: str, values: list[tuple[str, Any]], depth: int
    ) -> tuple[str, str] | tuple[str, str, str | None] | None:
        """(GraphQL type, evidence[, entries field]) of one key's values across maps; None for
        binary."""
        kinds = {kind for kind, _ in values}
        if kinds <= {"B", "BS"}:
            return None
        if len(kinds) > 1:
            raise Disagree(f"{key} holds values of several kinds ({'/'.join(sorted(kinds))})")
        (kind,) = kinds
        if kind == "S":
            texts = [str(v) for _, v in values]
            if all(DATE.match(t) for t in texts):
                return "Date", "ISO dates"
            if all(DATETIME.match(t) for t in texts):
                return "DateTime", "ISO date-times"
            return "String", ""
        if kind == "N":
            return _number([Decimal(v) for _, v in values]), ""
        if kind == "BOOL":
            return "Boolean", ""
        if kind == "SS":
            return "[String!]", "string sets"
        if kind == "NS":
            return f"[{_number([Decimal(x) for _, v in values for x in v])}!]", "number sets"
        if kind == "L":
            elements = {_plain(e)[0] for _, v in values for e in v}
            if elements == {"S"}:
                return "[String!]", "lists of strings"
            if elements == {"N"}:
                numbers = [Decimal(_plain(e)[1]) for _, v in values for e in v]
                return f"[{_number(numbers)}!]", "lists of numbers"
        if kind in ("M", "L"):
            try:
                graphql, evidence, entries = self.draft(where, key, values, depth + 1)
            except Disagree as exc:
                return "JSON", f"JSON: {exc}"
            return graphql, evidence, entries
        return "JSON", f"{kind} values: JSON"

    def _name(self, attribute: str) -> str:
        """An object's name after the attribute holding it, singular (``MailingAddresses`` →
        ``MailingAddress``), clear of the draft's types, enums, objects and their inputs."""
        base = type_name(_singular(attribute))
        name, n = base, 2
        while (
            name in self.taken()
            or name in self.objects
            or name in RESERVED
            or name.endswith(("Input", "Connection", "Edge"))
        ):
            name, n = f"{base}{n}", n + 1
        return name


def _n_maps(n: int) -> str:
    return "1 map" if n == 1 else f"{n} maps"


def _number(numbers: list[Decimal]) -> str:
    whole = all(x == x.to_integral_value() and abs(x) < 2**31 for x in numbers)
    return "Int" if whole else "Float"


def _singular(word: str) -> str:
    if re.search(r"(?i)[^aeiou]ies$", word):
        return word[:-3] + "y"
    if re.search(r"(?i)(ss|x|ch|sh)es$", word):
        return word[:-2]
    if re.search(r"(?i)[^s]s$", word):
        return word[:-1]
    return word
