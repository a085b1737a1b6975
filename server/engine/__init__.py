"""The model-driven engine: a model file's schema, context and sample data, selected by name.
Every model is built from its file, the demo (``models/demo/model.yaml``) included, or read
compiled from a directory ``edgewise build`` wrote (:mod:`model.compiled`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.requests import Request

from graph.items import Codec
from graph.sample_items import build_items
from graph.table import Item, Layout, Table
from graph.watch import Watched
from graph.writes.writer import Writer
from model import SHIPPED, Model
from model.compiled import read as read_compiled
from server.engine.access import Rules, guard
from server.engine.context import ModelContext
from server.engine.executor import ModelSchema
from server.engine.schema import build_schema
from server.http.auth import Principal

__all__ = ["DEMO", "Engine", "ModelContext", "ModelSchema", "engine_for"]

DEMO = "demo"
SAMPLE_TIME = "2026-01-15T09:00:00.000Z"

# (request, table, principal, watched=None): a request's context; see ModelContext.for_request
ContextFactory = Callable[..., Any]


@dataclass(frozen=True, eq=False)
class Engine:
    """What serving one model takes: its table layout, default table name, schema, request
    context and sample data."""

    name: str
    model: Model

    @cached_property
    def codec(self) -> Codec:
        return Codec(self.model)

    @property
    def layout(self) -> Layout:
        return self.codec.layout

    @property
    def table_name(self) -> str:
        """The model's table name; one that names none needs ``--table`` (EDGEWISE_TABLE)."""
        if self.model.table is None:
            raise SystemExit(
                f"model {self.model.name} names no table (table.name): pass --table T "
                "or set EDGEWISE_TABLE"
            )
        return self.model.table

    def schema(
        self,
        production: bool = False,
        read_only: bool = False,
        subscriptions: bool = True,
        federation: bool = False,
    ) -> Any:
        """The schema to serve; ``read_only``: without its Mutation type; ``subscriptions``:
        with its Subscription type; ``federation``: as an Apollo Federation v2 subgraph. Built
        once per engine and variant, shared by every app of the process."""
        return self._schema(production, read_only, subscriptions, federation)

    @cache  # noqa: B019 (engines live as long as the process)
    def _schema(
        self, production: bool, read_only: bool, subscriptions: bool, federation: bool
    ) -> Any:
        built = build_schema(self.model, self.codec, read_only, subscriptions, federation)
        if self.model.access is not None:
            built = guard(built, self.model.access)
        return ModelSchema(built, production)

    def context_factory(self, explain_forbidden: bool = False) -> ContextFactory:
        """``explain_forbidden``: an unreadable node answers FORBIDDEN with its reason rather
        than as a missing one (``serve --explain-forbidden``, development only)."""
        codec, rules = self.codec, self.rules

        def make(
            request: Request | None,
            table: Table,
            principal: Principal,
            watched: Watched | None = None,
        ) -> ModelContext:
            return ModelContext.for_request(
                request, table, codec, principal, rules, explain_forbidden, watched
            )

        return make

    @cached_property
    def rules(self) -> Rules | None:
        """The model's access rules, if its file has an ``access`` section."""
        if self.model.access is None:
            return None
        return Rules(self.model, self.codec, self.model.access)

    def sample_items(self, table: Table) -> list[Item]:
        """The model's sample data as items."""
        import yaml

        if self.name in SHIPPED:
            text = resources.files("models") / self.name.replace("-", "_") / "sample.yaml"
            sample = yaml.safe_load(text.read_text())
        else:  # a model file's sample data lies beside it
            path = Path(self.name).parent / "sample.yaml"
            if not path.is_file():
                return []
            sample = yaml.safe_load(path.read_text())
        return self.items(table, sample)

    def items(self, table: Table, sample: Mapping[str, Any]) -> list[Item]:
        """Items for sample data (``nodes`` and ``edges``, as in a model's ``sample.yaml``)."""
        at = str(sample.get("time", SAMPLE_TIME))  # the nodes' createdAt and updatedAt
        return build_items(Writer(table, self.codec), sample, at)


def engine_for(name: str, compiled: Path | None = None) -> Engine:
    """The engine of a shipped model's name or a model file's path; raises
    :class:`model.ModelError` for an invalid model. ``compiled``: the directory ``edgewise
    build`` wrote, read instead of the file (a stale build raises ModelError too)."""
    if compiled is not None:
        return _prebuilt(name, compiled)  # checked whole, schema included, when it was built
    engine = _shipped(name) if name in SHIPPED else Engine(name, _load(name))
    engine.schema()  # what only the built schema can check
    return engine


def _load(name: str) -> Model:
    from model.load import load_model

    return load_model(name)


@cache
def _shipped(name: str) -> Engine:
    """A shipped model's engine, loaded once per process."""
    return Engine(name, _load(name))


@cache
def _prebuilt(name: str, directory: Path) -> Engine:
    """A model's engine from its build in ``directory``, read once per process."""
    return Engine(name, read_compiled(directory, name))
