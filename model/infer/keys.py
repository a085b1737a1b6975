"""Key templates of each kind: which placeholder each part of a key is."""

from __future__ import annotations

import zlib
from decimal import Decimal, InvalidOperation

from ..compile import lower_first
from ..templates import Template
from .implicit import Implicit
from .libraries import ELECTRODB, electro_template
from .shapes import Kind
from .values import ID, MAX_SHARDS, SEPARATOR_CHARS, SEPARATORS, gql_name, key_text, type_name

__all__ = ["Keys"]


class Keys(Implicit):
    """Kinds with key templates: the whole reading of the sample."""

    def read(self) -> list[Kind]:
        """The sample's kinds, classified, named and given key templates."""
        self.meta()
        kinds = self.kinds()
        self.classify(kinds)
        self.all_kinds = kinds
        for k in sorted(kinds, key=lambda k: not k.own):  # partition items first
            if k.role in ("node", "child", "keyed", "edge"):
                self.key_templates(k)
        self.ids = {
            k.name: {next(iter(v.values())) for v in k.values}
            for k in kinds
            if k.values
            and (
                (k.role == "node" and "id" in k.values[0])  # a ref needs one placeholder
                or (k.role == "keyed" and len(k.values[0]) == 1 and not k.implicit)
            )
        }
        self.key_values = {v for k in kinds for values in k.values for v in values.values()}
        self.whole_keys = {  # a ref that holds a key needs one template
            k.name: {r.pk for r in k.rows}
            for k in kinds
            if k.role == "node" and k.values and k.pk_template == k.sk_template
        }
        self.type_names = {k.name for k in kinds if k.role in ("node", "child", "keyed")}
        return kinds

    def match(
        self,
        k: Kind,
        segments: list[list[str]],
        known: list[dict[str, str]],
        used: set[str],
        key: bool = False,
    ) -> list[str] | None:
        """Name each position of split keys: a known placeholder value, an attribute with the
        same value on every item, a constant literal, or ``{shard}``; None if one is unknown."""
        out: list[str] = []
        positions = len(segments[0])
        for i in range(positions):
            column = [s[i] for s in segments]
            last = i == positions - 1
            name = self._known(column, known, used) or self._attribute(k, column, used)
            if name:
                used.add(name.split(":")[0])
                out.append("{" + name + "}")
                continue
            if (
                len(set(column)) == 1
                and (key or k.count > 1)
                and not (key and last and i > 0 and k.count > 1)
            ):  # one item's value is no evidence of a constant
                out.append(column[0])
                continue
            shards = None if key else self._shards(k, column)
            if shards:
                out.append("{shard}")
                self.shards = shards
                continue
            if key and last and "id" not in used:  # a key's last part is the item's own id
                out += self.joined(k, column, used)
                continue
            return None
        return out

    @staticmethod
    def _known(column: list[str], known: list[dict[str, str]], used: set[str]) -> str | None:
        for name in known[0]:
            if name not in used and all(
                kv.get(name) == c for kv, c in zip(known, column, strict=True)
            ):
                return name
        return None

    def _attribute(self, k: Kind, column: list[str], used: set[str]) -> str | None:
        for attribute in self.field_attributes(k):
            name = gql_name(attribute)
            if name in used:
                continue
            values = [r.attrs.get(attribute) for r in k.rows]
            if not all(values):
                continue
            if all(
                v is not None and key_text(*v) == c for v, c in zip(values, column, strict=True)
            ):
                return name
            widths = {len(c) for c in column}
            if (
                all(v is not None and v[0] == "N" for v in values)
                and len(widths) == 1
                and any(c.startswith("0") and len(c) > 1 for c in column)
            ):
                try:
                    equal = all(
                        v is not None and Decimal(c) == v[1]
                        for v, c in zip(values, column, strict=True)
                    )
                except InvalidOperation:
                    equal = False
                if equal:
                    return f"{name}:0{widths.pop()}d"
        return None

    def _shards(self, k: Kind, column: list[str]) -> int | None:
        if not all(c.isdigit() for c in column) or k.role == "edge":
            return None
        numbers = [int(c) for c in column]
        ids = [v.get("id") for v in k.values]
        if not ids or not all(ids) or max(numbers) >= MAX_SHARDS:
            return None
        crcs = [zlib.crc32(str(i).encode()) for i in ids]
        for n in range(max(numbers) + 1, MAX_SHARDS + 1):
            if all(crc % n == v for crc, v in zip(crcs, numbers, strict=True)):
                return n
        return None

    def split(self, key: str, prefix: str) -> list[str]:
        rest = key[len(prefix) :]
        return rest.split(self.sep) if rest else [""]

    def key_templates(self, k: Kind) -> None:
        if self.bare:
            self.bare_templates(k)
            return
        if k.role == "node":
            k.pk_template = k.sk_template = f"{k.pk_prefix}{{id}}"
            ids = k.seen if k.implicit else [r.pk[len(k.pk_prefix) :] for r in k.rows]
            name = self.id_name(k, ids)
            k.pk_template = k.sk_template = f"{k.pk_prefix}{{{name}}}"
            if k.constant:
                k.sk_template = k.constant
            k.values = [{name: i} for i in ids]
            return
        if k.role == "edge":
            assert k.source is not None and k.target is not None
            k.values = [
                {
                    "from": r.pk[len(k.source.pk_prefix) :],
                    "to": r.sk[len(k.target.pk_prefix) :],
                }
                for r in k.rows
            ]
            return
        if self.electro_templates(k):
            return
        owner = self.partition_owner(k)
        word = owner.literal if owner is not None else ""  # HR-EMPLOYEE1: EMPLOYEE
        pk_rest = [r.pk[len(k.pk_prefix) + len(word) :] for r in k.rows]
        if k.parent is not None:
            fallback = lower_first(k.parent.name) + "Id"
        elif owner is not None and owner.literal:
            fallback = lower_first(owner.name) + "Id"
        else:
            fallback = (
                lower_first(type_name(k.pk_prefix.rstrip(SEPARATOR_CHARS) or "partition")) + "Id"
            )
        link = self._attribute(k, pk_rest, set())
        link = link if link and ":" not in link and link != "id" else fallback
        k.link = link
        k.pk_template = f"{k.pk_prefix}{word}{{{link}}}"
        if k.own:  # the sort key repeats the partition's value
            k.sk_template = f"{word or k.sk_prefix}{{{link}}}"
            k.values = [{link: p} for p in pk_rest]
            return
        constants = {r.sk for r in k.rows}
        if len(constants) == 1 and k.count > 1 and len(set(pk_rest)) == k.count:
            k.sk_template = constants.pop()  # one per partition: HR_confidential
            k.values = [{link: p} for p in pk_rest]
            k.notes.append(f"one item per partition, all with the sort key {k.sk_template!r}")
            return
        segments = [self.split(r.sk, k.sk_prefix) for r in k.rows]
        known = [{link: p} for p in pk_rest]
        names: list[str] | None = None
        if len({len(s) for s in segments}) == 1:
            names = self.match(k, segments, [{} for _ in k.rows], {link}, key=True)
            if names is not None and not any(n.startswith("{") for n in names):
                names = None
        if names is None or any(n == "{shard}" for n in names):
            rest = [r.sk[len(k.sk_prefix) :] for r in k.rows]
            single = self._attribute(k, rest, {link})
            names = ["{" + single + "}"] if single else self.joined(k, rest, {link})
        if not any(n.startswith("{") for n in names[-1:]):
            names[-1] = "{" + self.fallback_id(k) + "}"
        k.sk_template = k.sk_prefix + self.sep.join(names)
        sk = Template.compile(k.sk_template)
        k.values = []
        for r, kv in zip(k.rows, known, strict=True):
            parsed = sk.parse(r.sk) or {}
            k.values.append({**kv, **parsed})

    def bare_templates(self, k: Kind) -> None:
        """Keys of a table with a number or binary key: a bare placeholder over each such key
        (and over a string key without a prefix), named after the field over its attribute."""
        names: list[str] = []
        templates: list[str] = []
        for attribute, prefix, keys in (
            (self.info.pk, k.pk_prefix, [r.pk for r in k.rows]),
            (self.sk, k.sk_prefix, [r.sk for r in k.rows]),
        ):
            if attribute in self.bare or not prefix:
                name = self.field_name(attribute)
            else:
                found = self._attribute(k, [x[len(prefix) :] for x in keys], set(names))
                fallback = lower_first(type_name(prefix.rstrip(SEPARATOR_CHARS))) + "Id"
                name = found if found and ":" not in found else fallback
            names.append(name)
            templates.append(prefix + "{" + name + "}")
        k.pk_template, k.sk_template = templates
        k.link = names[0]
        pk_t, sk_t = (Template.compile(t) for t in templates)
        k.values = [{**(pk_t.parse(r.pk) or {}), **(sk_t.parse(r.sk) or {})} for r in k.rows]

    def partition_owner(self, k: Kind) -> Kind | None:
        """The partition's own item of a kind's partitions (``HR-EMPLOYEE1`` / ``EMPLOYEE1``),
        when it starts with a word: the kind's pk then starts with that word too."""
        for c in self.all_kinds:
            if c.own and c.literal and c.pk_prefix == k.pk_prefix:
                words = (r.pk[len(k.pk_prefix) :] for r in k.rows)
                if all(w.startswith(c.literal) and len(w) > len(c.literal) for w in words):
                    return c
        return None

    def electro_templates(self, k: Kind) -> bool:
        """ElectroDB's keys: each ``#name_value`` segment a placeholder (see ``libraries``)."""
        if self.library is None or self.library.name != ELECTRODB:
            return False
        pk = electro_template([r.pk for r in k.rows], k.rows, k.tag or "")
        sk = electro_template([r.sk for r in k.rows], k.rows, k.tag or "")
        if pk is None or sk is None:
            return False
        k.pk_template, k.sk_template = pk, sk
        pk_t, sk_t = Template.compile(pk), Template.compile(sk)
        k.values = [{**(pk_t.parse(r.pk) or {}), **(sk_t.parse(r.sk) or {})} for r in k.rows]
        names = pk_t.placeholders
        k.link = names[0] if names else ""
        return True

    def fallback_id(self, k: Kind) -> str:
        """The sort key's placeholder when no attribute holds its value: ``id``, or the key
        prefix's name for a keyed kind between two partitions (``cs#{csId}``)."""
        if self.between_partitions(k, self.all_kinds):
            return lower_first(type_name(k.sk_prefix.rstrip(SEPARATOR_CHARS))) + "Id"
        return "id"

    def id_name(self, k: Kind, ids: list[str]) -> str:
        """A node's key placeholder: ``id``, unless some ids fall outside the id alphabet
        (``Maria Anders``): then the attribute holding the same value (``userName``), else
        ``<type>Key``."""
        if all(ID.match(i) for i in ids):
            return "id"
        name = self._attribute(k, ids, set())
        if not name or ":" in name:
            name = lower_first(k.name) + "Key"
        bad = min(i for i in ids if not ID.match(i))
        k.notes.append(
            f"ids such as {bad!r} fall outside the id alphabet (A-Z a-z 0-9 _ . : @ -, at most "
            f"128): the key's placeholder is {{{name}}}"
        )
        return name

    def joined(self, k: Kind, rest: list[str], used: set[str]) -> list[str]:
        """A key part made of attribute values joined by another separator (seed 000's
        ``prod1|group1``: ``{productId}|{groupId}``), else the fallback placeholder."""
        for sep in SEPARATORS:
            if sep == self.sep or not all(sep in r for r in rest):
                continue
            columns = list(zip(*(r.split(sep) for r in rest), strict=False))
            if len({len(r.split(sep)) for r in rest}) != 1:
                continue
            names: list[str] = []
            for column in columns:
                name = self._attribute(k, list(column), used | set(names))
                if not name or ":" in name:
                    break
                names.append(name)
            else:
                return [sep.join("{" + n + "}" for n in names)]
        return ["{" + self.fallback_id(k) + "}"]
