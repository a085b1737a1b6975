"""Access rules, compiled: what a principal who is not an admin may read and change, as paths
along the model's edges from the principal's own node (the file's ``access`` section, see
:class:`model.spec.AccessSpec`). Every hop is checked here against the model; the rules are
enforced by :mod:`server.engine.access`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .types import EdgeType, Model, NodeType
from .values import Access, AccessPath, Grant, Hop

if TYPE_CHECKING:
    from . import spec as s

__all__ = [
    "SELF",
    "Access",
    "AccessPath",
    "Grant",
    "Hop",
    "compile_access",
    "end_arguments",
    "hops_of",
    "ref_hops",
]

SELF = "self"

Where = tuple[str | int, ...]
Report = Callable[[Where, str], None]
Suggest = Callable[[str, list[str]], str]


def hops_of(model: Model, node: str) -> dict[str, Hop]:
    """The edge fields of ``node``'s type a path may follow: forward and reverse."""
    out: dict[str, Hop] = {}
    for e in model.edges.values():
        if e.source == node and e.forward is not None:
            out[e.forward.field] = Hop(e.forward.field, node, e.label, "to", e.target)
        if e.target == node and e.reverse is not None:
            out[e.reverse.field] = Hop(e.reverse.field, node, e.label, "from", e.source)
    return out


def ref_hops(model: Model, node: str) -> dict[str, Hop]:
    """The reference fields of ``node``'s type a transitive path may follow."""
    fields = model.types[node].fields.values()
    return {
        f.name: Hop(f.name, node, "", "to", f.target or "", True) for f in fields if f.kind == "ref"
    }


def end_arguments(model: Model, edge: EdgeType) -> tuple[str, str]:
    """The arguments naming the ends of an edge's add/remove mutations: each end's type then
    its key placeholder (:attr:`NodeType.ident`), ``<source>Id`` and ``<target>Id`` for types
    keyed by ``{id}`` (``userUsername`` for ``ACCOUNT#{username}``);
    ``from<Type>Id``/``to<Type>Id`` when both ends are of one type."""
    source, target = edge.source, edge.target
    first, second = (_upper(model.types[t].ident) for t in (source, target))
    if source == target:
        return f"from{_upper(source)}{first}", f"to{_upper(target)}{second}"
    return f"{source[:1].lower()}{source[1:]}{first}", f"{target[:1].lower()}{target[1:]}{second}"


def _upper(name: str) -> str:
    return name[:1].upper() + name[1:]


def _id_arguments(model: Model) -> dict[str, dict[str, str]]:
    """Each generated mutation's arguments that name a node by id, and that node's type."""
    out: dict[str, dict[str, str]] = {}
    for t in model.types.values():
        if t.mutations:
            ids = {f"input.{t.ident}": t.name} if t.single else {}
            out[t.names["create"]] = ids
            out[t.names["update"]] = ids
            out[t.names["delete"]] = {t.ident: t.name} if t.single else {}
    for e in model.edges.values():
        if e.mutations:
            first, second = end_arguments(model, e)
            ends = {first: e.source, second: e.target}
            out[e.add] = ends
            out[e.remove] = ends
    for m in model.mutations.values():
        out[m.name] = dict(m.ids)
    return out


def _field_names(model: Model, node: NodeType) -> list[str]:
    names = [*node.fields, *hops_of(model, node.name)]
    names += ["version"] if model.version_attribute else []
    names += [node.parent.field] if node.parent else []
    names += [
        t.parent.collection for t in model.types.values() if t.parent and t.parent.type == node.name
    ]
    names += [q.field for q in model.queries.values() if q.on == node.name]
    return names


class _Compiler:
    def __init__(self, spec: s.AccessSpec, model: Model, report: Report, suggest: Suggest):
        self.spec = spec
        self.model = model
        self.report = report
        self.suggest = suggest

    def path(self, where: Where, text: str, ends: str) -> AccessPath | None:
        principal = self.spec.principal
        if text == SELF:
            if ends != principal:
                self.report(
                    where,
                    f"`self` is a {principal}, not a {ends}; start from `self`'s "
                    f"edge fields: {', '.join(sorted(hops_of(self.model, principal)))}",
                )
                return None
            return AccessPath(text, ())
        at = principal
        hops: list[Hop] = []
        for name in text.split("."):
            choices = hops_of(self.model, at)
            hop = choices.get(name)
            if hop is None:
                what = (
                    f"{at}.{name} is not an edge field (a path follows edges)"
                    if name in self.model.types[at].fields
                    else f"{at} has no edge field {name!r}"
                )
                self.report(where, f"{what} in {text!r}; {self.suggest(name, sorted(choices))}")
                return None
            hops.append(hop)
            at = hop.type
        if at != ends:
            self.report(where, f"{text!r} ends at a {at}, not a {ends}; end it at a {ends}")
            return None
        return AccessPath(text, tuple(hops))

    def paths(self, where: Where, texts: list[str], ends: str) -> tuple[AccessPath, ...]:
        if not texts:
            self.report(where, "list at least one path, e.g. [self]; or leave the entry out")
        compiled = (self.path((*where, i), text, ends) for i, text in enumerate(texts))
        return tuple(p for p in compiled if p is not None)

    def compile(self) -> Access | None:
        spec, model = self.spec, self.model
        principal = model.types.get(spec.principal)
        if principal is None:
            self.report(
                ("access", "principal"),
                f"unknown type {spec.principal!r}; "
                + self.suggest(spec.principal, list(model.types)),
            )
            return None
        if not principal.single:
            self.report(
                ("access", "principal"),
                f"a token's subject is an id: {principal.name} needs a one-template key such as "
                f"'{principal.name.upper()}#{{id}}'",
            )
            return None
        read: dict[str, tuple[AccessPath, ...]] = {}
        for type_name, texts in spec.read.items():
            where: Where = ("access", "read", type_name)
            if type_name not in model.types:
                self.report(
                    where,
                    f"unknown type {type_name!r}; {self.suggest(type_name, list(model.types))}",
                )
                continue
            read[type_name] = self.paths(where, texts, type_name)
        fields: dict[str, dict[str, tuple[AccessPath, ...]]] = {}
        for dotted, texts in spec.fields.items():
            where = ("access", "fields", dotted)
            type_name, dot, field_name = dotted.partition(".")
            node = model.types.get(type_name)
            if not dot or node is None:
                self.report(
                    where,
                    f"write `Type.field` with a type of the model; "
                    f"{self.suggest(type_name, list(model.types))}",
                )
                continue
            names = _field_names(model, node)
            if field_name not in names:
                self.report(
                    where,
                    f"{type_name} has no field {field_name!r}; {self.suggest(field_name, names)}",
                )
                continue
            if node.expose is not None and field_name not in node.expose:
                self.report(
                    where,
                    f"{dotted} is not served (types.{type_name}.expose leaves it out); add it to "
                    "that list or remove this rule",
                )
                continue
            fields.setdefault(type_name, {})[field_name] = self.paths(where, texts, type_name)
        mutations: dict[str, tuple[Grant, ...]] = {}
        known = _id_arguments(model)
        for mutation, arguments in spec.mutations.items():
            where = ("access", "mutations", mutation)
            if mutation not in known:
                self.report(
                    where, f"unknown mutation {mutation!r}; {self.suggest(mutation, list(known))}"
                )
                continue
            grants = []
            for argument, texts in arguments.items():
                node_type = known[mutation].get(argument)
                if node_type is None:
                    choices = list(known[mutation])
                    self.report(
                        (*where, argument),
                        f"{mutation} has no id argument {argument!r}; "
                        + (self.suggest(argument, choices) if choices else "write `{}` instead"),
                    )
                    continue
                paths = self.paths((*where, argument), texts, node_type)
                grants.append(Grant(tuple(argument.split(".")), node_type, paths))
            mutations[mutation] = tuple(grants)
        return Access(spec.principal, read, fields, mutations)


def compile_access(
    spec: s.AccessSpec, model: Model, report: Report, suggest: Suggest
) -> Access | None:
    """The compiled rules, or None when the principal is unusable; each mistake is reported
    with its place (``("access", "read", "Group", 0)``) and what to write instead."""
    return _Compiler(spec, model, report, suggest).compile()
