"""Fixtures of the integration tests: a real Redis for subscriptions across machines."""

from __future__ import annotations

import contextlib
import shutil
import socket as sockets
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis


def _free_port() -> int:
    with sockets.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port, without persistence; stopped afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: `make test` installs Debian's package")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        for _ in range(100):
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    break
            process.poll()
            assert process.returncode is None, "redis-server exited at start"
            time.sleep(0.05)
        client.close()
        yield url
    finally:
        process.terminate()
        process.wait(10)
