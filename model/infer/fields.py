"""Fields of each kind and their GraphQL types, refs, enums."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ..compile import lower_first, upper_first
from .keys import Keys
from .shapes import Kind
from .table import TableInfo
from .values import (
    DATE,
    DATETIME,
    MAX_ENUM,
    UPPER,
    WORDS,
    enum_value,
    field_decl,
    gql_name,
    n_items,
    plural,
)

__all__ = ["Fields"]


class Fields(Keys):
    """Field declarations of each kind: GraphQL types, refs and enums, each with its evidence."""

    def __init__(
        self,
        info: TableInfo,
        raw: Sequence[Mapping[str, Any]],
        complete: bool,
        facets: Sequence[str | None] | None = None,
        origin: str = "",
    ) -> None:
        super().__init__(info, raw, complete, facets, origin)
        self.enums: dict[str, list[str]] = {}
        self.enum_evidence: dict[str, str] = {}
        self.claimed: dict[str, set[str]] = {}
        # per type: fields read from an overloaded index attribute (``Data``, ``GSI1SK``)
        self.overloaded: dict[str, list[tuple[str, str, str]]] = {}

    def scalar(self, k: Kind, attribute: str, owner: str) -> tuple[str, str] | None:
        """(GraphQL type, evidence) of an attribute over a kind's items, None for binary."""
        values = [r.attrs[attribute] for r in k.rows if attribute in r.attrs]
        kinds = {v[0] for v in values}
        n, total = len(values), k.count
        bang = "!" if n == total else ""
        presence = f"on {n} of {total} items" if n < total else f"on all {n_items(total)}"
        presence = "on the only item" if total == 1 else presence
        if kinds == {"B"} and self.bare.get(attribute) == "B":
            return "String" + bang, f"{presence}, a binary key: base64 in GraphQL"
        if kinds <= {"B", "BS"}:
            return None
        if len(kinds) > 1:
            return "JSON" + bang, f"{presence}, mixed types {'/'.join(sorted(kinds))}: JSON"
        (kind,) = kinds
        if kind == "S":
            texts = [str(v[1]) for v in values]
            if all(DATE.match(t) for t in texts):
                return "Date" + bang, f"{presence}, ISO dates"
            if all(DATETIME.match(t) for t in texts):
                return "DateTime" + bang, f"{presence}, ISO date-times"
            distinct = sorted(set(texts))
            if (
                2 <= len(distinct) <= MAX_ENUM
                and n >= 2 * len(distinct)
                and all(UPPER.match(t) and t not in ("TRUE", "FALSE", "NULL") for t in texts)
            ):
                enum = self.enum(owner + upper_first(gql_name(attribute)), distinct)
                return enum + bang, f"{presence}, {len(distinct)} distinct values: an enum"
            keyed = bool(k.values) and self.field_name(attribute) in k.values[0]
            if (
                2 <= len(distinct) <= MAX_ENUM
                and n >= 2 * len(distinct)
                and not keyed  # values in keys are ids
                and not set(distinct) & self.key_values
                and not re.search(r"(?i)(id|name)$", attribute)
                and all(WORDS.match(t) for t in distinct)
                and len({enum_value(t) for t in distinct}) == len(distinct)
            ):
                enum = self.enum(owner + upper_first(gql_name(attribute)), distinct)
                return enum + bang, (
                    f"{presence}, {len(distinct)} distinct values: an enum whose GraphQL values "
                    "map to the strings stored"
                )
            return "String" + bang, presence
        if kind == "N":
            numbers = [Decimal(v[1]) for v in values]
            if all(x == x.to_integral_value() and abs(x) < 2**31 for x in numbers):
                return "Int" + bang, f"{presence}, whole numbers"
            return "Float" + bang, f"{presence}, numbers with a fraction"
        if kind == "BOOL":
            return "Boolean" + bang, presence
        if kind == "SS":
            return "[String!]" + bang, f"{presence}, string sets"
        if kind == "NS":
            numbers = [Decimal(x) for v in values for x in v[1]]
            whole = all(x == x.to_integral_value() for x in numbers)
            return f"[{'Int' if whole else 'Float'}!]" + bang, f"{presence}, number sets"
        if kind == "L" and all(e.keys() == {"S"} for v in values for e in v[1]):
            return "[String!]" + bang, f"{presence}, lists of strings"
        return "JSON" + bang, f"{presence}, {'lists' if kind == 'L' else 'maps'}: JSON"

    def enum(self, name: str, values: list[str]) -> str:
        for existing, known in self.enums.items():
            if known == values:
                return existing
        self.enums[name] = values
        self.enum_evidence[name] = f"{len(values)} values seen"
        return name

    def claim(self, owner: str, name: str) -> str:
        taken = self.claimed.setdefault(owner, {"id"})
        candidate, n = name, 2
        while candidate in taken:
            candidate, n = f"{name}{n}", n + 1
        taken.add(candidate)
        return candidate

    # -- fields of a type --

    def fields_of(self, k: Kind) -> None:
        """Computes ``k.field_lines`` (name, declaration, comment) and refs."""
        key_names = set().union(*(v.keys() for v in k.values)) if k.values else set()
        self.claimed.setdefault(k.name, {"id"}).update(key_names)
        lines: list[tuple[str, str, str]] = []
        refs: list[tuple[str, str, str]] = []
        for attribute in self.field_attributes(k):
            name = self.field_name(attribute)
            typed = self.scalar(k, attribute, k.name)
            if typed is None:
                k.notes.append(f"binary attribute {attribute!r} left out (GraphQL has no bytes)")
                continue
            graphql, evidence = typed
            target = self.ref_target(k, attribute, name)
            holds = self.key_target(k, attribute) if target is None else None
            listed = self.list_target(k, attribute) if graphql.startswith("[String!]") else None
            name = self.claim(k.name, name) if name not in key_names else name
            if name == k.link and k.parent is not None:
                graphql = "ID!"
                evidence += f"; the id of the parent {k.parent.name}"
            elif listed:
                bang = "!" if graphql.endswith("!") else ""
                ref = self.claim(k.name, self.ref_stem(name, listed, many=True))
                refs.append(
                    (
                        ref,
                        f'{{type: "[{listed}!]{bang}", ref: {name}}}',
                        f"guess: every element of {name} is the id of a sampled {listed} item; "
                        f"{ref} resolves them (one batch)",
                    )
                )
            elif target:
                graphql = "ID" + ("!" if graphql.endswith("!") else "")
                ref = self.claim(k.name, self.ref_stem(name, target))
                evidence_ref = (
                    f"guess: every {name} is the id of a sampled {target} item; "
                    f"{ref} resolves it (batched)"
                )
                refs.append((ref, f"{{type: {target}, ref: {name}}}", evidence_ref))
            elif holds:
                ref = self.claim(k.name, self.ref_stem(name, holds))
                refs.append(
                    (
                        ref,
                        f"{{type: {holds}, ref: {{field: {name}, holds: key}}}}",
                        f"guess: every {name} is the whole key of a sampled {holds} item; "
                        f"{ref} resolves it (batched)",
                    )
                )
            elif attribute not in (self.info.pk, self.sk) and (
                name.endswith("Id") or attribute.endswith("_id")
            ):
                evidence += f"; {self.ref_hint(k, attribute)}"
            lines.append((name, field_decl(graphql, name, attribute), evidence))
        k_lines = lines + refs
        self.field_lines[k.name] = k_lines

    def ref_target(self, k: Kind, attribute: str, name: str) -> str | None:
        values = [r.text(attribute) for r in k.rows if attribute in r.attrs]
        if not values or not all(v for v in values):
            return None
        for type_, ids in self.ids.items():
            if type_ == k.name and (name == "id" or (bool(k.values) and name in k.values[0])):
                continue  # the item's own key
            if all(v in ids for v in values):
                return type_
        return None

    def ref_hint(self, k: Kind, attribute: str) -> str:
        values = [r.text(attribute) for r in k.rows if attribute in r.attrs]
        counts = {t: sum(1 for v in values if v in ids) for t, ids in self.ids.items()}
        best = max(counts, key=lambda t: counts[t], default=None)
        if best is not None and counts[best]:
            return (
                f"only {counts[best]} of {len(values)} values are ids of sampled {best} items: "
                "the sample may be too small to see this reference (sample more with --sample N)"
            )
        return "no sampled type has these ids: the sample may be too small to see a relation"

    def placeholder_type(self, k: Kind, name: str) -> str:
        declared = self.field_lines.get(k.name, []) + self.overloaded.get(k.name, [])
        for field_name, declaration, _ in declared:
            if field_name == name:
                match = re.search(r"(?:type: )?\"?\[?([A-Za-z]+)", declaration)
                return match.group(1) if match else ""
        return "ID" if name == "id" else "String"

    @staticmethod
    def ref_stem(name: str, target: str, many: bool = False) -> str:
        """A reference's field name: ``customerId`` / ``customerID`` → ``customer``,
        ``productIds`` → ``products``, else the target's name."""
        for suffix in ("Ids", "IDs", "_ids"):
            if many and name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)] + "s"
        for suffix in ("Id", "ID", "_id"):
            if not many and name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return plural(lower_first(target)) if many else f"{name}Node"

    def list_target(self, k: Kind, attribute: str) -> str | None:
        """The type whose sampled ids every element of a list or set attribute is: a ref over
        the list."""
        elements = {
            str(e["S"] if isinstance(e, dict) else e)
            for r in k.rows
            for e in r.attrs.get(attribute, ("", []))[1]
        }
        for type_, ids in self.ids.items():
            if elements and elements <= ids:
                return type_
        return None

    def key_target(self, k: Kind, attribute: str) -> str | None:
        """The type whose sampled items' whole keys (``customerID#VINET``) are an attribute's
        values: a ref that holds a key."""
        values = {r.text(attribute) for r in k.rows if attribute in r.attrs}
        if not values or None in values:
            return None
        for type_, keys in self.whole_keys.items():
            if type_ != k.name and values <= keys:
                return type_
        return None
