"""Model files from the format's grammar (MODELS.md, ``model/spec.py``), as hypothesis
strategies, for the property test of ``check-model`` and the engine
(``tests/engine/test_model_fuzz.py``).

:func:`models` drafts a coherent model (names that refer to each other: a child's pk is its
parent's key, a ref names a field holding the target's key, an index entry writes the index a
query reads, a path follows edge fields that exist), one feature at a time: each entry of
:data:`FEATURES` is one small function that adds one part of the grammar to the draft, so a new
part is one more function. :func:`mutated` then changes the draft a little (a key removed, a name
misspelt, a value swapped for another of the file's), which finds more than random text: most
drafts stay valid, some are broken in the ways a person breaks a file.

Not generated yet (see the report of issue 30, item 6): ``typeValue`` overlaps separated by the
type attribute, ``from: key``, stored objects (``stored: true``, ``entries:``), implicit parents,
composite-key parents, adjacent placeholders, ``keysOf`` refs (branches item-types,
stored-objects, key-shapes), hook fields and hook mutations, ``generator``, ``descriptions``,
``table.deletions`` and ``table.ids``."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Draw = Callable[[st.SearchStrategy[Any]], Any]

SCALARS = ("String", "Int", "Float", "Boolean", "ID", "Date", "DateTime", "JSON")
TYPE_NAMES = ("Account", "Book", "Card", "Deck", "Event", "Folder")
FIELD_NAMES = ("name", "status", "date", "score", "tags", "note", "kind", "data", "amount")


@dataclass
class Kind:
    """A node type being drafted: its mapping in the file and what other parts may refer to."""

    name: str
    spec: dict[str, Any]
    shape: str  # single | keyed | constant | child
    prefix: str
    key_fields: list[str]
    stored: dict[str, str] = field(default_factory=dict)  # field -> GraphQL type text
    hops: dict[str, str] = field(default_factory=dict)  # edge or ref field -> type reached
    edge_hops: dict[str, str] = field(default_factory=dict)  # edge field -> edge label

    @property
    def single(self) -> bool:
        return self.shape == "single"

    @property
    def pk(self) -> str:
        key = self.spec["key"]
        return key if isinstance(key, str) else str(key["pk"])


@dataclass
class Draft:
    """A model file being drafted, and the facts the features share."""

    data: dict[str, Any]
    key_type: str = "S"  # of both table keys
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)  # as written in the file
    kinds: dict[str, Kind] = field(default_factory=dict)

    @property
    def table(self) -> dict[str, Any]:
        return dict(self.data["table"])

    def attr(self, key: str) -> str:
        value = self.data["table"][key]
        return value if isinstance(value, str) else str(value["name"])

    def section(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.data.setdefault(name, {})
        return found

    def of_shape(self, *shapes: str) -> list[Kind]:
        return [k for k in self.kinds.values() if k.shape in shapes]

    def inverted(self) -> list[str]:
        sk = self.attr("sortKey")
        return [n for n, i in self.indexes.items() if _name(i["partitionKey"]) == sk]

    def own_gsis(self) -> list[str]:
        """Global indexes keyed by attributes of their own (that a type's entry writes)."""
        keys = {self.attr("partitionKey"), self.attr("sortKey")}
        return [
            n
            for n, i in self.indexes.items()
            if not i.get("local") and _name(i["partitionKey"]) not in keys
        ]


def _name(key: Any) -> str:
    return key if isinstance(key, str) else str(key["name"])


def _one(draw: Draw, options: Any) -> Any:
    return draw(st.sampled_from(list(options)))


def _chance(draw: Draw, p: float) -> bool:
    """True with probability ``p`` (to the percent), False as hypothesis shrinks it."""
    return bool(draw(st.integers(0, 99)) >= 100 - round(p * 100))


# ---- the table ----------------------------------------------------------------------------


def table(draw: Draw, d: Draft) -> None:
    """Key names and types (mostly S; N or B for a team's numbered table), typeAttribute,
    labelAttribute, versionAttribute, keyCasing, timestamps, storeKeyFields."""
    pk, sk = _one(draw, [("PK", "SK"), ("pk", "sk"), ("Id", "Sort")])
    d.key_type = "S" if _chance(draw, 0.85) else _one(draw, ["N", "B"])
    t: dict[str, Any] = {"name": _one(draw, ["app-table", "fuzz"])}
    if d.key_type == "S":
        t["partitionKey"], t["sortKey"] = pk, sk
    else:
        t["partitionKey"] = {"name": pk, "type": d.key_type}
        t["sortKey"] = {"name": sk, "type": d.key_type}
    if _chance(draw, 0.6 if d.key_type == "S" else 0.9):  # N, B: keys alone hardly tell
        t["typeAttribute"] = _one(draw, ["type", "_et", "entity_type"])
        if _chance(draw, 0.2):
            t["labelAttribute"] = "edge"
    if _chance(draw, 0.3):
        t["versionAttribute"] = "version"
    if _chance(draw, 0.2):
        t["keyCasing"] = _one(draw, ["none", "lower", "upper"])
    if _chance(draw, 0.3):
        t["timestamps"] = _one(draw, [True, {"created": "_ct", "modified": "_md"}])
    if _chance(draw, 0.3):
        t["storeKeyFields"] = True
    d.data["table"] = t


def indexes(draw: Draw, d: Draft) -> None:
    """Secondary indexes: an inverted one, global ones with attributes of their own (with or
    without a sort key, any projection), a local one."""
    t, found = d.data["table"], {}
    pk, sk = d.attr("partitionKey"), d.attr("sortKey")
    typed = d.data["table"]["partitionKey"] if d.key_type != "S" else None
    if _chance(draw, 0.5):
        found[_one(draw, ["inverted", "byTarget"])] = {
            "partitionKey": d.data["table"]["sortKey"] if typed else sk,
            "sortKey": typed or pk,
        }
    for i in range(draw(st.integers(0, 2))):
        index: dict[str, Any] = {"partitionKey": f"GSI{i + 1}PK"}
        if _chance(draw, 0.85):
            index["sortKey"] = f"GSI{i + 1}SK"
        if _chance(draw, 0.25):
            index["projection"] = _one(draw, ["KEYS_ONLY", ["name", "status"], ["score"]])
        found[f"GSI{i + 1}"] = index
    if _chance(draw, 0.15):
        found["byLocal"] = {"partitionKey": typed or pk, "sortKey": "LSI1SK", "local": True}
    if found:
        t["indexes"] = found
    d.indexes = found


def enums(draw: Draw, d: Draft) -> None:
    """Enums in both forms: a list, and GraphQL value to stored string."""
    for name in draw(st.lists(st.sampled_from(["Status", "Color"]), max_size=2, unique=True)):
        if _chance(draw, 0.5):
            d.section("enums")[name] = ["OPEN", "CLOSED"] if name == "Status" else ["RED", "BLUE"]
        else:
            d.section("enums")[name] = {"OPEN": "open", "IN_PROGRESS": "in-progress"}


# ---- types --------------------------------------------------------------------------------


def _key(d: Draft, prefix: str, shape: str, parent: Kind | None) -> tuple[Any, list[str]]:
    if d.key_type != "S":  # a number or binary key is one bare placeholder
        if shape == "child" and parent is not None:
            return {"pk": f"{{{_lower(parent.name)}Id}}", "sk": "{id}"}, [
                f"{_lower(parent.name)}Id",
                "id",
            ]
        if shape == "single":
            return "{id}", ["id"]
        return {"pk": "{ownerId}", "sk": "{id}"}, ["ownerId", "id"]
    if shape == "single":
        return f"{prefix}#{{id}}", ["id"]
    if shape == "constant":
        return {"pk": f"{prefix}#{{id}}", "sk": prefix}, ["id"]
    if shape == "keyed":
        return {"pk": f"{prefix}#{{ownerId}}", "sk": f"{prefix}X#{{id}}"}, ["ownerId", "id"]
    assert parent is not None
    link = f"{_lower(parent.name)}Id"
    pk = parent.pk.replace("{id}", "{" + link + "}")
    if prefix.startswith(("D", "F")):  # a number in the sort key, zero-padded: `{rank:04d}`
        return {"pk": pk, "sk": f"{prefix}#{{rank:04d}}#{{id}}"}, [link, "rank", "id"]
    return {"pk": pk, "sk": f"{prefix}#{{kind}}#{{id}}"}, [link, "kind", "id"]


def _placeholders(template: str) -> list[str]:
    return [p.split(":")[0] for p in re.findall(r"{([^}]*)}", template)]


def _lower(name: str) -> str:
    return name[:1].lower() + name[1:]


def node_types(draw: Draw, d: Draft) -> None:
    """1 to 4 types: one-template keys, {pk, sk} keys (placeholders or a constant sort key),
    children of an earlier type, implicit types; typeValue, names, mutations, node, expose."""
    # A number or binary key is one bare placeholder, so two types' keys overlap and only the
    # type attribute tells their items apart, which the branch item-types makes work: one type.
    most = 4 if d.key_type == "S" else 1
    names = draw(st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=most, unique=True))
    types = d.section("types")
    for name in names:
        parents = d.of_shape("single", "constant")
        shapes = ["single", "single", "keyed", "constant"] + (["child"] * 2 if parents else [])
        shape = _one(draw, shapes)
        parent = _one(draw, parents) if shape == "child" else None
        prefix = name[:3].upper()
        key, key_fields = _key(d, prefix, shape, parent)
        spec: dict[str, Any] = {"key": key}
        if parent is not None:
            spec["parent"] = {
                "type": parent.name,
                "field": _lower(parent.name),
                "collection": _lower(name) + "s",
            }
            if _chance(draw, 0.3):
                spec["parent"]["order"] = "desc"
            if _chance(draw, 0.3):
                spec["parent"]["count"] = "counter"
            if _chance(draw, 0.15):
                spec["node"] = False
        if shape == "single" and _chance(draw, 0.15):
            spec["implicit"] = True
        if "typeAttribute" in d.data["table"] and _chance(draw, 0.3):
            spec["typeValue"] = name.upper()
        if _chance(draw, 0.1):
            spec["mutations"] = False
        if _chance(draw, 0.1):
            spec["names"] = {"lookup": f"the{name}", "create": f"new{name}"}
            if _chance(draw, 0.5):
                spec["names"] |= {"connection": f"{name}List", "edge": f"{name}Item"}
        if _chance(draw, 0.1):
            spec["description"] = f"A {name.lower()}."
        types[name] = spec
        d.kinds[name] = Kind(name, spec, shape, prefix, key_fields)
        if "kind" in key_fields:
            d.kinds[name].stored["kind"] = "String!"
            if _chance(draw, 0.5):
                spec.setdefault("fields", {})["kind"] = "String!"
        if "rank" in key_fields:
            d.kinds[name].stored["rank"] = "Int!"
            spec.setdefault("fields", {})["rank"] = "Int!"
        if shape == "keyed" and d.key_type == "N":
            spec.setdefault("fields", {})["ownerId"] = "Int!"
            d.kinds[name].stored["ownerId"] = "Int!"


def _scalar(draw: Draw, d: Draft, nullable: bool) -> str:
    name = _one(draw, SCALARS + tuple(d.data.get("enums", {})))
    text = name
    if _chance(draw, 0.15):
        text = f"[{name}!]" + ("!" if not nullable and _chance(draw, 0.5) else "")
    elif not nullable and _chance(draw, 0.5):
        text += "!"
    return text


def fields(draw: Draw, d: Draft) -> None:
    """Stored fields of every scalar type, enums and lists, as `name: Type` or a mapping with
    attribute, default, initial, length, format and description."""
    for kind in d.kinds.values():
        implicit = bool(kind.spec.get("implicit"))
        for name in draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=4, unique=True)):
            if name in kind.key_fields:
                continue
            text = _scalar(draw, d, implicit)
            decl: Any = text
            if _chance(draw, 0.4):
                decl = {"type": text}
                taken = {
                    f.get("attribute")
                    for f in kind.spec.get("fields", {}).values()
                    if isinstance(f, dict)
                }
                if _chance(draw, 0.3):  # one attribute a field (two: MODELS.md's item-types rule)
                    decl["attribute"] = _one(
                        draw, [a for a in (name.upper(), f"_{name}", "Data") if a not in taken]
                    )
                base = text.strip("[]!")
                if base == "String" and "[" not in text and _chance(draw, 0.3):
                    decl["length"] = [1, 50]
                if base == "String" and "[" not in text and _chance(draw, 0.15):
                    decl["format"] = "email"
                if base in ("String", "Int", "Boolean") and "[" not in text and _chance(draw, 0.2):
                    decl["default"] = {"String": "x", "Int": 3, "Boolean": True}[base]
                if base == "DateTime" and _chance(draw, 0.3):
                    decl["initial"] = "now"
                if _chance(draw, 0.1):
                    decl["description"] = f"The {name}."
            kind.spec.setdefault("fields", {})[name] = decl
            kind.stored[name] = text


def uniques(draw: Draw, d: Draft) -> None:
    """A unique String field on a one-template type (a claim item per value)."""
    for kind in d.of_shape("single"):
        if kind.spec.get("implicit") or not _chance(draw, 0.25) or d.key_type != "S":
            continue
        unique: dict[str, Any] = {"key": "EMAIL#{email}"}
        if _chance(draw, 0.5):
            unique["caseInsensitive"] = True
        if "typeAttribute" in d.data["table"] and _chance(draw, 0.3):
            unique["typeValue"] = "EMAIL"
        kind.spec.setdefault("fields", {})["email"] = {"type": "String", "unique": unique}
        kind.stored["email"] = "String"
        break  # one claim prefix per model


def refs(draw: Draw, d: Draft) -> None:
    """References in each form: by the target's one placeholder, `holds: key`, composite
    (placeholder <- field), over a list of ids."""
    for kind in list(d.kinds.values()):
        if not _chance(draw, 0.5):
            continue
        target = _one(draw, d.kinds.values())
        fields_ = kind.spec.setdefault("fields", {})
        name = _lower(target.name)
        if name in fields_ or name in kind.key_fields:
            continue
        form = _one(draw, ["one", "key", "list"] if len(target.key_fields) == 1 else ["composite"])
        required = not kind.spec.get("implicit") and _chance(draw, 0.3)
        if form == "one":
            fields_[f"{name}Id"] = "ID!" if required else "ID"
            fields_[name] = {"type": target.name + ("!" if required else ""), "ref": f"{name}Id"}
        elif form == "key":
            fields_[f"{name}Key"] = "String"
            fields_[name] = {"type": target.name, "ref": {"field": f"{name}Key", "holds": "key"}}
        elif form == "list" and not kind.spec.get("implicit"):
            fields_[f"{name}Ids"] = "[ID!]"
            fields_[name] = {"type": f"[{target.name}!]!", "ref": f"{name}Ids"}
        else:
            link = {p: f"{name}{p[:1].upper()}{p[1:]}" for p in target.key_fields}
            for source in link.values():
                fields_[source] = "ID"
            fields_[name] = {"type": target.name, "ref": link}
        for source in [f"{name}Id", f"{name}Key", f"{name}Ids"]:
            if source in fields_:
                kind.stored[source] = str(fields_[source])
        kind.hops[name] = target.name
    for child in d.of_shape("child"):  # a ref over a key placeholder: the child's parent id
        parent = d.kinds[child.spec["parent"]["type"]]
        link = child.key_fields[0]
        if parent.single and _chance(draw, 0.3):
            child.spec.setdefault("fields", {})["owner"] = {"type": f"{parent.name}!", "ref": link}
            child.hops["owner"] = parent.name


def derived(draw: Draw, d: Draft) -> None:
    """`first` and `sum` over a child collection."""
    for child in d.of_shape("child"):
        parent = d.kinds[child.spec["parent"]["type"]]
        collection = child.spec["parent"]["collection"]
        fields_ = parent.spec.setdefault("fields", {})
        if _chance(draw, 0.4):
            fields_["latest"] = {"type": child.name, "first": collection}
        numbers = [f for f, t in child.stored.items() if t.strip("!") in ("Int", "Float")]
        if numbers and _chance(draw, 0.5):
            fields_["total"] = {"type": "Float!", "sum": f"{collection}.{numbers[0]}"}


def type_indexes(draw: Draw, d: Draft) -> None:
    """Index entries: templates over a type's fields written into a global index's keys (write
    shards, partial keys), and a local index's sort key."""
    for kind in d.kinds.values():
        if kind.spec.get("implicit"):
            continue
        for index in d.own_gsis():
            if not _chance(draw, 0.5):
                continue
            spec = d.indexes[index]
            placeholders = [f for f, t in kind.stored.items() if "[" not in t] or ["id"]
            first = _one(draw, placeholders)
            spec_ = ""
            if kind.stored.get(first, "").strip("!") in ("Int", "Float") and _chance(draw, 0.5):
                spec_ = _one(draw, [":06d", ":.2f"])
            entry: dict[str, Any] = {"pk": f"{kind.prefix}_{index}#{{{first}{spec_}}}"}
            if _chance(draw, 0.2):
                entry = {"pk": f"{kind.prefix}_{index}#{{shard}}", "shards": _one(draw, [2, 4])}
            if "sortKey" in spec:
                sks = ["{id}", kind.prefix] + ([f"{{{first}}}#{{id}}"] if first != "id" else [])
                entry["sk"] = _one(draw, sks)
            if _chance(draw, 0.15):
                entry["partial"] = True
            kind.spec.setdefault("indexes", {})[index] = entry


# ---- edges and paths ----------------------------------------------------------------------


def edges(draw: Draw, d: Draft) -> None:
    """Edges between one-template types: forward (a connection or `one`), reverse over an
    inverted index or over a global index the edge writes, fields and copies of an end's
    fields, count, names, owns."""
    ends = d.of_shape("single")
    if not ends:
        return
    pairs = [(a.name, b.name) for a in ends for b in ends]
    if "typeAttribute" not in d.data["table"]:  # keys alone tell the items apart
        pairs = [(a, b) for a, b in pairs if a != b]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=3, unique=True)) if pairs else []
    for i, (source_name, target_name) in enumerate(chosen):
        source, target = d.kinds[source_name], d.kinds[target_name]
        label = ["LIKES", "HOLDS", "FOLLOWS"][i]
        edge: dict[str, Any] = {"from": source.name, "to": target.name}
        forward = f"{label.lower()}{target.name}s"
        if _chance(draw, 0.8):
            edge["forward"] = forward
            if _chance(draw, 0.3):
                edge["forward"] = {"field": forward, "one": _chance(draw, 0.5), "order": "desc"}
            source.hops[forward] = target.name
            source.edge_hops[forward] = label
        reverse = f"{label.lower()}By{source.name}s"
        inverted, own = d.inverted(), d.own_gsis()
        if (inverted or own) and _chance(draw, 0.7):
            if inverted and (not own or _chance(draw, 0.5)):
                index = _one(draw, inverted)
            else:
                index = _one(draw, own)
                entry = {"pk": f"TO_{label}#{{to}}"}
                if "sortKey" in d.indexes[index]:
                    entry["sk"] = "FROM#{from}"
                edge["indexes"] = {index: entry}
            edge["reverse"] = {"field": reverse, "index": index, "one": _chance(draw, 0.2)}
            target.hops[reverse] = source.name
            target.edge_hops[reverse] = label
        edge_fields: dict[str, Any] = {}
        if _chance(draw, 0.6):
            edge_fields["since"] = _one(
                draw, ["Date", "DateTime", {"type": "DateTime", "initial": "now"}]
            )
        if _chance(draw, 0.4):
            edge_fields["weight"] = _one(draw, ["Int", "Int!", {"type": "Int!", "default": 1}])
        copied = [f for f, t in source.stored.items() if f not in source.key_fields]
        if copied and _chance(draw, 0.3):
            edge_fields["copied"] = {"copyOf": f"from.{_one(draw, copied)}"}
        copied = [f for f, t in target.stored.items() if f not in target.key_fields]
        if copied and "reverse" in edge and _chance(draw, 0.2):
            edge_fields["copiedTo"] = {"copyOf": f"to.{_one(draw, copied)}"}
        if edge_fields:
            edge["fields"] = edge_fields
        implicit = source.spec.get("implicit") or target.spec.get("implicit")
        if _chance(draw, 0.3) and not implicit:
            edge["count"] = "counter"
        if _chance(draw, 0.1):
            edge["add"], edge["remove"] = f"link{label.title()}", f"unlink{label.title()}"
        if _chance(draw, 0.05):
            edge["mutations"] = False
        if _chance(draw, 0.05):
            edge["owns"] = True
        d.section("edges")[label] = edge


def paths(draw: Draw, d: Draft) -> None:
    """Path fields over edge fields (a ref hop only where the branch item-types makes it
    work): the nodes reached, whether one is reached (Boolean with an ID argument), objects
    filled by `shape`; `where` on the last edge's fields; a replica (`materialize`)."""
    for kind in list(d.kinds.values()):
        first = [f for f in kind.hops if f in kind.edge_hops]
        if not first or not _chance(draw, 0.6):
            continue
        hop1 = _one(draw, first)
        middle = d.kinds[kind.hops[hop1]]
        hops = [hop1]
        second = [f for f in middle.hops if f in middle.edge_hops]
        if second and _chance(draw, 0.6):
            hops.append(_one(draw, second))
        end = d.kinds[kind.hops[hop1] if len(hops) == 1 else middle.hops[hops[1]]]
        decl: dict[str, Any] = {"path": hops}
        answer = _one(draw, ["nodes", "exists", "objects"])
        if answer == "nodes":
            decl["type"] = f"[{end.name}!]!"
        elif answer == "exists":
            decl["type"] = "Boolean!"
            decl["arguments"] = {f"{_lower(end.name)}Id": "ID!"}
        else:
            obj = f"{kind.name}Reach"
            obj_fields = {"node": f"{end.name}!"}
            by_position = _chance(draw, 0.3)  # a hop named by its position
            shape: dict[str, Any] = {"node": len(hops) if by_position else hops[-1]}
            if len(hops) == 2:
                obj_fields["via"] = f"[{middle.name}!]!"
                shape["via"] = 1 if by_position else hops[0]
            d.section("objects")[obj] = {"fields": obj_fields}
            decl["type"] = f"[{obj}!]!"
            decl["shape"] = shape
        label = (middle if len(hops) == 2 else kind).edge_hops[hops[-1]]
        edge_fields = d.data["edges"][label].get("fields", {})
        if edge_fields and _chance(draw, 0.5):
            name = _one(draw, sorted(edge_fields))
            decl["where"] = _one(
                draw,
                [
                    {name: None},
                    {"or": [{name: None}, {name: {"gt": "now" if name == "since" else 0}}]},
                ],
            )
        if _chance(draw, 0.2):
            replica: dict[str, Any] = {"key": {"pk": f"{kind.prefix}#{{from}}", "sk": "R#{to}"}}
            if len(hops) == 2:
                replica["key"]["sk"] = "R#{to}|{via}"
            if "where" in decl:
                replica["copy"] = [next(k for k in edge_fields if k in str(decl["where"]))]
            decl["materialize"] = replica
        name = _one(draw, ["reach", "reached"])
        kind.spec.setdefault("fields", {})[name] = decl
        if "materialize" in decl and _chance(draw, 0.5):  # another field read from that replica
            shared = {"type": "Boolean!", "path": hops, "materialize": name}
            shared["arguments"] = {f"{_lower(end.name)}Id": "ID!"}
            if "where" in decl:
                shared["where"] = decl["where"]
            kind.spec["fields"]["mayReach"] = shared


# ---- queries and access -------------------------------------------------------------------


def queries(draw: Draw, d: Draft) -> None:
    """Access patterns: over a global index a type writes (partition and sort templates from its
    entry, `between`, equality `arguments`, a `where` with `$arguments`, `order`), a type's
    field with `on:`, several types as a union, a child collection of the table."""
    out = d.section("queries")
    for kind in d.kinds.values():
        for index, entry in kind.spec.get("indexes", {}).items():
            if not _chance(draw, 0.6):
                continue
            query: dict[str, Any] = {"type": kind.name, "index": index, "partition": entry["pk"]}
            sk = entry.get("sk")
            if sk is not None and _chance(draw, 0.7):
                sort: dict[str, Any] = {"template": sk}
                if "{" in sk and _chance(draw, 0.5):
                    sort["between"] = ["from", "to"]
                    if _chance(draw, 0.3):
                        sort["exclusive"] = True
                elif "{" in sk and _chance(draw, 0.5):
                    sort["arguments"] = _placeholders(sk)[:1]
                query["sort"] = sort
            if _chance(draw, 0.3):
                query["order"] = "desc"
            if _chance(draw, 0.4):
                _where(draw, kind, query)
            if _chance(draw, 0.1):
                query["count"] = "counter"
            owners = [
                k for k in d.kinds.values() if k.single and f"{_lower(k.name)}Id" in entry["pk"]
            ]
            if owners and _chance(draw, 0.5):
                owner = owners[0]
                query["on"] = owner.name
                query["partition"] = entry["pk"].replace(f"{_lower(owner.name)}Id", "id")
            out[f"{_lower(kind.name)}By{index}"] = query
    shared = [
        (k, i)
        for k in d.kinds.values()
        for i in k.spec.get("indexes", {})
        if not k.spec["indexes"][i].get("shards")
    ]
    by_index: dict[str, list[Kind]] = {}
    for kind, index in shared:
        by_index.setdefault(index, []).append(kind)
    for index, kinds in by_index.items():
        if len(kinds) > 1 and _chance(draw, 0.4):
            pk = kinds[0].spec["indexes"][index]["pk"].split("#")[0] + "#{id}"
            out[f"all{index}"] = {
                "types": [k.name for k in kinds],
                "union": f"Any{index}",
                "index": index,
                "partition": pk,
            }
    for child in d.of_shape("child"):
        if _chance(draw, 0.3):
            out[f"{_lower(child.name)}sOf"] = {
                "type": child.name,
                "partition": child.pk,
                "sort": {"template": child.spec["key"]["sk"], "arguments": child.key_fields[1:2]},
            }
    if not out:
        del d.data["queries"]


def _where(draw: Draw, kind: Kind, query: dict[str, Any]) -> None:
    """A query's filter on its type's stored fields: an argument, `in`, `ne`, `or`."""
    numbers = [f for f, t in kind.stored.items() if t.strip("!") in ("Int", "Float")]
    texts = [f for f, t in kind.stored.items() if t.strip("!") in ("String", "ID")]
    where: dict[str, Any] = {}
    if numbers:
        where[numbers[0]] = {"lte": "$most"}
        query["arguments"] = {"most": _one(draw, ["Int", "Float", "String"])}
    if texts:
        where[texts[0]] = _one(draw, [{"in": ["a1", "b2"]}, {"ne": None}, "a1", None])
    if len(where) > 1 and _chance(draw, 0.5):
        where = {"or": [{k: v} for k, v in where.items()]}
    if where:
        query["where"] = where


def access(draw: Draw, d: Draft) -> None:
    """Access rules: a principal, read paths over edge fields (`self`), field rules, and the
    mutations a principal may run."""
    principals = [k for k in d.of_shape("single") if not k.spec.get("implicit")]
    if not principals or not _chance(draw, 0.2):
        return
    principal = _one(draw, principals)
    read: dict[str, list[str]] = {principal.name: ["self"]}
    for hop, reached in principal.hops.items():
        if hop in principal.edge_hops:
            read.setdefault(reached, []).append(hop)
    rules: dict[str, Any] = {"principal": principal.name, "read": read}
    stored = [f for f in principal.stored if f not in principal.key_fields]
    if stored and _chance(draw, 0.5):
        rules["fields"] = {f"{principal.name}.{stored[0]}": ["self"]}
    if _chance(draw, 0.5) and principal.spec.get("mutations", True):
        update = principal.spec.get("names", {}).get("update", f"update{principal.name}")
        rules["mutations"] = {update: {"input.id": ["self"]}}
    for label, edge in d.data.get("edges", {}).items():
        if edge["from"] == principal.name != edge["to"] and _chance(draw, 0.5):
            add = edge.get("add", f"add{label.title()}")
            rules.setdefault("mutations", {})[add] = _one(
                draw, [{}, {f"{_lower(principal.name)}Id": ["self"]}]
            )
    d.data["access"] = rules


def expose(draw: Draw, d: Draft) -> None:
    """A type's `expose`: its fields in an order, some left out."""
    for kind in d.kinds.values():
        listed = ["id", *kind.spec.get("fields", {})]
        if _chance(draw, 0.1):
            kind.spec["expose"] = draw(st.permutations(listed))[: max(1, len(listed) - 1)]


def shared_attributes(draw: Draw, d: Draft) -> None:
    """Now and then a field stored in an attribute the table uses for something else: a key,
    the type attribute, an index key, the version or a timestamp."""
    table = d.data["table"]
    taken = [d.attr("partitionKey"), d.attr("sortKey"), "GSI1PK", "version", "createdAt", "_ct"]
    taken += [table["typeAttribute"]] if "typeAttribute" in table else []
    for kind in d.kinds.values():
        stored = [f for f in kind.spec.get("fields", {}) if f in kind.stored]
        if stored and _chance(draw, 0.08):
            name = _one(draw, stored)
            decl = kind.spec["fields"][name]
            decl = dict(decl) if isinstance(decl, dict) else {"type": decl}
            kind.spec["fields"][name] = decl | {"attribute": _one(draw, taken)}


def table_extras(draw: Draw, d: Draft) -> None:
    """Deletes too large for one transaction marked on an index (`deletions`), an id rule
    (`ids`)."""
    own = [i for i in d.own_gsis() if "sortKey" in d.indexes[i]]
    if own and _chance(draw, 0.15):
        d.data["table"]["deletions"] = {"index": own[0]}
    if d.key_type == "S" and _chance(draw, 0.1):
        d.data["table"]["ids"] = {"pattern": "[a-z0-9]{1,20}", "description": "a-z and 0-9"}


def root_expose(draw: Draw, d: Draft) -> None:
    """The root fields served, in an order, some left out (`expose: {Query, Mutation}`)."""
    lookups = [
        k.spec.get("names", {}).get("lookup", _lower(k.name))
        for k in d.kinds.values()
        if k.spec.get("node", True)
    ]
    roots = [
        "node",
        "nodes",
        *lookups,
        *(n for n, q in d.data.get("queries", {}).items() if "on" not in q),
    ]
    if _chance(draw, 0.1):
        d.data["expose"] = {"Query": draw(st.permutations(roots))[: max(1, len(roots) - 1)]}
    creates = [
        k.spec.get("names", {}).get("create", f"create{k.name}")
        for k in d.kinds.values()
        if k.spec.get("mutations", True) and not k.spec.get("implicit")
    ]
    if creates and _chance(draw, 0.1):
        d.data.setdefault("expose", {})["Mutation"] = creates


FEATURES: tuple[Callable[[Draw, Draft], None], ...] = (
    table,
    indexes,
    enums,
    node_types,
    fields,
    uniques,
    refs,
    derived,
    type_indexes,
    edges,
    paths,
    queries,
    access,
    expose,
    shared_attributes,
    table_extras,
    root_expose,
)


@st.composite
def models(draw: Draw) -> dict[str, Any]:
    """A coherent model file's mapping: every feature of :data:`FEATURES`, in order."""
    draft = Draft({})
    for feature in FEATURES:
        feature(draw, draft)
    return draft.data


# ---- small changes ------------------------------------------------------------------------


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _places(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _places(value, (*path, i))
    return out


def _leaves(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [leaf for value in node.values() for leaf in _leaves(value)]
    if isinstance(node, list):
        return [leaf for value in node for leaf in _leaves(value)]
    return [node]


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _change(draw: Draw, data: dict[str, Any]) -> None:
    places = _places(data)
    place = _one(draw, places)
    holder, last = _get(data, place[:-1]), place[-1]
    how = _one(draw, ["drop", "swap", "typo", "literal", "unknown"])
    if how == "drop":
        del holder[last]
    elif how == "swap":  # another value of the file at this place
        holder[last] = copy.deepcopy(_one(draw, _leaves(data)))
    elif how == "typo":
        value = holder[last]
        if isinstance(value, str) and value:
            holder[last] = value[:-1] if _chance(draw, 0.5) else value + "s"
        elif isinstance(holder, dict) and isinstance(last, str):
            holder[last + "s"] = holder.pop(last)
    elif how == "literal":  # a template's literal text changed, or a placeholder made up
        value = holder[last]
        if isinstance(value, str):
            holder[last] = _one(draw, [value.replace("#", ""), value + "#{extra}", "{id}", ""])
    elif isinstance(holder[last], dict):
        holder[last]["unknownKey"] = 1


@st.composite
def mutated(draw: Draw, strategy: st.SearchStrategy[dict[str, Any]] | None = None) -> Any:
    """A model from :func:`models` (or ``strategy``), changed in 0 to 2 places (none for
    half of them)."""
    data = copy.deepcopy(draw(strategy if strategy is not None else models()))
    for _ in range(_one(draw, [0, 0, 0, 1, 1, 2])):
        if not _places(data):
            break
        _change(draw, data)
    return data
