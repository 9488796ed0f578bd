"""Shared helpers for bench scripts: machine facts, result rows, percentiles, one JSON document out."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from typing import Any


def machine() -> dict[str, Any]:
    """Facts that make figures comparable across runs."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def median(values: list[float]) -> float:
    return statistics.median(values)


def row(
    name: str,
    value: float,
    unit: str,
    *,
    target: str = "",
    meets_target: bool | None = None,
    baseline: float | None = None,
    ratio: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One result row; `ratio` compares `value` with a baseline measured in the same run."""
    out: dict[str, Any] = {
        "name": name,
        "value": round(value, 6),
        "unit": unit,
        "target": target,
        "meets_target": meets_target,
        "baseline": None if baseline is None else round(baseline, 6),
        "ratio": None if ratio is None else round(ratio, 3),
    }
    out.update(extra)
    return out


def emit(bench: str, results: list[dict[str, Any]], **extra: Any) -> None:
    """Print the bench's one JSON document on stdout."""
    doc = {"bench": bench, "machine": machine(), "results": results, **extra}
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
