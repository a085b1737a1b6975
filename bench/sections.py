"""Each figure's section of RESULTS.md: how it was measured, its table, what the numbers show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import fig_bulk, fig_cpu, fig_fanout, fig_latency, fig_requests, fig_throughput
from .fig_requests import short
from .measure import percentile
from .profiling import BOTOCORE
from .queries import NAMES
from .report import Section

if TYPE_CHECKING:
    from .options import Options

__all__ = ["bulk_text", "cpu_text", "latency_text", "requests_text", "throughput_text"]


def _lines(*parts: str) -> str:
    return "\n".join(parts)


def requests_text(rows: list[fig_requests.RequestRow]) -> Section:
    over = [
        r
        for r in rows
        if r.ours.trace.requests > r.query.minimum.requests
        or r.ours.trace.rounds > r.query.minimum.rounds
    ]
    findings = [
        f"- {r.query.label}: {r.ours.trace.requests} requests in {r.ours.trace.rounds} rounds "
        f"({short(r.ours.trace.operations)}) against a minimum of {r.query.minimum.requests} in "
        f"{r.query.minimum.rounds} ({short(r.query.minimum.operations)})."
        for r in over
    ]
    if any(r.query.name == "Q3" for r in over):
        findings.append(
            "  Q3's extra BatchGetItem: `hasAccess` reads the (group, product) edge items by key "
            "(the demo's `hasAccess`) although the same wave's SUBSCRIBES_TO Queries of "
            "`products` return those very items; and the `via` groups are read in wave 3 with "
            "the products rather than in wave 2, where their keys are already known."
        )
    fewer = [r.query.label for r in rows if r.ours.trace.rounds < r.query.minimum.rounds]
    queries = "; ".join(f"{name}: {title}" for name, title in NAMES.items())
    text = _lines(
        f"Queries ({queries}) at fan-outs 1, 10 and 100: `bench/data.py` builds the graph, "
        "`bench/queries.py` holds the text. Each runs once per server, one request at a time, "
        "through the metering proxy to live moto, no latency injected. *ours* and *naive* are "
        "each server's own trace (`extensions.dynamodb`); *minimum* is the performance model "
        "computed by `bench/minimum.py` from the data (per wave ceil(distinct keys / 100) "
        "BatchGetItem plus one Query per partition page; rounds = non-empty waves). *peak in "
        "flight*: most of ours' calls the proxy saw at once. *trace = proxy* (ours / naive): ✓ "
        "when the proxy counted the same requests, operations and rounds as the trace. *same "
        "data*: ours and naive answered alike. Calls: BGI BatchGetItem, Q Query, GI GetItem.",
        "",
        fig_requests.render(rows),
        "",
        f"Trace and proxy agree for ours on {sum(r.ours.agrees for r in rows)} of {len(rows)} "
        f"queries, for naive on {sum(r.naive.agrees for r in rows)}. Rounds are busy periods "
        "(calls in flight rising from 0), so they depend on timing: when a dependent call "
        "starts before the previous wave's last call returns, the two waves merge into one "
        "round. The naive server pipelines each item's chain, so it shows few rounds though its "
        "dependency depth is up to 5 (user, edges, group, edges, product: see the latency "
        "figure). A server's trace counts a call until its response is parsed, the proxy until "
        "the response is sent: while the server's CPU is busy parsing, the proxy can see an idle "
        "gap the trace does not, and count one round more. That is every mismatch here, nearly "
        "all of them the naive server's, whose CPU is the busiest.",
        *(
            [
                "",
                f"Ours took fewer rounds than the model's waves on {', '.join(fewer)}: the next "
                "wave needs only part of the previous one (Q3's groups need the membership "
                "Query, not the user's item), so it starts while the rest is still out.",
            ]
            if fewer
            else []
        ),
        "",
        "Where ours costs more than the minimum:"
        if findings
        else "Ours is at the minimum for every query and fan-out.",
        *findings,
    )
    return Section("1. DynamoDB requests and rounds per query and fan-out", text)


def latency_text(rows: list[fig_latency.LatencyRow], iterations: int) -> Section:
    latency = rows[0].latency * 1000
    misses = sum(r.misses for r in rows)
    text = _lines(
        f"The proxy holds every DynamoDB call {latency:.0f} ms and answers reads from its "
        "recording (made live in figure 1, checked with one more request per query and server), "
        "so moto's serial CPU is out of the picture. Both servers run in the bench process "
        f"(httpx ASGITransport), one request at a time, {iterations} requests of ours and "
        f"{max(5, iterations // 2)} of naive per query; times in ms. *floor* = minimum rounds x "
        "latency + ours' median CPU per request (`time.process_time` around the request: the "
        "server, its DynamoDB client and the in-process client; the proxy and moto are other "
        "processes). *floor, 64 in flight*: the same with "
        "each wave's calls sent at most 64 at a time, the per-request bound of "
        "`graph.table.Table` (a wave of 101 calls takes two latencies). Neither floor is a "
        "strict bound: the server's CPU partly overlaps its waiting. *proxy CPU*: the "
        "proxy's own CPU per request; on 2 cores it competes with the server, so the high "
        f"fan-outs include some proxy time. Replay misses after warming: {misses}.",
        "",
        fig_latency.render(rows),
        *_cpu_bound(rows),
    )
    return Section(f"2. Latency with {latency:.0f} ms per DynamoDB call (replayed)", text)


def _cpu_bound(rows: list[fig_latency.LatencyRow]) -> list[str]:
    widest = [r for r in rows if r.query.fanout == max(x.query.fanout for x in rows)]
    if not widest:
        return []
    shares = [r.cpu / percentile(r.ours, 0.5) for r in widest]
    return [
        "",
        f"At fan-out {widest[0].query.fanout}, ours' own CPU is {min(shares):.0%} to "
        f"{max(shares):.0%} of its median latency: there the latency is the server's CPU "
        "(mostly botocore's, see figure 3), not its rounds.",
    ]


def cpu_text(result: fig_cpu.CpuResult) -> Section:
    floor = result.floor.median
    execute = next(v for v in result.variants if v.name.startswith("ours: schema.execute"))
    whole = result.variant(fig_cpu.LEAN).median
    botocore = result.variant(fig_cpu.BOTOCORE_PATH).median
    ratio = execute.median / floor
    top = ", ".join(f"{s.bucket} {s.fraction:.0%}" for s in result.over_fake.shares[:4])
    profile = (
        _lines(
            "",
            f"Ours is above {fig_cpu.TARGET}x, so the HTTP request was profiled over the fake "
            f"and over the lean client ({result.over_fake.requests} and "
            f"{result.over_botocore.requests} requests; `bench/profiling.py` samples the "
            "Python stack on a CPU-time timer, "
            f"{result.over_fake.samples} and {result.over_botocore.samples} samples). A sample "
            "counts for the innermost frame that belongs to a package: time in C builtins, the "
            "standard library (json, enum, dataclasses) and generated `__init__`s counts for the "
            "package that called it. ms = share x the variant's measured CPU. Largest over the "
            f"fake: {top}.",
            "",
            fig_cpu.render_profile(result),
        )
        if ratio > fig_cpu.TARGET
        else ""
    )
    text = _lines(
        f"{result.query.label}: 1 user, 100 groups, 300 subscriptions. CPU of the bench process "
        "per request (`time.process_time`), the variants taken in turn, "
        f"{len(result.floor.seconds)} each after 3 warm-ups; medians, and minimums (less "
        "sensitive to the machine's other load); *minor page faults*, medians per request "
        "(`resource.getrusage`). The floor is graphql-core (`graphql_sync` on `build_schema` "
        "of the same shape, in a fresh thread: see below) with trivial resolvers over the same "
        "data held as dicts (`bench/floor.py`). The fake DynamoDB (`bench/fake.py`) "
        "answers `batch_get_item` and `query` from memory in DynamoDB's wire shapes, taking "
        "moto, HTTP and botocore out; the last two are the real path, the proxy replaying "
        "with 0 ms, over the lean client (the default) and over aioboto3's (`--client "
        "botocore`), in the same run.",
        "",
        fig_cpu.render(result),
        "",
        f"Ours is {ratio:.1f}x the floor executing the query (target {fig_cpu.TARGET}x) and "
        f"{whole / floor:.1f}x for the whole request over the lean client "
        f"({botocore / floor:.1f}x over botocore's; the lean path costs "
        f"{whole / botocore:.2f}x botocore's).",
        "",
        _compiled_reading(result),
        "",
        *_floor_check(result),
        profile,
        *_cpu_reading(result),
    )
    return Section("3. Server CPU per request: Q1 at fan-out 100 against graphql-core", text)


def _compiled_reading(result: fig_cpu.CpuResult) -> str:
    """What the compiled executor (``server/engine/compiled.py``) saves, on against off."""
    on = result.variant("ours: schema.execute").median
    off = result.variant(f"ours, {fig_cpu.COMPILED_OFF}").median
    whole_on = result.variant(fig_cpu.FAKE).median
    whole_off = result.variant(f"{fig_cpu.FAKE}, {fig_cpu.COMPILED_OFF}").median
    return (
        f"The compiled executor on costs {on / off:.2f}x of it off (graphql-core completing "
        f"every field) executing the query ({on * 1e3:.1f} against {off * 1e3:.1f} ms), and "
        f"{whole_on / whole_off:.2f}x for the whole request over the fake ({whole_on * 1e3:.1f} "
        f"against {whole_off * 1e3:.1f} ms), in the same run."
    )


def _floor_check(result: fig_cpu.CpuResult) -> list[str]:
    """How the floor was measured, and what measuring it in the event loop did to the ratios."""
    floor, old = result.floor, result.variant(fig_cpu.IN_LOOP)
    whole = result.variant(fig_cpu.LEAN).median
    cheapest = min(result.sweep, key=lambda t: t.median)
    dearest = max(result.sweep, key=lambda t: t.median)
    most = max(result.sweep, key=lambda t: t.median_faults)
    chosen = next(t for t in result.sweep if floor.name.endswith(f" {t.padding} frames deep"))
    return [
        "The floor is measured carefully (`bench/floor.py`): on Python 3.11 the same "
        "`graphql_sync` call costs more or less depending on how deep the caller's stack is. "
        "CPython's frame stack grows in 16 KiB chunks, unmapped as soon as the stack falls back "
        "below them, so recursion that keeps crossing a chunk boundary maps and unmaps memory "
        "each time (python/cpython#142183, mended in later releases); each crossing shows as "
        "minor page faults (`resource.getrusage`). In this run, in fresh threads under 0 to "
        f"{result.sweep[-1].padding} padding frames (about one chunk), {len(result.sweep)} "
        f"depths x {len(chosen.seconds)} runs: from {cheapest.median * 1e3:.1f} ms to "
        f"{dearest.median * 1e3:.1f} ms, and from {chosen.median_faults:.0f} to "
        f"{most.median_faults:.0f} page faults per execution. The floor is taken in a fresh "
        f"thread at the depth with the fewest ({chosen.padding} frames), one thread per "
        f"execution, in turn with the other variants: {floor.median * 1e3:.1f} ms and "
        f"{floor.median_faults:.0f} page faults per execution.",
        "",
        "The check of the floor as measured before (`graphql.graphql` in the bench's event "
        f"loop): {old.median * 1e3:.1f} ms with {old.median_faults:.0f} page faults per "
        f"execution, {old.median / floor.median:.1f}x the careful floor. Against it, the whole "
        f"request over the lean client would be {whole / old.median:.1f}x instead of "
        f"{whole / floor.median:.1f}x"
        + (
            ": the event-loop floor paid the chunk crossings, which made every ratio to it "
            "look smaller."
            if old.median_faults > 10 * max(floor.median_faults, 1)
            else ": at this depth the event-loop floor paid no chunk crossings, so it was not "
            "skewed."
        ),
    ]


def _cpu_reading(result: fig_cpu.CpuResult) -> list[str]:
    fake = {s.bucket: s.fraction for s in result.over_fake.shares}
    real = {s.bucket: s.fraction for s in result.over_botocore.shares}
    fake_cpu = result.variant(fig_cpu.FAKE).median
    real_cpu = result.variant(fig_cpu.LEAN).median
    framework = sum(fake.get(b, 0.0) for b in ("graphql-core", "asyncio", "aiodataloader"))
    ours = sum(f for b, f in fake.items() if b.startswith("ours:"))
    client = real.get(BOTOCORE, 0.0) * real_cpu
    return [
        "",
        "What bounds the ratio: the planned prefetch reads a lookup's whole selection level by "
        "level and the compiled executor completes the fields by plain calls "
        "(`server/engine/plan.py`, `compiled.py`), so over the fake graphql-core, asyncio and "
        f"aiodataloader take {framework:.0%} of ours (about {framework * fake_cpu * 1e3:.0f} "
        f"ms) and our own code (graph/, server/: the reads, pages, keys, trace and the executor) "
        f"{ours:.0%}. On the real path the lean client (signing, its HTTP/1.1, parsing) costs "
        f"about {client * 1e3:.0f} ms per request, {client / result.calls * 1e3:.2f} ms per "
        f"DynamoDB call ({result.calls} calls), and asyncio's socket events grow with the calls.",
    ]


def throughput_text(
    ours: list[fig_throughput.Throughput],
    naive: fig_throughput.Throughput,
    options: Options,
    side: list[fig_throughput.Throughput],
) -> Section:
    speedup = fig_throughput.speedups(ours)
    queries = list(dict.fromkeys(r.query for r in ours))
    most = max(options.workers)
    findings = [
        f"- {query}: {most} workers at {n} clients serve "
        f"{speedup[(query, most, n)] / speedup[(query, 1, n)]:.2f}x the requests per second of 1 "
        f"worker at {n} clients"
        for query in queries
        for n in options.clients
        if n > 1 and (query, most, n) in speedup and speedup.get((query, 1, n))
    ]
    same = next((r for r in ours if r.query == naive.query and r.clients == naive.clients), None)
    text = _lines(
        f"{', '.join(queries)}: {', '.join(map(str, options.clients))} concurrent clients "
        "(aiohttp, in the bench process, each sending its next request as soon as the last "
        f"answers) for {options.duration:.0f} s per cell, after {fig_throughput.WARM_SECONDS:.0f} "
        "s of warm-up per query on each fresh server. Ours is `edgewise serve --dynamodb "
        f"<proxy> --workers N {' '.join(fig_throughput.PATIENT)}` for N = "
        f"{', '.join(map(str, options.workers))} (a long deadline and read timeout, so that "
        "requests queueing behind 64 clients are measured, not failed), with uvicorn's "
        f"defaults (access log included) and {fig_throughput.uvicorn_speedups()} installed "
        "(uvicorn's `auto` loop and HTTP parser use them); the proxy replays with "
        f"{options.latency * 1000:.0f} ms per DynamoDB call. Ratios are to the 1-worker "
        "1-client figure of the same query in this run: requests per second (higher is "
        "better) and latency (lower is better). p99 is over the cell's requests, so with few "
        "requests (1 client, Q1@100) it is close to the maximum. The bench client, the proxy "
        "and the servers share the machine's cores, so more workers than the cores left free "
        "cannot help, and the client's own CPU bounds the highest rates.",
        "",
        fig_throughput.render(ours),
        "",
        *findings,
        "",
        f"The naive baseline (`python -m bench.naive` under uvicorn, one process) for "
        f"comparison, {naive.query} at {naive.clients} clients:",
        "",
        fig_throughput.render_naive([naive], options.latency),
        *(
            [
                "",
                f"Ours (1 worker) serves {same.rate / naive.rate:.1f}x the naive baseline's "
                "requests per second.",
            ]
            if same is not None and naive.rate
            else []
        ),
        "",
        f"Issue 14's target, side by side in this run: {side[0].query} at {side[0].clients} "
        f"clients for {options.duration:.0f} s against 1 worker of each server, one after the "
        "other, each warmed first. *Before issue 14* is the tree of commit "
        f"{fig_throughput.BEFORE} (`git archive`, served from its own folder by the same "
        "Python): botocore's client, graphql-core's executor resolving field by field. Then "
        "today's code on each DynamoDB client (`--client`).",
        "",
        fig_throughput.render_side_by_side(side),
    )
    title = "4. Requests per second and latency under concurrent clients: workers 1 and 2"
    return Section(title, text)


def bulk_text(results: list[fig_bulk.BulkResult]) -> Section:
    direct = results[:2]
    ratios = "; ".join(
        f"{ours.setup}: {ours.rate / theirs.rate:.2f}x"
        for ours, theirs in zip(results[::2], results[1::2], strict=True)
    )
    delayed = results[2].setup if len(results) > 2 else ""
    text = _lines(
        "Items of `models.demo.generate.generated_items` (users, groups, products, their edges, "
        "counters and "
        "email items) into fresh tables on the bench's moto. *edgewise load* is "
        "`graph.bulk.load` on the items written as DynamoDB JSON, timed from validating the "
        "file to the last write; *boto3* is `Table.batch_writer` putting the same items from "
        f"memory. First {direct[0].items} items straight into moto, which applies writes one at "
        "a time and so bounds both; then fewer items through the metering proxy holding each "
        f"call as *{delayed}*, as a network and DynamoDB's own latency would (the proxy's "
        "count of BatchWriteItem calls is checked against the loaders').",
        "",
        fig_bulk.render(results),
        "",
        f"edgewise load against boto3, items per second: {ratios} (target 2x). Both send "
        f"{direct[0].items / max(direct[0].calls, 1):.0f} items per BatchWriteItem call; ours "
        "keeps up to 40 calls in flight, boto3 one.",
    )
    return Section("5. Bulk load: edgewise load against boto3 batch_writer", text)


FANOUT_TITLE = "7. Server CPU per request against the answer's size, both clients"


def fanout_text(rows: list[fig_fanout.FanoutRow], iterations: int) -> str:
    """Figure 7's table and how it reads."""
    last = rows[-1]
    growth = {p: last.cpu[p] / rows[0].cpu[p] for p in fig_fanout.PATHS if rows[0].cpu[p] > 0}
    return _lines(
        "Q1 at each fan-out (1 user in that many groups, 3 subscriptions each; Q1@100x10: 10 "
        "subscriptions each, since `first` is at most 100 per connection), CPU of the bench "
        "process per request (`time.process_time`; the floor in a fresh thread at the stack "
        "depth with the fewest page faults, as in figure 3), the paths taken in turn, medians "
        f"of {iterations} after 2 warm-ups; the proxy replays with 0 ms. Plot: `fanout.png`.",
        "",
        fig_fanout.render(rows),
        "",
        f"From {rows[0].query.label} to {last.query.label} the answer grows "
        f"{last.nodes / max(rows[0].nodes, 1):.0f}x and the DynamoDB calls "
        f"{last.calls / max(rows[0].calls, 1):.0f}x; CPU grows "
        + ", ".join(f"{growth[p]:.0f}x for {p}" for p in growth)
        + f". At {last.query.label}, what a client adds to the fake per DynamoDB call: "
        + ", ".join(
            f"{(last.cpu[p] - last.cpu['over the fake']) / last.calls * 1e3:.2f} ms for the {p}"
            for p in ("lean client", "botocore client")
        )
        + ".",
    )
