"""Tables written by the common libraries, recognised outright: ElectroDB (``__edb_e__`` and
``__edb_v__`` on its items, keys of ``$``-prefixed segments such as
``$taskapp#employee_jlowe`` / ``$employee_1``) and dynamodb-toolbox (``_et`` with ``_ct`` or
``_md``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..templates import Template
from .values import Row, gql_name

__all__ = [
    "ELECTRODB",
    "TOOLBOX",
    "TYPE_ATTRIBUTES",
    "Library",
    "electro_prefix",
    "electro_template",
    "library_of",
    "status_like",
    "type_like",
]

ELECTRODB = "ElectroDB"
TOOLBOX = "dynamodb-toolbox"
# type attributes of the common libraries and conventions, preferred in this order
TYPE_ATTRIBUTES = (
    "__edb_e__",
    "_et",
    "_type",
    "__typename",
    "entity_type",
    "entityType",
    "EntityType",
    "type",
)
# names an attribute that holds each item's type, separators and case aside (``entity_type``,
# ``EntityType``, ``_type``, ``record_kind``): the only ones whose values may split a key shape
TYPE_WORDS = frozenset(
    f"{stem}{word}"
    for stem in (
        "",
        "entity",
        "item",
        "record",
        "object",
        "model",
        "doc",
        "document",
        "node",
        "row",
    )
    for word in ("type", "kind", "typename")
) | {"entity", "et"}
SHORT = re.compile(r"^_{1,2}(?!id$|pk$|sk$|ts$)[a-z]{1,3}$")  # dynamodb-toolbox's `_et`, `_t`
STATUS = re.compile(r"(?i)(status|state|stage|phase)$")  # `status`, `orderStatus`, `order_state`


def type_like(attribute: str) -> bool:
    """Whether an attribute's name says it holds each item's type (``entity_type``, ``_type``,
    ``_et`` and other short ``_``-names of the libraries)."""
    return bool(SHORT.match(attribute)) or re.sub(r"[^a-z]", "", attribute.lower()) in TYPE_WORDS


def status_like(attribute: str) -> bool:
    """Whether an attribute's name says it holds a state (``status``, ``orderStatus``): never a
    type attribute, whatever its values."""
    return bool(STATUS.search(attribute))


@dataclass(frozen=True)
class Library:
    name: str
    evidence: str
    type_attribute: str
    metadata: tuple[str, ...] = ()  # the library's own attributes, not fields of a type


def library_of(rows: Sequence[Row]) -> Library | None:
    """The library that wrote most of these items, if its marks are on them."""

    def share(*names: str) -> int:
        return sum(1 for r in rows if all(n in r.attrs for n in names))

    if rows and share("__edb_e__", "__edb_v__") * 2 > len(rows):
        seen = f"__edb_e__ and __edb_v__ on {share('__edb_e__', '__edb_v__')} of {len(rows)} items"
        return Library(ELECTRODB, seen, "__edb_e__", ("__edb_v__",))
    stamped = max(share("_et", "_ct"), share("_et", "_md"))
    if rows and stamped * 2 > len(rows):
        marks = [m for m in ("_et", "_ct", "_md") if any(m in r.attrs for r in rows)]
        seen = f"{', '.join(marks)} on {stamped} of {len(rows)} items"
        return Library(TOOLBOX, seen, "_et")
    return None


def electro_prefix(key: str) -> str:
    """The grouping prefix of an ElectroDB key: up to its first composite's name
    (``$taskapp#employee_``), or the whole key when it holds none (``$employee_1``)."""
    head, sep, rest = key.partition("#")
    if not sep:
        return key
    name, underscore, _ = rest.partition("_")
    return f"{head}#{name}{underscore}" if underscore else key


def electro_template(keys: Sequence[str], rows: Sequence[Row], entity: str = "") -> str | None:
    """One template for ElectroDB keys of one entity: the ``$`` head kept literally, as is the
    ``#<entity>_<version>`` segment of a collection's key, each other ``#name_value`` segment a
    placeholder named after the attribute ``name`` stands for (ElectroDB lower-cases it); None
    when the keys do not share one skeleton."""
    versions = {str(r.attrs["__edb_v__"][1]) for r in rows if "__edb_v__" in r.attrs}
    literal = {f"{entity}_{v}".lower() for v in versions}
    skeletons: set[tuple[str, ...]] = set()
    for key in keys:
        if not key.startswith("$"):
            return None
        head, *segments = key.split("#")
        names = []
        for segment in segments:
            if segment.lower() in literal:
                names.append("=" + segment)
                continue
            name, underscore, _ = segment.partition("_")
            if not underscore or not name:
                return None
            names.append(name)
        skeletons.add((head, *names))
    if len(skeletons) != 1:
        return None
    head, *names = skeletons.pop()
    attributes = {a.lower(): a for r in rows for a in r.attrs}
    parts = [head]
    for name in names:
        if name.startswith("="):
            parts.append("#" + name[1:])
            continue
        field = gql_name(attributes.get(name.lower(), name))
        parts.append(f"#{name}_{{{field}}}")
    template = "".join(parts)
    compiled = Template.compile(template)
    if not all(compiled.parse(k) is not None for k in keys):
        return None
    return template
