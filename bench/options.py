"""What a run of the whole bench measures, and how long (``python -m bench`` flags)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RESULTS", "Options"]

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Options:
    iterations: int = 15  # per query for ours (half as many for naive), figure 2
    cpu_iterations: int = 30  # per variant, figure 3
    clients: tuple[int, ...] = (1, 8, 32, 64)  # figure 4
    workers: tuple[int, ...] = (1, 2)  # figure 4, `edgewise serve --workers N`
    duration: float = 4.0  # seconds per cell (server, query, clients), figure 4
    naive_clients: int = 32  # figure 4, the naive baseline on Q1@10
    bulk_items: int = 100_000  # figure 5, straight into moto
    bulk_latency_items: int = 10_000  # figure 5, through the proxy with latency
    latency: float = 0.010  # seconds per DynamoDB call, figures 2 and 4
    skip: frozenset[str] = frozenset()  # figure numbers to leave out
    output: Path = RESULTS  # RESULTS.md and the plots
