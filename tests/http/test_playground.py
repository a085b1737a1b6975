"""The GraphiQL playground, served over real HTTP by uvicorn and rendered in headless Chromium.

Needs Debian's ``chromium`` (``make browser`` installs it) and the npm assets
(``make playground``); the test fails, not skips, when either is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.table import Table
from server.http.app import create_app

CHROMIUM = "chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
CHROMIUM_TIMEOUT = 60.0
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0

ASSET_TYPES = {
    "react.js": "javascript",
    "react-dom.js": "javascript",
    "graphiql.js": "javascript",
    "graphiql.css": "text/css",
}


@dataclass
class Seen:
    """One request the served app answered: what the client asked for and the status."""

    method: str
    path: str
    accept: str
    origin: str = ""
    status: int = 0
    allow_origin: str = ""  # the answer's Access-Control-Allow-Origin


@dataclass
class Served:
    url: str
    seen: list[Seen] = field(default_factory=list)


def recording(app: ASGIApp, seen: list[Seen]) -> ASGIApp:
    """``app``, noting every HTTP request's method, path, Accept and Origin headers, and its
    answer's status and Access-Control-Allow-Origin."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        entry = Seen(
            scope["method"],
            scope["path"],
            headers.get(b"accept", b"").decode(),
            headers.get(b"origin", b"").decode(),
        )
        seen.append(entry)

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                entry.status = message["status"]
                answer = dict(message.get("headers", []))
                entry.allow_origin = answer.get(b"access-control-allow-origin", b"").decode()
            await send(message)

        await app(scope, receive, noting)

    return wrapped


@pytest.fixture
async def served(demo: Table) -> AsyncIterator[Served]:
    """The app over the demo table, served by uvicorn on a loopback port in this event loop.

    The listening socket is bound here and handed to uvicorn, so no other process can take the
    port between choosing and binding it (uvicorn would ``sys.exit`` inside the event loop).
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        result = Served(f"http://127.0.0.1:{port}")
        config = uvicorn.Config(
            recording(create_app(table=demo), result.seen),
            log_config=None,  # leave the process's logging alone; errors reach pytest's capture
            log_level="warning",
            ws="none",
            lifespan="on",
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            async with asyncio.timeout(START_TIMEOUT):
                while not server.started:
                    if task.done():
                        task.result()  # raises why uvicorn did not start
                        pytest.fail("uvicorn stopped before it started")
                    await asyncio.sleep(0.02)
            yield result
        finally:
            server.should_exit = True
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await task
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise


async def dump_dom(url: str, profile: Path, flags: Sequence[str] = ()) -> tuple[str, str]:
    """Chromium's DOM for ``url`` once its scripts ran, and what Chromium wrote to stderr.
    ``flags`` are added to Chromium's command line."""
    chromium = shutil.which(CHROMIUM)
    if chromium is None:
        pytest.fail(
            f"`{CHROMIUM}` is not on PATH: the playground test needs headless Chromium; "
            "install it with `make browser` (apt-get install chromium)"
        )
    process = await asyncio.create_subprocess_exec(
        chromium,
        *CHROMIUM_FLAGS,
        *flags,
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        url,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group, so a timeout kills every helper
    )
    try:
        async with asyncio.timeout(CHROMIUM_TIMEOUT):
            stdout, stderr = await process.communicate()
    except TimeoutError:
        pytest.fail(f"Chromium did not dump the DOM of {url} within {CHROMIUM_TIMEOUT:.0f} s")
    finally:
        # Chromium's own group: its renderer, GPU and zygote helpers too, even if it exited.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    out, err = stdout.decode(errors="replace"), stderr.decode(errors="replace")
    assert process.returncode == 0, f"Chromium exited with {process.returncode}:\n{err}"
    return out, err


@pytest.mark.browser
async def test_playground_renders_the_graphiql_editor_in_headless_chromium(
    served: Served, tmp_path: Path
) -> None:
    dom, log = await dump_dom(f"{served.url}/graphql", tmp_path / "profile")

    assert "Playground assets are not installed" not in dom, dom
    assert "Loading GraphiQL…" not in dom, f"GraphiQL never rendered; Chromium said:\n{log}"
    assert re.search(r'class="[^"]*\bgraphiql-container\b', dom), dom
    assert re.search(r'class="[^"]*\bgraphiql-query-editor\b', dom), dom
    assert re.search(r'class="[^"]*\bCodeMirror\b', dom), dom

    navigation = [s for s in served.seen if s.method == "GET" and s.path == "/graphql"]
    assert navigation, served.seen
    assert "text/html" in navigation[0].accept, navigation[0]
    assert navigation[0].status == 200, navigation[0]
    fetched = {s.path: s.status for s in served.seen if s.path.startswith("/playground/")}
    assert fetched == {f"/playground/{name}": 200 for name in ASSET_TYPES}, served.seen
    introspection = [s for s in served.seen if s.method == "POST" and s.path == "/graphql"]
    assert [s.status for s in introspection] == [200], served.seen


async def test_playground_assets_are_served_over_http_with_their_content_types(
    served: Served,
) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=10.0) as client:
        for name, kind in ASSET_TYPES.items():
            response = await client.get(f"/playground/{name}")
            assert response.status_code == 200, name
            assert kind in response.headers["content-type"], (name, response.headers)
            assert len(response.content) > 1000, name


async def test_playground_page_loads_nothing_from_another_host(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=10.0) as client:
        response = await client.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    refs = re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", response.text)
    assert refs, response.text
    for ref in refs:
        assert not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|//", ref), ref
