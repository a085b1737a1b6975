"""Fields of each kind and their GraphQL types, refs, enums."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ..compile import lower_first, upper_first
from .keys import Keys
from .objects import Disagree, ObjectDrafts
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
    key_text,
    n_items,
    plural,
)

__all__ = ["Fields"]

LISTS = ("[String!]", "[Int!]")  # lists and sets whose elements may be ids: refs over lists


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
        self.restart()

    def restart(self) -> None:
        """Forgets the stored objects drafted (a draft is rendered again after a refusal)."""
        self.drafts = ObjectDrafts(lambda: self.type_names | set(self.enums))
        self.entries: dict[tuple[str, str], str | None] = {}  # a map of maps' entries field

    def declare(self, graphql: str, name: str, attribute: str, owner: str) -> str:
        """A field's declaration, with ``entries`` where it reads a map of maps."""
        return field_decl(graphql, name, attribute, self.entries.get((owner, attribute)))

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
        what = "lists" if kind == "L" else "maps"
        if kind in ("M", "L"):
            try:
                graphql, found, entries = self.drafts.draft(owner, attribute, values)
            except Disagree as exc:
                return "JSON" + bang, f"{presence}, {what} whose shapes disagree ({exc}): JSON"
            self.entries[(owner, attribute)] = entries
            return graphql + bang, f"{presence}, guess: {found}"
        return "JSON" + bang, f"{presence}, {what}: JSON"

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
        pairs = self.composite_refs(k)
        paired = {a for _, links, _ in pairs for _, a in links}
        names: dict[str, str] = {}  # attribute -> its field's name
        for attribute in self.field_attributes(k):
            name = self.field_name(attribute)
            typed = self.scalar(k, attribute, k.name)
            if typed is None:
                k.notes.append(f"binary attribute {attribute!r} left out (GraphQL has no bytes)")
                continue
            graphql, evidence = typed
            target = self.ref_target(k, attribute, name)
            holds = self.key_target(k, attribute) if target is None else None
            listed = self.list_target(k, attribute) if graphql.startswith(LISTS) else None
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
                        f"guess: every element of {name} ({self.collection_kind(k, attribute)}) "
                        f"is the id of a sampled {listed} item; {ref} resolves them (one batch)",
                    )
                )
            elif target:
                if not graphql.startswith(("Int", "Float")):  # a number keeps its type
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
            elif (
                attribute not in (self.info.pk, self.sk)
                and attribute not in paired
                and (name.endswith("Id") or attribute.endswith("_id"))
            ):
                evidence += f"; {self.ref_hint(k, attribute)}"
            names[attribute] = name
            lines.append((name, self.declare(graphql, name, attribute, k.name), evidence))
        for target, links, evidence in pairs:
            stored = {p: names.get(a, a) for p, a in links}  # a key placeholder is a field too
            ref = self.claim(k.name, self.ref_stem(stored[links[-1][0]], target))
            decl = ", ".join(f"{p}: {f}" for p, f in stored.items())
            refs.append((ref, f"{{type: {target}, ref: {{{decl}}}}}", f"guess: {evidence}"))
        k_lines = lines + refs
        self.field_lines[k.name] = k_lines

    def ref_target(self, k: Kind, attribute: str, name: str) -> str | None:
        values = [r.text(attribute) for r in k.rows if attribute in r.attrs]
        if not values or not all(v for v in values):
            return None
        for type_, ids in self.ids.items():
            if type_ == k.name and (name == "id" or (bool(k.values) and name in k.values[0])):
                continue  # the item's own key
            if (
                type_ == k.name
                and k.values
                and all(
                    r.text(attribute) == v.get("id") for r, v in zip(k.rows, k.values, strict=False)
                )
            ):
                continue  # a copy of the item's own id (a tag's label ``red``), no reference
            if all(v in ids for v in values):
                return type_
        return None

    def composite_refs(self, k: Kind) -> list[tuple[str, list[tuple[str, str]], str]]:
        """References to a key of two placeholders (an order's item, ``{orderId, id}``): a pair
        of the kind's fields whose values are, item by item, a sampled item's key placeholders:
        (target, [(placeholder, attribute or own key placeholder)], evidence)."""
        out: list[tuple[str, list[tuple[str, str]], str]] = []
        own = list(k.values[0]) if k.values and len(k.values) == k.count else []
        columns: dict[str, list[str | None]] = {
            a: [r.text(a) for r in k.rows] for a in self.field_attributes(k)
        }
        stored = set(columns)
        columns |= {p: [v.get(p) for v in k.values] for p in own if p not in columns}
        for t in self.all_kinds:
            if t is k or t.implicit or t.role not in ("child", "keyed") or not t.values:
                continue
            placeholders = list(t.values[0])
            if len(placeholders) != 2 or any(list(v) != placeholders for v in t.values):
                continue
            keys: set[tuple[str | None, ...]] = {
                tuple(v[p] for p in placeholders) for v in t.values
            }
            found = self._pair(columns, placeholders, keys, stored)
            if found is not None:
                evidence = (
                    f"on all {n_items(k.count)}, ({', '.join(found)}) is the key "
                    f"({', '.join(placeholders)}) of a sampled {t.name} item: a reference to a "
                    "composite key (batched)"
                )
                out.append((t.name, list(zip(placeholders, found, strict=True)), evidence))
        return out

    @staticmethod
    def _pair(
        columns: Mapping[str, list[str | None]],
        placeholders: list[str],
        keys: set[tuple[str | None, ...]],
        stored: set[str],
    ) -> tuple[str, str] | None:
        """The two columns whose values are, row by row, among ``keys``; a column named as its
        placeholder first; at least one stored attribute (two key parts are the kind's own key)."""

        def order(n: int) -> list[str]:
            parts = {key[n] for key in keys}
            fit = [a for a, values in columns.items() if set(values) <= parts]
            return sorted(fit, key=lambda a: gql_name(a) != placeholders[n])

        for first in order(0):
            for second in order(1):
                if first == second or not ({first, second} & stored):
                    continue
                rows = list(zip(columns[first], columns[second], strict=True))
                if all(a is not None and b is not None for a, b in rows) and set(rows) <= keys:
                    return first, second
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
        if many:  # ``tags`` of Tag ids: ``tagNodes``, not a second ``tags``
            stem = plural(lower_first(target))
            return stem if stem != name else f"{lower_first(target)}Nodes"
        return f"{name}Node"

    def list_target(self, k: Kind, attribute: str) -> str | None:
        """The type whose sampled ids every element of a list, string set (SS) or number set
        (NS) attribute is: a ref over the list."""
        elements = {
            key_text("N", e) if kind == "NS" else str(e["S"] if isinstance(e, dict) else e)
            for r in k.rows
            for kind, value in [r.attrs.get(attribute, ("", []))]
            for e in value
        }
        for type_, ids in self.ids.items():
            if elements and elements <= ids:
                return type_
        return None

    @staticmethod
    def collection_kind(k: Kind, attribute: str) -> str:
        """What a list attribute is stored as: ``a number set (NS)``, ``a string set (SS)``,
        ``a list (L)``."""
        kinds = {r.attrs[attribute][0] for r in k.rows if attribute in r.attrs}
        names = {"NS": "a number set (NS)", "SS": "a string set (SS)", "L": "a list (L)"}
        return " or ".join(names.get(x, x) for x in sorted(kinds))

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
