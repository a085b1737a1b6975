"""Generic reads over a model's table, per request: items by key (BatchGetItem), pages of a
listing (one Query, or several sent together and merged), counts and whole partitions.

A :class:`Listing` is what a connection lists: Query branches of one index (the table, or a
GSI), each a partition narrowed by a sort-key prefix or inclusive bounds. Several branches (write
shards, or one per enum value) are queried in parallel and merged by their sort keys; the cursor
holds each branch's position."""

from __future__ import annotations

import asyncio
import base64
import binascii
import heapq
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from aiodataloader import DataLoader
from boto3.dynamodb.types import Binary

from graph.dynamo.expressions import Expr
from graph.errors import BadUserInput
from graph.keys import ItemKey
from graph.table import Item, Layout, Table, to_dynamo
from graph.watch import Watched
from model import Bounds, KeyValueError, Template
from model.templates import HIGHEST
from model.values import Where

__all__ = [
    "UNKNOWN",
    "Branch",
    "Cursors",
    "Listing",
    "Page",
    "PageKey",
    "Reads",
    "Whole",
    "cursor_of",
    "narrowed",
    "positions",
    "typed_branch",
]

UNKNOWN: Any = object()  # what :meth:`Reads.known_item` and ``known_page`` answer before a read

_serialize = to_dynamo


def _value(value: Any) -> dict[str, Any]:
    """One value in DynamoDB JSON; key values are strings, sent without boto3's serializer."""
    return {"S": value} if type(value) is str else _serialize({"v": value})["v"]


class Branch(NamedTuple):
    """One Query: ``partition``, and the sort key narrowed by ``prefix`` or by inclusive
    ``low``/``high`` bounds. ``strip`` leading characters of the sort key are left out of the
    merge order (a per-branch prefix such as ``OPEN#``). ``check``: the exact test of each
    returned sort key, where the bounds are a superset (a range over a placeholder that text
    follows, :meth:`model.Template.bounds`)."""

    partition: str
    prefix: str = ""
    low: str | None = None
    high: str | None = None
    strip: int = 0
    check: Bounds | None = None


def _typed_check(layout: Layout, attribute: str, check: Bounds) -> Callable[[Any], bool]:
    """``check`` on a number or binary sort key (its template is one placeholder): compared as
    numbers or bytes, as DynamoDB compares them."""
    low = None if check.low is None else layout.value(attribute, check.low)
    high = None if check.high is None else layout.value(attribute, check.high)

    def holds(value: Any) -> bool:
        if isinstance(value, Binary):
            value = value.value
        if value is None or isinstance(value, str):
            return False
        if check.exclusive:
            return (low is None or value > low) and (high is None or value < high)
        return (low is None or value >= low) and (high is None or value <= high)

    return holds


def _typed_bound(layout: Layout, attribute: str | None, text: str | None) -> Any:
    """A bound on a number or binary sort key: an open end (the empty text, or one past every
    value) is no bound at all."""
    if text is None or text == "" or text.endswith(HIGHEST):
        return None
    return layout.value(attribute, text)


def typed_branch(layout: Layout, index: str | None, branch: Branch) -> tuple[Any, str, Any, Any]:
    """A branch's partition, prefix and bounds as its Query sends them: over a number or binary
    key, values of that type (bounds, no prefix); BAD_USER_INPUT for a value it cannot hold."""
    partition, prefix, low, high = branch.partition, branch.prefix, branch.low, branch.high
    if not layout.types:
        return partition, prefix, low, high
    hash_key, range_key = layout.keys(index)
    try:
        if layout.types.get(range_key or ""):
            low, high = _typed_bound(layout, range_key, low), _typed_bound(layout, range_key, high)
            prefix = ""
        return layout.value(hash_key, partition), prefix, low, high
    except KeyValueError as exc:
        raise BadUserInput(f"invalid argument: {exc}") from None


def narrowed(
    partition: str,
    sort: Template | None,
    values: dict[str, Any],
    low: Any = None,
    high: Any = None,
    exclusive: bool = False,
) -> Branch:
    """The Query of ``partition`` whose sort key fits ``sort`` with ``values`` (placeholders
    coarse to fine: a prefix ending at a literal boundary, or the one key they all fix) and the
    first free placeholder between ``low`` and ``high``, as DynamoDB compares its values.
    Raises :class:`model.KeyValueError` for a value no key can hold."""
    if sort is None:
        return Branch(partition)
    lo, hi, prefix, check = sort.bounds(values, low, high, exclusive)
    if all(values.get(p) is not None for p in sort.placeholders):  # one key: exactly it
        return Branch(partition, prefix, prefix, prefix)
    if lo is None and hi is None:
        return Branch(partition, prefix, strip=len(prefix))
    return Branch(partition, prefix, lo or None, hi, strip=len(prefix), check=check)


class Listing(NamedTuple):
    """``only``: (attribute, value) every listed item must have (a FilterExpression), for an
    index partition that also holds other items under the same prefix (the node itself, when
    an edge joins two nodes of one type). ``unmarked``: an attribute no listed item may have
    (the mark of a node being deleted, :mod:`graph.writes.deletes`), also a FilterExpression, so
    counts agree with pages. ``keep``: whether an item belongs in the listing (an edge of the label
    listed, a node of a type listed): an index partition may hold other items too, which are
    never answered nor counted, so ``first`` items are read past them. ``where``: an access
    pattern's filter, bound to its arguments (a FilterExpression): DynamoDB applies a Query's
    Limit before its filter, so a page reads on until ``first`` items pass, and a count counts
    only what passes (the Count DynamoDB gives after the filter, where nothing is kept here)."""

    index: str | None  # type: ignore[assignment]  # the GSI; shadows tuple.index, unused
    branches: tuple[Branch, ...]
    forward: bool = True
    only: tuple[str, str] | None = None
    unmarked: str | None = None
    keep: Callable[[Item], bool] | None = None
    where: Where | None = None


class PageKey(NamedTuple):
    listing: Listing
    first: int
    after: str | None = None


class Cursors(Sequence[str]):
    """A page's cursors (the position after each item), each encoded when first read: most
    selections read none of them, or only the last (``pageInfo.endCursor``)."""

    __slots__ = ("_encoded", "_positions")

    def __init__(self, positions: list[Sequence[list[str] | None]]) -> None:
        self._positions = positions
        self._encoded: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = index + len(self) if index < 0 else index
        found = self._encoded.get(index)
        if found is None:
            found = self._encoded[index] = _encode(self._at(index))
        return found

    def _at(self, index: int) -> Sequence[list[str] | None]:
        """The positions (one per branch) after the page's item ``index``."""
        return self._positions[index]


class _OneBranch(Cursors):
    """The cursors of a one-branch page: each the position of its item, made when read."""

    __slots__ = ("_index", "_items", "_layout")

    def __init__(self, layout: Layout, index: str | None, items: list[Item]) -> None:
        super().__init__([])
        self._layout, self._index, self._items = layout, index, items

    def __len__(self) -> int:
        return len(self._items)

    def _at(self, index: int) -> Sequence[list[str] | None]:
        return [_position(self._layout, self._index, self._items[index])]


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Item]
    cursors: Sequence[str]  # the position after each item
    has_next: bool


class Whole(NamedTuple):
    """A partition read with one Query of up to ``limit`` items."""

    partition: str
    forward: bool
    limit: int


def _encode(positions: Sequence[list[str] | None]) -> str:
    """One Query's cursor is its position; several Queries' cursors list one per branch."""
    value = positions[0] if len(positions) == 1 else list(positions)
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def positions(listing: Listing, cursor: str | None) -> list[list[str] | None]:
    """Where each branch of ``listing`` resumes after ``cursor``; a cursor that is malformed or
    belongs to another connection is BAD_USER_INPUT."""
    count = len(listing.branches)
    if cursor is None:
        return [None] * count
    size = 2 if listing.index is None else 4
    try:
        if len(cursor) > 8192:
            raise ValueError
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if count == 1:
            value = [value]
        if not (isinstance(value, list) and len(value) == count):
            raise ValueError
        for position in value:
            if position is not None and not (
                isinstance(position, list)
                and len(position) == size
                and all(isinstance(p, str) for p in position)
            ):
                raise ValueError
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        raise BadUserInput(
            f"invalid cursor {cursor[:60]!r}: pass an endCursor or edge cursor returned by the API"
        ) from None
    for branch, position in zip(listing.branches, value, strict=True):
        if position is None:
            continue
        partition, sort = (position[0], position[1]) if size == 2 else (position[2], position[3])
        if partition != _text(branch.partition) or not sort.startswith(branch.prefix):
            raise BadUserInput("this cursor belongs to another connection")
    return value


def _position(layout: Layout, index: str | None, item: Item) -> list[str]:
    position = [item[layout.pk], item[layout.sk]]
    if index is not None:
        hash_key, range_key = layout.keys(index)
        position += [item[hash_key], item[range_key] if range_key else ""]
    return [_text(p) for p in position]


_text = Layout.text


def _merged(value: Any, strip: int) -> Any:
    """A sort key's place in a merge: a string without its branch's prefix; a number or bytes
    as itself (DynamoDB orders them so)."""
    return value[strip:] if isinstance(value, str) else value


def cursor_of(layout: Layout, index: str | None, item: Item) -> str:
    """The cursor just after ``item`` in a one-branch listing of ``index``."""
    return _encode([_position(layout, index, item)])


class _Items(DataLoader[ItemKey, "Item | None"]):
    """Items by key, batched into BatchGetItem; a key a Query already returned is answered from
    that item, without a read (its future is made only when asked for)."""

    def __init__(
        self,
        batch: Any,
        cache: dict[ItemKey, asyncio.Future[Item | None]],
        primed: dict[ItemKey, Item],
    ) -> None:
        super().__init__(batch, max_batch_size=100, cache_map=cache)
        self._futures = cache
        self._primed = primed

    def load(self, key: ItemKey) -> asyncio.Future[Item | None]:
        if key not in self._futures:
            item = self._primed.pop(key, None)
            if item is not None:
                self.prime(key, item)
        return super().load(key)

    def clear(self, key: ItemKey) -> _Items:
        self._primed.pop(key, None)
        super().clear(key)
        return self

    def clear_all(self) -> _Items:
        self._primed.clear()
        super().clear_all()
        return self


def _known(future: asyncio.Future[Any] | None) -> Any:
    if future is None or not future.done() or future.cancelled() or future.exception():
        return UNKNOWN
    return future.result()


class Reads:
    """Build one per request, inside its event loop: a key is read at most once, and reads
    made in the same tick share a batch. With ``watched`` (a live query's answer) every key
    read and partition listed is recorded there (:mod:`graph.watch`); ``consistent`` reads
    strongly consistently where DynamoDB can (a write's reads)."""

    def __init__(
        self, table: Table, watched: Watched | None = None, consistent: bool = False
    ) -> None:
        self.table = table
        self.consistent = consistent  # strongly consistent reads (an index's Query cannot be)
        self.layout = table.layout
        self.watched = watched
        self._items: dict[ItemKey, asyncio.Future[Item | None]] = {}
        self._pages: dict[PageKey, asyncio.Future[Page]] = {}
        self._primed: dict[ItemKey, Item] = {}  # items Queries returned, not yet asked for
        self.items: DataLoader[ItemKey, Item | None] = _Items(
            self._load_items, self._items, self._primed
        )
        self.pages: DataLoader[PageKey, Page] = DataLoader(self._load_pages, cache_map=self._pages)
        self._counts: dict[Listing, asyncio.Future[int]] = {}
        self.counts: DataLoader[Listing, int] = DataLoader(
            self._load_counts, cache_map=self._counts
        )
        self.alls: DataLoader[Listing, list[Item]] = DataLoader(self._load_alls)
        self.wholes: DataLoader[Whole, tuple[list[Item], bool]] = DataLoader(self._load_wholes)
        self._complete: dict[Listing, list[Item]] = {}  # first pages that held every item

    def close(self) -> None:
        """Forget what the request read. The loaders refer back to this object, so until then
        every item, page and future of the request waits for the cyclic garbage collector."""
        for loader in (self.items, self.pages, self.counts, self.alls, self.wholes):
            loader.clear_all()
        self._complete.clear()

    def known_item(self, key: ItemKey) -> Item | Any | None:
        """The item (None: it does not exist) if this request has read it, else UNKNOWN: lets a
        field resolve without a coroutine when its item is in memory."""
        future = self._items.get(key)
        if future is None:
            return self._primed.get(key, UNKNOWN)
        return _known(future)

    def known_page(self, key: PageKey) -> Page | Any:
        """The page if this request has read it, else UNKNOWN."""
        return _known(self._pages.get(key))

    def known_count(self, listing: Listing) -> int | Any:
        """The listing's count if this request has counted it, else UNKNOWN."""
        return _known(self._counts.get(listing))

    def prime(self, items: list[Item], index: str | None = None) -> list[Item]:
        """Remember items a Query returned, so reading one by key costs nothing (a read made
        or under way wins, as with ``DataLoader.prime``); not those of an index that projects
        only some attributes."""
        if not self.layout.complete(index):
            return items
        item_key, primed = self.layout.item_key, self._primed
        for item in items:
            primed.setdefault(item_key(item), item)
        return items

    async def _load_items(self, keys: list[ItemKey]) -> list[Item | None]:
        if self.watched is not None:
            self.watched.keys.update(keys)
        found = await self.table.get_many(keys, self.consistent)
        return [found.get(key) for key in keys]

    # ---- Query pages -----------------------------------------------------------------------

    def _start(self, index: str | None, branch: Branch, position: list[str]) -> dict[str, Any]:
        start = {self.layout.pk: position[0], self.layout.sk: position[1]}
        if index is not None:
            hash_key, range_key = self.layout.keys(index)
            start[hash_key] = position[2]
            if range_key:
                start[range_key] = position[3]
        if self.layout.types:
            return {k: _value(self.layout.value(k, v)) for k, v in start.items()}
        return {k: {"S": v} for k, v in start.items()}

    def _params(self, listing: Listing, branch: Branch) -> dict[str, Any]:
        layout = self.layout
        hash_key, range_key = layout.keys(listing.index)
        expr = Expr()
        partition, prefix, low, high = typed_branch(layout, listing.index, branch)
        condition = expr.key_condition(hash_key, partition, range_key, prefix, low, high)
        params = {"KeyConditionExpression": condition, "ScanIndexForward": listing.forward}
        filters = []
        if listing.only is not None:
            attribute, value = listing.only
            filters.append(f"{expr.name(attribute)} = {expr.value(value)}")
        if listing.unmarked is not None:
            filters.append(f"attribute_not_exists({expr.name(listing.unmarked)})")
        if listing.where is not None:
            filters.append(expr.condition(listing.where, datetime.now(UTC)))
        if filters:
            params["FilterExpression"] = " AND ".join(filters)
        params |= expr.params(_value)
        if listing.index is not None:
            params["IndexName"] = listing.index
        if self.consistent and (listing.index is None or listing.index in layout.local):
            params["ConsistentRead"] = True
        return params

    def _keeper(self, listing: Listing, branch: Branch) -> Callable[[Item], bool] | None:
        """The test of each item a branch's Query returns, or None when every item counts."""
        keep, check = listing.keep, branch.check
        if check is None:
            return keep
        sort = self.layout.keys(listing.index)[1] or self.layout.sk
        holds = _typed_check(self.layout, sort, check) if sort in self.layout.types else check.holds
        if keep is None:
            return lambda item: holds(item.get(sort))
        return lambda item: holds(item.get(sort)) and keep(item)

    async def _branch(
        self, listing: Listing, branch: Branch, limit: int, position: list[str] | None
    ) -> tuple[list[Item], bool]:
        """Up to ``limit`` items of one branch from ``position``, and whether more follow.
        Items the listing does not keep, or its filter leaves out, are read past (the Query goes
        on), never answered."""
        params = self._params(listing, branch) | {"Limit": limit}
        if position is not None:
            params["ExclusiveStartKey"] = self._start(listing.index, branch, position)
        keep = self._keeper(listing, branch)
        if keep is None and listing.where is None:
            items, last, _ = await self.table.query(**params)
            self._listed(listing, branch, items)
            return items, last is not None
        kept: list[Item] = []
        while True:
            items, last, _ = await self.table.query(**params)
            self._listed(listing, branch, items)
            kept += items if keep is None else filter(keep, items)
            if last is None or len(kept) >= limit:
                return kept[:limit], last is not None or len(kept) > limit
            params["ExclusiveStartKey"] = last

    def _listed(self, listing: Listing, branch: Branch, items: list[Item]) -> None:
        if self.watched is not None:
            item_key = self.layout.item_key
            self.watched.listed(listing.index, branch.partition, map(item_key, items))

    async def _page(self, key: PageKey) -> Page:
        listing, first = key.listing, key.first
        count = len(listing.branches)
        if key.after is None and count == 1 and listing in self._complete:  # read whole already
            return self.page_of(listing, self._complete[listing], first)
        resume = positions(listing, key.after)
        if first == 0:
            return Page([], [], bool(await self._any(listing, resume)))
        if count == 1:
            return await self._one_branch(key, resume[0])
        results = await asyncio.gather(
            *(
                self._branch(listing, branch, first + 1, resume[i])
                for i, branch in enumerate(listing.branches)
            )
        )
        range_key = self.layout.keys(listing.index)[1] or self.layout.pk
        tagged = [
            [(_merged(item.get(range_key, ""), branch.strip), i, item) for item in items]
            for i, (branch, (items, _more)) in enumerate(
                zip(listing.branches, results, strict=True)
            )
        ]
        merged = heapq.merge(*tagged, key=lambda t: t[0], reverse=not listing.forward)
        taken: list[Item] = []
        cursors: list[Sequence[list[str] | None]] = []
        consumed = [0] * count
        for _sort, i, item in merged:
            if len(taken) == first:
                break
            taken.append(item)
            consumed[i] += 1
            resume[i] = _position(self.layout, listing.index, item)
            cursors.append(tuple(resume))
        has_next = any(consumed[i] < len(items) or more for i, (items, more) in enumerate(results))
        if key.after is None and not has_next:
            self._complete[listing] = taken
        return Page(self.prime(taken, listing.index), Cursors(cursors), has_next)

    async def _one_branch(self, key: PageKey, resume: list[str] | None) -> Page:
        """A page of a one-Query listing: no task, no merge, cursors made when read."""
        listing, first = key.listing, key.first
        items, more = await self._branch(listing, listing.branches[0], first + 1, resume)
        page = self.page_of(listing, items, first, more)
        if key.after is None and not page.has_next:
            self._complete[listing] = page.items
        return page

    async def _any(self, listing: Listing, resume: list[list[str] | None]) -> bool:
        results = await asyncio.gather(
            *(
                self._branch(listing, branch, 1, resume[i])
                for i, branch in enumerate(listing.branches)
            )
        )
        return any(items for items, _ in results)

    def page_of(self, listing: Listing, items: list[Item], first: int, more: bool = False) -> Page:
        """A page of a one-branch listing from ``items`` in order (``more``: others follow
        them), its cursors made when read."""
        taken = items[:first]
        cursors = _OneBranch(self.layout, listing.index, taken)
        return Page(self.prime(taken, listing.index), cursors, len(items) > first or more)

    async def _load_pages(self, keys: list[PageKey]) -> list[Page]:
        return list(await asyncio.gather(*(self._page(k) for k in keys)))

    # ---- counts, whole listings, partitions ------------------------------------------------

    async def _follow(
        self, listing: Listing, branch: Branch, count: bool
    ) -> tuple[list[Item], int]:
        """Every page of one branch: its items (none with ``count``) and how many are kept.
        A listing that tests its items counts them by reading them, not by ``Select=COUNT``."""
        keep = self._keeper(listing, branch)
        count = count and keep is None
        params = self._params(listing, branch) | ({"Select": "COUNT"} if count else {})
        items: list[Item] = []
        total = 0
        while True:
            page, last, matched = await self.table.query(**params)
            self._listed(listing, branch, page)
            if keep is not None:
                page = list(filter(keep, page))
                matched = len(page)
            items += page
            total += matched
            if last is None:
                return items, total
            params["ExclusiveStartKey"] = last

    async def _count(self, listing: Listing) -> int:
        parts = await asyncio.gather(*(self._follow(listing, b, True) for b in listing.branches))
        return sum(total for _, total in parts)

    async def _load_counts(self, keys: list[Listing]) -> list[int]:
        return list(await asyncio.gather(*(self._count(k) for k in keys)))

    async def _all(self, listing: Listing) -> list[Item]:
        if listing in self._complete:  # a first page already held them all
            return self._complete[listing]
        parts = await asyncio.gather(*(self._follow(listing, b, False) for b in listing.branches))
        items = self._complete[listing] = [item for items, _ in parts for item in items]
        return self.prime(items, listing.index)

    async def _load_alls(self, keys: list[Listing]) -> list[list[Item]]:
        return list(await asyncio.gather(*(self._all(k) for k in keys)))

    async def _whole(self, whole: Whole) -> tuple[list[Item], bool]:
        """Up to ``limit`` items of a partition, and whether that was all of it."""
        listing = Listing(None, (Branch(whole.partition),), whole.forward)
        items, more = await self._branch(listing, listing.branches[0], whole.limit, None)
        return self.prime(items), not more

    async def _load_wholes(self, keys: list[Whole]) -> list[tuple[list[Item], bool]]:
        return list(await asyncio.gather(*(self._whole(k) for k in keys)))
