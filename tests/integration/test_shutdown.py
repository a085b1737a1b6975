"""Graceful shutdown of ``edgewise serve`` (embedded DynamoDB, durable ``--data-file``): SIGTERM
lets the request in flight finish, then writes the data file (with that request's write in it),
then stops the embedded moto server, then exits."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from graph.dynamo.embedded import free_port
from tests.served import alive, children

EDGEWISE = [sys.executable, "-m", "server"]
MUTATION = 'mutation { createUser(input: {id: "inflight", name: "In Flight"}) { id name } }'


def _wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "edgewise serve was not ready in 60 s"
        time.sleep(0.1)


def _read_response(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """Status and JSON body of the one response on ``sock`` (the server closes it after)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def test_sigterm_drains_the_request_in_flight_then_saves_and_stops(tmp_path: Path) -> None:
    port = free_port()
    data_file = tmp_path / "graph.jsonl"
    log = tmp_path / "serve.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*EDGEWISE, "serve", "--port", str(port), "--data-file", str(data_file)],
            env={**os.environ, "EDGEWISE_DYNAMODB": "embedded"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    sock: socket.socket | None = None
    try:
        _wait_ready(process, port, log)
        [moto] = children(process.pid)
        body = json.dumps({"query": MUTATION}).encode()
        head = (
            f"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        # The request is in flight: its headers are in, its body arrives slowly.
        sock.sendall(head + body[:10])
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.7)
        assert process.poll() is None, "edgewise serve exited with a request in flight"
        assert not data_file.exists(), "the data file was written before the request finished"
        with socket.socket() as late:  # no new connection is taken while draining
            assert late.connect_ex(("127.0.0.1", port)) != 0
        sock.sendall(body[10:])
        status, answer = _read_response(sock)
        assert status == 200, answer
        assert answer == {"data": {"createUser": {"id": "USER#inflight", "name": "In Flight"}}}

        # uvicorn re-raises the signal it caught once it has shut down cleanly
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
        deadline = time.monotonic() + 10
        while alive(moto) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(moto), "the embedded moto server outlived edgewise serve"
        saved = [json.loads(line) for line in data_file.read_text().splitlines()]
        keys = {item["PK"]["S"] for item in saved}
        assert {"USER#inflight", "USER#alice", "GROUP#group1"} <= keys
        assert not list(tmp_path.glob("*.tmp*")), list(tmp_path.iterdir())
    finally:
        if sock is not None:
            sock.close()
        if process.poll() is None:
            process.kill()
            process.wait()
