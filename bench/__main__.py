"""``python -m bench``: every figure, printed, then bench/results/RESULTS.md and the plots."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType

from .options import Options
from .run import run


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C stops the bench at once (asyncio.run would only cancel its main task)."""
    raise KeyboardInterrupt


def _counts(value: str) -> tuple[int, ...]:
    """``1,8,32`` as a tuple of positive whole numbers."""
    try:
        counts = tuple(int(part) for part in value.split(","))
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: use whole numbers of 1 or more, e.g. 1,8,32")
    return counts


def main() -> None:
    """Parse the options and run the bench (defaults: the full run of ``make bench``)."""
    defaults = Options()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--iterations", type=int, default=defaults.iterations)
    parser.add_argument("--cpu-iterations", type=int, default=defaults.cpu_iterations)
    parser.add_argument(
        "--clients",
        type=_counts,
        default=defaults.clients,
        help="figure 4: concurrent clients, comma-separated (default 1,8,32,64)",
    )
    parser.add_argument(
        "--workers",
        type=_counts,
        default=defaults.workers,
        help="figure 4: `edgewise serve --workers N` values, comma-separated (default 1,2)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=defaults.duration,
        help="figure 4: seconds per server, query and client count (default 4)",
    )
    parser.add_argument("--bulk-items", type=int, default=defaults.bulk_items)
    parser.add_argument("--bulk-latency-items", type=int, default=defaults.bulk_latency_items)
    parser.add_argument(
        "--latency-ms", type=float, default=defaults.latency * 1000, help="per DynamoDB call"
    )
    parser.add_argument(
        "--skip", default="", help="figures to leave out, e.g. 4,5,8 (figure 1 always runs)"
    )
    parser.add_argument(
        "--output", type=Path, default=defaults.output, help="where RESULTS.md and plots go"
    )
    args = parser.parse_args()
    options = Options(
        iterations=args.iterations,
        cpu_iterations=args.cpu_iterations,
        clients=args.clients,
        workers=args.workers,
        duration=args.duration,
        bulk_items=args.bulk_items,
        bulk_latency_items=args.bulk_latency_items,
        latency=args.latency_ms / 1000,
        skip=frozenset(filter(None, args.skip.split(","))),
        output=args.output,
    )
    signal.signal(signal.SIGINT, _interrupt)
    try:
        run(options)
    except KeyboardInterrupt:
        print("interrupted; moto, the proxy and the servers are stopped", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
