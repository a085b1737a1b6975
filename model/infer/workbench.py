"""``edgewise import-model --from nosql-workbench``: an AWS NoSQL Workbench data model export
(``ModelName``, ``DataModel`` of tables with ``KeyAttributes``, ``GlobalSecondaryIndexes``,
``TableFacets`` and sample rows in ``TableData``) in, a drafted model out. Pure: the CLI reads
the file.

A facet becomes a type of the same name. Workbench keeps plain aliases for keys
(``PartitionKeyAlias: EmployeeId``), so key templates come from the facet's sample rows: its
own ``TableData`` when it has rows, else the table's rows whose attributes the facet lists. From
there the rules are ``infer``'s, with the facet in place of a type attribute: a facet whose keys
are the keys of two other facets becomes an edge, GSIs become indexes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .render import infer
from .table import Draft, InferError, TableInfo

__all__ = ["import_workbench"]

Item = dict[str, Any]


def _keys(spec: Mapping[str, Any]) -> tuple[str, str | None, dict[str, str]]:
    """(partition key, sort key, attribute types) of a ``KeyAttributes`` object."""
    pk = spec["PartitionKey"]
    sk = spec.get("SortKey")
    types = {pk["AttributeName"]: pk.get("AttributeType", "S")}
    if sk:
        types[sk["AttributeName"]] = sk.get("AttributeType", "S")
    return pk["AttributeName"], sk["AttributeName"] if sk else None, types


def _table(export: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
    tables = export.get("DataModel")
    if not isinstance(tables, list) or not tables:
        raise InferError(
            "not a NoSQL Workbench data model export: no DataModel list of tables; export the "
            "model from Workbench's data modeler (Export model)"
        )
    names = [str(t.get("TableName")) for t in tables]
    if name is None:
        if len(tables) > 1:
            raise InferError(
                f"the export holds {len(tables)} tables ({', '.join(names)}): pick one with --table"
            )
        return dict(tables[0])
    for table in tables:
        if table.get("TableName") == name:
            return dict(table)
    raise InferError(f"no table {name!r} in the export (it holds {', '.join(names)})")


def _info(table: Mapping[str, Any]) -> TableInfo:
    pk, sk, types = _keys(table["KeyAttributes"])
    indexes, projections = {}, {}
    for gsi in table.get("GlobalSecondaryIndexes") or []:
        h, r, more = _keys(gsi["KeyAttributes"])
        types.update(more)
        indexes[gsi["IndexName"]] = (h, r)
        projections[gsi["IndexName"]] = gsi.get("Projection", {}).get("ProjectionType", "ALL")
    return TableInfo(str(table["TableName"]), pk, sk, types, indexes, projections)


def _aliased(row: Mapping[str, Any], facet: Mapping[str, Any], info: TableInfo) -> Item:
    """A facet's row with its key aliases (if it uses them) renamed to the key attributes."""
    aliases = facet.get("KeyAttributeAlias") or {}
    renames = {aliases.get("PartitionKeyAlias"): info.pk, aliases.get("SortKeyAlias"): info.sk}
    out: Item = {}
    for attribute, value in row.items():
        target = renames.get(attribute) if attribute not in (info.pk, info.sk) else None
        out[target or attribute] = value
    return out


def _facet_of(row: Mapping[str, Any], facets: Sequence[Mapping[str, Any]], keys: set[str]) -> int:
    """The facet listing every non-key attribute of a table row (the narrowest), or -1."""
    attributes = set(row) - keys
    fits = [
        (len(listed), n)
        for n, f in enumerate(facets)
        if attributes <= (listed := set(f.get("NonKeyAttributes") or []))
    ]
    return min(fits)[1] if fits else -1


def import_workbench(export: Mapping[str, Any], table: str | None, source: str) -> Draft:
    """The draft of one table of a NoSQL Workbench export (``source`` names the file)."""
    chosen = _table(export, table)
    info = _info(chosen)
    facets = list(chosen.get("TableFacets") or [])
    keys = {a for pair in [(info.pk, info.sk), *info.indexes.values()] for a in pair if a}
    items: list[Item] = []
    names: list[str | None] = []
    seen: set[tuple[str, str]] = set()
    notes: list[str] = []

    def add(item: Item, facet: str | None) -> None:
        key = (str(item.get(info.pk)), str(item.get(info.sk or "")))
        if key not in seen:
            seen.add(key)
            items.append(item)
            names.append(facet)

    for facet in facets:
        for row in facet.get("TableData") or []:
            add(_aliased(row, facet, info), str(facet["FacetName"]))
    unmatched = 0
    for row in chosen.get("TableData") or []:
        n = _facet_of(row, facets, keys)
        unmatched += n < 0
        add(dict(row), str(facets[n]["FacetName"]) if n >= 0 else None)
    for facet in facets:
        if str(facet["FacetName"]) not in names:
            aliases = facet.get("KeyAttributeAlias") or {}
            notes.append(
                f"facet {facet['FacetName']!r} has no sample rows (TableData), so its key "
                f"template cannot be drawn from its aliases ({aliases.get('PartitionKeyAlias')}"
                f"/{aliases.get('SortKeyAlias')}): add rows in Workbench, or declare it by hand"
            )
    if unmatched:
        notes.append(
            f"{unmatched} rows of the table's TableData fit no facet's attributes: drafted by "
            "infer's rules (key prefixes, a type attribute)"
        )
    if not items:
        raise InferError(
            f"table {info.name!r} of the export has no sample rows (TableData): Workbench "
            "keeps plain key aliases, so key templates come from rows; add some in Workbench"
        )
    model = export.get("ModelName", "?")
    origin = (
        f"# Drafted by `edgewise import-model --from nosql-workbench` from {source} (model "
        f"{model!r}, table {info.name!r}: {len(facets)} facets, {len(items)} sample rows)."
    )
    draft = infer(info, items, True, names if any(names) else None, origin)
    if not notes:
        return draft
    head, _, body = draft.text.partition("\ntable:")
    text = head + "".join(f"\n# note: {n}" for n in notes) + "\ntable:" + body
    return Draft(text, (*draft.notes, *notes))
