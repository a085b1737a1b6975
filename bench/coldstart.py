"""``python -m bench.coldstart``: cold starts, process start to first answer (issue 32).

Each run is a fresh Python process, timed from outside: from just before it is started to the
moment its first answer arrives. Side by side, in turn within each round (the order reversed
every other round), medians of ``--runs`` rounds:

- **lambda**: ``server.lambda_handler.handler`` imported and invoked with a Lambda function URL
  event (a POST of a query that reads the demo table on moto), as AWS's runtime does in a new
  container, with the environment a function has (credentials in ``AWS_*`` variables,
  ``EDGEWISE_DYNAMODB`` the endpoint, ``EDGEWISE_TABLE``); with ``--compiled`` a second row
  reads the model prepared by ``edgewise build`` (``EDGEWISE_COMPILED``);
- **bare**: the bare stack, a strawberry schema answering the same query with a hard-coded
  value, behind Mangum, invoked with the same event;
- **serve**: ``edgewise serve`` started, and a client sending the same query until it answers.

``--formats`` measures instead how a fresh process reads the demo model, the choice behind
``edgewise build``'s format: the model file as today (YAML, validated by pydantic, compiled), JSON
of the same file (validated and compiled: no YAML), and the pickle of the compiled model.

Each Lambda process then answers ``--warm`` more invocations (warm, in the same container) and
reports the median of their CPU time (the process's own: moto's time to answer is not in it).
With ``--against REV`` the same Lambda and serve runs are made on commit ``REV``'s tree (``git
archive``) in the same rounds, so every ratio is taken in one run. Writes
``results/COLDSTART.md``."""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.dynamo.embedded import EmbeddedDynamoDB, free_port

from .fig_throughput import checkout
from .markdown import table
from .measure import say
from .options import RESULTS
from .processes import LOGS, ROOT
from .report import Section, environment, write

__all__ = ["BARE", "LAMBDA", "event", "main"]

QUERY = '{ user(id: "alice") { name } }'
ANSWER = {"data": {"user": {"name": "Alice"}}}
TABLE = "graph"


def event(query: str = QUERY) -> dict[str, Any]:
    """A Lambda function URL event (payload 2.0) POSTing ``query`` to ``/graphql``."""
    body = json.dumps({"query": query})
    domain = "r3pmxmplak.lambda-url.us-east-1.on.aws"
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/graphql",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "accept": "application/json",
            "content-length": str(len(body)),
            "host": domain,
            "x-forwarded-proto": "https",
            "x-forwarded-port": "443",
            "x-forwarded-for": "198.51.100.7",
        },
        "requestContext": {
            "accountId": "anonymous",
            "apiId": "r3pmxmplak",
            "domainName": domain,
            "domainPrefix": "r3pmxmplak",
            "http": {
                "method": "POST",
                "path": "/graphql",
                "protocol": "HTTP/1.1",
                "sourceIp": "198.51.100.7",
                "userAgent": "bench",
            },
            "requestId": "a7c9e3b1-5d0f",
            "routeKey": "$default",
            "stage": "$default",
            "time": "23/Nov/2026:16:30:00 +0000",
            "timeEpoch": 1795451400000,
        },
        "body": base64.b64encode(body.encode()).decode(),
        "isBase64Encoded": True,
    }


# The child's last part (after HANDLER is defined): the first invocation, its answer on one line
# at once (the parent stops its clock there), then the warm invocations' median.
_INVOKE = """
import base64, json, statistics, sys, time
EVENT = json.loads(sys.argv[1])
class Context:
    function_name = "edgewise"
    aws_request_id = "8f5d1a7c"
    def get_remaining_time_in_millis(self):
        return 29_000
def answer():
    response = HANDLER(EVENT, Context())
    body = response["body"]
    return json.loads(base64.b64decode(body) if response.get("isBase64Encoded") else body)
first = answer()
print(json.dumps(first), flush=True)
warm = []
for _ in range(int(sys.argv[2])):
    started = time.process_time()
    if answer() != first:
        raise SystemExit("a warm answer differs from the first")
    warm.append(time.process_time() - started)
print(json.dumps({"warm": statistics.median(warm) if warm else None}), flush=True)
"""

LAMBDA = "from server.lambda_handler import handler as HANDLER\n" + _INVOKE

BARE = (
    """
import strawberry
from mangum import Mangum
from strawberry.asgi import GraphQL

@strawberry.type
class User:
    name: str

@strawberry.type
class Query:
    @strawberry.field
    def user(self, id: strawberry.ID) -> User | None:
        return User(name="Alice")

HANDLER = Mangum(GraphQL(strawberry.Schema(Query)), lifespan="off")
"""
    + _INVOKE
)


@dataclass
class Runs:
    """One row's figures, one per round: seconds to the first answer, a warm invocation's."""

    first: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)


def _lambda_env(endpoint: str, extra: dict[str, str]) -> dict[str, str]:
    """What a function's process has: credentials and region in ``AWS_*`` variables, the
    function's configuration in ``EDGEWISE_*``; nothing of the bench's own ``EDGEWISE_*``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EDGEWISE_", "AWS_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a deployment package holds its bytecode
    env |= {
        "AWS_ACCESS_KEY_ID": "ASIAEXAMPLEEXAMPLE00",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjEXAMPLE",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "edgewise",
        "EDGEWISE_DYNAMODB": endpoint,
        "EDGEWISE_TABLE": TABLE,
    }
    return env | extra


def _invoke(
    name: str, script: str, cwd: Path, env: dict[str, str], warm: int
) -> tuple[float, float]:
    """Run ``script`` in a fresh process in ``cwd``: seconds from its start to its first answer,
    and the median of its warm invocations."""
    log = open(LOGS / f"coldstart-{name}.log", "ab")  # noqa: SIM115 - closed below
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", script, json.dumps(event()), str(warm)],
        cwd=cwd,  # -c puts the working folder first on sys.path: that tree's code runs
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        first = time.perf_counter() - started
        if not line or json.loads(line) != ANSWER:
            raise RuntimeError(f"{name}: answered {line[:300]!r}; see {log.name}")
        tail = json.loads(process.stdout.readline() or b"{}")
        if process.wait(timeout=120) != 0 or (tail.get("warm") is None and warm):
            raise RuntimeError(f"{name}: exited {process.returncode}; see {log.name}")
        return first, float(tail.get("warm") or 0.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


def _post(port: int) -> Any:
    """The query's answer from the server on ``port``, or None when it does not answer yet."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        body = json.dumps({"query": QUERY})
        connection.request("POST", "/graphql", body, {"content-type": "application/json"})
        response = connection.getresponse()
        return json.loads(response.read()) if response.status == 200 else None
    except OSError:
        return None
    finally:
        connection.close()


def _serve(name: str, cwd: Path, endpoint: str) -> float:
    """``edgewise serve`` in ``cwd``: seconds from its start to its first answer."""
    port = free_port()
    env = _lambda_env(endpoint, {})
    argv = ["-m", "server", "serve", "--dynamodb", endpoint, "--table", TABLE, "--no-demo"]
    log = open(LOGS / f"coldstart-{name}.log", "ab")  # noqa: SIM115 - closed below
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *argv, "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        while (answer := _post(port)) is None:
            if process.poll() is not None:
                raise RuntimeError(f"{name}: exited {process.returncode}; see {log.name}")
            if time.perf_counter() - started > 120:
                raise RuntimeError(f"{name}: no answer in 120 s; see {log.name}")
            time.sleep(0.005)
        first = time.perf_counter() - started
        if answer != ANSWER:
            raise RuntimeError(f"{name}: answered {answer!r}")
        return first
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


async def _demo_table(url: str) -> None:
    from graph.dynamo.client import Endpoint, create_table, open_client
    from graph.table import Table
    from models.demo.generate import demo_items
    from server.engine import engine_for

    layout = engine_for("demo").layout
    async with open_client(Endpoint(url)) as client:
        await create_table(client.control, TABLE, layout=layout)
        await Table(client, TABLE, layout=layout).batch_write(demo_items())


@contextmanager
def _compiled(tree: Path) -> Iterator[Path]:
    """``edgewise build --model demo`` of ``tree``, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="edgewise-compiled-") as folder:
        subprocess.run(
            [sys.executable, "-m", "server", "build", "--model", "demo", "--output", folder],
            cwd=tree,
            check=True,
            capture_output=True,
        )
        yield Path(folder)


def _compile(tree: Path) -> None:
    """Bytecode for every module of ``tree``, as ``pip install`` writes it into a deployment
    package (site-packages has its own already): no run compiles source."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    folders = [str(tree / name) for name in ("graph", "server", "model", "models")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=env, check=True)


# How a fresh process reads the demo model (``--formats``): each statement after ``import model``.
FORMATS = {
    "the model file: YAML, validated, compiled": "from model.load import load_model\n"
    "load_model('demo')",
    "JSON of the file, validated, compiled": "import json\nfrom model.spec import ModelSpec\n"
    "from model.compile import compile_model\n"
    "compile_model(ModelSpec.model_validate(json.load(open(JSON))), 'demo')",
    "pickle of the compiled model (edgewise build)": "from pathlib import Path\n"
    "from model.compiled import read\nread(Path(BUILD), 'demo')",
}

_TIMED = """
import resource, sys, time
def cpu():
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime
import model
JSON, BUILD = sys.argv[1], sys.argv[2]
wall, used = time.perf_counter(), cpu()
{statement}
print(time.perf_counter() - wall, cpu() - used)
"""


def _formats(runs: int) -> Section:
    """Seconds (wall and CPU) a fresh process takes to read the demo model each way."""
    import yaml

    from model.common import model_path
    from model.load import _Loader

    found: dict[str, list[tuple[float, float]]] = {name: [] for name in FORMATS}
    with (
        tempfile.TemporaryDirectory(prefix="edgewise-formats-") as folder,
        _compiled(ROOT) as built,
    ):
        data = yaml.load(model_path("demo").read_text(), Loader=_Loader)
        as_json = Path(folder) / "demo.json"
        as_json.write_text(json.dumps(data))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for number in range(runs + 1):  # the first round warms the caches and is left out
            order = list(FORMATS.items())
            for name, statement in order if number % 2 == 0 else order[::-1]:
                script = _TIMED.format(statement=statement)
                done = subprocess.run(
                    [sys.executable, "-c", script, str(as_json), str(built)],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                wall, used = (float(x) for x in done.stdout.split())
                if number:
                    found[name].append((wall, used))
    rows = [
        [
            name,
            f"{statistics.median(w for w, _ in values) * 1000:.1f}",
            f"{statistics.median(c for _, c in values) * 1000:.1f}",
        ]
        for name, values in found.items()
    ]
    text = (
        "A fresh process reading the demo model, after `import model` (ms, medians of "
        f"{runs} runs, the ways in turn; what each imports included):\n\n"
        + table(["how", "wall (ms)", "CPU (ms)"], rows)
    )
    return Section("Reading the model in a cold process", text)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _render(rows: dict[str, Runs], args: argparse.Namespace, endpoint_note: str) -> Section:
    bare = rows["bare"]

    def ratio(a: list[float], b: list[float]) -> str:
        pairs = sorted(x / y for x, y in zip(a, b, strict=True))
        return f"{statistics.median(pairs):.2f} ({pairs[0]:.2f} to {pairs[-1]:.2f})"

    lines = []
    for name, runs in rows.items():
        warm = f"{_median(runs.warm) * 1000:.2f}" if runs.warm else ""
        versus_bare = ratio(runs.first, bare.first) if name != "bare" else "1"
        lines.append([name, f"{_median(runs.first):.3f}", versus_bare, warm])
    text = (
        f"Process start to first answer (seconds, median of {args.runs} rounds, each command "
        "once a round, the order reversed every other round); the ratio to the bare stack is "
        "taken round by round (median, then min to max); the warm column is the CPU time of one "
        f"warm invocation of the same query in the same process (ms, median of {args.warm}, "
        f"then the median over rounds). {endpoint_note}\n\n"
        + table(["command", "first answer (s)", "ratio to bare", "warm CPU (ms)"], lines)
    )
    if args.against:
        this, theirs = rows["lambda"], rows[f"lambda at {args.against}"]
        text += (
            f"\n\nAgainst commit {args.against}, round by round: the cold start "
            f"{ratio(this.first, theirs.first)}, the warm invocation's CPU "
            f"{ratio(this.warm, theirs.warm)} (this/{args.against}; below 1: this costs less)."
        )
        if "serve" in rows and f"serve at {args.against}" in rows:
            serve, before = rows["serve"], rows[f"serve at {args.against}"]
            text += f" `edgewise serve`: {ratio(serve.first, before.first)}."
    return Section("Cold start", text)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.coldstart", description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="rounds (default 9)")
    parser.add_argument(
        "--warm", type=int, default=30, help="warm invocations per Lambda process (default 30)"
    )
    parser.add_argument("--against", metavar="REV", help="also run commit REV's tree")
    parser.add_argument("--no-serve", action="store_true", help="leave `edgewise serve` out")
    parser.add_argument(
        "--compiled", action="store_true", help="also the Lambda with `edgewise build`'s output"
    )
    parser.add_argument(
        "--formats", action="store_true", help="measure the ways to read the model instead"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where COLDSTART.md goes")
    args = parser.parse_args()
    LOGS.mkdir(parents=True, exist_ok=True)
    if args.formats:
        _compile(ROOT)
        section = _formats(args.runs)
        print(f"\n## {section.title}\n\n{section.text}\n", flush=True)
        args.output.mkdir(parents=True, exist_ok=True)
        write(args.output / "FORMATS.md", environment(), [section])
        return
    with ExitStack() as stack:
        _compile(ROOT)
        moto = stack.enter_context(EmbeddedDynamoDB())
        asyncio.run(_demo_table(moto.url))
        endpoint = moto.url
        lambda_env = _lambda_env(endpoint, {})
        commands: dict[str, Any] = {
            "lambda": lambda: _invoke("lambda", LAMBDA, ROOT, lambda_env, args.warm),
            "bare": lambda: _invoke("bare", BARE, ROOT, lambda_env, args.warm),
        }
        if args.compiled:
            compiled = stack.enter_context(_compiled(ROOT))
            env = _lambda_env(endpoint, {"EDGEWISE_COMPILED": str(compiled)})
            commands["lambda, compiled"] = lambda: _invoke(
                "lambda-compiled", LAMBDA, ROOT, env, args.warm
            )
        if not args.no_serve:
            commands["serve"] = lambda: (_serve("serve", ROOT, endpoint), 0.0)
        if args.against:
            before = stack.enter_context(checkout(args.against))
            if before is None:
                raise SystemExit(f"no commit {args.against} in this checkout")
            _compile(before)
            commands[f"lambda at {args.against}"] = lambda: _invoke(
                "lambda-before", LAMBDA, before, lambda_env, args.warm
            )
            if not args.no_serve:
                commands[f"serve at {args.against}"] = lambda: (
                    _serve("serve-before", before, endpoint),
                    0.0,
                )
        say(f"warm-up: each command once ({', '.join(commands)})")
        for run in commands.values():
            run()
        rows = {name: Runs() for name in commands}
        for number in range(args.runs):
            order = list(commands.items())
            for name, run in order if number % 2 == 0 else order[::-1]:
                first, warm = run()
                rows[name].first.append(first)
                if warm:
                    rows[name].warm.append(warm)
            say(
                f"round {number + 1} of {args.runs}: "
                + ", ".join(f"{n} {r.first[-1]:.2f}s" for n, r in rows.items())
            )
    note = "DynamoDB is moto on the loopback (`graph.dynamo.embedded`), holding the demo data."
    section = _render(rows, args, note)
    print(f"\n## {section.title}\n\n{section.text}\n", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    write(args.output / "COLDSTART.md", environment(), [section])


if __name__ == "__main__":
    main()
