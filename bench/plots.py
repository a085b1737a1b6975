"""PNG plots of figures 1 and 2: requests vs fan-out and latency vs fan-out, one panel per
query, Edgewise against the naive baseline and the minimum (floor)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from .fig_latency import IN_FLIGHT, LatencyRow
from .fig_requests import RequestRow
from .measure import percentile
from .queries import NAMES

__all__ = ["latency_plot", "requests_plot"]

Series = tuple[str, Callable[[Any], float], dict[str, Any]]


def _panels(
    rows: Sequence[Any], series: list[Series], ylabel: str, title: str, path: Path, log_y: bool
) -> None:
    figure, axes = plt.subplots(1, len(NAMES), figsize=(4 * len(NAMES), 4.2), sharey=log_y)
    for axis, name in zip(axes, NAMES, strict=True):
        mine = sorted((r for r in rows if r.query.name == name), key=lambda r: r.query.fanout)
        fanouts = [r.query.fanout for r in mine]
        for label, value, style in series:
            axis.plot(fanouts, [value(r) for r in mine], label=label, **{"marker": "o", **style})
        axis.set_xscale("log")
        if log_y:
            axis.set_yscale("log")
        axis.set_xticks(fanouts, [str(f) for f in fanouts])
        axis.set_title(f"{name}: {NAMES[name]}", fontsize=9)
        axis.set_xlabel("fan-out")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def requests_plot(rows: list[RequestRow], path: Path) -> None:
    """DynamoDB requests per GraphQL request: ours, the minimum, naive."""
    series: list[Series] = [
        ("naive", lambda r: r.naive.trace.requests, {"color": "tab:red"}),
        (
            "ours",
            lambda r: r.ours.trace.requests,
            {"color": "tab:blue", "linewidth": 5, "alpha": 0.5, "markersize": 10},
        ),
        (
            "minimum",
            lambda r: r.query.minimum.requests,
            {"color": "black", "linestyle": "--", "marker": "x"},
        ),
    ]
    title = "DynamoDB requests per GraphQL request (counted at the proxy, live moto)"
    _panels(rows, series, "DynamoDB requests", title, path, log_y=True)


def latency_plot(rows: list[LatencyRow], path: Path) -> None:
    """p50 latency (p95 dotted): ours, naive, the floor."""
    series: list[Series] = [
        ("naive p50", lambda r: percentile(r.naive, 0.5) * 1e3, {"color": "tab:red"}),
        (
            "naive p95",
            lambda r: percentile(r.naive, 0.95) * 1e3,
            {"color": "tab:red", "linestyle": ":", "marker": "."},
        ),
        ("ours p50", lambda r: percentile(r.ours, 0.5) * 1e3, {"color": "tab:blue"}),
        (
            "ours p95",
            lambda r: percentile(r.ours, 0.95) * 1e3,
            {"color": "tab:blue", "linestyle": ":", "marker": "."},
        ),
        ("floor: rounds x latency + CPU", lambda r: r.floor * 1e3, {"color": "black"}),
        (
            f"floor, {IN_FLIGHT} in flight",
            lambda r: r.capped_floor * 1e3,
            {"color": "gray", "linestyle": "--"},
        ),
    ]
    latency = rows[0].latency * 1000 if rows else 0
    title = f"Latency, {latency:.0f} ms per DynamoDB call (proxy replaying recorded responses)"
    _panels(rows, series, "ms per GraphQL request", title, path, log_y=True)
