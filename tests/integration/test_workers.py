"""``edgewise serve --workers 2``: two uvicorn worker processes answer on one port over one
embedded DynamoDB, and no process outlives the server, whichever way it is stopped."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from graph.dynamo.embedded import free_port
from server.cli import main
from server.cli.workers import worker_app
from tests.served import alive, children

EDGEWISE = [sys.executable, "-m", "server"]
PRODUCTS = '{ user(id: "alice") { products { product { id } via { id } } } }'
ANSWER = {
    "user": {
        "products": [
            {"product": {"id": "PRODUCT#prod1"}, "via": [{"id": "GROUP#group1"}]},
            {
                "product": {"id": "PRODUCT#prod2"},
                "via": [{"id": "GROUP#group1"}, {"id": "GROUP#group2"}],
            },
            {"product": {"id": "PRODUCT#prod3"}, "via": [{"id": "GROUP#group2"}]},
        ]
    }
}


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process, self.url, self.log = process, f"http://127.0.0.1:{port}", log

    def children(self) -> dict[str, list[int]]:
        """The server's children by kind: moto, uvicorn workers, multiprocessing's helper."""
        kinds: dict[str, list[int]] = {"moto": [], "worker": [], "other": []}
        for pid in children(self.process.pid):
            command = _cmdline(pid)
            kind = "moto" if "moto_child" in command else "other"
            kinds["worker" if "spawn_main" in command else kind].append(pid)
        return kinds

    def access_pids(self) -> set[int]:
        """The pids of the processes that wrote an access log line for /graphql."""
        pids = set()
        for line in self.log.read_text().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                if entry["logger"] == "uvicorn.access" and entry.get("path") == "/graphql":
                    pids.add(entry["pid"])
        return pids


@contextmanager
def serve_workers(tmp_path: Path, workers: int = 2) -> Iterator[Served]:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*EDGEWISE, "serve", "--workers", str(workers), "--port", str(port)],
            env={**os.environ, "EDGEWISE_DYNAMODB": "embedded", "EDGEWISE_LOG_FORMAT": "json"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group, as in a terminal
        )
    served = Served(process, port, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(f"{served.url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "edgewise serve --workers was not ready in 60 s"
            time.sleep(0.1)
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _stopped(served: Served, pids: list[int], how: signal.Signals) -> None:
    """Send ``how`` to the server (SIGINT to its process group, as Ctrl-C in a terminal does);
    assert that it and every one of ``pids`` are gone."""
    if how == signal.SIGINT:
        os.killpg(served.process.pid, how)
    else:
        served.process.send_signal(how)
    code = served.process.wait(timeout=30)
    assert code == (-how if how == signal.SIGKILL else 0), served.log.read_text()
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {pid: _cmdline(pid) for pid in pids if alive(pid)}
    assert not left, f"outlived edgewise serve after {how.name}: {left}"


async def _post_until_both_answer(served: Served, workers: list[int]) -> None:
    """Concurrent requests on fresh connections until both workers have answered some."""
    limits = httpx.Limits(max_keepalive_connections=0)  # a new connection per request
    async with httpx.AsyncClient(base_url=served.url, limits=limits, timeout=30) as client:
        for _ in range(30):
            answers = await asyncio.gather(
                *(client.post("/graphql", json={"query": PRODUCTS}) for _ in range(12))
            )
            assert [a.json() for a in answers] == [{"data": ANSWER}] * 12
            await asyncio.sleep(0.2)  # the access log lines are written
            if served.access_pids() == set(workers):
                return
    pytest.fail(f"not both workers answered: {served.access_pids()} of {workers}")


async def test_two_workers_answer_over_one_embedded_dynamodb_and_stop_with_it(
    tmp_path: Path,
) -> None:
    with serve_workers(tmp_path) as served:
        kinds = served.children()
        assert len(kinds["moto"]) == 1, kinds
        assert len(kinds["worker"]) == 2, kinds
        await _post_until_both_answer(served, kinds["worker"])
        # one DynamoDB behind both: a write through one worker is read through every one
        async with httpx.AsyncClient(
            base_url=served.url, limits=httpx.Limits(max_keepalive_connections=0)
        ) as client:
            created = await client.post(
                "/graphql",
                json={"query": 'mutation { createUser(input: {id: "w", name: "W"}) { id } }'},
            )
            assert created.json() == {"data": {"createUser": {"id": "USER#w"}}}
            reads = await asyncio.gather(
                *(
                    client.post("/graphql", json={"query": '{ user(id: "w") { name } }'})
                    for _ in range(12)
                )
            )
        assert [r.json() for r in reads] == [{"data": {"user": {"name": "W"}}}] * 12
        _stopped(served, [pid for pids in kinds.values() for pid in pids], signal.SIGTERM)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_no_child_outlives_serve_workers(tmp_path: Path, how: signal.Signals) -> None:
    with serve_workers(tmp_path) as served:
        kinds = served.children()
        assert len(kinds["worker"]) == 2 and len(kinds["moto"]) == 1, kinds
        _stopped(served, [pid for pids in kinds.values() for pid in pids], how)


def test_worker_app_outside_serve_workers_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDGEWISE_WORKER_SPEC", raising=False)
    with pytest.raises(SystemExit, match="only in the workers of `edgewise serve --workers N`"):
        worker_app()


def test_bad_workers_stop_serve_with_what_to_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["serve", "--workers", "0"])
    assert raised.value.code == 2
    assert "use a whole number of processes, 1 or more" in capsys.readouterr().err
    for value, told in (("two", "valid integer"), ("0", "greater than or equal to 1")):
        monkeypatch.setenv("EDGEWISE_WORKERS", value)
        with pytest.raises(SystemExit) as raised:
            main(["serve"])
        assert f"EDGEWISE_WORKERS={value!r}" in str(raised.value) and told in str(raised.value)
