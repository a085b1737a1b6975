"""The ``edgewise`` command line (also ``python -m server``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import signal
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from graph.bulk import dump, load, scan, validate
from graph.dynamo.capabilities import Capabilities
from graph.dynamo.client import (
    CLIENTS,
    Endpoint,
    client_config,
    cloudformation_table,
    create_table,
    open_client,
    table_definition,
)
from graph.errors import EdgewiseError
from graph.table import Layout, RetryPolicy, Table
from graph.writes.pending import resume_replicas
from graph.writes.replicas import Difference
from graph.writes.writer import Writer
from model import SHIPPED, Model, ModelError, json_schema
from model.values import Replica
from server.cli.summary import summary
from server.engine import Engine, engine_for
from server.engine.fields import load_hook
from server.observe.logs import FORMATS, configure
from server.settings import Settings, load_settings
from server.version import version

__all__ = ["main"]

CHUNK = 2000


def _connection_flags(parser: argparse.ArgumentParser, serving: bool = False) -> None:
    where = (
        "embedded (default; a moto server child process), aws, or an endpoint URL"
        if serving
        else "an endpoint URL or aws (the embedded DynamoDB lives only inside `serve`)"
    )
    parser.add_argument(
        "--dynamodb",
        help=f"{where}, e.g. http://127.0.0.1:8001 (env EDGEWISE_DYNAMODB)",
    )
    parser.add_argument(
        "--table",
        help="table name (env EDGEWISE_TABLE; default: the model's, `graph` for the demo)",
    )
    _model_flag(parser)


def _model_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="M",
        help=f"a model file (YAML) or a shipped model: {', '.join(SHIPPED)} "
        "(env EDGEWISE_MODEL; default demo)",
    )


def _engine(args: argparse.Namespace) -> Engine:
    """The engine of ``--model``; an invalid model stops the command with its problems."""
    try:
        engine = engine_for(args.model)
    except ModelError as exc:
        sys.stderr.write("\n".join(exc.lines) + "\n")
        raise SystemExit(f"edgewise {args.command}: the model {exc.source} is invalid") from None
    args.table = getattr(args, "table", None) or engine.model.table
    if args.table is None and args.command not in ("export-schema", "check-model"):
        raise SystemExit(
            f"edgewise {args.command}: the model names no table (table.name): pass --table T "
            "or set EDGEWISE_TABLE"
        )
    return engine


def _lean(args: argparse.Namespace) -> bool:
    """Whether the data plane is graph.dynamo.wire's lean client
    (``--client``/``EDGEWISE_CLIENT``)."""
    return bool(args.settings.client == "lean")


def _endpoint(args: argparse.Namespace) -> Endpoint:
    if args.dynamodb == "embedded":
        raise SystemExit(
            f"edgewise {args.command}: the embedded DynamoDB lives only inside `edgewise serve`; "
            "pass --dynamodb URL (or aws), or set EDGEWISE_DYNAMODB"
        )
    return Endpoint.parse(args.dynamodb)


def _settings(args: argparse.Namespace) -> Settings:
    """The process's settings: the flags given, else ``EDGEWISE_*``, else the defaults; the
    flags left out are filled in from them."""
    fields = Settings.model_fields
    given = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    settings = load_settings(given, who=f"edgewise {args.command}")
    for name in fields:
        if getattr(args, name, False) is None:
            setattr(args, name, getattr(settings, name))
    return settings


def _workers(value: str) -> int:
    """``--workers`` (or EDGEWISE_WORKERS): a whole number of processes, 1 or more."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(
            f"{value!r}: use a whole number of processes, 1 or more (--workers N or "
            "EDGEWISE_WORKERS=N)"
        )
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edgewise", description="A GraphQL API over a DynamoDB single-table graph."
    )
    parser.add_argument("--version", action="version", version=f"edgewise {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the API under uvicorn")
    serve.add_argument(
        "--host",
        help="interface (env EDGEWISE_HOST; default 127.0.0.1)",
    )
    serve.add_argument(
        "--port",
        type=int,
        help="port (env EDGEWISE_PORT; default 8000)",
    )
    _connection_flags(serve, serving=True)
    serve.add_argument(
        "--demo",
        action=argparse.BooleanOptionalAction,
        help="load the model's sample data into the embedded DynamoDB (env EDGEWISE_DEMO; "
        "default on)",
    )
    serve.add_argument(
        "--data-file",
        type=Path,
        metavar="F",
        help="durable embedded DynamoDB: load F (DynamoDB JSON lines) at start instead of the "
        "demo data if F exists, and dump the table to F atomically at clean shutdown",
    )
    serve.add_argument(
        "--production",
        action="store_true",
        default=None,
        help="require a JWT key; no playground, introspection or suggestions; trace for admins "
        "(env EDGEWISE_PRODUCTION=1)",
    )
    serve.add_argument(
        "--read-only",
        action="store_true",
        default=None,
        help="serve queries only: the schema has no mutations, and an endpoint without "
        "TransactWriteItems (e.g. dynalite) is accepted (env EDGEWISE_READ_ONLY=1)",
    )
    serve.add_argument(
        "--explain-forbidden",
        action="store_true",
        default=None,
        help="development only: a node the caller may not read answers FORBIDDEN with the rule's "
        "reason instead of as a missing node (which tells callers which ids exist); refused "
        "with --production (env EDGEWISE_EXPLAIN_FORBIDDEN=1)",
    )
    serve.add_argument(
        "--idempotency-ttl",
        type=int,
        metavar="SECONDS",
        help="seconds the answer to a mutation sent with an Idempotency-Key is kept for its "
        "retries (env EDGEWISE_IDEMPOTENCY_TTL; default 86400, 24 h)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        dest="cors_origins",
        metavar="ORIGIN",
        help="an origin whose browser pages may call the API, e.g. http://localhost:5173; "
        "repeat for more (env EDGEWISE_CORS_ORIGINS, comma-separated). Default: any origin (*), "
        "or none under --production",
    )
    serve.add_argument(
        "--persisted-queries",
        action=argparse.BooleanOptionalAction,
        help="automatic persisted queries, Apollo's protocol (default on; "
        "--no-persisted-queries answers PERSISTED_QUERY_NOT_SUPPORTED; env "
        "EDGEWISE_PERSISTED_QUERIES=0)",
    )
    serve.add_argument(
        "--persisted-queries-only",
        type=Path,
        metavar="FILE",
        help="run only the operations of this manifest (Apollo's persisted-query-manifest.json "
        "or GraphQL Code Generator's persisted-documents.json) and refuse any other "
        "(env EDGEWISE_PERSISTED_QUERIES_ONLY)",
    )
    serve.add_argument(
        "--deadline",
        type=float,
        help="seconds a request's DynamoDB calls may take, retries included "
        "(env EDGEWISE_DEADLINE; default 10)",
    )
    serve.add_argument(
        "--connect-timeout",
        type=float,
        help="seconds to connect to DynamoDB (env EDGEWISE_CONNECT_TIMEOUT; default 2)",
    )
    serve.add_argument(
        "--read-timeout",
        type=float,
        help="seconds to wait for one DynamoDB response (env EDGEWISE_READ_TIMEOUT; default 5)",
    )
    serve.add_argument(
        "--client",
        choices=CLIENTS,
        help="the DynamoDB data plane: lean (keep-alive HTTP/1.1, botocore's signer, orjson; the "
        "default) or botocore (aioboto3 for every call, as before); the control plane is always "
        "aioboto3 (env EDGEWISE_CLIENT)",
    )
    serve.add_argument(
        "--subscriptions",
        action=argparse.BooleanOptionalAction,
        help="serve the Subscription type, live queries driven by the table's stream, over "
        "WebSocket and Server-Sent Events (default on where the table has a stream; "
        "env EDGEWISE_SUBSCRIPTIONS=0 turns them off)",
    )
    serve.add_argument(
        "--pubsub",
        metavar="URL",
        help="take changes from `edgewise relay` through Redis pub/sub (redis://host:6379/0) "
        "instead of reading the table's stream here (env EDGEWISE_PUBSUB)",
    )
    serve.add_argument(
        "--metrics",
        action=argparse.BooleanOptionalAction,
        help="serve Prometheus metrics on /metrics (env EDGEWISE_METRICS=1|0; default on, "
        "off under --production)",
    )
    serve.add_argument(
        "--log-format",
        choices=FORMATS,
        help="text, or json: one JSON object a line, access log included "
        "(env EDGEWISE_LOG_FORMAT; default text)",
    )
    serve.add_argument(
        "--shutdown-timeout",
        type=float,
        help="seconds SIGTERM waits for in-flight requests before stopping "
        "(env EDGEWISE_SHUTDOWN_TIMEOUT; default 30)",
    )
    serve.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="worker processes sharing the port (env EDGEWISE_WORKERS; default 1). More than 1 "
        "uses more cores; the embedded DynamoDB stays one process, filled once by the parent",
    )

    create = commands.add_parser("create-table", help="create the table and indexes; idempotent")
    _connection_flags(create)
    create.add_argument(
        "--print-cloudformation",
        action="store_true",
        help='print the table as a CloudFormation resource, {"Type": "AWS::DynamoDB::Table", '
        '"Properties": {...}}, on stdout, and call no DynamoDB API',
    )

    seed = commands.add_parser("seed", help="load the demo data, or generate a graph")
    _connection_flags(seed)
    seed.add_argument("--demo", action="store_true", help="the demo data of the README")
    seed.add_argument("--users", type=int, default=0, help="users to generate")
    seed.add_argument("--groups", type=int, default=0, help="groups to generate")
    seed.add_argument("--products", type=int, default=0, help="products to generate")
    seed.add_argument("--memberships", type=int, default=3, help="groups per user (default 3)")
    seed.add_argument(
        "--subscriptions",
        type=int,
        default=3,
        dest="group_subscriptions",  # not serve's --subscriptions setting
        help="products per group (default 3)",
    )
    seed.add_argument("--random-seed", type=int, default=0, help="same seed, same graph")

    bulk_format = (
        "FILE.jsonl holds one item a line, its attribute map in DynamoDB JSON, e.g. "
        '{"PK":{"S":"USER#alice"},"SK":{"S":"USER#alice"},"version":{"N":"1"}}.'
    )
    load_parser = commands.add_parser(
        "load",
        help="bulk import items from a DynamoDB JSON lines file",
        description="Validate the whole file first (a bad line stops everything, nothing is "
        "written, and its line number is reported), then write its items with concurrent "
        "BatchWriteItem calls, replacing items with the same keys. " + bulk_format,
    )
    load_parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="the file to load")
    _connection_flags(load_parser)

    dump_parser = commands.add_parser(
        "dump",
        help="bulk export every item to a DynamoDB JSON lines file",
        description="Scan the table in parallel segments and write every item to the file, "
        "atomically (a temporary file beside it, renamed when complete). Lines follow the scan "
        "order; `edgewise load` reads the file back. " + bulk_format,
    )
    dump_parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="the file to write")
    _connection_flags(dump_parser)

    rebuild = commands.add_parser(
        "rebuild",
        help="compare every replica of a path (materialize:) with its path and write the "
        "difference",
        description="Read the table whole (a parallel Scan), find every start whose replicas "
        "differ from its path, compare each again with consistent reads and write the "
        "difference in transactions conditioned on the start's clock (a change made meanwhile "
        "makes it compare again). Prints one line per difference, `missing|extra|stale <pk> "
        "<sk>`. Exit status: 0, or 1 when --dry-run found a difference.",
    )
    _connection_flags(rebuild)
    rebuild.add_argument(
        "--field",
        metavar="TYPE.FIELD",
        help="only the replica this path field reads (default: every replica of the model)",
    )
    rebuild.add_argument(
        "--dry-run", action="store_true", help="list the differences, write nothing"
    )

    relay = commands.add_parser(
        "relay",
        help="read the table's stream (holding its lease: one relay at a time) and publish "
        "each changed key to Redis pub/sub for `serve --pubsub`",
    )
    _connection_flags(relay)
    relay.add_argument(
        "--pubsub", metavar="URL", help="Redis, e.g. redis://127.0.0.1:6379/0 (env EDGEWISE_PUBSUB)"
    )
    relay.add_argument(
        "--lease-ttl",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a relay that stopped renewing keeps the lease (default 10)",
    )

    export = commands.add_parser("export-schema", help="print or write the GraphQL SDL")
    export.add_argument("--output", type=Path, help="write here instead of printing")
    _model_flag(export)

    check = commands.add_parser(
        "check-model",
        help="validate a model file and summarise it",
        description="Validate a model file: each mistake is one line on stderr, "
        "`<dotted.path> (line N): <problem>; <what to write instead>`, and the exit status is 1. "
        "A valid model is summarised: types, edges, indexes, and each access pattern with the "
        "DynamoDB operation it costs. With --dynamodb, the table's keys and indexes (names and "
        "types, from DescribeTable) must agree with the model's too.",
    )
    check.add_argument("model_arg", nargs="?", metavar="M", help="the model (default --model)")
    _connection_flags(check)

    infer = commands.add_parser(
        "infer",
        help="draft a model file from an existing table",
        description="Draft a model from a table you already have: DescribeTable for its keys and "
        "indexes, then a parallel Scan of at most --sample items (never the whole of a large "
        "table). Types, key templates, fields, edges, children and index uses are guessed from "
        "the sample, each guess commented with its evidence. The draft passes `edgewise "
        "check-model`; edit its names, then `edgewise serve --model FILE`. Only reads the table "
        "(needs dynamodb:DescribeTable and dynamodb:Scan); the read units used are reported.",
    )
    infer.add_argument(
        "--dynamodb",
        metavar="D",
        help="an endpoint URL or aws (env EDGEWISE_DYNAMODB)",
    )
    infer.add_argument(
        "--table",
        metavar="T",
        help="the table (env EDGEWISE_TABLE)",
    )
    infer.add_argument(
        "--sample", type=int, default=1000, metavar="N", help="items to read at most (default 1000)"
    )
    infer.add_argument(
        "--output", type=Path, metavar="F", help="write the model here instead of printing it"
    )

    imported = commands.add_parser(
        "import-model",
        help="draft a model file from another tool's data model",
        description="Draft a model from a data model another tool exported: an AWS NoSQL "
        "Workbench export (--from nosql-workbench). A facet becomes a type of the same name, "
        "key templates come from the facet's sample rows (TableData), a facet whose keys are "
        "the keys of two other facets becomes an edge, GSIs become indexes; each guess and "
        "each gap of the export is commented. The draft passes `edgewise check-model`.",
    )
    imported.add_argument(
        "--from",
        dest="source",
        required=True,
        choices=["nosql-workbench"],
        help="the tool that wrote FILE",
    )
    imported.add_argument("file", type=Path, metavar="FILE", help="the exported JSON file")
    imported.add_argument(
        "--table",
        metavar="T",
        help="the table to draft, when the export holds several (env EDGEWISE_TABLE)",
    )
    imported.add_argument(
        "--output", type=Path, metavar="F", help="write the model here instead of printing it"
    )

    commands.add_parser(
        "model-schema",
        help="print the JSON Schema of the model file format",
        description="Print the JSON Schema of model files, for editors (e.g. the YAML "
        "language server's `# yaml-language-server: $schema=...`).",
    )
    return parser


async def _write_all(
    args: argparse.Namespace, items: Iterable[dict[str, Any]], total: int, layout: Layout
) -> int:
    async with open_client(_endpoint(args), lean=_lean(args)) as client:
        table = Table(client, args.table, layout=layout)
        with tqdm(total=total, unit="items", desc="writing", file=sys.stderr) as bar:
            iterator = iter(items)
            while chunk := list(itertools.islice(iterator, CHUNK)):
                bar.update(await table.batch_write(chunk))
        return int(bar.n)


def _seed(args: argparse.Namespace) -> None:
    engine = _engine(args)
    counts = (args.users, args.groups, args.products, args.memberships, args.group_subscriptions)
    generating = any(counts[:3])
    generator = engine.model.generator
    if generating and generator is None:
        raise SystemExit(
            f"edgewise seed: --users/--groups/--products call the model's generator, and "
            f"{args.model} names none (`generator: package.module:function` in the model file); "
            f"run `edgewise seed --model {args.model}` for its sample data"
        )
    table = Table(None, args.table, layout=engine.layout)
    if not generating or args.demo or generator is None:
        items = engine.sample_items(table)
    else:
        if min(counts) < 0:
            raise SystemExit("edgewise seed: pass --demo, or --users/--groups/--products >= 0")
        if args.users and args.memberships and not args.groups:
            raise SystemExit("edgewise seed: users can only join groups: pass --groups N")
        users, groups, products, memberships, subscriptions = counts
        sample = load_hook(generator)(
            users=users,
            groups=groups,
            products=products,
            memberships=memberships,
            subscriptions=subscriptions,
            seed=args.random_seed,
        )
        items = engine.items(table, sample)
    written = asyncio.run(_write_all(args, items, len(items), engine.layout))
    print(f"wrote {written} items to table {args.table!r}")


def _load(args: argparse.Namespace) -> None:
    layout = _engine(args).layout
    endpoint = _endpoint(args)
    if not args.file.is_file():
        raise SystemExit(f"edgewise load: no such file: {args.file}")

    async def run() -> int:
        total = validate(args.file, layout)
        async with open_client(endpoint, lean=_lean(args)) as client:
            table = Table(client, args.table, layout=layout)
            with tqdm(total=total, unit="items", desc="loading", file=sys.stderr) as bar:
                return await load(table, args.file, bar.update)

    count = asyncio.run(run())
    print(f"loaded {count} items from {args.file} into table {args.table!r}")


def _dump(args: argparse.Namespace) -> None:
    layout = _engine(args).layout
    endpoint = _endpoint(args)

    async def run() -> int:
        async with open_client(endpoint, lean=_lean(args)) as client:
            table = Table(client, args.table, layout=layout)
            estimate = (await table.describe()).get("ItemCount") or None  # approximate on AWS
            with tqdm(total=estimate, unit="items", desc="dumping", file=sys.stderr) as bar:
                return await dump(table, args.file, progress=bar.update)

    count = asyncio.run(run())
    print(f"dumped {count} items from table {args.table!r} to {args.file}")


def _rebuild(args: argparse.Namespace) -> None:
    engine = _engine(args)
    replicas = list(engine.model.replicas)
    if not replicas:
        raise SystemExit(
            f"edgewise rebuild: the model {args.model} declares no replica; add `materialize:` "
            "to a path field (see the docs, Replicas of a path)"
        )
    if args.field is not None:
        chosen = _replica_of(engine.model, args.field)
        replicas = [chosen]

    async def run() -> list[Difference]:
        async with open_client(_endpoint(args), lean=_lean(args)) as client:
            table = Table(client, args.table, layout=engine.layout)
            writer = Writer(table, engine.codec)
            assert writer.upkeep is not None
            if not args.dry_run:  # work a crashed process left, first
                await resume_replicas(writer.upkeep, writer._transact)
            estimate = (await table.describe()).get("ItemCount") or None
            with tqdm(total=estimate, unit="items", desc="reading", file=sys.stderr) as bar:
                items = await scan(table, progress=bar.update)
            commit = None if args.dry_run else writer._commit
            with tqdm(unit="starts", desc="comparing", file=sys.stderr) as bar:
                return await writer.upkeep.rebuild(replicas, items, commit, bar.update)

    found = asyncio.run(run())
    for kind, key, _ in found:
        print(f"{kind} {key.pk} {key.sk}")
    done = "not written (--dry-run)" if args.dry_run else "written"
    print(f"{len(found)} differences, {done}", file=sys.stderr)
    if args.dry_run and found:
        raise SystemExit(1)


def _replica_of(model: Model, name: str) -> Replica:
    """The replica the path field ``Type.field`` reads."""
    type_name, _, field = name.partition(".")
    node = model.types.get(type_name)
    walk = node.fields[field].walk if node is not None and field in node.fields else None
    if walk is None or walk.replica is None:
        fields = [
            f"{t.name}.{n}"
            for t in model.types.values()
            for n, f in t.fields.items()
            if f.walk is not None and f.walk.replica is not None
        ]
        raise SystemExit(
            f"edgewise rebuild: --field {name} reads no replica; the fields that do: "
            + ", ".join(fields)
        )
    return walk.replica


def _create_table(args: argparse.Namespace) -> None:
    layout = _engine(args).layout
    if args.print_cloudformation:
        resource = cloudformation_table(table_definition(args.table, layout))
        sys.stdout.write(json.dumps(resource, indent=2) + "\n")
        return

    async def run() -> bool:
        async with open_client(_endpoint(args), lean=_lean(args)) as client:
            return await create_table(client.control, args.table, layout=layout)

    created = asyncio.run(run())
    print(f"table {args.table!r} {'created' if created else 'already exists'} and ACTIVE")


async def _probe(settings: Settings, layout: Layout) -> Capabilities:
    from server.http.app import check_capabilities

    config = client_config(settings.connect_timeout, settings.read_timeout)
    assert settings.table is not None  # set from the model by _engine
    lean = settings.client == "lean"
    async with open_client(Endpoint.parse(settings.dynamodb), config, lean=lean) as client:
        policy = RetryPolicy(deadline=settings.deadline)
        table = Table(client, settings.table, policy, layout=layout)
        return await check_capabilities(table, settings)


def _serve(args: argparse.Namespace) -> None:
    import uvicorn

    from server.http.app import create_app

    settings: Settings = args.settings
    if settings.data_file is not None and settings.dynamodb != "embedded":
        raise SystemExit(
            "edgewise serve: --data-file only applies to the embedded DynamoDB, not --dynamodb "
            + settings.dynamodb
        )
    engine = _engine(args)  # an invalid model never starts a server
    settings = settings.model_copy(update={"table": args.table or engine.table_name})
    configure(settings.log_format)
    capabilities = None
    try:
        if settings.dynamodb != "embedded":  # probed here to exit with a message, not a traceback
            capabilities = asyncio.run(_probe(settings, engine.layout))
        app = create_app(settings, capabilities=capabilities)  # checks the settings
        if settings.workers != 1:
            from server.cli.workers import serve_workers

            serve_workers(settings, capabilities)
            return
    except (SystemExit, EdgewiseError) as exc:
        message = exc.code if isinstance(exc, SystemExit) else f"edgewise serve: {exc}"
        if settings.log_format != "json" or not isinstance(message, str):
            raise
        logging.getLogger("edgewise").critical(message)  # a JSON line, not bare text
        raise SystemExit(1) from None
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        timeout_graceful_shutdown=round(settings.shutdown_timeout),
        log_config=None,  # configure() did it: every logger, uvicorn's too, in --log-format
    )


def _relay(args: argparse.Namespace) -> None:
    from server.live.relay import run_relay

    layout = _engine(args).layout
    endpoint = _endpoint(args)
    pubsub = args.settings.pubsub
    if not pubsub:
        raise SystemExit("edgewise relay: pass --pubsub redis://host:6379/0 (or EDGEWISE_PUBSUB)")
    configure(args.settings.log_format)

    async def run() -> None:
        """Until SIGINT or SIGTERM, which release the lease (another relay takes over)."""
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for stop in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(stop, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await run_relay(endpoint, args.table, layout, pubsub, args.lease_ttl)

    asyncio.run(run())


def _export_schema(args: argparse.Namespace) -> None:
    sdl = _engine(args).schema().as_str() + "\n"
    if args.output:
        args.output.write_text(sdl)
    else:
        sys.stdout.write(sdl)


def _check_model(args: argparse.Namespace) -> None:
    args.model = args.model_arg or args.model
    try:
        engine = engine_for(args.model)
    except ModelError as exc:
        sys.stderr.write("\n".join(exc.lines) + "\n")
        raise SystemExit(1) from None
    if args.dynamodb not in (None, "embedded"):  # the table can be seen: its keys must agree
        from graph.dynamo.capabilities import disagreements

        name = args.table or engine.table_name

        async def describe() -> list[str]:
            async with open_client(_endpoint(args), lean=_lean(args)) as client:
                table = Table(client, name, layout=engine.layout)
                return disagreements(engine.layout, await table.describe())

        found = asyncio.run(describe())
        if found:
            sys.stderr.write("".join(f"table {name!r}: {line}\n" for line in found))
            raise SystemExit(1)
    sys.stdout.write(summary(engine.model))


def _infer(args: argparse.Namespace) -> None:
    from graph.sample import UNKEYED, Sample, describe, sample
    from model.infer import InferError, infer, table_info

    if not args.table or args.dynamodb == "embedded":
        raise SystemExit("edgewise infer: pass --dynamodb URL (or aws) and --table T")
    if args.sample < 1:
        raise SystemExit(f"edgewise infer: --sample must be at least 1, not {args.sample}")
    endpoint = _endpoint(args)

    async def run() -> tuple[dict[str, Any], Sample]:
        async with open_client(endpoint, lean=_lean(args)) as client:
            table = Table(client, args.table, layout=UNKEYED)
            described = await describe(table)
            total = min(args.sample, described.get("ItemCount") or args.sample)  # approximate
            with tqdm(total=total, unit="items", desc="sampling", file=sys.stderr) as bar:
                got = await sample(
                    table, args.sample, described.get("ItemCount"), progress=bar.update
                )
                bar.total = bar.n  # the true count once read
                return described, got

    described, got = asyncio.run(run())
    try:
        draft = infer(table_info(described), got.items, got.complete)
    except InferError as exc:
        raise SystemExit(f"edgewise infer: {exc}") from None
    for note in draft.notes:
        sys.stderr.write(f"edgewise infer: {note}\n")
    if args.output:
        args.output.write_text(draft.text)
    else:
        sys.stdout.write(draft.text)
    where = f"; wrote {args.output}" if args.output else ""
    sys.stderr.write(
        f"edgewise infer: sampled {len(got.items)} items "
        f"({'the whole table' if got.complete else 'a sample'}), "
        f"{got.units:g} read capacity units consumed over {got.segments} scan segments{where}\n"
    )


def _import_model(args: argparse.Namespace) -> None:
    from model.infer import InferError, import_workbench

    try:
        export = json.loads(args.file.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"edgewise import-model: cannot read {args.file}: {exc}") from None
    try:
        draft = import_workbench(export, args.table, args.file.name)
    except InferError as exc:
        raise SystemExit(f"edgewise import-model: {exc}") from None
    for note in draft.notes:
        sys.stderr.write(f"edgewise import-model: {note}\n")
    if args.output:
        args.output.write_text(draft.text)
        sys.stderr.write(f"edgewise import-model: wrote {args.output}\n")
    else:
        sys.stdout.write(draft.text)


def _model_schema(args: argparse.Namespace) -> None:
    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    args.settings = _settings(args)
    handler = {
        "serve": _serve,
        "create-table": _create_table,
        "seed": _seed,
        "load": _load,
        "dump": _dump,
        "relay": _relay,
        "export-schema": _export_schema,
        "check-model": _check_model,
        "model-schema": _model_schema,
        "infer": _infer,
        "import-model": _import_model,
        "rebuild": _rebuild,
    }[args.command]
    try:
        handler(args)
    except EdgewiseError as exc:
        raise SystemExit(f"edgewise {args.command}: {exc}") from None
