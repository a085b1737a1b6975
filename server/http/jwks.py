"""A JWKS fetched over HTTP without blocking the event loop: cached, refreshed in the background
when old, refreshed on an unknown ``kid`` at most once per interval, and bounded by a timeout.
httpx and PyJWT are imported by the first fetch, not with the module."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from graph.errors import BadUserInput, Unavailable

if TYPE_CHECKING:
    import jwt

__all__ = ["LIFESPAN", "REFRESH_INTERVAL", "TIMEOUT", "RemoteJwks", "is_url"]

log = logging.getLogger("edgewise.auth")

TIMEOUT = 5.0  # seconds one fetch may take, connection included
LIFESPAN = 600.0  # seconds a fetched JWKS is used before it is fetched again (in the background)
REFRESH_INTERVAL = 30.0  # at most one fetch this often, whatever the tokens' kids
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def is_url(jwks: str) -> bool:
    return jwks.startswith(("https://", "http://"))


class RemoteJwks:
    """The keys of a JWKS URL (``https://``; ``http://`` only on a loopback host).

    A fetch runs in the event loop with ``httpx.AsyncClient`` and ends within ``timeout``
    seconds; requests that need a fetch at the same time wait for the same one. A JWKS older
    than ``lifespan`` is still used while a background fetch replaces it. A ``kid`` that is not
    in the JWKS makes it fetched again, at most once per ``refresh_interval`` (a failed or
    hanging fetch counts too), so tokens with made-up kids cannot flood the identity provider.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = TIMEOUT,
        lifespan: float = LIFESPAN,
        refresh_interval: float = REFRESH_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme == "http" and parts.hostname not in LOOPBACK:
            raise BadUserInput(
                f"EDGEWISE_JWT_JWKS={url}: fetch the JWKS over https:// "
                "(plain http:// is accepted only on a loopback host)"
            )
        self.url = url
        self.timeout = timeout
        self.lifespan = lifespan
        self.refresh_interval = refresh_interval
        self.clock = clock
        self._keys: jwt.PyJWKSet | None = None
        self._fetched_at: float | None = None  # when the keys in use were fetched
        self._attempted_at: float | None = None  # when the last fetch started
        self._task: asyncio.Task[None] | None = None

    async def keys(self, kid: str | None) -> list[jwt.PyJWK]:
        """The keys a token naming ``kid`` (any key when None) may have been signed with.

        Raises :class:`Unavailable` when no JWKS could be fetched yet.
        """
        now = self.clock()
        may_fetch = self._attempted_at is None or now - self._attempted_at >= self.refresh_interval
        if self._keys is None:
            await self._fetch_shared()  # nothing to verify with: every request waits for it
        elif kid is not None and kid not in self._ids() and may_fetch:
            try:
                await self._fetch_shared()
            except Unavailable as exc:
                log.warning("%s; verifying with the JWKS fetched before", exc)
        elif self._fetched_at is not None and now - self._fetched_at > self.lifespan and may_fetch:
            self._start()  # the old keys still verify this token; fetch new ones meanwhile
        assert self._keys is not None
        return [key for key in self._keys.keys if kid is None or key.key_id == kid]

    def _ids(self) -> set[str | None]:
        return {key.key_id for key in self._keys.keys} if self._keys is not None else set()

    def _start(self) -> asyncio.Task[None]:
        task = self._task
        loop = asyncio.get_running_loop()
        if task is None or task.done() or task.get_loop() is not loop:
            self._attempted_at = self.clock()
            task = self._task = loop.create_task(self._fetch())
            task.add_done_callback(_retrieve)
        return task

    async def _fetch_shared(self) -> None:
        # shielded: a waiter that gives up (its client went away) does not cancel the others'
        await asyncio.shield(self._start())

    async def _fetch(self) -> None:
        import httpx
        import jwt

        try:
            async with asyncio.timeout(self.timeout):
                async with httpx.AsyncClient(timeout=self.timeout) as client:
                    response = await client.get(self.url, headers={"Accept": "application/json"})
            response.raise_for_status()
            keys = jwt.PyJWKSet.from_dict(response.json())
        except TimeoutError:
            raise Unavailable(
                f"the JWKS at {self.url} did not answer within {self.timeout:g} s; retry later"
            ) from None
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            raise Unavailable(
                f"could not fetch the JWKS at {self.url}: {exc}; retry later"
            ) from exc
        self._keys, self._fetched_at = keys, self.clock()
        log.info("fetched the JWKS at %s: %d keys", self.url, len(keys.keys))


def _retrieve(task: asyncio.Task[None]) -> None:
    """Mark a fetch's failure as seen (waiters, if any, got it already)."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("JWKS fetch failed: %s", task.exception())
