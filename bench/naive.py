"""The naive baseline: the benchmarked part of Edgewise's schema with resolvers that read one
item (GetItem) or one edge page (Query) per object and await it before returning, with no
dataloader and no cache. Lists still resolve concurrently (graphql-core gathers them), so its
rounds are one per hop *and* one per node fetch: the N+1 pattern a dataloader removes.

Serve it with ``python -m bench.naive --dynamodb URL --table T --port P``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import strawberry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bench.demo import DEMO_LAYOUT
from graph.dynamo.client import Endpoint, open_client
from graph.keys import ItemKey
from graph.table import Item, Table, from_dynamo

from .demo import (
    HAS_MEMBER,
    MEMBER_OF,
    SUBSCRIBES_TO,
    Edges,
    EdgeType,
    NodeKey,
    NodeType,
    grants_access,
    parse_global_id,
    parse_id,
)

__all__ = ["create_naive_app", "naive_schema"]


@dataclass
class NaiveContext:
    table: Table


Info = strawberry.Info[NaiveContext, None]


async def get_item(info: Info, key: ItemKey) -> Item | None:
    """One GetItem."""
    table = info.context.table
    params = {"TableName": table.name, "Key": table.layout.key(key)}
    params["ReturnConsumedCapacity"] = "TOTAL"
    response = await table.call("GetItem", table.client.get_item, params)
    return from_dynamo(response["Item"]) if "Item" in response else None


async def query_page(
    table: Table,
    partition: str,
    prefix: str | None,
    *,
    index: str | None = None,
    limit: int | None = None,
    after: dict[str, Any] | None = None,
) -> tuple[list[Item], dict[str, Any] | None]:
    """One Query page of the items in ``partition`` whose sort key begins with ``prefix``
    (every item of the partition when ``prefix`` is None), and its LastEvaluatedKey."""
    hash_attr, range_attr = table.layout.keys(index)
    params: dict[str, Any] = {
        "KeyConditionExpression": "#h = :h AND begins_with(#r, :r)",
        "ExpressionAttributeNames": {"#h": hash_attr, "#r": range_attr},
        "ExpressionAttributeValues": {":h": {"S": partition}, ":r": {"S": prefix}},
    }
    if prefix is None:
        params["KeyConditionExpression"] = "#h = :h"
        params["ExpressionAttributeNames"] = {"#h": hash_attr}
        params["ExpressionAttributeValues"] = {":h": {"S": partition}}
    if index:
        params["IndexName"] = index
    if limit is not None:
        params["Limit"] = limit
    if after is not None:
        params["ExclusiveStartKey"] = after
    items, last, _ = await table.query(**params)
    return items, last


async def query_all(
    table: Table, partition: str, prefix: str | None, *, index: str | None = None
) -> list[Item]:
    """Every item of a Query, following its pages."""
    items: list[Item] = []
    after = None
    while True:
        page, after = await query_page(table, partition, prefix, index=index, after=after)
        items.extend(page)
        if after is None:
            return items


async def edge_page(info: Info, edges: Edges, first: int | None) -> list[Item]:
    """One Query of ``first`` edges (all of them when ``first`` is None)."""
    table = info.context.table
    if first is None:
        return await query_all(table, str(edges.node), edges.prefix, index=edges.index)
    items, _ = await query_page(
        table, str(edges.node), edges.prefix, index=edges.index, limit=first
    )
    return items


@strawberry.interface(name="Node")
class Node:
    key: strawberry.Private[NodeKey]
    item: strawberry.Private[Item]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(str(self.key))

    @strawberry.field
    def name(self) -> str:
        return str(self.item["name"])


async def fetch(info: Info, key: NodeKey) -> Any:
    """The node, read eagerly: an object holding its whole item (None when missing)."""
    item = await get_item(info, key.item)
    return None if item is None else CLASSES[key.type](key=key, item=item)


@strawberry.type
class GroupEdge:
    far: strawberry.Private[NodeKey]

    @strawberry.field
    async def node(self, info: Info) -> Group:
        found: Group = await fetch(info, self.far)
        return found


@strawberry.type
class ProductEdge:
    far: strawberry.Private[NodeKey]

    @strawberry.field
    async def node(self, info: Info) -> Product:
        found: Product = await fetch(info, self.far)
        return found


@strawberry.type
class UserEdge:
    far: strawberry.Private[NodeKey]

    @strawberry.field
    async def node(self, info: Info) -> User:
        found: User = await fetch(info, self.far)
        return found


@strawberry.type
class GroupConnection:
    edges: list[GroupEdge]


@strawberry.type
class ProductConnection:
    edges: list[ProductEdge]


@strawberry.type
class UserConnection:
    edges: list[UserEdge]


async def far_ends(
    info: Info, node: NodeKey, edge: EdgeType, reverse: bool, first: int
) -> list[NodeKey]:
    """One Query for a page of edges; the keys at their far ends."""
    edges = Edges(node, edge, reverse)
    return [edges.far_end(item) for item in await edge_page(info, edges, first)]


@strawberry.type(name="Group")
class Group(Node):
    @strawberry.field
    async def subscriptions(self, info: Info, first: int = 20) -> ProductConnection:
        keys = await far_ends(info, self.key, SUBSCRIBES_TO, False, first)
        return ProductConnection(edges=[ProductEdge(far=k) for k in keys])

    @strawberry.field
    async def members(self, info: Info, first: int = 20) -> UserConnection:
        keys = await far_ends(info, self.key, MEMBER_OF, True, first)
        return UserConnection(edges=[UserEdge(far=k) for k in keys])


@strawberry.type(name="Product")
class Product(Node):
    @strawberry.field
    async def subscribers(self, info: Info, first: int = 20) -> GroupConnection:
        keys = await far_ends(info, self.key, SUBSCRIBES_TO, True, first)
        return GroupConnection(edges=[GroupEdge(far=k) for k in keys])


@strawberry.type(name="ProductAccess")
class ProductAccess:
    product: Product
    via: list[Group]


@strawberry.type(name="User")
class User(Node):
    @strawberry.field
    async def groups(self, info: Info, first: int = 20) -> GroupConnection:
        keys = await far_ends(info, self.key, MEMBER_OF, False, first)
        return GroupConnection(edges=[GroupEdge(far=k) for k in keys])

    async def _groups(self, info: Info) -> list[NodeKey]:
        edges = Edges(self.key, MEMBER_OF)
        return [edges.far_end(item) for item in await edge_page(info, edges, None)]

    @strawberry.field
    async def products(self, info: Info) -> list[ProductAccess]:
        groups = await self._groups(info)
        per_group = await asyncio.gather(
            *(edge_page(info, Edges(g, SUBSCRIBES_TO), None) for g in groups)
        )
        granted: dict[NodeKey, list[NodeKey]] = {}
        for group, subscriptions in zip(groups, per_group, strict=True):
            for item in subscriptions:
                if grants_access(item):
                    granted.setdefault(NodeKey.parse(item["SK"]), []).append(group)

        async def access(product: NodeKey, via: list[NodeKey]) -> ProductAccess:
            found = await asyncio.gather(fetch(info, product), *(fetch(info, g) for g in via))
            return ProductAccess(product=found[0], via=list(found[1:]))

        return list(await asyncio.gather(*(access(p, via) for p, via in granted.items())))

    @strawberry.field
    async def has_access(self, info: Info, product_id: strawberry.ID) -> bool:
        product = parse_id(product_id, NodeType.PRODUCT)
        if product is None:
            return False
        groups = await self._groups(info)
        edges = await asyncio.gather(
            *(get_item(info, ItemKey(str(g), str(product))) for g in groups)
        )
        return any(edge is not None and grants_access(edge) for edge in edges)


@strawberry.type(name="Organization")
class Organization(Node):
    @strawberry.field
    async def members(self, info: Info, first: int = 20) -> UserConnection:
        keys = await far_ends(info, self.key, HAS_MEMBER, False, first)
        return UserConnection(edges=[UserEdge(far=k) for k in keys])


CLASSES: dict[NodeType, type[Node]] = {
    NodeType.USER: User,
    NodeType.GROUP: Group,
    NodeType.PRODUCT: Product,
    NodeType.ORG: Organization,
}


@strawberry.type
class Query:
    @strawberry.field
    async def user(self, info: Info, id: strawberry.ID) -> User | None:
        key = parse_id(id, NodeType.USER)
        return None if key is None else await fetch(info, key)

    @strawberry.field
    async def product(self, info: Info, id: strawberry.ID) -> Product | None:
        key = parse_id(id, NodeType.PRODUCT)
        return None if key is None else await fetch(info, key)

    @strawberry.field
    async def organization(self, info: Info, id: strawberry.ID) -> Organization | None:
        key = parse_id(id, NodeType.ORG)
        return None if key is None else await fetch(info, key)

    @strawberry.field
    async def nodes(self, info: Info, ids: list[strawberry.ID]) -> list[Node | None]:
        async def one(key: NodeKey | None) -> Node | None:
            found: Node | None = None
            if key is not None and key.type in CLASSES:
                found = await fetch(info, key)
            return found

        return list(await asyncio.gather(*(one(parse_global_id(i)) for i in ids)))


naive_schema = strawberry.Schema(query=Query, types=[User, Group, Product, Organization])


def create_naive_app(table: Table | None = None, endpoint: str = "", name: str = "") -> Starlette:
    """``/graphql`` (POST, ``Edgewise-Trace: 1`` as in Edgewise) and ``/healthz``. Pass an open
    ``table``, or ``endpoint`` and table ``name`` for the lifespan to open a client."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if table is not None:
            yield
            return
        async with open_client(Endpoint(endpoint)) as client:
            app.state.table = Table(client, name, layout=DEMO_LAYOUT)
            yield

    async def graphql(request: Request) -> Response:
        params = json.loads(await request.body())
        context = NaiveContext(request.app.state.table.for_request())
        result = await naive_schema.execute(
            params["query"], variable_values=params.get("variables"), context_value=context
        )
        body: dict[str, Any] = {"data": result.data}
        if result.errors:
            body["errors"] = [e.formatted for e in result.errors]
        if request.headers.get("edgewise-trace") == "1":
            body["extensions"] = {"dynamodb": context.table.trace.as_dict()}
        return JSONResponse(body)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    app = Starlette(
        routes=[Route("/graphql", graphql, methods=["POST"]), Route("/healthz", healthz)],
        lifespan=lifespan,
    )
    if table is not None:
        app.state.table = table
    return app


def main() -> None:
    """Serve the naive app under uvicorn, as ``edgewise serve`` serves Edgewise."""
    import uvicorn

    parser = argparse.ArgumentParser(description="the naive baseline under uvicorn")
    parser.add_argument("--dynamodb", required=True, help="endpoint URL")
    parser.add_argument("--table", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(
        create_naive_app(endpoint=args.dynamodb, name=args.table), host=args.host, port=args.port
    )


if __name__ == "__main__":
    main()
