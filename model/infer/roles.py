"""Roles of the kinds of items (node, child, keyed node, edge, uniqueness claim) and their
names: what the key shapes say each kind is."""

from __future__ import annotations

import re

from .shapes import WORD_ID, Kind, Shapes
from .values import ID, SEPARATOR_CHARS, UPPER, label_name, n_items, type_name

__all__ = ["Roles"]

NAMED_ID = re.compile(r"^([A-Za-z]*[a-z])(?:ID|Id)[#|/:\-_]$")  # a prefix naming an id: orderID#
CONSTANT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # a constant sort key (``ORDER``, ``METADATA``)


class Roles(Shapes):
    """Kinds classified and named."""

    def classify(self, kinds: list[Kind]) -> None:
        if self.bare:  # a number or binary key: no prefix tells nodes, children or edges apart
            for k in kinds:
                k.role = "keyed"
            self.name_kinds(kinds)
            return
        nodes: dict[str, Kind] = {}
        for k in kinds:
            if k.same and (k.pk_prefix or len(kinds) == 1 or self.type_attribute):
                k.role = "node"
                nodes.setdefault(k.pk_prefix, k)
        for k in kinds:
            if not k.role and self.constant_sort_key(k, kinds):
                k.role = "node"
                nodes.setdefault(k.pk_prefix, k)
        # a node whose ids fall outside the id alphabet gets a composite key, which today's
        # format allows neither as a parent nor as an edge's end
        plain = {p: n for p, n in nodes.items() if all(ID.match(r.pk[len(p) :]) for r in n.rows)}
        for k in kinds:
            if k.role:
                continue
            parent = self.owner_of(k, [r.pk for r in k.rows], plain, kinds)
            target = self.owner_of(k, [r.sk for r in k.rows], plain, kinds, sort=True)
            target = None if target is not None and target.constant else target
            if k.pk_prefix in nodes and parent is None:
                k.notes.append(
                    f'under "{k.pk_prefix}…" items whose ids fall outside the id alphabet: a '
                    "keyed node, as a parent needs a one-template key such as 'ORDER#{id}'"
                )
            typed = (
                k.tag is not None
                and not self.faceted  # a facet's name says nothing of edges
                and not UPPER.match(k.tag)
                and k.tag != self._label_of(k)
            )
            if parent is not None and target is not None and not typed:
                k.role, k.source, k.target = "edge", parent, target
            elif parent is not None:
                k.role, k.parent = "child", parent
            elif k.pk_prefix or (self.type_attribute and k.tag):
                k.role = "keyed"
            else:
                k.role = "unexplained"
                k.notes.append("no key prefix this draft could explain")
            if k.role == "edge" and k.source is k.target and not self.type_attribute:
                k.role = "unexplained"
                k.notes.append(
                    f"an edge between two {k.pk_prefix}… items: without a type or label "
                    "attribute, Edgewise could not tell it from those node items"
                )
            if k.role == "keyed" and self.partition_item(k):
                continue
            if k.role in ("child", "keyed") and not k.sk_prefix and not self.type_attribute:
                if self.wordless_constant(k, kinds):
                    continue
                k.role = "unexplained"
                k.notes.append(
                    "a sort key with no literal prefix: without a type attribute, Edgewise "
                    "could not tell these items from the other items of their partitions"
                    + self.wordless_why(k, kinds)
                )
        for k in kinds:
            k.own = k.own or (
                k.role == "keyed"
                and bool(k.pk_prefix and k.sk_prefix)
                and k.pk_prefix != k.sk_prefix
                and all(r.pk[len(k.pk_prefix) :] == r.sk[len(k.sk_prefix) :] for r in k.rows)
            )
        self.claims(kinds)
        self.name_kinds(kinds)

    def owner_of(
        self,
        k: Kind,
        keys: list[str],
        plain: dict[str, Kind],
        kinds: list[Kind],
        sort: bool = False,
    ) -> Kind | None:
        """The node kind whose items' keys are ``keys`` (a child's partitions, an edge's sort
        keys): the one node kind of the prefix, or, where a type attribute splits one key shape
        into several node kinds (users and organizations on ``ACCOUNT#…``), the one whose items
        hold most of these keys."""
        prefix = k.sk_prefix if sort else k.pk_prefix
        first = plain.get(prefix) if prefix else None
        if first is None:
            return None
        rivals = [
            c
            for c in kinds
            if c.role == "node" and c.pk_prefix == prefix and c.same and c is not first
        ]
        if not rivals:
            return first
        wanted = set(keys)

        def held(c: Kind) -> int:
            return len(wanted & {r.pk for r in c.rows})

        best = max([first, *rivals], key=held)
        others = ", ".join(f"{c.tag}: {held(c)}" for c in (first, *rivals) if c is not best)
        what = "sort keys" if sort else "partitions"
        k.notes.append(
            f"{held(best)} of its {len(wanted)} {what} are keys of {best.tag} items ({others})"
        )
        return best

    def partition_item(self, k: Kind) -> bool:
        """AWS's GSI-overloading example: ``HR-EMPLOYEE1`` / ``EMPLOYEE1``, a sort key that is
        its partition's value after the prefix, all starting with one word (``EMPLOYEE``): the
        partition's own item, keyed ``{pk: "HR-EMPLOYEE{id}", sk: "EMPLOYEE{id}"}``."""
        if not k.sk_prefix or not k.pk_prefix or k.tag is not None:
            return False
        if not all(r.sk == r.pk[len(k.pk_prefix) :] for r in k.rows):
            return False
        words = {m.group(1) if (m := WORD_ID.match(r.sk)) else "" for r in k.rows}
        if words != {k.sk_prefix}:
            return False
        k.own, k.literal = True, k.sk_prefix
        k.notes.append(
            f"every sort key repeats its partition's value after {k.pk_prefix!r} "
            f"({k.rows[0].pk} / {k.rows[0].sk}): the partition's own item"
        )
        return True

    def wordless_constant(self, k: Kind, kinds: list[Kind]) -> bool:
        """AWS's GSI-overloading example's ``2017-Q1``: a sort key with no word, the same on
        every item, one per partition, beside items of their own kinds: a keyed type of that
        one literal sort key (a literal overlaps no other template)."""
        constants = {r.sk for r in k.rows}
        others = [c for c in kinds if c is not k and c.pk_prefix == k.pk_prefix and c.sk_prefix]
        if len(constants) != 1 or k.count < 2 or not others or not k.pk_prefix:
            return False
        if len({r.pk for r in k.rows}) != k.count:
            return False
        (constant,) = constants
        k.notes.append(
            f"every item of this shape has the sort key {constant!r}, one per partition, "
            "beside the partition's other items: a type of that one sort key; items of other "
            "sort keys of its shape would fit no declaration" + self.wordless_why(k, kinds)
        )
        return True

    def wordless_why(self, k: Kind, kinds: list[Kind]) -> str:
        """Why the format cannot declare sort keys that start with no word, as precisely as the
        sample shows it: the template they would need also matches the partition's other sort
        keys."""
        template = wordless_template(sorted({r.sk for r in k.rows}))
        others = [c for c in kinds if c is not k and c.pk_prefix == k.pk_prefix and c.sk_prefix]
        if not template or not others:
            return ""
        example = k.rows[0].sk
        tail = re.sub(r"^\d+", "", example)  # the first placeholder's value dropped: -Q1
        clash = f"{others[0].sk_prefix}1{tail}"
        return (
            f"; their template would be {template!r}, which begins with a placeholder and so "
            f"also matches the partition's other sort keys ({clash!r} fits both it and the "
            f"{others[0].sk_prefix}… keys): without a type attribute check-model refuses such an "
            f"overlap; a type attribute, or a literal prefix ('SALES#{example}'), makes them "
            "declarable"
        )

    def constant_sort_key(self, k: Kind, kinds: list[Kind]) -> bool:
        """A node whose sort key is one constant word (``orderID#10248`` / ``ORDER``): still
        one placeholder, so a parent and a ref target."""
        if k.same or not k.pk_prefix or k.sk_prefix or self.library is not None:
            return False
        constants = {r.sk for r in k.rows}
        if len(constants) != 1 or any(c.same and c.pk_prefix == k.pk_prefix for c in kinds):
            return False
        (constant,) = constants
        if not CONSTANT.match(constant) or len({r.pk for r in k.rows}) != k.count:
            return False
        k.constant = constant
        k.notes.append(
            f"every item of this shape has the sort key {constant!r}, one per partition: the "
            "partition's own item"
        )
        return True

    def _label_of(self, k: Kind) -> str | None:
        if self.label_attribute and k.rows and self.label_attribute in k.rows[0].attrs:
            return k.tag
        return None

    def claims(self, kinds: list[Kind]) -> None:
        """Uniqueness claims: items keyed by a value whose only attribute names a node's key
        (the demo's ``EMAIL#<email>`` → ``USER#alice``)."""
        keys = {(r.pk, r.sk): (k, r) for k in kinds if k.role == "node" for r in k.rows}
        for k in kinds:
            if not (k.role == "node" and k.pk_prefix):
                continue
            extra = {a for r in k.rows for a in r.attrs} - {
                self.type_attribute,
                self.label_attribute,
            }
            if len(extra) != 1:
                continue
            (attribute,) = extra
            owners = [keys.get((r.text(attribute) or "",) * 2) for r in k.rows]
            if not all(owners) or len({o[0].pk_prefix for o in owners if o}) != 1:
                continue
            owner_kind = owners[0][0] if owners[0] else None
            assert owner_kind is not None
            value_of = [r.pk[len(k.pk_prefix) :] for r in k.rows]
            for field_attr in sorted({a for _, o in filter(None, owners) for a in o.attrs}):
                texts = [o[1].text(field_attr) if o else None for o in owners]
                if all(
                    t is not None and t.lower() == v.lower()
                    for t, v in zip(texts, value_of, strict=True)
                ):
                    k.role = "claim"
                    k.parent = owner_kind
                    k.link = field_attr
                    k.owner = attribute
                    k.notes.append(
                        f"{n_items(k.count)} {k.shape()} whose {attribute!r} holds the key of a "
                        f"{owner_kind.pk_prefix}… item with the same {field_attr}: a uniqueness "
                        "claim"
                    )
                    break

    def name_kinds(self, kinds: list[Kind]) -> None:
        taken: set[str] = set()
        for k in sorted(kinds, key=lambda k: k.role != "node"):  # parents named first
            if k.role in ("claim", "unexplained"):
                continue
            if k.role == "edge":
                if k.tag:
                    base = label_name(k.value or k.tag)
                else:
                    assert k.source is not None and k.target is not None
                    src, dst = (
                        x.label.upper()
                        if x.implicit
                        else x.pk_prefix.rstrip(SEPARATOR_CHARS).upper()
                        for x in (k.source, k.target)
                    )
                    base = label_name(f"{src}_TO_{dst}")
            elif k.implicit:
                base = k.label
            elif k.tag:
                base = type_name(k.tag)
            elif k.role == "keyed" and k.count > 1 and len({r.sk for r in k.rows}) == 1:
                base = wordless_name(k.rows[0].sk) or type_name(k.rows[0].sk)  # HR_confidential
            elif k.own:  # ORG#MICROSOFT / METADATA#MICROSOFT: named by its partition
                base = type_name(k.literal or k.pk_prefix.rstrip(SEPARATOR_CHARS))
            elif self.between_partitions(k, kinds):  # stu#101 / cs#201: named by both ends
                base = type_name(k.pk_prefix.rstrip(SEPARATOR_CHARS)) + type_name(k.sk_prefix)
            elif k.role == "node" and (named := NAMED_ID.match(k.pk_prefix)):  # customerID#
                base = type_name(named.group(1))
            elif k.parent is not None and (named := NAMED_ID.match(k.sk_prefix)):  # productID#
                base = type_name(named.group(1))
                base = k.parent.name + base if base in taken else base  # OrderProduct
            else:
                prefix = (k.sk_prefix if k.role != "node" else k.pk_prefix).rstrip(SEPARATOR_CHARS)
                base = type_name(prefix or (self.singular_table() if self.bare else "Item"))
            name, n = base, 2
            while name in taken:
                name, n = f"{base}{n}", n + 1
            taken.add(name)
            k.name = name

    def singular_table(self) -> str:
        """The table's name as one item's (``customer-orders`` → ``customer-order``)."""
        name = self.info.name
        return name[:-1] if name.endswith("s") and not name.endswith("ss") else name

    def between_partitions(self, k: Kind, kinds: list[Kind]) -> bool:
        """A keyed kind whose pk and sk prefixes are both never an item's own key (pk = sk): its
        items relate two things that exist only as key values, as seed 002's enrolments."""
        if k.role != "keyed" or not k.pk_prefix or not k.sk_prefix or k.tag or k.own:
            return False
        own = {c.pk_prefix for c in kinds if c.same or c.own}
        return k.pk_prefix not in own and k.sk_prefix not in own


def wordless_template(keys: list[str]) -> str:
    """The template of sort keys that start with digits (``2017-Q1`` → ``{year}-Q{quarter}``):
    each run of digits a placeholder, the text between them literal; "" when the text differs."""
    parts = [re.split(r"(\d+)", key) for key in keys]
    if not keys or len({len(p) for p in parts}) != 1 or not re.match(r"^\d", keys[0]):
        return ""
    out: list[str] = []
    for i, column in enumerate(zip(*parts, strict=True)):
        if i % 2 == 0:
            if len(set(column)) != 1:
                return ""
            out.append(column[0])
            continue
        before = out[-1] if out else ""
        if all(len(c) == 4 and c[:2] in ("19", "20") for c in column):
            out.append("{year}")
        elif before.endswith("Q"):
            out.append("{quarter}")
        else:
            out.append(f"{{n{i // 2 + 1}}}")
    return "".join(out)


def wordless_name(key: str) -> str:
    """A type named after the shape of its one sort key, when it has no word of its own
    (``2017-Q1`` → ``Quarter``)."""
    for pattern, name in WORDLESS:
        if pattern.match(key):
            return name
    return ""


WORDLESS = (
    (re.compile(r"^\d{4}-?Q[1-4]$"), "Quarter"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}$"), "Day"),
    (re.compile(r"^\d{4}-\d{2}$"), "Month"),
    (re.compile(r"^\d{4}$"), "Year"),
)
