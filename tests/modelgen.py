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

The key shapes of tables as teams have them (named placeholders, partitions known by their id,
implicit parents, types sharing a key told apart by the type attribute, adjacent placeholders,
`from: key`) and stored objects are drafted by :mod:`tests.modelshapes`; the draft itself is
:mod:`tests.modeldraft`. Not generated yet: hook fields and hook mutations, ``generator``,
``descriptions``, a replica's ``type``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from tests.modeldraft import (
    FIELD_NAMES,
    ONE_TEMPLATE,
    SCALARS,
    Draft,
    Draw,
    Kind,
    chance,
    lower,
    one,
    placeholders,
)
from tests.modelshapes import keys_of, node_types, stored_objects

# ---- the table ----------------------------------------------------------------------------


def table(draw: Draw, d: Draft) -> None:
    """Key names and types (mostly S; N or B for a team's numbered table), typeAttribute,
    labelAttribute, versionAttribute, keyCasing, timestamps, storeKeyFields."""
    pk, sk = one(draw, [("PK", "SK"), ("pk", "sk"), ("Id", "Sort")])
    d.key_type = "S" if chance(draw, 0.85) else one(draw, ["N", "B"])
    t: dict[str, Any] = {"name": one(draw, ["app-table", "fuzz"])}
    if d.key_type == "S":
        t["partitionKey"], t["sortKey"] = pk, sk
    else:
        t["partitionKey"] = {"name": pk, "type": d.key_type}
        t["sortKey"] = {"name": sk, "type": d.key_type}
    if chance(draw, 0.6 if d.key_type == "S" else 0.9):  # N, B: keys alone hardly tell
        t["typeAttribute"] = one(draw, ["type", "_et", "entity_type"])
        if chance(draw, 0.2):
            t["labelAttribute"] = "edge"
    if chance(draw, 0.3):
        t["versionAttribute"] = "version"
    if chance(draw, 0.2):
        t["keyCasing"] = one(draw, ["none", "lower", "upper"])
    if chance(draw, 0.3):
        t["timestamps"] = one(draw, [True, {"created": "_ct", "modified": "_md"}])
    if chance(draw, 0.3):
        t["storeKeyFields"] = True
    d.data["table"] = t


def indexes(draw: Draw, d: Draft) -> None:
    """Secondary indexes: an inverted one, global ones with attributes of their own (with or
    without a sort key, any projection), a local one."""
    t, found = d.data["table"], {}
    pk, sk = d.attr("partitionKey"), d.attr("sortKey")
    typed = d.data["table"]["partitionKey"] if d.key_type != "S" else None
    if chance(draw, 0.5):
        found[one(draw, ["inverted", "byTarget"])] = {
            "partitionKey": d.data["table"]["sortKey"] if typed else sk,
            "sortKey": typed or pk,
        }
    for i in range(draw(st.integers(0, 2))):
        index: dict[str, Any] = {"partitionKey": f"GSI{i + 1}PK"}
        if chance(draw, 0.85):
            index["sortKey"] = f"GSI{i + 1}SK"
        if chance(draw, 0.25):
            index["projection"] = one(draw, ["KEYS_ONLY", ["name", "status"], ["score"]])
        found[f"GSI{i + 1}"] = index
    if chance(draw, 0.15):
        found["byLocal"] = {"partitionKey": typed or pk, "sortKey": "LSI1SK", "local": True}
    if found:
        t["indexes"] = found
    d.indexes = found


def enums(draw: Draw, d: Draft) -> None:
    """Enums in both forms: a list, and GraphQL value to stored string."""
    for name in draw(st.lists(st.sampled_from(["Status", "Color"]), max_size=2, unique=True)):
        if chance(draw, 0.5):
            d.section("enums")[name] = ["OPEN", "CLOSED"] if name == "Status" else ["RED", "BLUE"]
        else:
            d.section("enums")[name] = {"OPEN": "open", "IN_PROGRESS": "in-progress"}


# ---- types --------------------------------------------------------------------------------


def _scalar(draw: Draw, d: Draft, nullable: bool) -> str:
    name: str = one(draw, SCALARS + tuple(d.data.get("enums", {})))
    text = name
    if chance(draw, 0.15):
        text = f"[{name}!]" + ("!" if not nullable and chance(draw, 0.5) else "")
    elif not nullable and chance(draw, 0.5):
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
            if chance(draw, 0.4):
                decl = {"type": text}
                taken = {
                    f.get("attribute")
                    for f in kind.spec.get("fields", {}).values()
                    if isinstance(f, dict)
                }
                if chance(draw, 0.3):  # one attribute a field (two: MODELS.md's item-types rule)
                    decl["attribute"] = one(
                        draw, [a for a in (name.upper(), f"_{name}", "Data") if a not in taken]
                    )
                base = text.strip("[]!")
                if base == "String" and "[" not in text and chance(draw, 0.3):
                    decl["length"] = [1, 50]
                if base == "String" and "[" not in text and chance(draw, 0.15):
                    decl["format"] = "email"
                if base in ("String", "Int", "Boolean") and "[" not in text and chance(draw, 0.2):
                    decl["default"] = {"String": "x", "Int": 3, "Boolean": True}[base]
                if base == "DateTime" and chance(draw, 0.3):
                    decl["initial"] = "now"
                if chance(draw, 0.1):
                    decl["description"] = f"The {name}."
            kind.spec.setdefault("fields", {})[name] = decl
            kind.stored[name] = text


def uniques(draw: Draw, d: Draft) -> None:
    """A unique String field on a one-template type (a claim item per value)."""
    for kind in d.of_shape(*ONE_TEMPLATE):
        if kind.implicit or not chance(draw, 0.25) or d.key_type != "S":
            continue
        unique: dict[str, Any] = {"key": "EMAIL#{email}"}
        if chance(draw, 0.5):
            unique["caseInsensitive"] = True
        if "typeAttribute" in d.data["table"] and chance(draw, 0.3):
            unique["typeValue"] = "EMAIL"
        kind.spec.setdefault("fields", {})["email"] = {"type": "String", "unique": unique}
        kind.stored["email"] = "String"
        break  # one claim prefix per model


def refs(draw: Draw, d: Draft) -> None:
    """References in each form: by the target's one placeholder, `holds: key`, composite
    (placeholder <- field), over a list of ids, over the keys of a map (`keysOf`)."""
    for kind in list(d.kinds.values()):
        if not chance(draw, 0.5):
            continue
        target = one(draw, d.kinds.values())
        fields_ = kind.spec.setdefault("fields", {})
        name = lower(target.name)
        if name in fields_ or name in kind.key_fields:
            continue
        forms = ["one", "key", "list", "keysOf"] if target.single else ["one", "key", "list"]
        form = one(draw, forms if len(target.key_fields) == 1 else ["composite"])
        if form == "keysOf":
            keys_of(draw, d, kind, target)
            continue
        required = not kind.spec.get("implicit") and chance(draw, 0.3)
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
        held = child.key_fields[0]
        if parent.single and chance(draw, 0.3):
            child.spec.setdefault("fields", {})["owner"] = {"type": f"{parent.name}!", "ref": held}
            child.hops["owner"] = parent.name


def derived(draw: Draw, d: Draft) -> None:
    """`first` and `sum` over a child collection."""
    for child in d.of_shape("child"):
        parent = d.kinds[child.spec["parent"]["type"]]
        collection = child.spec["parent"]["collection"]
        fields_ = parent.spec.setdefault("fields", {})
        if chance(draw, 0.4):
            fields_["latest"] = {"type": child.name, "first": collection}
        numbers = [f for f, t in child.stored.items() if t.strip("!") in ("Int", "Float")]
        if numbers and chance(draw, 0.5):
            fields_["total"] = {"type": "Float!", "sum": f"{collection}.{numbers[0]}"}


def type_indexes(draw: Draw, d: Draft) -> None:
    """Index entries: templates over a type's fields written into a global index's keys (write
    shards, partial keys), and a local index's sort key."""
    for kind in d.kinds.values():
        if kind.spec.get("implicit"):
            continue
        for index in d.own_gsis():
            if not chance(draw, 0.5):
                continue
            spec = d.indexes[index]
            ident = "id" if "id" in kind.key_fields else kind.ident  # `{id}`, or `{username}`
            first = one(draw, [f for f, t in kind.stored.items() if "[" not in t] or [ident])
            spec_ = ""
            if kind.stored.get(first, "").strip("!") in ("Int", "Float") and chance(draw, 0.5):
                spec_ = one(draw, [":06d", ":.2f"])
            entry: dict[str, Any] = {"pk": f"{kind.prefix}_{index}#{{{first}{spec_}}}"}
            if chance(draw, 0.2):
                entry = {"pk": f"{kind.prefix}_{index}#{{shard}}", "shards": one(draw, [2, 4])}
            if "sortKey" in spec:
                sks = [f"{{{ident}}}", kind.prefix]
                if first != ident:
                    sks.append(f"{{{first}}}#{{{ident}}}")
                if first != ident and d.data["table"].get("storeKeyFields"):
                    sks.append(f"{kind.prefix}#{{{first}}}{{{ident}}}")  # adjacent placeholders
                entry["sk"] = one(draw, sks)
            if chance(draw, 0.15):
                entry["partial"] = True
            kind.spec.setdefault("indexes", {})[index] = entry


# ---- edges and paths ----------------------------------------------------------------------


def edges(draw: Draw, d: Draft) -> None:
    """Edges between one-template types: forward (a connection or `one`), reverse over an
    inverted index or over a global index the edge writes, fields and copies of an end's
    fields, count, names, owns."""
    ends = d.of_shape(*ONE_TEMPLATE)
    if not ends:
        return
    pairs = [(a.name, b.name) for a in ends for b in ends]
    if "typeAttribute" not in d.data["table"]:  # keys alone tell the items apart
        pairs = [(a, b) for a, b in pairs if a != b]
    if not pairs:
        return
    least = 1 if chance(draw, 0.7) else 0
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=least, max_size=3, unique=True))
    for i, (source_name, target_name) in enumerate(chosen):
        source, target = d.kinds[source_name], d.kinds[target_name]
        label = ["LIKES", "HOLDS", "FOLLOWS"][i]
        edge: dict[str, Any] = {"from": source.name, "to": target.name}
        forward = f"{label.lower()}{target.name}s"
        if chance(draw, 0.8):
            edge["forward"] = forward
            if chance(draw, 0.3):
                edge["forward"] = {"field": forward, "one": chance(draw, 0.5), "order": "desc"}
            source.hops[forward] = target.name
            source.edge_hops[forward] = label
        reverse = f"{label.lower()}By{source.name}s"
        inverted, own = d.inverted(), d.own_gsis()
        if (inverted or own) and chance(draw, 0.7):
            if inverted and (not own or chance(draw, 0.5)):
                index = one(draw, inverted)
            else:
                index = one(draw, own)
                entry = {"pk": f"TO_{label}#{{to}}"}
                if "sortKey" in d.indexes[index]:
                    entry["sk"] = "FROM#{from}"
                edge["indexes"] = {index: entry}
            edge["reverse"] = {"field": reverse, "index": index, "one": chance(draw, 0.2)}
            target.hops[reverse] = source.name
            target.edge_hops[reverse] = label
        edge_fields: dict[str, Any] = {}
        if chance(draw, 0.6):
            edge_fields["since"] = one(
                draw, ["Date", "DateTime", {"type": "DateTime", "initial": "now"}]
            )
        if chance(draw, 0.4):
            edge_fields["weight"] = one(draw, ["Int", "Int!", {"type": "Int!", "default": 1}])
        if "Address" in d.data.get("objects", {}) and chance(draw, 0.2):
            edge_fields["place"] = one(draw, ["Address", {"type": "[Address!]"}])
        copied = [f for f, t in source.stored.items() if f not in source.key_fields]
        if copied and chance(draw, 0.3):
            edge_fields["copied"] = {"copyOf": f"from.{one(draw, copied)}"}
        copied = [f for f, t in target.stored.items() if f not in target.key_fields]
        if copied and "reverse" in edge and chance(draw, 0.2):
            edge_fields["copiedTo"] = {"copyOf": f"to.{one(draw, copied)}"}
        if edge_fields:
            edge["fields"] = edge_fields
        implicit = source.spec.get("implicit") or target.spec.get("implicit")
        if chance(draw, 0.3) and not implicit:
            edge["count"] = "counter"
        if chance(draw, 0.1):
            edge["add"], edge["remove"] = f"link{label.title()}", f"unlink{label.title()}"
        if chance(draw, 0.05):
            edge["mutations"] = False
        if chance(draw, 0.05):
            edge["owns"] = True
        d.section("edges")[label] = edge


def paths(draw: Draw, d: Draft) -> None:
    """Path fields over edge fields (a ref hop only where the branch item-types makes it
    work): the nodes reached, whether one is reached (Boolean with an ID argument), objects
    filled by `shape`; `where` on the last edge's fields; a replica (`materialize`)."""
    for kind in list(d.kinds.values()):
        first = [f for f in kind.hops if f in kind.edge_hops]
        if not first or not chance(draw, 0.8):
            continue
        hop1 = one(draw, first)
        middle = d.kinds[kind.hops[hop1]]
        hops = [hop1]
        second = [f for f in middle.hops if f in middle.edge_hops]
        if second and chance(draw, 0.6):
            hops.append(one(draw, second))
        end = d.kinds[kind.hops[hop1] if len(hops) == 1 else middle.hops[hops[1]]]
        decl: dict[str, Any] = {"path": hops}
        answer = one(draw, ["nodes", "exists", "objects"])
        if answer == "nodes":
            decl["type"] = f"[{end.name}!]!"
        elif answer == "exists":
            decl["type"] = "Boolean!"
            decl["arguments"] = {f"{lower(end.name)}Id": "ID!"}
        else:
            obj = f"{kind.name}Reach"
            obj_fields = {"node": f"{end.name}!"}
            by_position = chance(draw, 0.3)  # a hop named by its position
            shape: dict[str, Any] = {"node": len(hops) if by_position else hops[-1]}
            if len(hops) == 2:
                obj_fields["via"] = f"[{middle.name}!]!"
                shape["via"] = 1 if by_position else hops[0]
            d.section("objects")[obj] = {"fields": obj_fields}
            decl["type"] = f"[{obj}!]!"
            decl["shape"] = shape
        label = (middle if len(hops) == 2 else kind).edge_hops[hops[-1]]
        edge_fields = d.data["edges"][label].get("fields", {})
        compared = sorted(f for f in edge_fields if f != "place")  # an object compares nothing
        if compared and chance(draw, 0.5):
            name = one(draw, compared)
            decl["where"] = one(
                draw,
                [
                    {name: None},
                    {"or": [{name: None}, {name: {"gt": "now" if name == "since" else 0}}]},
                ],
            )
        by_id = all(k.ident == "id" for k in (kind, middle, end))  # a replica names nodes by id
        if (
            by_id and d.key_type == "S" and chance(draw, 0.4)
        ):  # over an implicit start too (a `~edgewise` item)
            replica: dict[str, Any] = {"key": {"pk": f"{kind.prefix}#{{from}}", "sk": "R#{to}"}}
            if len(hops) == 2:
                replica["key"]["sk"] = "R#{to}|{via}"
            if "where" in decl:
                replica["copy"] = [next(k for k in edge_fields if k in str(decl["where"]))]
            decl["materialize"] = replica
        name = one(draw, ["reach", "reached"])
        kind.spec.setdefault("fields", {})[name] = decl
        if "materialize" in decl and chance(draw, 0.5):  # another field read from that replica
            shared = {"type": "Boolean!", "path": hops, "materialize": name}
            shared["arguments"] = {f"{lower(end.name)}Id": "ID!"}
            if "where" in decl:
                shared["where"] = decl["where"]
            kind.spec["fields"]["mayReach"] = shared


# ---- queries and access -------------------------------------------------------------------


def queries(draw: Draw, d: Draft) -> None:
    """Access patterns: over a global index a type writes (partition and sort templates from its
    entry, `between`, equality `arguments`, a `where` with `$arguments`, `order`), a type's
    field with `on:`, several types as a union, a child collection of the table; a sort template
    without a placeholder (a prefix)."""
    out = d.section("queries")
    for kind in d.kinds.values():
        for index, entry in kind.spec.get("indexes", {}).items():
            if not chance(draw, 0.6):
                continue
            query: dict[str, Any] = {"type": kind.name, "index": index, "partition": entry["pk"]}
            sk = entry.get("sk")
            if sk is not None and chance(draw, 0.7):
                sort: dict[str, Any] = {"template": sk}
                if "{" in sk and chance(draw, 0.5):
                    sort["between"] = ["from", "to"]
                    if chance(draw, 0.3):
                        sort["exclusive"] = True
                elif "{" in sk and chance(draw, 0.5):
                    sort["arguments"] = placeholders(sk)[:1]
                elif sk.split("{")[0] and chance(draw, 0.3):  # a constant prefix of the sort key
                    sort["template"] = sk.split("{")[0]
                query["sort"] = sort
            if chance(draw, 0.3):
                query["order"] = "desc"
            if chance(draw, 0.4):
                _where(draw, kind, query)
            if chance(draw, 0.1):
                query["count"] = "counter"
            owners = [
                k for k in d.kinds.values() if k.single and f"{{{lower(k.name)}Id}}" in entry["pk"]
            ]
            if owners and chance(draw, 0.5):
                owner = owners[0]
                query["on"] = owner.name
                query["partition"] = entry["pk"].replace(f"{lower(owner.name)}Id", owner.ident)
            out[f"{lower(kind.name)}By{index}"] = query
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
        if len(kinds) > 1 and chance(draw, 0.4):
            pk = kinds[0].spec["indexes"][index]["pk"].split("#")[0] + "#{id}"
            out[f"all{index}"] = {
                "types": [k.name for k in kinds],
                "union": f"Any{index}",
                "index": index,
                "partition": pk,
            }
    for child in d.of_shape("child"):
        if chance(draw, 0.3):
            out[f"{lower(child.name)}sOf"] = {
                "type": child.name,
                "partition": child.pk,
                "sort": {"template": child.spec["key"]["sk"], "arguments": child.key_fields[1:2]},
            }
            if chance(draw, 0.3):  # a constant template: a prefix of the sort key
                out[f"{lower(child.name)}sOf"]["sort"] = {"template": child.prefix + "#"}
    if not out:
        del d.data["queries"]


def _where(draw: Draw, kind: Kind, query: dict[str, Any]) -> None:
    """A query's filter on its type's stored fields: an argument, `in`, `ne`, `or`."""
    numbers = [f for f, t in kind.stored.items() if t.strip("!") in ("Int", "Float")]
    texts = [f for f, t in kind.stored.items() if t.strip("!") in ("String", "ID")]
    where: dict[str, Any] = {}
    if numbers:
        where[numbers[0]] = {"lte": "$most"}
        query["arguments"] = {"most": one(draw, ["Int", "Float", "String"])}
    if texts:
        where[texts[0]] = one(draw, [{"in": ["a1", "b2"]}, {"ne": None}, "a1", None])
    if len(where) > 1 and chance(draw, 0.5):
        where = {"or": [{k: v} for k, v in where.items()]}
    if where:
        query["where"] = where


def access(draw: Draw, d: Draft) -> None:
    """Access rules: a principal, read paths over edge fields (`self`), field rules, and the
    mutations a principal may run."""
    principals = [k for k in d.of_shape(*ONE_TEMPLATE) if not k.implicit]
    if not principals or not chance(draw, 0.2):
        return
    principal = one(draw, principals)
    read: dict[str, list[str]] = {principal.name: ["self"]}
    for hop, reached in principal.hops.items():
        if hop in principal.edge_hops:
            read.setdefault(reached, []).append(hop)
    rules: dict[str, Any] = {"principal": principal.name, "read": read}
    stored = [f for f in principal.stored if f not in principal.key_fields]
    if stored and chance(draw, 0.5):
        rules["fields"] = {f"{principal.name}.{stored[0]}": ["self"]}
    if chance(draw, 0.5) and principal.spec.get("mutations", True):
        update = principal.spec.get("names", {}).get("update", f"update{principal.name}")
        rules["mutations"] = {update: {f"input.{principal.ident}": ["self"]}}
    for label, edge in d.data.get("edges", {}).items():
        if edge["from"] == principal.name != edge["to"] and chance(draw, 0.5):
            add = edge.get("add", f"add{label.title()}")
            rules.setdefault("mutations", {})[add] = one(draw, [{}, {principal.end: ["self"]}])
    d.data["access"] = rules


def expose(draw: Draw, d: Draft) -> None:
    """A type's `expose`: its fields in an order, some left out."""
    for kind in d.kinds.values():
        listed = ["id", *kind.spec.get("fields", {})]
        if chance(draw, 0.1):
            kind.spec["expose"] = draw(st.permutations(listed))[: max(1, len(listed) - 1)]


def shared_attributes(draw: Draw, d: Draft) -> None:
    """Now and then a field stored in an attribute the table uses for something else: a key,
    the type attribute, an index key, the version or a timestamp."""
    table = d.data["table"]
    taken = [d.attr("partitionKey"), d.attr("sortKey"), "GSI1PK", "version", "createdAt", "_ct"]
    taken += [table["typeAttribute"]] if "typeAttribute" in table else []
    for kind in d.kinds.values():
        stored = [f for f in kind.spec.get("fields", {}) if f in kind.stored]
        if stored and chance(draw, 0.08):
            name = one(draw, stored)
            decl = kind.spec["fields"][name]
            decl = dict(decl) if isinstance(decl, dict) else {"type": decl}
            kind.spec["fields"][name] = decl | {"attribute": one(draw, taken)}


def table_extras(draw: Draw, d: Draft) -> None:
    """Deletes too large for one transaction marked on an index (`deletions`), an id rule
    (`ids`)."""
    own = [i for i in d.own_gsis() if "sortKey" in d.indexes[i]]
    if own and chance(draw, 0.15):
        d.data["table"]["deletions"] = {"index": own[0]}
    if d.key_type == "S" and chance(draw, 0.1):
        d.data["table"]["ids"] = {"pattern": "[a-z0-9]{1,20}", "description": "a-z and 0-9"}


def root_expose(draw: Draw, d: Draft) -> None:
    """The root fields served, in an order, some left out (`expose: {Query, Mutation}`)."""
    lookups = [
        k.spec.get("names", {}).get("lookup", lower(k.name))
        for k in d.kinds.values()
        if k.spec.get("node", True)
    ]
    roots = [
        "node",
        "nodes",
        *lookups,
        *(n for n, q in d.data.get("queries", {}).items() if "on" not in q),
    ]
    if chance(draw, 0.1):
        d.data["expose"] = {"Query": draw(st.permutations(roots))[: max(1, len(roots) - 1)]}
    creates = [
        k.spec.get("names", {}).get("create", f"create{k.name}")
        for k in d.kinds.values()
        if k.spec.get("mutations", True) and not k.spec.get("implicit")
    ]
    if creates and chance(draw, 0.1):
        d.data.setdefault("expose", {})["Mutation"] = creates


FEATURES: tuple[Callable[[Draw, Draft], None], ...] = (
    table,
    indexes,
    enums,
    node_types,
    fields,
    stored_objects,
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
    place = one(draw, places)
    holder, last = _get(data, place[:-1]), place[-1]
    how = one(draw, ["drop", "swap", "typo", "literal", "unknown"])
    if how == "drop":
        del holder[last]
    elif how == "swap":  # another value of the file at this place
        holder[last] = copy.deepcopy(one(draw, _leaves(data)))
    elif how == "typo":
        value = holder[last]
        if isinstance(value, str) and value:
            holder[last] = value[:-1] if chance(draw, 0.5) else value + "s"
        elif isinstance(holder, dict) and isinstance(last, str):
            holder[last + "s"] = holder.pop(last)
    elif how == "literal":  # a template's literal text changed, or a placeholder made up
        value = holder[last]
        if isinstance(value, str):
            holder[last] = one(draw, [value.replace("#", ""), value + "#{extra}", "{id}", ""])
    elif isinstance(holder[last], dict):
        holder[last]["unknownKey"] = 1


@st.composite
def mutated(draw: Draw, strategy: st.SearchStrategy[dict[str, Any]] | None = None) -> Any:
    """A model from :func:`models` (or ``strategy``), changed in 0 to 2 places (none for
    half of them)."""
    data = copy.deepcopy(draw(strategy if strategy is not None else models()))
    for _ in range(one(draw, [0, 0, 0, 1, 1, 2])):
        if not _places(data):
            break
        _change(draw, data)
    return data
