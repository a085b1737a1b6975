"""The model file's text: header, table, enums, types, edges and queries, each guess commented."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..compile import lower_first
from ..load import ModelError, parse_model
from .edges import Edges
from .shapes import Kind
from .table import Draft, InferError, TableInfo
from .values import (
    SEPARATOR_CHARS,
    UPPER,
    enum_value,
    first_placeholder,
    gql_name,
    n_items,
    plural,
    type_name,
    yaml_str,
)

__all__ = ["Renderer", "infer"]

RETRIES = 4  # drafts re-rendered without what check-model refused


class Renderer(Edges):
    """The reading rendered as a commented model file."""

    def run(self) -> Draft:
        kinds = self.read()
        if not any(k.role in ("node", "child", "keyed") for k in kinds):
            reasons = "; ".join(
                f"{n_items(k.count)} like {self.info.pk}={k.rows[0].pk!r}, "
                f"{self.sk}={k.rows[0].sk!r}: {k.notes[0] if k.notes else k.role}"
                for k in kinds
            )
            raise InferError(
                f"no item of table {self.info.name!r} fits a rule of this draft ({reasons}); "
                "Edgewise recognises types by key prefixes such as 'ORDER#' or by a type "
                "attribute: write the model by hand (see `edgewise model-schema`)"
            )
        base, kept = list(self.notes), {id(k): list(k.notes) for k in kinds}
        for attempt in range(RETRIES + 1):
            self.notes = list(base)
            for k in kinds:
                k.notes = list(kept[id(k)])
            self.claimed, self.enums, self.enum_evidence, self.overloaded = {}, {}, {}, {}
            self.restart()
            body = self.render(kinds)
            for k in kinds:
                if k.role == "unexplained" and k.rows:
                    example = k.rows[0]
                    self.notes.append(
                        f"{n_items(k.count)} left out (e.g. {self.info.pk}={example.pk!r}, "
                        f"{self.sk}={example.sk!r}): {k.notes[0]}"
                    )
            text = self.header(kinds) + body
            try:
                parse_model(text, "<inferred>", self.info.name)
                break
            except ModelError as exc:
                if attempt == RETRIES or not self.drop_refused(kinds, exc.lines, kept):
                    # a bug of these rules: say so rather than print a bad file
                    raise InferError(
                        "the drafted model does not pass check-model (please report this):\n"
                        + "\n".join(exc.lines)
                        + "\n--- draft ---\n"
                        + text
                    ) from None
        return Draft(text, tuple(self.notes))

    def drop_refused(
        self, kinds: list[Kind], problems: Sequence[str], kept: dict[int, list[str]]
    ) -> bool:
        """Leaves out the types and edges check-model refused (two guesses that overlap, say),
        and what hangs on them, each with check-model's word as its note; False when a problem
        names no type or edge of the draft."""
        named = {k.name: k for k in kinds if k.role in ("node", "child", "keyed", "edge")}
        refused: dict[str, str] = {}
        for line in problems:
            match = re.match(r"^(?:types|edges)\.(\w+)\S* \(line \d+\): (.*)$", line)
            if match is None or match.group(1) not in named:
                return False
            refused.setdefault(match.group(1), match.group(2))
        changed = True
        while changed:  # children and edges of what is left out go too
            changed = False
            for k in named.values():
                ends = [e for e in (k.parent, k.source, k.target) if e is not None]
                gone = [e for e in ends if e.name in refused]
                if k.name not in refused and gone and all(e.implicit for e in gone):
                    self.unhang(k, named, kept)  # a keyed kind again, as without implicit nodes
                    changed = True
                elif k.name not in refused and gone:
                    refused[k.name] = "it hangs on a type left out"
                    changed = True
        for name, problem in refused.items():
            k = named[name]
            k.role = "unexplained"
            kept[id(k)] = [f"check-model refused its guess ({problem})", *kept[id(k)]]
            self.ids.pop(name, None)
        return True

    def unhang(self, k: Kind, named: dict[str, Kind], kept: dict[int, list[str]]) -> None:
        """An edge or child of an implicit node check-model refused: a keyed kind again."""
        k.role, k.parent, k.source, k.target = "keyed", None, None, None
        kept[id(k)] = [*kept[id(k)], "check-model refused its implicit ends: a keyed node"]
        self.key_templates(k)
        base = type_name(k.pk_prefix.rstrip(SEPARATOR_CHARS)) + type_name(k.sk_prefix or "Item")
        name, n = base, 2
        while name in named or name in self.type_names:
            name, n = f"{base}{n}", n + 1
        k.name = name
        self.type_names.add(name)

    def render(self, kinds: list[Kind]) -> str:
        out: list[str] = []
        w = out.append
        table = [
            "table:",
            f"  name: {yaml_str(self.info.name)}",
            f"  partitionKey: {self.key_attribute(self.info.pk)}",
            f"  sortKey: {self.key_attribute(self.sk)}",
        ]
        if self.type_attribute:
            table.append(
                f"  typeAttribute: {yaml_str(self.type_attribute)}  # guess: {self.type_evidence}"
            )
        for attribute, values in self.passed_over:
            table.append(
                f"  # not the type attribute: {attribute} ({', '.join(values)}, one value per key "
                "shape) names a state or status; the keys already tell the types apart"
            )
        if self.label_attribute:
            table.append(
                f"  labelAttribute: {yaml_str(self.label_attribute)}  # guess: on edge items only"
            )
        casing, casing_evidence = self.key_casing(kinds)
        if casing:
            table.append(f"  keyCasing: {casing}  # guess: {casing_evidence}")
        if self.version:
            table.append(
                f"  versionAttribute: {yaml_str(self.version)}  # guess: {self.version_evidence}"
            )
        stored = [r for k in kinds if k.role == "node" for r in k.rows if "id" in r.attrs]
        store_keys = bool(stored) and all(
            r.text("id") == r.pk.split(self.sep, 1)[-1] for r in stored
        )
        if store_keys:
            table.append(
                f"  storeKeyFields: true  # guess: {len(stored)} node items carry their id "
                "as an attribute"
            )
        if self.timestamps:
            table.append(f"  timestamps: true  # guess: {self.stamps_evidence}")
        elif self.stamps:
            created, modified = self.stamps
            table.append(
                f"  timestamps: {{created: {created}, modified: {modified}}}  # guess: "
                f"{self.stamps_evidence}"
                + (f", {self.library.name}'s stamps" if self.library is not None else "")
            )
        types_out: list[str] = []
        edges_out: list[str] = []
        queries_out: list[str] = []
        self.claimed["Query"] = {"id", "node", "nodes"}
        for k in kinds:
            if k.role in ("node", "child", "keyed"):
                self.claimed["Query"].add(lower_first(k.name))
                self.fields_of(k)
        for k in kinds:
            if k.role in ("node", "child", "keyed"):
                types_out += self.type_block(k, kinds, queries_out)
        for k in kinds:
            if k.role == "edge":
                edges_out += self.edge_block(k, queries_out)
        for name, index, pk_t, types in self.collections(kinds):
            queries_out += self.union_lines(name, index, pk_t, types)
        table += self.index_declarations()
        out += table
        if self.enums:
            w("enums:")
            for name, values in self.enums.items():
                if all(UPPER.match(v) for v in values):
                    listed = f"[{', '.join(values)}]"
                else:  # GraphQL value: the string stored
                    listed = (
                        "{" + ", ".join(f"{enum_value(v)}: {yaml_str(v)}" for v in values) + "}"
                    )
                w(f"  {name}: {listed}  # guess: {self.enum_evidence[name]}")
        w("types:")
        out += types_out
        if edges_out:
            w("edges:")
            out += edges_out
        if self.drafts.objects:
            w("objects:")
            for drafted in self.drafts.objects.values():
                also = f"; also {', '.join(drafted.uses[1:])}" if len(drafted.uses) > 1 else ""
                w(f"  {drafted.name}:  # guess: {drafted.evidence}{also}")
                w("    stored: true")
                w("    fields:")
                out += [f"      {n}: {d}  # {c}" for n, d, c in drafted.fields]
        if queries_out:
            w("queries:")
            out += queries_out
        return "\n".join(out) + "\n"

    def type_block(self, k: Kind, kinds: list[Kind], queries: list[str]) -> list[str]:
        if k.implicit:
            return self.implicit_block(k, kinds)
        out: list[str] = []
        evidence = f"{n_items(k.count)}, {k.shape()}"
        if k.tag:
            evidence += f", facet {k.tag}" if self.faceted else f", {self.type_attribute} = {k.tag}"
            if self.faceted and k.value:
                evidence += f", {self.type_attribute} = {k.value}"
        if k.count == 1:
            evidence += "; one item only: a thin guess"
        what = {
            "node": "a node",
            "child": f"a child of {k.parent.name if k.parent else ''}",
            "keyed": "a keyed node (no parent node item seen)",
        }[k.role]
        out.append(f"  {k.name}:  # {what}: {evidence}")
        own = {c.pk_prefix for c in kinds if c.role == "node" or c.own}
        if k.own:
            out.append(
                f'    # the item of its "{k.pk_prefix}…" partition (its sort key repeats the '
                "partition's value on every item): a parent of the partition's other items "
                "once a key of two templates can be one"
            )
        elif k.role == "keyed" and k.pk_prefix not in own | {""} and self.library is None:
            out += self.implicit_lines(k, kinds)
        for note in k.notes:
            out.append(f"    # {note}")
        if k.role == "node" and k.pk_template.endswith("{id}") and not k.constant:  # the global id
            out.append(f"    key: {yaml_str(k.pk_template)}")
        else:
            out.append(f"    key: {{pk: {yaml_str(k.pk_template)}, sk: {yaml_str(k.sk_template)}}}")
        if k.value and k.value != k.name and self.type_attribute:
            out.append(f"    typeValue: {yaml_str(k.value)}")
        if k.role == "child" and k.parent is not None:
            parent = k.parent
            field_name = self.claim(k.name, lower_first(parent.name))
            collection = self.claim(parent.name, plural(lower_first(k.name)))
            order = "asc"
            first = first_placeholder(k.sk_template)
            first_type = self.placeholder_type(k, first) if first else ""
            comment = f"guess: {n_items(k.count)} under {parent.name}'s partition"
            if first_type.startswith(("Date", "DateTime")):
                order = "desc"
                comment += f"; newest first, as the sort key starts with {{{first}}}"
            counter = f"n_{k.tag or k.name}"
            count = ""
            if any(counter in r.attrs for r in parent.rows):
                count = ", count: counter"
                comment += f"; {parent.name} items carry {counter}"
            out.append(
                f"    parent: {{type: {parent.name}, field: {field_name}, "
                f"collection: {collection}, order: {order}{count}}}  # {comment}"
            )
        printed = len(k.notes)
        indexes = self.index_lines(k, queries)  # first: it may read an overloaded attribute
        later = list(dict.fromkeys(n for n in k.notes[printed:] if n not in k.notes[:printed]))
        lines = self.field_lines.get(k.name, []) + self.overloaded.get(k.name, [])
        claims = [c for c in kinds if c.role == "claim" and c.parent is k]
        if lines or claims:
            out.append("    fields:")
            for name, declaration, comment in lines:
                claim = next((c for c in claims if gql_name(c.link) == name), None)
                if claim is not None:
                    lowered = all(
                        (v := r.pk[len(claim.pk_prefix) :]) == v.lower() for r in claim.rows
                    )
                    unique = (
                        f"{{key: {yaml_str(claim.pk_prefix + '{' + name + '}')}"
                        + (", caseInsensitive: true" if lowered else "")
                        + (f", owner: {yaml_str(claim.owner)}" if claim.owner != "owner" else "")
                        + (
                            f", typeValue: {yaml_str(claim.value)}"
                            if claim.value and self.type_attribute
                            else ""
                        )
                        + "}"
                    )
                    type_ = re.sub(r"^\{type: |, attribute: .*\}$|\}$", "", declaration)
                    stored = (
                        declaration[declaration.index(", attribute") : -1]
                        if (", attribute" in declaration)
                        else ""
                    )
                    declaration = f"{{type: {type_}{stored}, unique: {unique}}}"
                    comment += f"; unique: {claim.notes[0]}"
                out.append(f"      {name}: {declaration}  # {comment}")
        out += [f"    # {note}" for note in later]  # what the index keys did not show
        if indexes:
            out.append("    indexes:")
            out += indexes
        return out


def infer(
    info: TableInfo,
    items: Sequence[Mapping[str, Any]],
    complete: bool = False,
    facets: Sequence[str | None] | None = None,
    origin: str = "",
) -> Draft:
    """Draft a model from DescribeTable's :class:`TableInfo` and sampled items (DynamoDB JSON).
    ``complete`` says the sample is the whole table. ``facets`` (one per item) groups items
    by a name known beforehand (NoSQL Workbench's facets) instead of a type attribute;
    ``origin`` replaces the header's first line. Raises :class:`InferError`."""
    return Renderer(info, items, complete, facets, origin).run()
