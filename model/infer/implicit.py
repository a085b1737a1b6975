"""Implicit nodes: key prefixes that appear only inside other items' keys (seed 002's students
and courses, which exist only as the keys of their enrolments), drafted as ``implicit: true``
types, the items keyed under them as their edges or children."""

from __future__ import annotations

import re

from .roles import Roles
from .shapes import Kind
from .values import ID, SEPARATOR_CHARS, n_items, type_name

__all__ = ["Implicit"]

ID_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z0-9]*?)_?(?:ID|Id|id)$")


class Implicit(Roles):
    """Classification with implicit nodes."""

    def classify(self, kinds: list[Kind]) -> None:
        super().classify(kinds)
        if self.implicit_nodes(kinds):
            self.name_kinds(kinds)

    def implicit_nodes(self, kinds: list[Kind]) -> bool:
        """Turns keyed kinds under prefixes no item owns into edges between (or children of)
        implicit nodes; True when it made any."""
        own = {c.pk_prefix for c in kinds if c.role == "node" or c.own}
        made: dict[str, Kind] = {}
        nodes = {c.pk_prefix: c for c in kinds if c.role == "node" and c.pk_prefix}
        changed = False
        node_ids = {
            r.pk[len(c.pk_prefix) :] for c in kinds if c.role == "node" and c.same for r in c.rows
        }
        for k in list(kinds):
            if k.role != "keyed" or k.own or not k.pk_prefix or k.pk_prefix in own:
                continue
            sources = [r.pk[len(k.pk_prefix) :] for r in k.rows]
            targets = [r.sk[len(k.sk_prefix) :] for r in k.rows]
            if not all(ID.match(i) for i in sources):
                continue
            if k.tag is not None and not self.faceted and not self.library:
                # the type attribute names it: a typed item under a partition no item owns,
                # unless its partitions are the ids of sampled nodes (`REP#e1` of an employee
                # `EMP#e1`: a keyed node with a reference, as in the order-entry model)
                if set(sources) <= node_ids:
                    continue
                k.role, k.parent = "child", self._implicit(k.pk_prefix, self.info.pk, made, kinds)
                k.notes.append(
                    f'no item owns "{k.pk_prefix}…" and its {self.type_attribute} names it a '
                    f"type ({k.tag}): a child of an implicit type"
                )
                changed = True
                continue
            if k.tag is not None or not k.sk_prefix:
                continue
            target = nodes.get(k.sk_prefix)
            shared = any(n > 1 for n in _counts(targets).values())
            same = self._same_prefix(k, sources, targets)  # follows: USER#a / USER#b
            if target is not None and target.same and target.rows:
                keys = {r.pk for r in target.rows}
                if not all(r.sk in keys for r in k.rows) or k.sk_prefix == k.pk_prefix:
                    continue
                source = self._implicit(k.pk_prefix, self.info.pk, made, kinds)
                k.role, k.source, k.target = "edge", source, target
                k.notes.append(
                    f"every sort key is the key of a sampled {k.sk_prefix}… item and no item "
                    f'owns "{k.pk_prefix}…": an edge from an implicit type'
                )
            elif (
                k.sk_prefix not in own
                and all(ID.match(i) for i in targets)
                and (shared or self.inverted or same)
            ):
                if k.sk_prefix == k.pk_prefix and not same:
                    continue
                source = self._implicit(k.pk_prefix, self.info.pk, made, kinds)
                target = self._implicit(k.sk_prefix, self.sk, made, kinds)
                k.role, k.source, k.target = "edge", source, target
                why = same or ("a sort-key value under several partitions" if shared else "")
                why = why or (
                    f"{self.inverted[0]} (the table's keys swapped) reads them back"
                    if self.inverted
                    else same
                )
                between = (
                    f'between "{k.pk_prefix}…" keys that no item owns: an edge between two '
                    "nodes of one implicit type"
                    if source is target
                    else f'between "{k.pk_prefix}…" and "{k.sk_prefix}…" keys that no item owns: '
                    "an edge between two implicit types"
                )
                k.notes.append(f"{n_items(k.count)} {between} ({why})")
            else:
                k.role, k.parent = "child", self._implicit(k.pk_prefix, self.info.pk, made, kinds)
                k.notes.append(
                    f'no item owns "{k.pk_prefix}…" and each sort key is under one partition: '
                    "a child of an implicit type"
                )
            changed = True
        for node in made.values():
            seen = {
                r.pk[len(node.pk_prefix) :] if r.pk.startswith(node.pk_prefix) else ""
                for c in kinds
                if node in (c.source, c.parent, c.target)
                for r in c.rows
            } | {
                r.sk[len(node.pk_prefix) :]
                for c in kinds
                if c.target is node
                for r in c.rows
                if r.sk.startswith(node.pk_prefix)
            }
            node.seen = sorted(seen - {""})
        return changed

    @staticmethod
    def _same_prefix(k: Kind, sources: list[str], targets: list[str]) -> str:
        """Why items keyed ``USER#a`` / ``USER#b`` under a prefix no item owns relate two nodes of
        one implicit type (a follow): a sort key's id that is also a partition's, else ""."""
        if k.sk_prefix != k.pk_prefix or any(s == t for s, t in zip(sources, targets, strict=True)):
            return ""
        both = sorted(set(sources) & set(targets))
        if not both:
            return ""
        return f"{k.sk_prefix}{both[0]} is a partition and a sort key both"

    def _implicit(
        self, prefix: str, attribute: str, made: dict[str, Kind], kinds: list[Kind]
    ) -> Kind:
        """The implicit node kind of a prefix, named after the key attribute it appears in
        when that attribute names an id (``studentID`` → ``Student``), else after the prefix."""
        if prefix in made:
            return made[prefix]
        in_pk = any(r.pk.startswith(prefix) for r in self.rows)
        in_sk = any(r.sk.startswith(prefix) for r in self.rows)
        match = ID_SUFFIX.match(attribute)
        if match and in_pk != in_sk:
            label = type_name(match.group("stem"))
            evidence = f"named after the key attribute {attribute}, which holds these keys"
        else:
            label = type_name(prefix.rstrip(SEPARATOR_CHARS))
            evidence = "named after the key prefix"
        node = Kind(None, prefix, prefix, True, rows=[], role="node", implicit=True, label=label)
        node.notes.append(evidence)
        made[prefix] = node
        kinds.append(node)
        return node


def _counts(values: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out
