"""Where a request's CPU goes, by sampling: a CPU-time interval timer (``ITIMER_PROF``) signals
the main thread every half millisecond of process CPU and the handler records the Python stack.
There is no per-call hook to inflate call-heavy code (as cProfile's does), no sample while the
process waits, and no bias towards calls that release the GIL (as a sampling thread has). A
sample counts for the package of its innermost Python frame that belongs to a package, so time
in a C builtin, in the standard library (json, enum, dataclasses ...) or in generated code (a
dataclass ``__init__``) counts for the package that called it; asyncio counts for itself. Run it
on the main thread (``asyncio.run`` does)."""

from __future__ import annotations

import signal
import sysconfig
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["BOTOCORE", "IDLE", "Profile", "Share", "bucket_of", "profile"]

ROOT = str(Path(__file__).resolve().parent.parent)
IDLE = "idle: the event loop waiting (epoll)"
STDLIB = "standard library, no package on the stack"
OTHER = "other packages"
STDLIB_DIR = sysconfig.get_paths()["stdlib"]
BOTOCORE = (
    "DynamoDB client: graph/dynamo/wire.py, graph/dynamo/transport.py, httptools, botocore's signer"
)
HTTP = "HTTP: starlette, httpx in-process client"
OURS = (f"{ROOT}/server/", f"{ROOT}/graph/")

# (substring of the file path, bucket), first match wins
BUCKETS = [
    ("selectors.py", IDLE),
    (f"{ROOT}/bench/", "bench harness (fake DynamoDB, client)"),
    (f"{ROOT}/server/http/limits.py", "ours: server/http/limits.py (query cost check)"),
    (f"{ROOT}/server/", "ours: server/ (HTTP handler, resolvers, prefetch)"),
    (f"{ROOT}/graph/dynamo/wire.py", BOTOCORE),
    (f"{ROOT}/graph/dynamo/transport.py", BOTOCORE),
    (f"{ROOT}/graph/", "ours: graph/ (loaders, table, keys)"),
    ("/graphql/", "graphql-core"),
    ("/aiodataloader", "aiodataloader"),
    ("/aiobotocore/", BOTOCORE),
    ("/botocore/", BOTOCORE),
    ("/aiohttp/", BOTOCORE),
    ("/httptools/", BOTOCORE),
    ("/yarl/", BOTOCORE),
    ("/multidict/", BOTOCORE),
    ("/boto3/", "boto3 TypeDeserializer (from_dynamo)"),
    ("/starlette/", HTTP),
    ("/httpx/", HTTP),
    ("/httpcore/", HTTP),
    ("/anyio/", HTTP),
    ("/asyncio/", "asyncio"),
]

Function = tuple[str, str, int]  # file, name, first line


def bucket_of(file_path: str) -> str | None:
    """The package a file belongs to; None for the standard library and generated code."""
    for marker, bucket in BUCKETS:
        if marker in file_path:
            return bucket
    if file_path.startswith("<") or file_path.startswith(STDLIB_DIR):
        return None
    return OTHER


def _sample_bucket(stack: list[Function]) -> str:
    for file_path, _, _ in stack:
        bucket = bucket_of(file_path)
        if bucket is not None:
            return bucket
    return STDLIB


def _name(function: Function) -> str:
    path, name, line = function
    where = path.replace(ROOT + "/", "")
    if "site-packages/" in where:
        where = where.split("site-packages/", 1)[1]
    elif "/lib/python3" in where:
        where = where.split("/lib/", 1)[1]
    return f"{name} ({where}:{line})"


class _Sampler:
    """Records the main thread's stack every ``interval`` seconds of CPU while running."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.samples: list[list[Function]] = []  # innermost first

    def _record(self, signum: int, frame: FrameType | None) -> None:
        stack = []
        while frame is not None:
            code = frame.f_code
            stack.append((code.co_filename, code.co_name, code.co_firstlineno))
            frame = frame.f_back
        self.samples.append(stack)

    def __enter__(self) -> _Sampler:
        self._previous = signal.signal(signal.SIGPROF, self._record)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous)


@dataclass(frozen=True)
class Share:
    bucket: str
    fraction: float  # of the busy (not idle) samples


@dataclass(frozen=True)
class Profile:
    requests: int
    samples: int
    idle: float  # fraction of all samples
    shares: list[Share]
    top_self: list[tuple[str, float]]  # function, fraction of busy samples innermost
    top_ours: list[tuple[str, float]]  # our function, fraction of busy samples on the stack


async def profile(run: Callable[[], Awaitable[Any]], requests: int) -> Profile:
    """Sample ``requests`` runs of ``run``, one after the other."""
    with _Sampler(0.0005) as sampler:
        for _ in range(requests):
            await run()
    busy = [s for s in sampler.samples if s and _sample_bucket(s) != IDLE]
    count = len(busy) or 1
    buckets = Counter(_sample_bucket(s) for s in busy)
    leaves = Counter(s[0] for s in busy)
    ours: Counter[Function] = Counter()
    for stack in busy:
        ours.update({f for f in stack if f[0].startswith(OURS)})
    return Profile(
        requests,
        len(sampler.samples),
        1 - len(busy) / (len(sampler.samples) or 1),
        [Share(b, n / count) for b, n in buckets.most_common()],
        [(_name(f), n / count) for f, n in leaves.most_common(15)],
        [(_name(f), n / count) for f, n in ours.most_common(12)],
    )
