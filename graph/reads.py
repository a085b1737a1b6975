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
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from aiodataloader import DataLoader

from graph.dynamo.expressions import Expr
from graph.dynamo.values import Binary
from graph.errors import BadUserInput
from graph.keys import ItemKey, Located
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

log = logging.getLogger("edgewise")

UNKNOWN: Any = object()  # what :meth:`Reads.known_item` and ``known_page`` answer before a read
_RANGE = (1, 3)  # where a position holds its sort key: of the table, of an index
_Rank = Callable[..., Any]  # (branch, item, position=None) -> the item's place in its listing

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
    first free placeholder between ``low`` and ``high``, as DynamoDB compares its values. A
    template without a placeholder (``sh#``) is a prefix. Raises :class:`model.KeyValueError`
    for a value no key can hold."""
    if sort is None:
        return Branch(partition)
    lo, hi, prefix, check = sort.bounds(values, low, high, exclusive)
    placeholders = sort.placeholders
    if placeholders and all(values.get(p) is not None for p in placeholders):  # exactly one key
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
    """A page of ``listing``: ``size`` items after the cursor ``after`` (or from the start), or,
    ``backward``, the ``size`` items just before the cursor ``before`` (or the end), read with
    the Queries turned round. The other cursor, when given too, bounds the page (the Relay
    spec's ApplyCursorsToEdges): reading stops there."""

    listing: Listing
    size: int
    after: str | None = None
    before: str | None = None
    backward: bool = False


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
    """``items`` in the listing's order, whichever way they were read, and ``cursors``, each
    the same for an item whichever way it was read; ``has_next`` is exact when reading forward
    (else False), ``has_previous`` when reading backward (else False)."""

    items: list[Item]
    cursors: Sequence[str]  # the position after each item
    has_next: bool
    has_previous: bool = False


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
        located = [key for key in keys if type(key.sk) is Located]
        if not located:
            found = await self.table.get_many(keys, self.consistent)
            return [found.get(key) for key in keys]
        exact = [key for key in keys if type(key.sk) is not Located]
        found, owns = await asyncio.gather(
            self.table.get_many(exact, self.consistent),
            asyncio.gather(*map(self._locate, located)),
        )
        known: dict[ItemKey, Item | None] = {**found, **dict(zip(located, owns, strict=True))}
        return [known.get(key) for key in keys]

    async def _locate(self, key: ItemKey) -> Item | None:
        """The item of a node known by its partition (:class:`graph.keys.Located`): one Query
        of the partition on its sort key's prefix. Two such items are a data error: logged
        with both keys, the first answered."""
        sk = key.sk
        assert isinstance(sk, Located)
        listing = Listing(None, (Branch(key.pk, str(sk)),), keep=sk.keep)
        items, _ = await self._branch(listing, listing.branches[0], 2, None)
        if len(items) > 1:
            first, second = (self.layout.item_key(i) for i in items)
            log.error(
                "two items of one node in partition %s=%r: %s=%r and %s=%r; answered the first",
                self.layout.pk,
                key.pk,
                self.layout.sk,
                first.sk,
                self.layout.sk,
                second.sk,
            )
        return self.prime(items[:1])[0] if items else None

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

    def _params(
        self,
        listing: Listing,
        branch: Branch,
        backward: bool = False,
        through: list[str] | None = None,
    ) -> dict[str, Any] | None:
        """The Query of one branch, read in the listing's order or (``backward``) against it;
        ``through``: a position the Query starts at, inclusive (its sort key bounds the range
        on the side reading starts from). None when the range holds nothing: its low bound
        above its high one, as DynamoDB compares them (strings by code point, numbers as
        numbers, binary by byte). DynamoDB refuses such a BETWEEN; the answer is empty, as
        SQL's."""
        layout = self.layout
        hash_key, range_key = layout.keys(listing.index)
        expr = Expr()
        partition, prefix, low, high = typed_branch(layout, listing.index, branch)
        ascending = listing.forward != backward
        if through is not None and range_key is not None:
            at = layout.value(range_key, through[_RANGE[listing.index is not None]])
            if ascending:
                low = at if low is None else max(low, at)
                high = prefix + HIGHEST if high is None and prefix else high
            else:
                high = at if high is None else min(high, at)
                low = prefix if low is None and prefix else low
        if low is not None and high is not None and low > high:
            return None
        condition = expr.key_condition(hash_key, partition, range_key, prefix, low, high)
        params = {"KeyConditionExpression": condition, "ScanIndexForward": ascending}
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
        self,
        listing: Listing,
        branch: Branch,
        limit: int,
        position: list[str] | None,
        backward: bool = False,
        through: list[str] | None = None,
    ) -> tuple[list[Item], bool]:
        """Up to ``limit`` items of one branch from ``position`` (exclusive) or ``through``
        (inclusive), in reading order, and whether more follow. Items the listing does not
        keep, or its filter leaves out, are read past (the Query goes on), never answered."""
        query = self._params(listing, branch, backward, through)
        if query is None:
            self._listed(listing, branch, [])
            return [], False
        params = query | {"Limit": limit}
        if through is not None and self.layout.keys(listing.index)[1] is None:
            position = through  # a hash-only index has no sort key to bound: from just after
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

    def _rank(self, listing: Listing) -> _Rank:
        """An item's place in ``listing`` (of branch ``i``, from the item or from its position
        in a cursor), ascending by sort key as merged, then branch, then (on an index, whose
        sort keys may repeat) the table's key; the listing's order is this or its reverse."""
        layout = self.layout
        index = listing.index
        attribute = layout.keys(index)[1] or layout.pk
        at = _RANGE[index is not None] if attribute != layout.pk else 0
        strips = [b.strip for b in listing.branches]

        def rank(i: int, item: Item | None, position: Sequence[str] | None = None) -> Any:
            if item is None:
                assert position is not None
                value = layout.value(attribute, position[at])
                tie = (position[0], position[1])
            else:
                value = item.get(attribute, "")
                tie = (_text(item[layout.pk]), _text(item[layout.sk]))
            if isinstance(value, Binary):
                value = value.value
            return (_merged(value, strips[i]), i, *(tie if index is not None else ()))

        return rank

    def _last(self, listing: Listing, at: list[list[str] | None]) -> int | None:
        """The branch whose position in a cursor is its item (the others' are their last items
        before it): the last of them in the listing's order; None when none has a position."""
        given = [i for i, p in enumerate(at) if p is not None]
        if not given:
            return None
        rank = self._rank(listing)
        pick = max if listing.forward else min
        return pick(given, key=lambda i: rank(i, None, at[i]))

    def _stop(
        self, listing: Listing, at: list[list[str] | None], backward: bool
    ) -> Callable[[int, Item], bool] | None:
        """Whether an item of branch ``i`` is still short of the other cursor, whose positions
        are ``at``: before it reading forward, after it reading backward."""
        last = self._last(listing, at)
        if last is None:  # the cursor of the start: nothing is before it, everything after
            return None if backward else lambda i, item: False
        rank = self._rank(listing)
        bound = rank(last, None, at[last])
        if listing.forward != backward:
            return lambda i, item: bool(rank(i, item) < bound)
        return lambda i, item: bool(rank(i, item) > bound)

    def _starts(
        self, listing: Listing, backward: bool, at: list[list[str] | None], anchored: bool
    ) -> list[tuple[list[str] | None, list[str] | None] | None]:
        """Where each branch's Query starts: after a position (exclusive), or through one
        (inclusive); None: the branch holds nothing on this side of the cursor. Reading forward
        every branch resumes after its position. Reading backward from a cursor, its item's
        branch resumes before it, every other branch through its position (its last item
        before the cursor's), and a branch without one has nothing before it."""
        if not backward or not anchored:
            return [(p, None) for p in at]
        last = self._last(listing, at)
        return [
            None if p is None else (p, None) if i == last else (None, p) for i, p in enumerate(at)
        ]

    async def _read(
        self,
        listing: Listing,
        backward: bool,
        starts: list[tuple[list[str] | None, list[str] | None] | None],
        limit: int,
        stop: Callable[[int, Item], bool] | None,
    ) -> list[tuple[list[Item], bool]]:
        """Each branch's items in reading order (up to ``limit``, short of ``stop``), and
        whether more follow; the branches' Queries are sent together."""

        async def run(i: int, branch: Branch) -> tuple[list[Item], bool]:
            start = starts[i]
            if start is None:
                return [], False
            position, through = start
            items, more = await self._branch(listing, branch, limit, position, backward, through)
            if stop is not None:
                cut = next((j for j, item in enumerate(items) if not stop(i, item)), None)
                if cut is not None:
                    return items[:cut], False
            return items, more

        if len(starts) == 1:
            return [await run(0, listing.branches[0])]
        return list(await asyncio.gather(*(run(i, b) for i, b in enumerate(listing.branches))))

    async def _page(self, key: PageKey) -> Page:
        listing, size, backward = key.listing, key.size, key.backward
        count = len(listing.branches)
        plain = key.after is None and key.before is None
        if plain and count == 1 and listing in self._complete:  # read whole already
            complete = self._complete[listing]
            return self.page_of(listing, complete[::-1] if backward else complete, size, backward)
        start, stop = (key.before, key.after) if backward else (key.after, key.before)
        resume = positions(listing, start)
        floor = positions(listing, stop)  # reading backward, the page's cursors start there
        bound = None if stop is None else self._stop(listing, floor, backward)
        starts = self._starts(listing, backward, resume, start is not None)
        found = await self._read(listing, backward, starts, size + 1 if size else 1, bound)
        if size == 0:
            more = any(items for items, _ in found)
            return Page([], [], more and not backward, more and backward)
        if count == 1:
            items, more = found[0]
            page = self.page_of(listing, items, size, backward, more)
        else:
            page = self._merge(listing, found, size, backward, floor if backward else resume)
        if plain and not (page.has_previous or page.has_next):
            self._complete[listing] = page.items
        return page

    def _merge(
        self,
        listing: Listing,
        found: list[tuple[list[Item], bool]],
        size: int,
        backward: bool,
        base: list[list[str] | None],
    ) -> Page:
        """A page of several branches read in the same direction: merged by sort key, each
        item's cursor the position of every branch after it (None: nothing of that branch yet),
        the same whichever way the page was read. ``base``: the positions before the page's
        first item reading forward (the ``after`` cursor's); reading backward, those the page
        stops at (the ``after`` cursor's, if any), which only a branch read to its end keeps."""
        rank = self._rank(listing)
        tagged = [
            [(rank(i, item), i, item) for item in items] for i, (items, _) in enumerate(found)
        ]
        merged = heapq.merge(*tagged, key=lambda t: t[0], reverse=listing.forward == backward)
        taken: list[tuple[int, Item]] = []
        consumed = [0] * len(found)
        for _rank_of, i, item in merged:
            if len(taken) == size:
                break
            taken.append((i, item))
            consumed[i] += 1
        more = any(consumed[i] < len(items) or m for i, (items, m) in enumerate(found))
        at = list(base)
        if backward:  # before the page's first item: each branch's next item read, if any
            taken.reverse()
            for i, (items, _) in enumerate(found):
                if consumed[i] < len(items):
                    at[i] = _position(self.layout, listing.index, items[consumed[i]])
        cursors: list[Sequence[list[str] | None]] = []
        for i, item in taken:
            at[i] = _position(self.layout, listing.index, item)
            cursors.append(tuple(at))
        items = self.prime([item for _, item in taken], listing.index)
        return Page(items, Cursors(cursors), more and not backward, more and backward)

    def page_of(
        self,
        listing: Listing,
        items: list[Item],
        size: int,
        backward: bool = False,
        more: bool = False,
    ) -> Page:
        """A page of a one-branch listing from ``items`` in reading order (``more``: others
        follow them), its cursors made when read."""
        taken = items[:size]
        if backward:
            taken.reverse()
        cursors = _OneBranch(self.layout, listing.index, taken)
        more = len(items) > size or more
        return Page(
            self.prime(taken, listing.index), cursors, more and not backward, more and backward
        )

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
        query = self._params(listing, branch)
        if query is None:
            self._listed(listing, branch, [])
            return [], 0
        params = query | ({"Select": "COUNT"} if count else {})
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
