"""The draft's comments beyond each guess's own: the header (what was read, what was seen too
rarely, the library that wrote the table, its collections, lower-cased keys) and the comments
on kinds whose partitions are implicit types."""

from __future__ import annotations

import re

from .indexes import Indexes
from .libraries import ELECTRODB
from .shapes import Kind
from .values import n_items, yaml_str

__all__ = ["RARE", "Header"]

RARE = 3  # a kind of fewer sampled items is named in the header as too rare to trust


class Header(Indexes):
    """Comments of the draft as a whole."""

    def implicit_lines(self, k: Kind, kinds: list[Kind]) -> list[str]:
        """Comments on a keyed kind whose partition is never an item of its own."""
        ends = [f'"{k.pk_prefix}…"']
        if self.between_partitions(k, kinds):
            ends.append(f'"{k.sk_prefix}…"')
        keys = " and ".join(ends)
        lines = [
            f"    # implicit type: {keys} keys appear only inside other items' keys "
            f"({n_items(k.count)}); declare {'them' if len(ends) > 1 else 'it'} with "
            "`implicit: true` once supported, and this becomes "
            + ("an edge between them" if len(ends) > 1 else "its child")
        ]
        if not self.complete:
            lines.append(
                f'    # no item has pk = sk = "{k.pk_prefix}…": if that is a type, the sample '
                "may be too small to see it (sample more), and this becomes its child"
            )
        return lines

    def implicit_block(self, k: Kind, kinds: list[Kind]) -> list[str]:
        """An implicit type: no item of its own, its keys seen inside other items' keys."""
        users = [c for c in kinds if k in (c.source, c.target, c.parent)]
        where = sum(c.count for c in users)
        out = [
            f'  {k.name}:  # guess: an implicit node: "{k.pk_prefix}…" keys appear only inside '
            f"other items' keys ({n_items(where)}, {len(k.seen)} ids); {k.notes[0]}"
        ]
        if not self.complete:
            out.append(
                f'    # no sampled item has pk = sk = "{k.pk_prefix}…": if some do, the sample '
                "may be too small to see them (sample more) and this is a node with items"
            )
        out += [f"    key: {yaml_str(k.pk_template)}", "    implicit: true"]
        return out

    def library_lines(self, kinds: list[Kind]) -> list[str]:
        """The header's word on the library that wrote the table, and on lower-cased keys."""
        if self.library is None:
            return []
        entities = ", ".join(k.tag or k.name for k in kinds if k.tag)
        article = "An" if self.library.name[0] in "AEIOU" else "A"
        lines = [
            f"# {article} {self.library.name} table ({self.library.evidence}): its entities "
            f"({entities}) are the types below, {self.library.type_attribute} their type attribute."
        ]
        lines += [
            f"# Collection {name!r}: {', '.join(types)} share {index}'s partition {pk_t!r}: "
            f"the query {name} below lists them together (each also has its own query)."
            for name, index, pk_t, types in self.collections(kinds)
        ]
        return lines

    def collections(self, kinds: list[Kind]) -> list[tuple[str, str, str, list[str]]]:
        """ElectroDB collections: entities whose index keys share a partition template under a
        ``$<collection>#`` sort key (``$workplaces#employee_1#…``, ``$workplaces#office_1``):
        (collection, index, partition template, types)."""
        if self.library is None or self.library.name != ELECTRODB:
            return []
        found: dict[tuple[str, str, str], list[str]] = {}
        for k in kinds:
            if k.role not in ("node", "child", "keyed"):
                continue
            for index, (pk_t, sk_t, _, _) in self.index_templates(k).items():
                head = (sk_t or "").split("#")[0]
                if head.startswith("$") and not re.match(r"^\$\w+_\d+$", head):
                    found.setdefault((head[1:], index, pk_t), []).append(k.name)
        return [(n, i, p, types) for (n, i, p), types in found.items() if len(types) > 1]

    def key_casing(self, kinds: list[Kind]) -> tuple[str, str]:
        """(``lower`` or ``upper``, evidence) when a library's keys hold values cased from
        their attributes (``jlowe`` for ``JLowe``) and no key value is otherwise cased; else
        ("", "")."""
        if self.library is None:
            return "", ""
        for casing, case in (("lower", str.lower), ("upper", str.upper)):
            example, ok = "", True
            for k in kinds:
                if k.role not in ("node", "child", "keyed"):
                    continue
                for r, values in zip(k.rows, k.values, strict=False):
                    for name, value in values.items():
                        if case(value) != value:
                            ok = False
                        stored = r.text(name)
                        if stored is not None and stored != value and case(stored) == value:
                            example = example or f"{value!r} for {name} {stored!r}"
            if ok and example:
                return casing, f"keys hold {casing}-cased values ({example}), attributes do not"
        return "", ""

    def key_attribute(self, attribute: str) -> str:
        """A key attribute as the table declares it: its name, or ``{name, type: N}``."""
        kind = self.info.key_types.get(attribute, "S")
        return (
            yaml_str(attribute) if kind == "S" else f"{{name: {yaml_str(attribute)}, type: {kind}}}"
        )

    def index_declarations(self) -> list[str]:
        """``table.indexes``: each index's keys (typed), whether local, what it projects."""
        if not self.info.indexes:
            return []
        out = ["  indexes:"]
        for name, (h, r) in self.info.indexes.items():
            keys = f"partitionKey: {self.key_attribute(h)}"
            keys += f", sortKey: {self.key_attribute(r)}" if r else ""
            projection = self.info.projections.get(name, "ALL")
            notes = []
            if name in self.info.local:
                keys += ", local: true"
                notes.append("DescribeTable lists it among LocalSecondaryIndexes")
            if isinstance(projection, tuple):
                keys += f", projection: [{', '.join(yaml_str(a) for a in projection)}]"
                notes.append("it projects these attributes besides the keys (INCLUDE)")
            elif projection != "ALL":
                keys += f", projection: {projection}"
            if name in self.inverted:
                notes.append("the table's keys swapped: reverse edges")
            elif not any(self.value_of(row, h) is not None for row in self.rows):
                notes.append(f"no sampled item carries {h}: its uses are unknown")
            note = f"  # {'; '.join(notes)}" if notes else ""
            out.append(f"    {yaml_str(name)}: {{{keys}}}{note}")
        return out

    def header(self, kinds: list[Kind]) -> str:
        total = self.info.item_count
        scope = f"about {total} items" if total else "an unknown number of items"
        first = self.origin or (
            f"# Drafted by `edgewise infer` from {n_items(self.read_count)} read of table "
            f"{self.info.name!r} ({scope}"
            + ("; the whole table)" if self.complete else "; a sample)")
            + "."
        )
        lines = [
            first,
            "# Every guess carries a comment with its evidence. Edit the names, then run",
            "# `edgewise check-model FILE` and `edgewise serve --model FILE`.",
        ]
        lines += self.library_lines(kinds)
        if not self.complete:
            lines.append(
                "# Types, edges and values that no sampled item shows are missing: "
                "sample more with --sample N."
            )
            rare = [k for k in kinds if k.count < RARE and not k.implicit]
            if rare:
                seen = ", ".join(f"{k.shape()} ({n_items(k.count)})" for k in rare)
                lines.append(f"# Seen too rarely to trust (under {RARE} items each): {seen}.")
        lines += [f"# note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"
