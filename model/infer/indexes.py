"""Index writes of each kind and the access patterns that read them."""

from __future__ import annotations

import re

from ..compile import lower_first, upper_first
from ..templates import Template
from .fields import Fields
from .libraries import ELECTRODB, electro_template
from .shapes import Kind
from .values import (
    DATE,
    DATETIME,
    NAME,
    SEPARATOR_CHARS,
    Row,
    field_decl,
    gql_name,
    n_items,
    plural,
    yaml_str,
)

__all__ = ["Indexes"]


# the field an overloaded attribute holds, by its kind of value (AWS's `Data`: a name, a date)
MEANINGS = {
    "String": "name",
    "Date": "date",
    "DateTime": "time",
    "Int": "number",
    "Float": "amount",
}


NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class Indexes(Fields):
    # -- indexes and access patterns --

    def index_templates(self, k: Kind) -> dict[str, tuple[str, str | None, int | None, str]]:
        out: dict[str, tuple[str, str | None, int | None, str]] = {}
        for index, (h, r) in self.info.indexes.items():
            if index in self.inverted:
                continue
            rows = [
                row
                for row in k.rows
                if self.value_of(row, h) is not None
                and (r is None or self.value_of(row, r) is not None)
            ]
            if not rows:
                continue
            if len(rows) < k.count:
                k.notes.append(
                    f"{index}: {h} on {len(rows)} of {k.count} items (a sparse index?); "
                    "not declared, as Edgewise writes index keys on every save"
                )
                continue
            self.shards = None
            templates: list[str | None] = []
            for attribute in (h, r):
                if attribute is None:
                    templates.append(None)
                    continue
                own = {self.info.pk: k.pk_template, self.sk: k.sk_template}.get(attribute)
                if own and k.role != "edge":  # an index keyed on the table's own key
                    templates.append(own)
                    continue
                values = [self.value_of(row, attribute) or "" for row in rows]
                if self.library is not None and self.library.name == ELECTRODB:
                    electro = electro_template(values, rows, k.tag or "")
                    if electro is not None:
                        templates.append(electro)
                        continue
                prefix = ""
                heads = {self.prefix(v) for v in values}
                if len(heads) == 1:
                    prefix = heads.pop()
                segments = [self.split(v, prefix) for v in values]
                names = None
                if len({len(s) for s in segments}) == 1:
                    names = self.match(k, segments, k.values, set())
                if names is None and not prefix:
                    names = self.overloaded_field(k, attribute, index)
                elif names is None:  # GSI1SK = NAME#John: a field named after its prefix
                    names = self.prefixed_field(k, attribute, index, prefix, values)
                if names is None:
                    k.notes.append(
                        f"{index}: a part of {attribute} (e.g. {values[0]!r}) matches no "
                        "attribute or key part; declare its template by hand"
                    )
                    break
                templates.append(prefix + self.sep.join(names))
            else:
                pk_t, sk_t = templates
                assert pk_t is not None
                if "{shard}" in (sk_t or "") or (self.shards and "{shard}" not in pk_t):
                    k.notes.append(f"{index}: shards seen outside its partition key; not declared")
                    continue
                evidence = f"{h}{', ' + r if r else ''} on all {n_items(k.count)}"
                if self.shards:
                    evidence += f"; {{shard}} = crc32(id) mod {self.shards} fits every item"
                out[index] = (pk_t, sk_t, self.shards, evidence)
        return out

    def value_of(self, row: Row, attribute: str) -> str | None:
        """An attribute's text, the table's own keys included (an index keyed on the sort key)."""
        if attribute == self.info.pk:
            return row.pk
        if attribute == self.sk:
            return row.sk
        return row.text(attribute)

    def overloaded_field(self, k: Kind, attribute: str, index: str) -> list[str] | None:
        """An index attribute holding a value of the kind's own that no other attribute holds
        (an overloaded ``Data``): read back into a field of the type, the index template
        being that field."""
        if k.role == "edge" or attribute in (self.info.pk, self.sk):
            return None
        known = self.overloaded.setdefault(k.name, [])
        for name, _, comment in known:
            if f"overloaded: {attribute} (" in comment:
                return ["{" + name + "}"]
        typed = self.scalar(k, attribute, k.name)
        if typed is None:
            return None
        meaning = MEANINGS.get(typed[0].rstrip("!"))
        texts = [r.text(attribute) or "" for r in k.rows if attribute in r.attrs]
        if meaning == "name" and all(NUMBER.match(t) for t in texts):
            meaning = "amount"  # digits in a string (AWS's quarterly sales, `5000`)
        name = self.claim(k.name, meaning or gql_name(attribute))
        comment = (
            f"{typed[1]}; overloaded: {attribute} ({index}'s key) holds this type's own value, "
            "no other attribute holds it: "
            + (f"named after its kind of value ({meaning})" if meaning else "rename it")
        )
        known.append((name, field_decl(typed[0], name, attribute), comment))
        return ["{" + name + "}"]

    def prefixed_field(
        self, k: Kind, attribute: str, index: str, prefix: str, values: list[str]
    ) -> list[str] | None:
        """An index attribute holding a literal prefix and a value no other attribute holds
        (``GSI1SK = NAME#John``): a field named after the prefix (``name``), the index template
        ``NAME#{name}``. The value is stored nowhere else, and a field cannot be read out of an
        index key, so the field is nullable over an attribute of its own, and said so."""
        rests = [v[len(prefix) :] for v in values]
        word = prefix.rstrip(SEPARATOR_CHARS)
        if k.role == "edge" or not all(rests) or not NAME.match(word):
            return None
        if any(self.sep in r for r in rests):  # parts of several values: not one field's
            return None
        if self._attribute(k, rests, set()) is not None:
            return None  # another attribute holds it: not this rule's
        known = self.overloaded.setdefault(k.name, [])
        for name, _, comment in known:
            if f"written into {attribute} (" in comment:
                return ["{" + name + "}"]
        kind = "Date" if all(DATE.match(r) for r in rests) else "String"
        kind = "DateTime" if kind == "String" and all(DATETIME.match(r) for r in rests) else kind
        name = self.claim(k.name, gql_name(word))
        example = values[0]
        comment = (
            f"guess: written into {attribute} ({index}'s key) as {prefix}{{{name}}}: on "
            f"{n_items(len(values))} {attribute} holds {prefix!r} and a value no other attribute "
            f"holds ({example!r}), so the field is named after the prefix. An index key is not "
            f"read back into a field: null on items that keep it only in {attribute}, and an "
            f"update leaving it unset leaves the item out of {index}; copy {attribute}'s value "
            f"after {prefix!r} into an attribute {name} before serving writes"
        )
        known.append((name, field_decl(kind, name, name), comment))
        return ["{" + name + "}"]

    def index_lines(self, k: Kind, queries: list[str]) -> list[str]:
        out = []
        if self.bare:
            queries += self.partition_query(k)
        for index, (pk_t, sk_t, shards, evidence) in self.index_templates(k).items():
            entry = f"pk: {yaml_str(pk_t)}" + (f", sk: {yaml_str(sk_t)}" if sk_t else "")
            entry += f", shards: {shards}" if shards else ""
            out.append(f"      {yaml_str(index)}: {{{entry}}}  # guess: {evidence}")
            own = pk_t == k.sk_template and self.info.indexes[index][0] == self.sk
            if own and (k.role == "node" or k.own):
                continue  # its partition is the item's own key: the lookup reads it
            queries += self.query_for(k, index, pk_t, sk_t)
        if self.between_partitions(k, self.all_kinds):
            for index in self.inverted:  # the reverse lookup: cs#201's students
                partition = Template.compile(k.sk_template).placeholders
                queries += self.query_lines(
                    k.name, None, index, k.sk_template, k.pk_template, k, list(partition)
                )
        return out

    def partition_query(self, k: Kind) -> list[str]:
        """A table with a number or binary key: the items of one partition in sort-key order
        (AWS's CustomerOrders: a customer's orders by OrderId), bounded where the key is a
        number."""
        pk_names = Template.compile(k.pk_template).placeholders
        sk_names = Template.compile(k.sk_template).placeholders
        key = self.claim("Query", f"{plural(lower_first(k.name))}By{upper_first(pk_names[0])}")
        between = ", between: [from, to]" if self.bare.get(self.sk) == "N" else ""
        return [
            f"  {key}:  # guess: the {k.name} items of one {self.info.pk} partition, in "
            f"{self.sk} order (the table's own key)",
            f"    type: {k.name}",
            f"    partition: {yaml_str(k.pk_template)}",
            f"    sort: {{template: {yaml_str(k.sk_template)}{between}}}"
            if len(sk_names) == 1
            else f"    sort: {{template: {yaml_str(k.sk_template)}}}",
        ]

    def query_for(self, k: Kind, index: str, pk_t: str, sk_t: str | None) -> list[str]:
        placeholders = [p for p in Template.compile(pk_t).placeholders if p != "shard"]
        on = None
        partition = pk_t
        if len(placeholders) == 1:
            target = self.ref_type_of(k, placeholders[0])
            if target:
                on = target
                partition = pk_t.replace("{" + placeholders[0] + "}", "{id}")
        if index in self.info.local and sk_t:  # named after what it sorts by
            placeholders = list(Template.compile(sk_t).placeholders[:1])
        return self.query_lines(k.name, on, index, partition, sk_t, k, placeholders)

    def ref_type_of(self, k: Kind, name: str) -> str | None:
        if k.parent is not None and name == k.link:
            return k.parent.name
        for _, declaration, _ in self.field_lines.get(k.name, []):
            match = re.match(r"\{type: (\w+), ref: (\w+)\}", declaration)
            if match and match.group(2) == name:
                return match.group(1)
        return None

    def query_lines(
        self,
        result: str,
        on: str | None,
        index: str,
        partition: str,
        sort: str | None,
        k: Kind,
        placeholders: list[str],
    ) -> list[str]:
        base = plural(lower_first(result))
        if on:
            name = self.claim(on, base)
            key = self.claim("Query", f"{name}Of{on}")
        else:
            by = placeholders or (
                [p for p in Template.compile(sort).placeholders if p != "id"][:1] if sort else []
            )
            key = self.claim(
                "Query", base + "By" + "And".join(upper_first(p) for p in by) if by else base
            )
        lines = [f"  {key}:  # guess: {result} items are written to {index} this way"]
        if on:
            lines += [f"    on: {on}", f"    field: {name}"]
        lines += [
            f"    type: {result}",
            f"    index: {yaml_str(index)}",
            f"    partition: {yaml_str(partition)}",
        ]
        if sort:
            order, between = "asc", ""
            enums_first = True
            for p in Template.compile(sort).placeholders:
                type_ = self.placeholder_type(k, p)
                if type_ in self.enums and enums_first:
                    continue
                enums_first = False
                if type_ in ("Date", "DateTime", "Int", "Float") and p != "id":
                    between = ", between: [from, to]"
                    order = "desc"
                break
            lines.append(f"    sort: {{template: {yaml_str(sort)}{between}}}")
            if order == "desc":
                lines.append("    order: desc  # guess: newest or largest first")
        return lines
