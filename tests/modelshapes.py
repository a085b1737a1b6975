"""Features of :mod:`tests.modelgen` for the shapes of tables as teams have them (MODELS.md,
"Tables as teams have them" and "Items decide their type; stored objects"): node types of every
key shape (one template over `{id}` or a named placeholder, composite, a constant sort key, a
partition known by its id whose sort key holds another field, children of any of them, implicit
types and parents, types sharing a key template that the type attribute tells apart, adjacent
placeholders), and stored objects (a map, a list of maps, a map of maps with `entries:`,
nested)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.modeldraft import (
    ONE_TEMPLATE,
    PARENTS,
    TYPE_NAMES,
    Draft,
    Draw,
    Kind,
    chance,
    lower,
    one,
    upper,
)


def _key(
    draw: Draw, d: Draft, prefix: str, shape: str, parent: Kind | None
) -> tuple[Any, list[str]]:
    """A key of ``shape`` and the placeholders it holds."""
    if d.key_type != "S":  # a number or binary key is one bare placeholder
        if shape == "child" and parent is not None:
            link = lower(parent.name) + upper(parent.ident)
            return {"pk": f"{{{link}}}", "sk": "{id}"}, [link, "id"]
        if shape in ONE_TEMPLATE:
            return "{id}", ["id"]
        return {"pk": "{ownerId}", "sk": "{id}"}, ["ownerId", "id"]
    if shape == "single":
        return f"{prefix}#{{id}}", ["id"]
    if shape == "named":  # ACCOUNT#{username}: the key is the global id, named by a field
        name = one(draw, ["username", "handle"])
        return f"{prefix}#{{{name}}}", [name]
    if shape == "constant":
        return {"pk": f"{prefix}#{{id}}", "sk": prefix}, ["id"]
    if shape == "keyed":
        return {"pk": f"{prefix}#{{ownerId}}", "sk": f"{prefix}X#{{id}}"}, ["ownerId", "id"]
    if shape == "located":  # known by its partition; the sort key holds another field
        return {"pk": f"{prefix}#{{id}}", "sk": f"{prefix}C#{{ownerName}}"}, ["id", "ownerName"]
    assert parent is not None
    link = lower(parent.name) + upper(parent.ident)
    pk = parent.pk.replace("{" + parent.ident + "}", "{" + link + "}")
    if prefix.startswith(("D", "F")):  # a number in the sort key, zero-padded: `{rank:04d}`
        return {"pk": pk, "sk": f"{prefix}#{{rank:04d}}#{{id}}"}, [link, "rank", "id"]
    if d.data["table"].get("storeKeyFields") and chance(draw, 0.4):  # adjacent placeholders
        return {"pk": pk, "sk": f"{prefix}#{{kind}}{{id}}"}, [link, "kind", "id"]
    return {"pk": pk, "sk": f"{prefix}#{{kind}}#{{id}}"}, [link, "kind", "id"]


def _shape(draw: Draw, d: Draft) -> tuple[str, Kind | None, str | None]:
    """A type's key shape, its parent (a child's), and a type whose key template it shares
    (told apart by the type attribute)."""
    parents = [k for k in d.of_shape(*PARENTS)]
    shapes = ["single"] * 3 + ["keyed", "constant"]
    if d.key_type == "S":
        shapes += ["named", "named", "located"]
    shapes += ["child"] * (2 if parents else 0)
    shape = one(draw, shapes)
    parent = one(draw, parents) if shape == "child" else None
    twins = d.of_shape(shape) if d.typed and shape in ("single", "named", "constant") else []
    twin = one(draw, twins).prefix if twins and chance(draw, 0.35) else None
    return shape, parent, twin


def node_types(draw: Draw, d: Draft) -> None:
    """1 to 4 types of every key shape (see the module), children of an earlier type, implicit
    types; typeValue, names, mutations, node, description."""
    most = 4 if d.key_type == "S" else 2
    names = draw(st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=most, unique=True))
    if d.key_type == "S" and len(names) < 3 and chance(draw, 0.5):  # more to join and nest
        names += [n for n in TYPE_NAMES if n not in names][: 3 - len(names)]
    types = d.section("types")
    for name in names:
        shape, parent, twin = _shape(draw, d)
        prefix = twin or name[:3].upper()
        key, key_fields = _key(draw, d, prefix, shape, parent)
        spec: dict[str, Any] = {"key": key}
        kind = d.kinds[name] = Kind(name, spec, shape, prefix, key_fields)
        types[name] = spec
        if parent is not None:
            spec["parent"] = {
                "type": parent.name,
                "field": lower(parent.name),
                "collection": lower(name) + "s",
            }
            if chance(draw, 0.3):
                spec["parent"]["order"] = "desc"
            counted = not parent.implicit and parent.shape != "located"  # an item to hold it
            if counted and chance(draw, 0.3):
                spec["parent"]["count"] = "counter"
            if chance(draw, 0.15):
                spec["node"] = False
        if shape in ONE_TEMPLATE and chance(draw, 0.15):
            spec["implicit"] = True
        if d.typed and (twin is not None or chance(draw, 0.3)):
            spec["typeValue"] = one(draw, [name.upper(), name.lower()])
        if chance(draw, 0.1):
            spec["mutations"] = False
        if chance(draw, 0.1):
            spec["names"] = {"lookup": f"the{name}", "create": f"new{name}"}
            if chance(draw, 0.5):
                spec["names"] |= {"connection": f"{name}List", "edge": f"{name}Item"}
        if chance(draw, 0.1):
            spec["description"] = f"A {name.lower()}."
        _key_fields(draw, d, kind)


def _key_fields(draw: Draw, d: Draft, kind: Kind) -> None:
    """Fields over a type's key placeholders: declared, read from the key (`from: key`), or
    stored under another name."""
    fields = kind.spec.setdefault("fields", {})
    for name in kind.key_fields:
        text = {"rank": "Int!", "ownerId": "Int!" if d.key_type == "N" else "String!"}
        typed = text.get(name, "String!")
        must = name == "rank" or (name in ("kind", "ownerId") and d.key_type == "N")
        if name in ("id", kind.key_fields[0]) and kind.shape == "child":
            continue  # the parent's id and the child's own: ids
        if name == "id" or not (must or chance(draw, 0.6)):
            continue
        kind.stored[name] = typed
        form = one(draw, ["plain", "plain", "key", "attribute"])
        if form == "plain" or must:
            fields[name] = typed
        elif form == "key":
            fields[name] = {"type": typed, "from": "key"}
        else:
            fields[name] = {"type": typed, "attribute": upper(name)}
        if form == "key" and chance(draw, 0.3):  # a second field over that attribute: read-only
            fields[f"{name}Copy"] = {"type": typed.rstrip("!"), "attribute": name}
    if not fields:
        del kind.spec["fields"]


# ---- stored objects -----------------------------------------------------------------------

OBJECTS: dict[str, dict[str, Any]] = {
    "Geo": {
        "stored": True,
        "fields": {"lat": "Float!", "lng": {"type": "Float", "attribute": "Lng"}},
    },
    "Address": {
        "stored": True,
        "fields": {
            "street": {"type": "String!", "attribute": "Street"},
            "postalCode": "String",
            "geo": {"type": "Geo", "attribute": "Geo"},
        },
    },
    "Entry": {
        "stored": True,
        "fields": {
            "label": "String!",
            "note": {"type": "String", "attribute": "Note"},
            "tags": "[String!]",
        },
    },
}
USES = {"Address": ("Address", "Geo"), "Entry": ("Entry",)}


def stored_objects(draw: Draw, d: Draft) -> None:
    """Fields typed by stored objects: a map (`Address`), a list of maps (`[Address!]`), a map
    of maps (`[Entry!]` with `entries: label`), nested (`Address.geo`); nullable or not."""
    used: set[str] = set()
    for kind in d.kinds.values():
        if not chance(draw, 0.35):
            continue
        fields = kind.spec.setdefault("fields", {})
        bang = "!" if not kind.implicit and chance(draw, 0.3) else ""
        form = one(draw, ["map", "list", "entries"])
        if form == "map":
            fields["billing"] = {"type": "Address" + bang, "attribute": "Billing"}
        elif form == "list":
            fields["history"] = {"type": f"[Address!]{bang}", "attribute": "History"}
        else:
            fields["entries"] = {
                "type": f"[Entry!]{bang}",
                "attribute": "Entries",
                "entries": "label",
            }
        used |= set(USES["Entry" if form == "entries" else "Address"])
    for name in sorted(used):
        d.section("objects")[name] = dict(OBJECTS[name])


def keys_of(draw: Draw, d: Draft, kind: Kind, target: Kind) -> None:
    """A reference to one node per key of a map attribute (`{keysOf: roles}`): a JSON field, or
    the map of maps of a stored object (`entries:`)."""
    fields = kind.spec.setdefault("fields", {})
    name = lower(target.name)
    source = "entries" if "entries" in fields and chance(draw, 0.5) else f"{name}Roles"
    if source != "entries":
        fields[source] = {"type": "JSON", "attribute": upper(source)}
    listed = f"[{target.name}!]" + ("" if kind.implicit else "!")  # an implicit type: null
    fields[f"{name}s"] = {"type": listed, "ref": {"keysOf": source}}
    kind.hops[f"{name}s"] = target.name
